// An etcd leader stopped past the leases' TTL and then resumed. Only etcd's
// leader expires leases; one stopped (SIGSTOP) while the other members elect
// a new leader, which the holders keep renewing with, finds every lease
// expired by its own stale view when it resumes, and may revoke them 20 to
// 120 ms after SIGCONT, before it learns that it no longer leads
// (etcd-io/etcd#15247). The fix (a leadership check before revoking, etcd
// 3.4.31, 3.5.13, 3.6.0) is skipped when the member ticked within the last
// three heartbeat intervals, as a resumed process does at once, since 3.4.34
// and 3.5.16 and in every 3.6 and 3.7 release: there the revocation still
// happens in some runs (docs/leases.md, "Which etcd").
//
// So the test asserts what snowid guarantees whatever etcd does, and reports
// what etcd did: holders renewing through the followers keep their leases
// through the pause, issue nothing on a revoked worker once they have called
// it lost, carry on with fresh workers, and no id is issued twice. It runs
// against the etcd in $SNOWID_ETCD_BIN (scripts/test: $SNOWID_ETCD_VERSION)
// and prints its figures on lines starting "[figure]".
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "holder_process.h"
#include "testing/etcd_cluster.h"

namespace snowid::leases_test {
namespace {

using etcd::testing::EtcdCluster;
using etcd::testing::EtcdClusterOptions;
using json = nlohmann::json;
using std::chrono::seconds;

double ms_of(long long ns) { return static_cast<double>(ns) / 1e6; }
constexpr long long kNsPerS = 1'000'000'000LL;

bool is_event(const json& j, const std::string& e) { return j.value("event", "") == e; }
bool is_loss(const json& j) {
  return is_event(j, "refused") ||
         (is_event(j, "lease") && j.value("what", "").find("lost") != std::string::npos);
}
// Worker (region << 8 | host) of an id in the default layout.
std::uint32_t worker_of(std::uint64_t id) { return static_cast<std::uint32_t>((id >> 12) & 0x3ff); }

// The worker named at the end of a lease event ("acquired worker 1/7",
// "lease lost on worker 1/7"), or nullopt.
std::optional<std::uint32_t> worker_in(const json& j, const std::string& what) {
  const std::string text = j.value("what", "");
  if (!is_event(j, "lease") || text.find(what + " worker ") == std::string::npos) {
    return std::nullopt;
  }
  const std::string rh = text.substr(text.rfind(' ') + 1);
  const std::size_t slash = rh.find('/');
  return static_cast<std::uint32_t>(std::stoul(rh.substr(0, slash)) << 8 |
                                    std::stoul(rh.substr(slash + 1)));
}

// How many lines of `file` contain `text`.
int lines_with(const std::string& file, const std::string& text) {
  std::ifstream in(file);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(text) != std::string::npos;
  return n;
}

// Four holders, two on each follower (each given both followers, never the
// leader), with the default timing: TTL 10 s, renewals every 3 s, issuing
// stops 8 s after the last renewal that succeeded. The leader stays stopped
// for 12 s, past the TTL; then 5 s, longer than a renewal period, so that a
// revoked lease is noticed by then even if no watch delivers the deletion.
TEST(PausedEtcdLeader, HoldersOnTheFollowersKeepIssuingUniqueIdsWhenTheLeaderResumes) {
  EtcdClusterOptions o;
  o.members = 3;
  auto started = EtcdCluster::start(o);
  ASSERT_TRUE(started.is_ok()) << started.status().to_string();
  EtcdCluster& etcd = *started.value();
  ASSERT_TRUE(etcd.initialize_namespace("default").is_ok());
  const auto version = etcd.version(0);
  ASSERT_TRUE(version.is_ok()) << version.status().to_string();
  const auto leader = etcd.leader_index();
  ASSERT_TRUE(leader.is_ok()) << leader.status().to_string();
  std::vector<std::string> followers;
  for (int i = 0; i < etcd.size(); ++i) {
    if (i != leader.value()) followers.push_back(etcd.endpoint(i));
  }
  ASSERT_EQ(followers.size(), 2u);

  std::vector<std::unique_ptr<HolderProcess>> holders;
  for (int h = 0; h < 4; ++h) {
    const std::string& first = followers[static_cast<std::size_t>(h % 2)];
    const std::string& second = followers[static_cast<std::size_t>(1 - h % 2)];
    holders.push_back(
        HolderProcess::spawn({SNOWID_LEASE_HOLDER_PATH, "--etcd", first + "," + second, "--region",
                              "1", "--every-us", "10000"}));
    ASSERT_NE(holders.back(), nullptr);
  }
  for (const auto& holder : holders) {
    ASSERT_TRUE(holder->wait_for([](const json& j) { return is_event(j, "id"); }, seconds(20)))
        << "a holder never issued";
  }
  // A renewal of each lease through the leader before it stops.
  std::this_thread::sleep_for(seconds(4));

  const long long stopped_at = mono_ns_now();
  ASSERT_TRUE(etcd.signal(leader.value(), SIGSTOP).is_ok());
  std::this_thread::sleep_for(seconds(12));
  const long long resumed_at = mono_ns_now();
  ASSERT_TRUE(etcd.signal(leader.value(), SIGCONT).is_ok());
  std::this_thread::sleep_for(seconds(5));
  const long long checked_until = mono_ns_now();

  int revoked = 0;
  double first_loss_ms = -1;
  std::set<std::uint64_t> ids;
  std::size_t total = 0, duplicates = 0;
  for (std::size_t h = 0; h < holders.size(); ++h) {
    bool lost = false;
    // Workers this holder has called lost and not acquired again since.
    std::set<std::uint32_t> given_up;
    long long last_id_at = 0;
    for (const json& j : holders[h]->lines()) {
      const long long at = j.value("mono_ns", 0LL);
      if (at > checked_until) break;
      if (is_event(j, "id")) {
        const std::uint64_t id = std::stoull(j.at("id").get<std::string>());
        ++total;
        if (!ids.insert(id).second) ++duplicates;
        EXPECT_EQ(given_up.count(worker_of(id)), 0u)
            << "holder " << h << " issued " << id << " on a worker it had called lost";
        last_id_at = at;
      } else if (const auto w = worker_in(j, "lost on")) {
        given_up.insert(*w);
      } else if (const auto again = worker_in(j, "acquired")) {
        given_up.erase(*again);
      }
      if (!is_loss(j) || at < stopped_at) continue;
      EXPECT_GE(at, resumed_at) << "holder " << h << " on a follower, " << ms_of(at - stopped_at)
                                << " ms into the leader's pause: " << j.dump();
      if (!lost) {
        const double ms = ms_of(at - resumed_at);
        first_loss_ms = first_loss_ms < 0 ? ms : std::min(first_loss_ms, ms);
      }
      lost = true;
    }
    revoked += lost ? 1 : 0;
    // Issuing again well before the end, on the same worker or a fresh one.
    EXPECT_GT(last_id_at, checked_until - 2 * kNsPerS)
        << "holder " << h << " was not issuing 3 s after the leader resumed";
  }
  EXPECT_EQ(duplicates, 0u);
  const int refused_by_check =
      lines_with(etcd.log_file(leader.value()), "Ignore the lease revoking request");
  std::cout << "[figure] etcd " << version.value() << ": leader (member " << leader.value()
            << ") stopped 12 s, TTL 10 s; leases lost after SIGCONT: " << revoked << " of 4";
  if (first_loss_ms >= 0) std::cout << " (the first " << first_loss_ms << " ms after it)";
  std::cout << "; the resumed leader's leadership check refused its revocation: "
            << (refused_by_check > 0 ? "yes" : "no") << "; " << total << " ids, " << duplicates
            << " duplicates\n";

  for (const auto& holder : holders) {
    holder->signal(SIGTERM);
    EXPECT_EQ(holder->wait_exit(seconds(15)), 0);
    EXPECT_TRUE(holder->garbage().empty());
  }
}

}  // namespace
}  // namespace snowid::leases_test
