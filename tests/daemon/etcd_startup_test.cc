// snowidd against a real etcd (etcd/testing): a port in use stops the start
// before the registry is reached, so no holder key and no mark are written
// and no worker id sits out a quarantine for a daemon that never served.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "testing/etcd_cluster.h"

namespace snowid::daemon_test {
namespace {

using std::chrono::seconds;

// `name` in $SNOWID_ETCDCTL_BIN, else the first executable on PATH; empty
// if none.
std::string etcdctl_path() {
  if (const char* bin = std::getenv("SNOWID_ETCDCTL_BIN"); bin != nullptr && *bin != '\0') {
    return bin;
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path == nullptr ? "" : path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/etcdctl";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Every key in the etcd at `endpoint`, one a line, read with etcdctl.
std::vector<std::string> all_keys(const std::string& endpoint) {
  const std::string etcdctl = etcdctl_path();
  EXPECT_FALSE(etcdctl.empty()) << "etcdctl not found: run scripts/install-deps";
  const ProcessResult r =
      run_process({etcdctl, "--endpoints=" + endpoint, "get", "", "--prefix", "--keys-only"},
                  {{"ETCDCTL_API", "3"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> keys;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) keys.push_back(line);
  }
  return keys;
}

// A TCP port on 127.0.0.1 held by a listening socket of this process.
struct HeldPort {
  HeldPort() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd, 0) << std::strerror(errno);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd, 4), 0);
    socklen_t len = sizeof addr;
    EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  }
  ~HeldPort() {
    if (fd >= 0) ::close(fd);
  }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  int fd = -1;
  std::string address;
};

TEST(EtcdStartup, PortInUseExitsTwoWithoutWritingAKey) {
  Result<std::unique_ptr<etcd::testing::EtcdCluster>> cluster = etcd::testing::EtcdCluster::start();
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().message();
  const std::string endpoint = cluster.value()->endpoint(0);
  ASSERT_TRUE(all_keys(endpoint).empty());

  const HeldPort held;
  DaemonDir dir;
  auto refused = dir.start({"--etcd", endpoint, "--http", held.address});
  EXPECT_EQ(refused->wait_exit(seconds(30)), 2);
  auto failed = refused->wait_for("start failed", seconds(1));
  ASSERT_TRUE(failed.has_value()) << refused->raw_text();
  EXPECT_NE(failed->value("error", "").find(held.address), std::string::npos) << failed->dump();
  EXPECT_EQ(all_keys(endpoint), std::vector<std::string>{});

  // The same daemon on a free port leases from this etcd: the keys the
  // refused start did not write.
  auto d = dir.start_ready({"--etcd", endpoint});
  EXPECT_FALSE(all_keys(endpoint).empty());
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(30)), 0);
}

}  // namespace
}  // namespace snowid::daemon_test
