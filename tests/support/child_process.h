// Test support: child processes for the tests that run real programs (the
// daemon's black-box tests, the lease scenarios). posix_spawn with pipes, a
// one-shot run that captures the output, and a long-running child whose
// output is a stream of JSON lines read on a thread of its own. No gtest: the
// callers decide what a failure means.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace snowid::test_support {

// The exit code of a reaped child's wait status, or -signal if a signal
// ended it.
int exit_code_of(int wait_status) noexcept;

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is the program's path
  // "NAME=value" entries; nullopt: this process's environment.
  std::optional<std::vector<std::string>> env;
  // Each to a new pipe whose read end the parent gets; otherwise inherited.
  bool pipe_stdout = false;
  bool pipe_stderr = false;
  // stdin from /dev/null; otherwise inherited.
  bool null_stdin = true;
};

struct SpawnedChild {
  pid_t pid = -1;
  int out = -1;  // the read ends asked for (close-on-exec), or -1
  int err = -1;
};

// Starts the child: 0, or the errno value of what failed.
int spawn_child(const SpawnRequest& request, SpawnedChild& child);

struct ProcessResult {
  int exit_code = -1;  // -signal if killed by one; -1000 on timeout (killed)
  std::string out;
  std::string err;
};
// Runs `request` (its pipe flags ignored: stdout and stderr are captured) to
// completion, killed with SIGKILL after `timeout`. A failed start: exit code
// 127 with the reason in `err`.
ProcessResult run_to_completion(const SpawnRequest& request, std::chrono::milliseconds timeout);

// A child whose stdout or stderr carries one JSON object per line, read on
// a thread of its own, so that a test can wait for events while the child
// runs, signal it, and see how it exited.
class JsonLineProcess {
 public:
  enum class Stream { kStdout, kStderr };
  // Starts `request` with `lines_on` piped to this object; the request's
  // pipe flags are ignored, the other stream is inherited. A failed start
  // leaves start_error() set and the object as if the child had exited with
  // code 127 without output.
  JsonLineProcess(SpawnRequest request, Stream lines_on);
  // kill_and_reap().
  virtual ~JsonLineProcess();
  JsonLineProcess(const JsonLineProcess&) = delete;
  JsonLineProcess& operator=(const JsonLineProcess&) = delete;

  // Empty if the child started.
  const std::string& start_error() const noexcept { return start_error_; }
  pid_t pid() const noexcept { return pid_; }

  // The first JSON line from index `from` on for which `pred` holds,
  // waiting up to `timeout`; nullopt on timeout or once the output closed.
  std::optional<nlohmann::json> wait_for(const std::function<bool(const nlohmann::json&)>& pred,
                                         std::chrono::nanoseconds timeout, std::size_t from = 0);

  // The JSON object lines read so far; every line (JSON or not) as text, in
  // order; the lines that are not JSON objects (with an unterminated last
  // line once the output closed).
  std::vector<nlohmann::json> lines() const;
  std::size_t line_count() const;
  std::vector<std::string> raw_lines() const;
  std::vector<std::string> garbage() const;

  // Sends `sig` unless the child was reaped.
  void signal(int sig);
  // Exit code (exit_code_of), or nullopt on timeout. Reaps the child.
  std::optional<int> wait_exit(std::chrono::nanoseconds timeout);
  // True while the child has not exited (and is not a zombie).
  bool alive();
  // SIGCONT and SIGKILL if the child still runs, then reaps it and waits for
  // the reader, so that every line it wrote is in.
  void kill_and_reap();

 private:
  void read_loop(int fd);

  std::string start_error_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::thread reader_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<nlohmann::json> lines_;
  std::vector<std::string> raw_;
  std::vector<std::string> garbage_;
  bool closed_ = false;
};

}  // namespace snowid::test_support
