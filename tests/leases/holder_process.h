// A child process whose stdout is a stream of JSON lines (lease_holder), read
// on a thread of its own so that a test can wait for events while the child
// runs, stop it, kill it, and look at everything it said
// (test_support::JsonLineProcess). Its stdin and stderr are the test's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "child_process.h"

namespace snowid::leases_test {

class HolderProcess : public test_support::JsonLineProcess {
 public:
  // Starts `argv[0]` with the given arguments, in the test's environment
  // plus `extra_env` ("NAME=value", later entries win); null if it cannot be
  // started.
  static std::unique_ptr<HolderProcess> spawn(const std::vector<std::string>& argv,
                                              const std::vector<std::string>& extra_env = {});

 private:
  HolderProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env);
};

// The current CLOCK_MONOTONIC reading in ns, comparable with the "mono_ns" of
// lease_holder's lines.
long long mono_ns_now();

}  // namespace snowid::leases_test
