// The sequence_client program (sequence_client.cc) as a child process of a
// test: started with pipes, its stdout read on a thread of its own into the
// numbers it handed out (complete lines only: a line a kill cut short is no
// number), its stderr kept for the closing JSON summary.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace snowid::sequence_scenarios {

class ClientProcess {
 public:
  // Runs `program` with `args`. A failed start leaves start_error() set and
  // the object as if the child had exited with code 127 without output.
  ClientProcess(const std::string& program, const std::vector<std::string>& args);
  // SIGKILL if it still runs, then reaps it.
  ~ClientProcess();
  ClientProcess(const ClientProcess&) = delete;
  ClientProcess& operator=(const ClientProcess&) = delete;

  const std::string& start_error() const noexcept { return start_error_; }
  pid_t pid() const noexcept { return pid_; }

  // True once at least `n` numbers were read; false when `timeout` passes or
  // the output closes first.
  bool wait_for_numbers(std::size_t n, std::chrono::milliseconds timeout);
  std::size_t number_count() const;

  void signal(int sig);
  // Waits for the child to exit and for its output to be read whole. Its
  // exit code (-signal if a signal ended it), or nullopt on timeout, after
  // which it is killed.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);

  // Every number read so far, in the order written. Complete after
  // wait_exit().
  std::vector<std::int64_t> numbers() const;
  // Complete lines that were no decimal number: none, from a sound client.
  std::vector<std::string> bad_lines() const;
  // A cut-short last line (after a kill), empty otherwise. After wait_exit().
  std::string unterminated() const;
  // All of stderr; its last line parsed as a JSON object, if it is one.
  std::string err_text() const;
  std::optional<nlohmann::json> summary() const;

 private:
  void read_loop(int out_fd, int err_fd);
  void reap(int options);

  std::string start_error_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_code_ = 127;
  std::thread reader_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::int64_t> numbers_;
  std::vector<std::string> bad_lines_;
  std::string pending_;  // stdout after the last newline
  std::string err_;
  bool closed_ = false;
};

}  // namespace snowid::sequence_scenarios
