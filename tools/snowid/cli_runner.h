// Test support: runs the built `snowid` binary as a child process, feeding
// its stdin and capturing stdout, stderr and the exit status.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

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
  // so that a test never touches the real state directory.
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
};

CliResult run_cli(const CliRun& run);
// Shorthand for run_cli with arguments only.
CliResult run_cli(std::vector<std::string> args, std::string input = "");

// True if `err` is exactly one line "snowid: <reason>\n".
bool is_one_line_error(const std::string& err);

// The lines of `text`, without their "\n".
std::vector<std::string> lines_of(const std::string& text);

// A fresh directory, removed with its contents when the object goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const noexcept { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Writes `text` to file(name) and returns that path.
  std::string write(const std::string& name, const std::string& text) const;
  std::string read(const std::string& name) const;

 private:
  std::string path_;
};

}  // namespace snowid::cli::testing
