// A child process whose stdout is a stream of JSON lines (lease_holder), read
// on a thread of its own so that a test can wait for events while the child
// runs, stop it, kill it, and look at everything it said.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "snowid/time.h"

namespace snowid::leases_test {

class HolderProcess {
 public:
  // Starts `argv[0]` with the given arguments; stderr goes to the test's stderr.
  static std::unique_ptr<HolderProcess> spawn(const std::vector<std::string>& argv);
  // Kills the child if it still runs, and reaps it.
  ~HolderProcess();
  HolderProcess(const HolderProcess&) = delete;
  HolderProcess& operator=(const HolderProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  // The first line (from index `from` on) for which `pred` holds, waiting up to
  // `timeout`; nullopt on timeout or when the child's stdout closed first.
  std::optional<nlohmann::json> wait_for(const std::function<bool(const nlohmann::json&)>& pred,
                                         Duration timeout, std::size_t from = 0);
  // Everything read so far.
  std::vector<nlohmann::json> lines() const;
  // Lines that were not JSON (there should be none).
  std::vector<std::string> garbage() const;
  void signal(int sig);
  // Waits for the child to exit: its exit status, or -signal if killed by
  // one, or nullopt on timeout.
  std::optional<int> wait_exit(Duration timeout);

 private:
  HolderProcess() = default;
  void read_loop(int fd);

  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::thread reader_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<nlohmann::json> lines_;
  std::vector<std::string> garbage_;
  bool closed_ = false;
};

// The current CLOCK_MONOTONIC reading in ns, comparable with the "mono_ns" of
// lease_holder's lines.
long long mono_ns_now();

}  // namespace snowid::leases_test
