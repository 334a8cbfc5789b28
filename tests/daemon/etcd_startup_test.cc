// snowidd against a real etcd (etcd/testing). A port in use stops the start
// before the registry is reached, so no holder key and no mark are written
// and no worker id sits out a quarantine for a daemon that never served. A
// daemon pinned to one worker id and stopped cleanly can start again on it
// at once; one killed cannot until its lease expires and its id has rested.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "snowid/layout.h"
#include "test_support.h"
#include "testing/etcd_cluster.h"

namespace snowid::daemon_test {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Steady = std::chrono::steady_clock;

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

// The value of `key` in the etcd at `endpoint`, read with etcdctl; empty if
// there is none.
std::string value_of(const std::string& endpoint, const std::string& key) {
  const std::string etcdctl = etcdctl_path();
  EXPECT_FALSE(etcdctl.empty()) << "etcdctl not found: run scripts/install-deps";
  const ProcessResult r =
      run_process({etcdctl, "--endpoints=" + endpoint, "get", key, "--print-value-only"},
                  {{"ETCDCTL_API", "3"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string out = r.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// The mark of worker 0/`host` under the daemon's default prefix and cluster.
json mark_of(const std::string& endpoint, std::uint32_t host) {
  const std::string text =
      value_of(endpoint, "/snowid/default/workers/0/" + std::to_string(host) + "/mark");
  json doc = json::parse(text, nullptr, false);
  EXPECT_TRUE(doc.is_object()) << "not a mark: \"" << text << "\"";
  return doc.is_object() ? doc : json::object();
}

// The Unix millisecond of an id of the default layout.
std::int64_t ms_of(std::uint64_t id) {
  return unix_ms(Layout::snowid_default().decode(id).value().time);
}

// Ids from NEXTIDS 1000, `rounds` times; a test failure if any is refused.
std::vector<std::uint64_t> take_ids(RespConn& c, int rounds) {
  std::vector<std::uint64_t> out;
  for (int i = 0; i < rounds; ++i) {
    const auto r = c.command({"NEXTIDS", "1000"});
    const auto ids = r ? ids_of(*r) : std::nullopt;
    EXPECT_TRUE(ids.has_value()) << (r ? r->debug() : "no reply");
    if (ids) out.insert(out.end(), ids->begin(), ids->end());
  }
  return out;
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

// Issue 12, case 4: the release kept the renewal mark (up to 8 s ahead of
// the last id) and the 10 s quarantine counted from it, so the pinned
// restart was refused for about 18 s (19.5 to 21.7 s behind a supervisor
// restarting it every 2 s). A clean release records the exact last instant
// and that it was clean; the id is free again at once and the successor
// waits only until its clock is max_clock_skew past that instant.
TEST(EtcdStartup, CleanlyStoppedPinnedDaemonStartsAgainAtOnceAboveItsLastId) {
  Result<std::unique_ptr<etcd::testing::EtcdCluster>> cluster = etcd::testing::EtcdCluster::start();
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().message();
  ASSERT_TRUE(cluster.value()->initialize_namespace("default").is_ok());
  const std::string endpoint = cluster.value()->endpoint(0);
  const std::vector<std::string> pinned = {"--etcd", endpoint, "--host", "7"};
  DaemonDir dir;
  auto first = dir.start_ready(pinned);
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  const std::vector<std::uint64_t> before = take_ids(*c, 3);
  ASSERT_FALSE(before.empty());
  const std::uint64_t top = *std::max_element(before.begin(), before.end());
  c.reset();
  first->signal(SIGTERM);
  const Steady::time_point stopped = Steady::now();
  ASSERT_EQ(first->wait_exit(seconds(30)), 0);

  // The registry's record: the exact last millisecond, released cleanly.
  const json mark = mark_of(endpoint, 7);
  EXPECT_EQ(mark.value("high_water_ms", std::int64_t{0}), ms_of(top)) << mark.dump();
  EXPECT_EQ(mark.value("clean_release_ms", std::int64_t{0}), ms_of(top)) << mark.dump();
  EXPECT_GE(mark.value("released_at_ms", std::int64_t{0}), ms_of(top)) << mark.dump();

  auto second = dir.start(pinned);
  ASSERT_TRUE(second->wait_ready(milliseconds(30000)))
      << "the pinned id was refused after a clean stop: " << second->raw_text();
  c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  // Until its clock is max_clock_skew (100 ms) past the mark, the successor
  // answers CLOCK_BEHIND, retryable.
  std::uint64_t next = 0;
  const Steady::time_point give_up = Steady::now() + seconds(10);
  while (next == 0 && Steady::now() < give_up) {
    const auto r = c->command({"NEXTID"});
    ASSERT_TRUE(r.has_value());
    if (const auto ids = ids_of(*r)) {
      next = ids->front();
      break;
    }
    ASSERT_EQ(r->error_word(), "CLOCK_BEHIND") << r->debug();
    std::this_thread::sleep_for(milliseconds(2));
  }
  const Steady::time_point serving = Steady::now();
  ASSERT_NE(next, 0u) << "nothing served within 10 s of the restart";
  const double down_ms = std::chrono::duration<double, std::milli>(serving - stopped).count();
  std::printf(
      "[ measured ] clean restart pinned to 0/7 with etcd: %.0f ms from SIGTERM to the first id "
      "of the restarted daemon, %lld ms past the last id before\n",
      down_ms, static_cast<long long>(ms_of(next) - ms_of(top)));
  std::fflush(stdout);
  EXPECT_GT(next, top);
  EXPECT_GE(ms_of(next), ms_of(top) + 100) << "not before the mark plus max_clock_skew";
  EXPECT_EQ(host_of(next), 7u);
  // Generous: the rules ask for 100 ms past the last id; it took 18 s or
  // more before.
  EXPECT_LT(serving - stopped, seconds(5));
  second->signal(SIGTERM);
  EXPECT_EQ(second->wait_exit(seconds(30)), 0);
}

// A killed daemon released nothing: its holder key lives until the lease
// expires, and the mark is the renewal mark, not vouched for by a clean
// release, so the id then rests out the whole quarantine.
TEST(EtcdStartup, KilledPinnedDaemonLeavesItsIdHeldAndItsMarkNotClean) {
  Result<std::unique_ptr<etcd::testing::EtcdCluster>> cluster = etcd::testing::EtcdCluster::start();
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().message();
  ASSERT_TRUE(cluster.value()->initialize_namespace("default").is_ok());
  const std::string endpoint = cluster.value()->endpoint(0);
  const std::vector<std::string> pinned = {"--etcd", endpoint, "--host", "9"};
  DaemonDir dir;
  auto first = dir.start_ready(pinned);
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  const std::vector<std::uint64_t> before = take_ids(*c, 2);
  ASSERT_FALSE(before.empty());
  const std::uint64_t top = *std::max_element(before.begin(), before.end());
  c.reset();
  first->signal(SIGKILL);
  ASSERT_TRUE(first->wait_exit(seconds(30)).has_value());

  const json mark = mark_of(endpoint, 9);
  EXPECT_GT(mark.value("high_water_ms", std::int64_t{0}), ms_of(top) + 4000)
      << "the renewal mark, stop_after ahead of its send: " << mark.dump();
  EXPECT_FALSE(mark.contains("clean_release_ms")) << mark.dump();
  EXPECT_FALSE(value_of(endpoint, "/snowid/default/workers/0/9/holder").empty());

  auto second = dir.start(pinned);
  EXPECT_EQ(second->wait_exit(seconds(30)), 1);
  const auto failed = second->wait_for("start failed", seconds(1));
  ASSERT_TRUE(failed.has_value()) << second->raw_text();
  EXPECT_NE(failed->value("error", "").find("worker 0/9 is held by"), std::string::npos)
      << failed->dump();
}

}  // namespace
}  // namespace snowid::daemon_test
