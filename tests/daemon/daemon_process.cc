#include "daemon_process.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <string_view>

extern char** environ;

namespace snowid::daemon_test {
namespace {

// Settings, clock fakes, and an orchestrator's variables, which would make
// the file registry refuse to start (the tests that need them set them).
bool inherited_but_not_wanted(std::string_view entry) {
  return entry.starts_with("SNOWID_") || entry.starts_with("FAKETIME") ||
         entry.starts_with("LD_PRELOAD=") || entry.starts_with("KUBERNETES_SERVICE_HOST=") ||
         entry.starts_with("ECS_CONTAINER_METADATA_URI") || entry.starts_with("NOMAD_ALLOC_ID=");
}

}  // namespace

std::string unique_host_lock() {
  static std::atomic<int> counter{0};
  return "snowid-test-" + std::to_string(getpid()) + "-" + std::to_string(counter.fetch_add(1));
}

std::vector<std::string> child_environment(const Env& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (inherited_but_not_wanted(entry)) continue;
    bool overridden = false;
    for (const auto& [k, v] : extra) overridden |= entry.starts_with(k + "=");
    if (!overridden) env.emplace_back(entry);
  }
  for (std::size_t i = 0; i < extra.size(); ++i) {
    bool later = false;
    for (std::size_t j = i + 1; j < extra.size(); ++j) later |= extra[j].first == extra[i].first;
    if (!later) env.push_back(extra[i].first + "=" + extra[i].second);
  }
  return env;
}

ProcessResult run_process(const std::vector<std::string>& argv, const Env& extra, Millis timeout) {
  return test_support::run_to_completion({.argv = argv, .env = child_environment(extra)}, timeout);
}

DaemonProcess::DaemonProcess(test_support::SpawnRequest request)
    : JsonLineProcess(std::move(request), Stream::kStderr) {}

std::unique_ptr<DaemonProcess> DaemonProcess::start(const std::vector<std::string>& args,
                                                    const Env& extra) {
  std::vector<std::string> argv = {SNOWIDD_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  std::unique_ptr<DaemonProcess> p(
      new DaemonProcess({.argv = std::move(argv), .env = child_environment(extra)}));
  if (!p->start_error().empty()) ADD_FAILURE() << p->start_error();
  return p;
}

DaemonProcess::~DaemonProcess() {
  kill_and_reap();
  // A sanitizer build of the daemon reports on stderr; a report fails the
  // test even when the daemon was killed before it could exit non-zero.
  for (const std::string& line : garbage()) {
    if (line.find("Sanitizer") != std::string::npos ||
        line.find("runtime error:") != std::string::npos) {
      ADD_FAILURE() << "snowidd (pid " << pid() << ") reported: " << line;
      break;
    }
  }
  if (::testing::Test::HasFailure()) {
    std::cerr << "---- snowidd (pid " << pid() << ") stderr ----\n"
              << raw_text() << "---- end of snowidd stderr ----\n";
  }
}

std::optional<nlohmann::json> DaemonProcess::wait_for(const std::string& msg, Millis timeout,
                                                      std::size_t from) {
  return wait_for([&](const nlohmann::json& j) { return j.value("msg", "") == msg; }, timeout,
                  from);
}

bool DaemonProcess::wait_ready(Millis timeout) {
  const auto line = wait_for(
      [](const nlohmann::json& j) {
        const std::string msg = j.value("msg", "");
        return msg == "ready" || msg == "start failed" || msg == "stopped";
      },
      timeout);
  return line && line->value("msg", "") == "ready";
}

std::string DaemonProcess::raw_text() const {
  std::string out;
  for (const std::string& l : raw_lines()) out += l + "\n";
  return out;
}

std::string DaemonProcess::listening_address(const std::string& transport) const {
  for (const nlohmann::json& j : lines()) {
    if (j.value("msg", "") == "listening" && j.value("transport", "") == transport) {
      return j.value("address", "");
    }
  }
  return "";
}

std::string DaemonProcess::socket_path() const { return listening_address("unix"); }
int DaemonProcess::tcp_port() const { return port_of(listening_address("tcp")); }
int DaemonProcess::http_port() const { return port_of(listening_address("http")); }

int DaemonProcess::fd_count() const {
  const std::string dir = "/proc/" + std::to_string(pid()) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n;
}

int port_of(const std::string& address) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos) return 0;
  return std::atoi(address.c_str() + colon + 1);
}

}  // namespace snowid::daemon_test
