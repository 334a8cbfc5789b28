// Worker ids held host-wide with the file registry: real holder processes
// (lease_holder) on different state directories, in different network
// namespaces (unshare -n) or with a wall clock set back (libfaketime), share
// one host directory of locks and marks. Each scenario prints its figures on
// lines starting "[figure]".
#include <gtest/gtest.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "holder_process.h"
#include "snowid/layout.h"
#include "snowid/time.h"
#include "temp_dir.h"

namespace snowid::leases_test {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

std::uint32_t worker_of(std::uint64_t id) { return static_cast<std::uint32_t>((id >> 12) & 0x3ff); }

bool is_event(const json& j, const std::string& e) { return j.value("event", "") == e; }

std::vector<std::uint64_t> ids_of(const HolderProcess& h) {
  std::vector<std::uint64_t> out;
  for (const json& j : h.lines()) {
    if (is_event(j, "id")) out.push_back(std::stoull(j.at("id").get<std::string>()));
  }
  return out;
}

std::optional<json> first_event(const HolderProcess& h, const std::string& event) {
  for (const json& j : h.lines()) {
    if (is_event(j, event)) return j;
  }
  return std::nullopt;
}

std::string own_netns() {
  char buf[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/ns/net", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// A host-lock prefix no other test run shares.
std::string test_prefix() { return "snowid-test-hostwide-" + std::to_string(::getpid()); }

class HostWideLease : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()) << "no temporary directory"; }

  // lease_holder on the file registry in state directory `state`, with this
  // test's host directory and prefix.
  std::vector<std::string> holder_args(const std::string& state,
                                       const std::vector<std::string>& more) const {
    std::vector<std::string> args = {SNOWID_LEASE_HOLDER_PATH,
                                     "--state-dir",
                                     tmp_.file(state),
                                     "--host-lock",
                                     prefix_,
                                     "--host-dir",
                                     tmp_.file("host"),
                                     "--quarantine-ms",
                                     "0"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  test_support::TempDir tmp_{"snowid-hostwide"};
  const std::string prefix_ = test_prefix();
};

// The finding: two processes, each with its own state directory and network
// namespace, both leased worker 0/0 and issued the same ids, because the
// abstract socket that was the only host-wide claim is per namespace. The
// host directory's lock files are not.
TEST_F(HostWideLease, HoldersInSeparateNetworkNamespacesAndDirectoriesTakeDistinctWorkers) {
  ASSERT_EQ(::access(SNOWID_UNSHARE_PATH, X_OK), 0)
      << "unshare is missing (\"" << SNOWID_UNSHARE_PATH
      << "\"): run scripts/install-deps (Debian package util-linux)";
  constexpr long kEach = 150'000;
  const std::vector<std::string> more = {"--count", std::to_string(kEach), "--every-us", "0"};
  std::vector<std::unique_ptr<HolderProcess>> holders;
  for (const char* state : {"a", "b"}) {
    std::vector<std::string> argv = holder_args(state, more);
    argv.insert(argv.begin(), {SNOWID_UNSHARE_PATH, "--net"});
    holders.push_back(HolderProcess::spawn(argv));
    ASSERT_NE(holders.back(), nullptr);
  }
  for (auto& h : holders) EXPECT_EQ(h->wait_exit(seconds(120)), 0) << "a holder failed";

  // Each in a network namespace of its own.
  const std::optional<json> a_start = first_event(*holders[0], "started");
  const std::optional<json> b_start = first_event(*holders[1], "started");
  ASSERT_TRUE(a_start && b_start) << "a holder did not start";
  const std::string a_ns = a_start->at("netns").get<std::string>();
  const std::string b_ns = b_start->at("netns").get<std::string>();
  EXPECT_NE(a_ns, b_ns);
  EXPECT_NE(a_ns, own_netns());
  EXPECT_NE(b_ns, own_netns());

  std::map<std::uint64_t, int> seen;
  std::size_t total = 0;
  std::size_t duplicates = 0;
  std::vector<std::uint32_t> workers;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;  // first and last id
  for (const auto& h : holders) {
    const std::optional<json> acquired = first_event(*h, "acquired");
    ASSERT_TRUE(acquired) << "a holder never acquired";
    const std::uint32_t worker = (acquired->at("region").get<std::uint32_t>() << 8) |
                                 acquired->at("host").get<std::uint32_t>();
    workers.push_back(worker);
    const std::vector<std::uint64_t> ids = ids_of(*h);
    EXPECT_EQ(ids.size(), static_cast<std::size_t>(kEach));
    for (std::uint64_t id : ids) {
      ++total;
      if (seen[id]++ > 0) ++duplicates;
      if (worker_of(id) != worker) ADD_FAILURE() << "id " << id << " is not of worker " << worker;
    }
    if (!ids.empty()) spans.emplace_back(ids.front(), ids.back());
  }
  ASSERT_EQ(spans.size(), 2u);
  // Ids in time order: the spans of time bits overlap when the two issued at once.
  const bool overlapped = (spans[0].first >> 22) <= (spans[1].second >> 22) &&
                          (spans[1].first >> 22) <= (spans[0].second >> 22);
  std::cout << "[figure] two holders in network namespaces " << a_ns << " and " << b_ns
            << ", separate state directories: workers " << (workers[0] >> 8) << "/"
            << (workers[0] & 0xff) << " and " << (workers[1] >> 8) << "/" << (workers[1] & 0xff)
            << ", " << total << " ids, " << duplicates << " duplicates, issuing "
            << (overlapped ? "at once" : "one after the other") << "\n";
  EXPECT_NE(workers[0], workers[1]);
  EXPECT_EQ(duplicates, 0u);
  EXPECT_TRUE(overlapped) << "the holders did not issue at the same time";
}

// The second finding: a pinned id released through directory A was taken
// through directory B by a holder whose clock is 3 s behind, which then
// issued ids A had issued already, because the mark was per directory. The
// host mark carries A's high water and release time to B, which must refuse
// or wait, and never issue at or below A's last id.
TEST_F(HostWideLease, PinnedIdReleasedInOneDirectoryIsNotReissuedFromAnotherWithClockBehind) {
  ASSERT_TRUE(SNOWID_LIBFAKETIME_PATH[0] != '\0' && ::access(SNOWID_LIBFAKETIME_PATH, R_OK) == 0)
      << "libfaketime.so.1 is missing (\"" << SNOWID_LIBFAKETIME_PATH
      << "\"): run scripts/install-deps (Debian package faketime)";
  auto a = HolderProcess::spawn(
      holder_args("a", {"--host", "0", "--count", "20000", "--every-us", "0"}));
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->wait_exit(seconds(60)), 0) << "holder A failed";
  const std::vector<std::uint64_t> a_ids = ids_of(*a);
  ASSERT_FALSE(a_ids.empty());
  const std::uint64_t a_last = *std::max_element(a_ids.begin(), a_ids.end());
  const std::optional<json> closed = first_event(*a, "closed");
  ASSERT_TRUE(closed);
  EXPECT_EQ(closed->at("code").get<std::string>(), "OK") << "A did not release its id";

  const std::int64_t test_wall_ms = unix_ms(system_clock().wall_now());
  // An ASan-built holder refuses a preloaded library it did not link first.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string asan_options =
      (asan != nullptr && *asan != '\0' ? std::string(asan) + ":" : "") +
      "verify_asan_link_order=0";
  auto b = HolderProcess::spawn(
      holder_args("b", {"--host", "0", "--count", "2000", "--every-us", "0", "--skew-ms", "0"}),
      {"LD_PRELOAD=" + std::string(SNOWID_LIBFAKETIME_PATH), "FAKETIME=-3",
       "FAKETIME_DONT_FAKE_MONOTONIC=1", "ASAN_OPTIONS=" + asan_options});
  ASSERT_NE(b, nullptr);
  const std::optional<int> b_exit = b->wait_exit(seconds(60));
  ASSERT_TRUE(b_exit) << "holder B did not finish";
  const std::optional<json> b_start = first_event(*b, "started");
  ASSERT_TRUE(b_start) << "holder B did not start";
  const std::int64_t behind_ms = test_wall_ms - b_start->at("wall_ms").get<std::int64_t>();
  EXPECT_GT(behind_ms, 2000) << "B's clock is not behind: libfaketime did not take";
  EXPECT_LT(behind_ms, 4500);

  const std::vector<std::uint64_t> b_ids = ids_of(*b);
  const auto repeated =
      std::count_if(b_ids.begin(), b_ids.end(), [&](std::uint64_t id) { return id <= a_last; });
  std::cout << "[figure] pinned id released through directory A after " << a_ids.size()
            << " ids; B, " << behind_ms << " ms behind, exited " << *b_exit << " after "
            << b_ids.size() << " ids, " << repeated << " of them at or below A's last id\n";
  EXPECT_EQ(repeated, 0);
  // Refused (exit 1 before any id) or waited and issued all it was asked.
  if (b_ids.empty()) {
    EXPECT_EQ(*b_exit, 1);
  } else {
    EXPECT_EQ(*b_exit, 0);
  }
}

}  // namespace
}  // namespace snowid::leases_test
