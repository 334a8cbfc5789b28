// Test support: runs the built `snowid` binary as a child process, feeding
// its stdin and capturing stdout, stderr and the exit status.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "temp_dir.h"

namespace snowid::cli::testing {

struct CliResult {
  int exit_code = -1;  // 128 + signal number if the process was killed
  std::string out;
  std::string err;
};

struct CliRun {
  std::vector<std::string> args;  // without the program name
  std::string input;              // written to stdin, which is then closed
  // Environment changes: a value sets the variable, nullopt removes it.
  // SNOWID_STATE_DIR, XDG_STATE_HOME and HOME are removed unless set here,
  // so that a test never touches the real state directory, and so are
  // SNOWID_REGION, the SNOWID_ETCD_* settings and SNOWID_SEQUENCES, so that
  // a test never reaches a real registry or ticket table.
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
};

CliResult run_cli(const CliRun& run);
// Shorthand for run_cli with arguments only.
CliResult run_cli(std::vector<std::string> args, std::string input = "");

// A `snowid` process that keeps running while a test talks to it: its stdin
// stays open until close_input() and its output is read as it arrives. For
// long-running modes such as `next --follow`.
class CliProcess {
 public:
  // Starts the process and writes `run.input` to its stdin.
  explicit CliProcess(const CliRun& run);
  // Kills (SIGKILL) and reaps the process if finish() was not called.
  ~CliProcess();
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  // Writes to its stdin; false once that fails (the process has gone).
  bool write(const std::string& text);
  void close_input();
  // The next whole line of stdout without its "\n"; nullopt at the end of
  // output or after `timeout`.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  // Waits up to `timeout` until stderr contains `text`.
  bool wait_for_err(const std::string& text, std::chrono::milliseconds timeout);
  // What it wrote on stderr so far.
  const std::string& err() const noexcept { return err_; }
  void send_signal(int sig);
  // Closes stdin, waits for the exit and returns the exit status with the
  // output not yet read by read_line (stdout) and all of stderr.
  CliResult finish();

 private:
  // Reads what is there on stdout and stderr, waiting up to `timeout_ms`.
  void pump(int timeout_ms);

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, errfd_ = -1;
  std::string out_buf_, err_;
  bool finished_ = false;
};

// True if `err` is exactly one line "snowid: <reason>\n".
bool is_one_line_error(const std::string& err);

// The lines of `text`, without their "\n".
std::vector<std::string> lines_of(const std::string& text);

// A fresh directory, removed with its contents when the object goes away;
// throws if it cannot be made.
class TempDir : public test_support::TempDir {
 public:
  TempDir();

  // Writes `text` to file(name) and returns that path.
  std::string write(const std::string& name, const std::string& text) const;
  std::string read(const std::string& name) const;
};

}  // namespace snowid::cli::testing
