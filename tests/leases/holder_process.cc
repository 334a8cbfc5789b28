#include "holder_process.h"

#include <ctime>

namespace snowid::leases_test {
namespace {

// Lines on stdout; stdin, stderr and the environment are the test's.
test_support::SpawnRequest holder_request(const std::vector<std::string>& argv) {
  test_support::SpawnRequest r;
  r.argv = argv;
  r.null_stdin = false;
  return r;
}

}  // namespace

long long mono_ns_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

HolderProcess::HolderProcess(const std::vector<std::string>& argv)
    : JsonLineProcess(holder_request(argv), Stream::kStdout) {}

std::unique_ptr<HolderProcess> HolderProcess::spawn(const std::vector<std::string>& argv) {
  std::unique_ptr<HolderProcess> p(new HolderProcess(argv));
  if (!p->start_error().empty()) return nullptr;
  return p;
}

}  // namespace snowid::leases_test
