#include "holder_process.h"

#include <ctime>
#include <string>

extern char** environ;

namespace snowid::leases_test {
namespace {

// Lines on stdout; stdin and stderr are the test's, the environment too
// with `extra_env` over it.
test_support::SpawnRequest holder_request(const std::vector<std::string>& argv,
                                          const std::vector<std::string>& extra_env) {
  test_support::SpawnRequest r;
  r.argv = argv;
  r.null_stdin = false;
  if (!extra_env.empty()) {
    std::vector<std::string> env;
    auto overridden = [&](const std::string& entry) {
      const std::string name = entry.substr(0, entry.find('=') + 1);
      for (const std::string& e : extra_env) {
        if (e.compare(0, name.size(), name) == 0) return true;
      }
      return false;
    };
    for (char** e = environ; *e != nullptr; ++e) {
      if (!overridden(*e)) env.emplace_back(*e);
    }
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    r.env = std::move(env);
  }
  return r;
}

}  // namespace

long long mono_ns_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

HolderProcess::HolderProcess(const std::vector<std::string>& argv,
                             const std::vector<std::string>& extra_env)
    : JsonLineProcess(holder_request(argv, extra_env), Stream::kStdout) {}

std::unique_ptr<HolderProcess> HolderProcess::spawn(const std::vector<std::string>& argv,
                                                    const std::vector<std::string>& extra_env) {
  std::unique_ptr<HolderProcess> p(new HolderProcess(argv, extra_env));
  if (!p->start_error().empty()) return nullptr;
  return p;
}

}  // namespace snowid::leases_test
