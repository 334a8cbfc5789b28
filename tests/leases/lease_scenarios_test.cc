// Lease scenarios against real processes: a real etcd (one member or three)
// started by the test, real holder processes (lease_holder) that the tests
// stop, kill and fence with real signals and with the real `snowid` tool.
// Each scenario prints its figures on lines starting "[figure]".
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "holder_process.h"
#include "snowid/etcd_registry.h"
#include "snowid/layout.h"
#include "testing/etcd_cluster.h"

extern char** environ;

namespace snowid::leases_test {
namespace {

using etcd::testing::EtcdCluster;
using etcd::testing::EtcdClusterOptions;
using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr double kNsPerMs = 1e6;

// Worker (region << 8 | host), and milliseconds since the Unix epoch, of an id
// in the default layout.
std::uint32_t worker_of(std::uint64_t id) { return static_cast<std::uint32_t>((id >> 12) & 0x3ff); }
std::int64_t unix_ms_of(std::uint64_t id) {
  return static_cast<std::int64_t>(id >> 22) + Layout::snowid_default().epoch_unix_ms();
}

bool is_event(const json& j, const std::string& e) { return j.value("event", "") == e; }

std::unique_ptr<EtcdCluster> start_etcd(int members) {
  EtcdClusterOptions o;
  o.members = members;
  auto c = EtcdCluster::start(o);
  EXPECT_TRUE(c.is_ok()) << c.status().to_string();
  if (!c.is_ok()) return nullptr;
  // The holders' namespace, /snowid/default, is new: they need not wait.
  EXPECT_TRUE(c.value()->initialize_namespace("default").is_ok());
  return std::move(c.value());
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::unique_ptr<HolderProcess> start_holder(std::vector<std::string> args) {
  args.insert(args.begin(), SNOWID_LEASE_HOLDER_PATH);
  auto p = HolderProcess::spawn(args);
  EXPECT_NE(p, nullptr);
  return p;
}

struct IdEvent {
  std::uint64_t id;
  long long mono_ns;
};

std::vector<IdEvent> ids_of(const std::vector<json>& lines) {
  std::vector<IdEvent> out;
  for (const json& j : lines) {
    if (is_event(j, "id")) {
      out.push_back({std::stoull(j.at("id").get<std::string>()), j.at("mono_ns").get<long long>()});
    }
  }
  return out;
}

// No id appears twice across all the given holders' output.
void expect_all_unique(const std::vector<const HolderProcess*>& holders) {
  std::set<std::uint64_t> seen;
  std::size_t total = 0;
  for (const HolderProcess* h : holders) {
    for (const IdEvent& e : ids_of(h->lines())) {
      ++total;
      EXPECT_TRUE(seen.insert(e.id).second) << "duplicate id " << e.id;
    }
  }
  std::cout << "[figure] " << total << " ids checked, all distinct\n";
}

// Runs the snowid tool to completion: its exit status.
int run_tool(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {SNOWID_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, raw[0], nullptr, nullptr, raw.data(), environ) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// With the whole cluster stopped, renewals fail; the holder must stop issuing
// by stop_after (8 s) past its last successful renewal, which was sent before
// the stop, so no later than 8 s after SIGSTOP, and well before etcd could
// expire the lease (10 s). Kept stopped past the TTL, the holder must call
// the lease lost; after SIGCONT it takes the same id again (pinned, no
// quarantine) and issues only past the mark it left.
TEST(LeaseScenario, StoppedClusterHolderStopsBeforeLeaseCouldExpireThenRecovers) {
  auto etcd = start_etcd(3);
  ASSERT_NE(etcd, nullptr);
  auto holder = start_holder(
      {"--etcd", join(etcd->endpoints()), "--region", "1", "--host", "9", "--quarantine-ms", "0"});
  ASSERT_TRUE(holder->wait_for([](const json& j) { return is_event(j, "id"); }, seconds(20)))
      << "the holder never issued";
  // Let a renewal or two happen first.
  std::this_thread::sleep_for(seconds(4));

  const long long stopped_at = mono_ns_now();
  for (int i = 0; i < etcd->size(); ++i) ASSERT_TRUE(etcd->signal(i, SIGSTOP).is_ok());
  const std::size_t mark = holder->lines().size();
  auto refused =
      holder->wait_for([](const json& j) { return is_event(j, "refused"); }, seconds(12), mark);
  ASSERT_TRUE(refused) << "the holder kept issuing with the cluster stopped";
  const long long refused_at = refused->at("mono_ns").get<long long>();
  long long last_id_at = 0;
  std::int64_t last_old_ms = INT64_MIN;
  for (const IdEvent& e : ids_of(holder->lines())) {
    if (e.mono_ns < refused_at) {
      last_id_at = std::max(last_id_at, e.mono_ns);
      last_old_ms = std::max(last_old_ms, unix_ms_of(e.id));
    }
  }
  const double stop_ms = (refused_at - stopped_at) / kNsPerMs;
  const double last_id_ms = (last_id_at - stopped_at) / kNsPerMs;
  std::cout << "[figure] cluster stopped: last id " << last_id_ms << " ms after SIGSTOP, first "
            << "refusal (" << refused->at("code").get<std::string>() << ") " << stop_ms
            << " ms after SIGSTOP; stop_after 8000 ms, lease TTL 10000 ms\n";
  EXPECT_EQ(refused->at("code").get<std::string>(), "LEASE_UNCERTAIN");
  // The bound that matters: the lease cannot expire before 10 s.
  EXPECT_LT(last_id_ms, 10'000.0);
  EXPECT_LT(stop_ms, 10'000.0);

  // Beyond the TTL: the holder must call the lease lost.
  auto lost = holder->wait_for(
      [](const json& j) {
        return is_event(j, "lease") && j.value("what", "").find("lost") != std::string::npos;
      },
      seconds(10), mark);
  ASSERT_TRUE(lost) << "the holder never called the lease lost";
  const double lost_ms = (lost->at("mono_ns").get<long long>() - stopped_at) / kNsPerMs;
  std::this_thread::sleep_for(seconds(2));
  const long long resumed_at = mono_ns_now();
  for (int i = 0; i < etcd->size(); ++i) ASSERT_TRUE(etcd->signal(i, SIGCONT).is_ok());
  const std::size_t before_resume = holder->lines().size();
  auto reacquired = holder->wait_for(
      [](const json& j) {
        return is_event(j, "lease") && j.value("what", "").find("acquired") != std::string::npos;
      },
      seconds(30), before_resume);
  ASSERT_TRUE(reacquired) << "the holder did not acquire again after SIGCONT";
  auto again =
      holder->wait_for([](const json& j) { return is_event(j, "id"); }, seconds(10), before_resume);
  ASSERT_TRUE(again) << "the holder did not resume issuing after SIGCONT";
  const std::uint64_t first_new = std::stoull(again->at("id").get<std::string>());
  std::cout << "[figure] lease called lost " << lost_ms << " ms after SIGSTOP; issuing resumed "
            << (again->at("mono_ns").get<long long>() - resumed_at) / kNsPerMs
            << " ms after SIGCONT on the same worker; its first id is "
            << unix_ms_of(first_new) - last_old_ms << " ms past the last id before the stop\n";
  EXPECT_EQ(worker_of(first_new), (1u << 8) | 9u);
  // The same id, taken again: nothing at or before what was issued before.
  EXPECT_GT(unix_ms_of(first_new), last_old_ms);
  holder->signal(SIGTERM);
  EXPECT_EQ(holder->wait_exit(seconds(15)), 0);
  expect_all_unique({holder.get()});
  EXPECT_TRUE(holder->garbage().empty());
}

// Killing the leader of a 3-member cluster must not interrupt issuing: the
// client fails over and the lease survives the election.
TEST(LeaseScenario, KilledLeaderDoesNotInterruptIssuing) {
  auto etcd = start_etcd(3);
  ASSERT_NE(etcd, nullptr);
  auto holder = start_holder({"--etcd", join(etcd->endpoints())});
  ASSERT_TRUE(holder->wait_for([](const json& j) { return is_event(j, "id"); }, seconds(20)));
  std::this_thread::sleep_for(seconds(1));
  auto leader = etcd->leader_index();
  ASSERT_TRUE(leader.is_ok()) << leader.status().to_string();
  const long long killed_at = mono_ns_now();
  ASSERT_TRUE(etcd->signal(leader.value(), SIGKILL).is_ok());
  const std::size_t mark = holder->lines().size();
  // Three renewal periods after the kill.
  std::this_thread::sleep_for(seconds(10));
  auto refused =
      holder->wait_for([](const json& j) { return is_event(j, "refused"); }, milliseconds(1), mark);
  EXPECT_FALSE(refused) << "the holder refused after the leader was killed: " << refused->dump();
  long long prev = killed_at, max_gap = 0;
  std::size_t after = 0;
  for (const IdEvent& e : ids_of(holder->lines())) {
    if (e.mono_ns < killed_at) continue;
    ++after;
    max_gap = std::max(max_gap, e.mono_ns - prev);
    prev = e.mono_ns;
  }
  std::cout << "[figure] leader (member " << leader.value() << ") killed: " << after
            << " ids in the next 10 s, longest gap between ids " << max_gap / kNsPerMs
            << " ms, no refusal\n";
  EXPECT_GT(after, 1000u);
  holder->signal(SIGTERM);
  EXPECT_EQ(holder->wait_exit(seconds(15)), 0);
  expect_all_unique({holder.get()});
}

// A holder killed with SIGKILL cannot release. Its successor on the same id
// (pinned, no quarantine, a 1 s skew margin to make the wait visible) gets
// the id once the lease expires, and issues nothing before the mark + skew.
TEST(LeaseScenario, SuccessorOfKilledHolderWaitsOutItsMark) {
  auto etcd = start_etcd(1);
  ASSERT_NE(etcd, nullptr);
  const std::vector<std::string> common = {"--etcd",          join(etcd->endpoints()),
                                           "--region",        "2",
                                           "--host",          "7",
                                           "--ttl-s",         "2",
                                           "--renew-ms",      "500",
                                           "--stop-ms",       "1900",
                                           "--quarantine-ms", "0",
                                           "--skew-ms",       "1000"};
  auto first = start_holder(common);
  ASSERT_TRUE(first->wait_for([](const json& j) { return is_event(j, "id"); }, seconds(20)));
  std::this_thread::sleep_for(seconds(2));
  first->signal(SIGKILL);
  first->wait_exit(seconds(5));
  const long long killed_at = mono_ns_now();

  // The mark the killed holder left, read as an operator would.
  EtcdOptions eo;
  eo.endpoints = etcd->endpoints();
  auto registry = make_etcd_registry(system_clock(), eo);
  ASSERT_TRUE(registry.is_ok()) << registry.status().to_string();
  auto records = registry.value()->list(2u);
  ASSERT_TRUE(records.is_ok()) << records.status().to_string();
  std::optional<WallTime> mark;
  for (const WorkerRecord& r : records.value()) {
    if (r.worker.region == 2 && r.worker.host == 7) mark = r.high_water;
  }
  ASSERT_TRUE(mark.has_value()) << "no mark recorded for 2/7";

  // The id stays held until the lease expires: retry until a successor gets it.
  std::unique_ptr<HolderProcess> second;
  for (int attempt = 0; attempt < 40 && !second; ++attempt) {
    auto p = start_holder(common);
    if (p->wait_for([](const json& j) { return is_event(j, "acquired"); }, seconds(10))) {
      second = std::move(p);
    } else {
      p->wait_exit(seconds(5));
      std::this_thread::sleep_for(milliseconds(200));
    }
  }
  ASSERT_NE(second, nullptr) << "no successor could take 2/7";
  auto first_id = second->wait_for([](const json& j) { return is_event(j, "id"); }, seconds(10));
  ASSERT_TRUE(first_id);
  const std::uint64_t id = std::stoull(first_id->at("id").get<std::string>());
  const std::int64_t mark_ms = unix_ms(*mark);
  std::int64_t last_killed_ms = INT64_MIN;
  for (const IdEvent& e : ids_of(first->lines()))
    last_killed_ms = std::max(last_killed_ms, unix_ms_of(e.id));
  std::cout << "[figure] killed holder's last id at mark - " << (mark_ms - last_killed_ms)
            << " ms; successor acquired "
            << (second->lines().front().at("mono_ns").get<long long>() - killed_at) / kNsPerMs
            << " ms after the kill, first id at mark + " << (unix_ms_of(id) - mark_ms) << " ms\n";
  EXPECT_EQ(worker_of(id), (2u << 8) | 7u);
  EXPECT_LE(last_killed_ms, mark_ms) << "the killed holder issued past its recorded mark";
  EXPECT_GE(unix_ms_of(id), mark_ms + 1000) << "the successor issued before mark + skew";
  second->signal(SIGTERM);
  EXPECT_EQ(second->wait_exit(seconds(15)), 0);
  expect_all_unique({first.get(), second.get()});
}

// `snowid workers fence` revokes the lease; the holder stops at once and
// carries on with a fresh id. The target is to stop within 100 ms of the
// revocation, which happens while the tool runs; the test checks liveness (a
// second after the tool started) and prints the figure.
void fence_scenario(const std::string& name, const std::vector<std::string>& registry_args,
                    const std::vector<std::string>& holder_only = {}) {
  std::vector<std::string> holder_args = registry_args;
  holder_args.insert(holder_args.end(), holder_only.begin(), holder_only.end());
  holder_args.insert(holder_args.end(), {"--region", "3"});
  auto holder = start_holder(holder_args);
  auto acquired =
      holder->wait_for([](const json& j) { return is_event(j, "acquired"); }, seconds(20));
  ASSERT_TRUE(acquired);
  ASSERT_TRUE(holder->wait_for([](const json& j) { return is_event(j, "id"); }, seconds(10)));
  const int host = acquired->at("host").get<int>();

  std::vector<std::string> tool_args = {"workers", "fence", "3", std::to_string(host)};
  tool_args.insert(tool_args.end(), registry_args.begin(), registry_args.end());
  const long long fence_started = mono_ns_now();
  ASSERT_EQ(run_tool(tool_args), 0);
  const long long fence_done = mono_ns_now();
  auto lost = holder->wait_for(
      [](const json& j) {
        return is_event(j, "refused") ||
               (is_event(j, "lease") && j.value("what", "").find("lost") != std::string::npos);
      },
      seconds(5));
  ASSERT_TRUE(lost) << "the holder never noticed the fence";
  const long long lost_at = lost->at("mono_ns").get<long long>();
  long long last_old = 0;
  const std::uint32_t old_worker = (3u << 8) | static_cast<std::uint32_t>(host);
  for (const IdEvent& e : ids_of(holder->lines())) {
    if (worker_of(e.id) == old_worker) last_old = std::max(last_old, e.mono_ns);
  }
  std::cout << "[figure] fence (" << name << "): the tool ran "
            << (fence_done - fence_started) / kNsPerMs
            << " ms in all; the holder reported the loss " << (lost_at - fence_started) / kNsPerMs
            << " ms after the tool started, and its last id on the fenced worker was printed "
            << (last_old - fence_started) / kNsPerMs << " ms after the tool started\n";
  EXPECT_LT(last_old - fence_started, 1'000'000'000LL);

  auto resumed = holder->wait_for(
      [&](const json& j) {
        return is_event(j, "id") &&
               worker_of(std::stoull(j.at("id").get<std::string>())) != old_worker;
      },
      seconds(20));
  ASSERT_TRUE(resumed) << "the holder did not take a fresh id after the fence";
  std::this_thread::sleep_for(milliseconds(500));
  holder->signal(SIGTERM);
  EXPECT_EQ(holder->wait_exit(seconds(15)), 0);
  // Nothing was issued on the fenced worker after the loss was reported.
  for (const IdEvent& e : ids_of(holder->lines())) {
    if (worker_of(e.id) == old_worker) EXPECT_LE(e.mono_ns, lost_at);
  }
  expect_all_unique({holder.get()});
}

TEST(LeaseScenario, FenceFromTheToolStopsAnEtcdHolderAndItTakesAFreshId) {
  auto etcd = start_etcd(1);
  ASSERT_NE(etcd, nullptr);
  fence_scenario("etcd", {"--etcd", join(etcd->endpoints())});
}

TEST(LeaseScenario, FenceFromTheToolStopsAFileRegistryHolderAndItTakesAFreshId) {
  std::string dir = (std::filesystem::temp_directory_path() / "snowid-lease-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  // The tool reads its host-lock names and host directory from the
  // environment; give both the same private ones so that this test cannot
  // meet another on the machine, and the host directory goes with `dir`.
  const std::string lock = "snowid-scenario-" + std::to_string(::getpid());
  const std::string host_dir = dir + "/host";
  ::setenv("SNOWID_HOST_LOCK", lock.c_str(), 1);
  ::setenv("SNOWID_HOST_DIR", host_dir.c_str(), 1);
  fence_scenario("file registry", {"--state-dir", dir},
                 {"--host-lock", lock, "--host-dir", host_dir});
  ::unsetenv("SNOWID_HOST_LOCK");
  ::unsetenv("SNOWID_HOST_DIR");
  std::filesystem::remove_all(dir);
}

// With nothing listening, a holder fails at start and issues nothing.
TEST(LeaseScenario, EtcdDownAtStartIsAClearErrorAndNothingIsIssued) {
  auto holder = start_holder({"--etcd", "http://127.0.0.1:9"});
  const std::optional<int> rc = holder->wait_exit(seconds(30));
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 1);
  EXPECT_TRUE(ids_of(holder->lines()).empty());
}

}  // namespace
}  // namespace snowid::leases_test
