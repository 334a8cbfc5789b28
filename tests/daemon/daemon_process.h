// The real snowidd as a child process, for black-box tests: started with a
// controlled environment, its stderr (one JSON object per line) read as it
// comes (child_process.h), so that a test can wait for log events while the
// daemon runs, signal it, and see how it exited. Also a one-shot runner for
// other programs (redis-cli, the snowid tool).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "child_process.h"

namespace snowid::daemon_test {

using Env = std::vector<std::pair<std::string, std::string>>;
using Millis = std::chrono::milliseconds;

// A name for SNOWID_HOST_LOCK unique to this test process and call, so tests
// that run in parallel never share host-wide id locks.
std::string unique_host_lock();

// The child's environment: this process's, minus every inherited SNOWID_*,
// FAKETIME* and LD_PRELOAD variable, plus `extra` (later entries win).
std::vector<std::string> child_environment(const Env& extra);

using test_support::ProcessResult;
// Runs `argv` (argv[0] a path) to completion with `extra` added to the
// environment, capturing stdout and stderr; killed after `timeout`.
ProcessResult run_process(const std::vector<std::string>& argv, const Env& extra = {},
                          Millis timeout = Millis(30000));

// Waiting for lines, signals, the exit status and liveness are those of
// test_support::JsonLineProcess; wait_exit() gives 127 for a failed start.
class DaemonProcess : public test_support::JsonLineProcess {
 public:
  // Starts snowidd with `args` (without argv[0]) and `extra` environment.
  // Never null; a failed start is a test failure.
  static std::unique_ptr<DaemonProcess> start(const std::vector<std::string>& args,
                                              const Env& extra);
  // Kills the daemon if it still runs (SIGKILL), reaps it, and joins the
  // reader. A sanitizer report in its stderr fails the test; if the test
  // failed, prints everything the daemon logged.
  ~DaemonProcess() override;

  using JsonLineProcess::wait_for;
  // The first line whose "msg" is `msg`.
  std::optional<nlohmann::json> wait_for(const std::string& msg, Millis timeout,
                                         std::size_t from = 0);
  // Waits for "ready" or for the daemon to give up ("start failed", exit):
  // true only for "ready".
  bool wait_ready(Millis timeout = Millis(30000));

  // Every line read so far (JSON or not) as text.
  std::string raw_text() const;
  // Lines that are not JSON objects (a running daemon writes none).
  std::vector<std::string> non_json_lines() const { return garbage(); }

  // Addresses from the "listening" events (after wait_ready()).
  std::string socket_path() const;
  int tcp_port() const;   // 0 if none
  int http_port() const;  // 0 if none

  // Open file descriptors of the daemon (/proc/<pid>/fd).
  int fd_count() const;

 private:
  explicit DaemonProcess(test_support::SpawnRequest request);
  std::string listening_address(const std::string& transport) const;
};

// The port of "127.0.0.1:PORT" (or "[::1]:PORT"), or 0.
int port_of(const std::string& address);

}  // namespace snowid::daemon_test
