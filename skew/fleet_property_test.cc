// Property tests of the whole decision pipeline (bursts, held estimates,
// judge, votes, quorum, cap) over a simulated region: random fleets, clock
// offsets and networks (docs/skew.md, "Tests").
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "testing/sim_fleet.h"

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;
using testing::SimFleet;
using testing::SimHost;
using testing::SimNetwork;

// Rounds enough for the 2-of-3 rule even with a lost burst.
constexpr int kRounds = 5;

std::string name(int i) { return "h" + std::to_string(i); }

Duration us(int n) { return std::chrono::microseconds(n); }

// An in-region network: one-way delays of 20 us to 2 ms, jitter, spikes (a
// busy CPU) and loss.
rc::Gen<SimNetwork> gen_network() {
  return rc::gen::exec([] {
    SimNetwork net;
    net.request = us(*rc::gen::inRange(20, 2000));
    net.answer = us(*rc::gen::inRange(20, 2000));
    net.jitter = us(*rc::gen::inRange(1, 200));
    net.spike_chance = *rc::gen::inRange(0, 40) / 100.0;
    net.spike = us(*rc::gen::inRange(100, 6000));
    net.loss = *rc::gen::inRange(0, 20) / 100.0;
    return net;
  });
}

// A good clock: within 1 ms of true time.
Duration gen_good_offset() { return us(*rc::gen::inRange(-1000, 1001)); }

// A wrong clock: 60 ms to 2 s off either way, beyond the 50 ms fence plus
// what a good clock and the measurement may take up.
Duration gen_wrong_offset() {
  const int size = *rc::gen::inRange(60'000, 2'000'001);
  return us(*rc::gen::element(1, -1) * size);
}

std::optional<Duration> gen_reference() {
  if (*rc::gen::arbitrary<bool>()) return std::nullopt;
  return us(*rc::gen::inRange(-500, 501));
}

// The cap, restated: max(1, floor(n / 5)) peer fences per window.
std::size_t cap_of(std::size_t n) { return n < 10 ? 1 : n / 5; }

// No more peer fences than the cap allows within one window.
void check_cap(const SimFleet& fleet, std::size_t n, const SkewSettings& s) {
  std::vector<WallTime> peer;
  for (const auto& f : fleet.fences()) {
    if (!f.self && f.why.decision == "fence") peer.push_back(f.at);
  }
  for (std::size_t i = 0; i < peer.size(); ++i) {
    const auto in_window = std::count_if(peer.begin(), peer.end(), [&](WallTime t) {
      return t >= peer[i] && t - peer[i] < s.fence_window;
    });
    RC_ASSERT(static_cast<std::size_t>(in_window) <= cap_of(n));
  }
}

// Every fence names its target and its evidence; peer fences their voters.
void check_explained(const SimFleet& fleet) {
  for (const auto& f : fleet.fences()) {
    RC_ASSERT(f.why.target == f.target);
    RC_ASSERT(f.why.deviation.has_value());
    if (!f.self) RC_ASSERT(!f.why.voters.empty());
    RC_ASSERT(to_log_line(f.why).find("target=" + f.target) != std::string::npos);
  }
}

RC_GTEST_PROP(SkewFleet, AWrongMinorityIsFencedAndNoGoodHostIs, ()) {
  const int n = *rc::gen::inRange(3, 13);
  const int wrong = *rc::gen::inRange(0, (n - 1) / 2 + 1);
  std::vector<SimHost> hosts;
  for (int i = 0; i < n; ++i) {
    hosts.push_back({name(i), i < wrong ? gen_wrong_offset() : gen_good_offset()});
  }
  const SkewSettings s;
  SimFleet fleet(hosts, *gen_network(), gen_reference(), s, *rc::gen::arbitrary<std::uint64_t>());
  fleet.run_rounds(kRounds);
  for (int i = 0; i < n; ++i) {
    RC_ASSERT(fleet.fenced(name(i)) == (i < wrong));
  }
  check_cap(fleet, static_cast<std::size_t>(n), s);
  check_explained(fleet);
}

RC_GTEST_PROP(SkewFleet, AWrongMajorityWithAGoodReferenceIsVetoed, ()) {
  const int n = *rc::gen::inRange(3, 13);
  const int wrong = *rc::gen::inRange(n / 2 + 1, n + 1);
  const Duration off = gen_wrong_offset();
  std::vector<SimHost> hosts;
  for (int i = 0; i < n; ++i) {
    hosts.push_back({name(i), i < wrong ? off + gen_good_offset() : gen_good_offset()});
  }
  SimFleet fleet(hosts, *gen_network(), us(*rc::gen::inRange(-500, 501)), SkewSettings{},
                 *rc::gen::arbitrary<std::uint64_t>());
  fleet.run_rounds(kRounds);
  RC_ASSERT(fleet.fences().empty());
  RC_ASSERT(fleet.vetoes() > 0u);
}

RC_GTEST_PROP(SkewFleet, OneLyingMonitorFencesNobody, ()) {
  const int n = *rc::gen::inRange(3, 13);
  const int liar = *rc::gen::inRange(0, n);
  std::vector<SimHost> hosts;
  for (int i = 0; i < n; ++i) hosts.push_back({name(i), gen_good_offset(), true, i == liar});
  SimFleet fleet(hosts, *gen_network(), gen_reference(), SkewSettings{},
                 *rc::gen::arbitrary<std::uint64_t>());
  fleet.run_rounds(kRounds);
  RC_ASSERT(fleet.fences().empty());
}

RC_GTEST_PROP(SkewFleet, TheCapHoldsWhenManyHostsCannotFenceThemselves, ()) {
  // Wrong hosts without a monitor of their own (in-process generators whose
  // agent is down) can only be fenced by their peers, so every fence here
  // goes through the cap.
  const int n = *rc::gen::inRange(3, 25);
  const int wrong = *rc::gen::inRange(1, (n - 1) / 2 + 1);
  std::vector<SimHost> hosts;
  for (int i = 0; i < n; ++i) {
    hosts.push_back(i < wrong ? SimHost{name(i), gen_wrong_offset(), false}
                              : SimHost{name(i), gen_good_offset()});
  }
  const SkewSettings s;
  SimFleet fleet(hosts, *gen_network(), gen_reference(), s, *rc::gen::arbitrary<std::uint64_t>());
  fleet.run_rounds(kRounds);
  const std::size_t limit = cap_of(static_cast<std::size_t>(n));
  std::size_t fenced = 0;
  for (int i = 0; i < n; ++i) {
    if (fleet.fenced(name(i))) {
      RC_ASSERT(i < wrong);
      ++fenced;
    }
  }
  // The cap counts against the region as it is at each fence, which shrinks.
  RC_ASSERT(fenced <= limit);
  RC_ASSERT(fenced >= 1u);
  RC_ASSERT((fleet.mass_skew_alarms() > 0u) == (static_cast<std::size_t>(wrong) > fenced));
  check_cap(fleet, static_cast<std::size_t>(n), s);
  check_explained(fleet);
}

RC_GTEST_PROP(SkewFleet, ATwoHostFleetWithAGoodReferenceFencesOnlyTheWrongOne, ()) {
  const int wrong = *rc::gen::inRange(0, 2);
  std::vector<SimHost> hosts = {{name(0), wrong == 0 ? gen_wrong_offset() : gen_good_offset()},
                                {name(1), wrong == 1 ? gen_wrong_offset() : gen_good_offset()}};
  SimFleet fleet(hosts, *gen_network(), us(*rc::gen::inRange(-500, 501)), SkewSettings{},
                 *rc::gen::arbitrary<std::uint64_t>());
  fleet.run_rounds(kRounds);
  RC_ASSERT(fleet.fenced(name(wrong)));
  RC_ASSERT(!fleet.fenced(name(1 - wrong)));
}

RC_GTEST_PROP(SkewFleet, AnEvenSplitFencesNobodyUnlessTheReferenceDecides, ()) {
  // Half the clocks off by the same amount: peers cannot tell which half is
  // wrong (a 1-1 split in a 2-host fleet is the smallest case).
  const int half = *rc::gen::inRange(1, 5);
  const Duration off = gen_wrong_offset();
  const bool reference = *rc::gen::arbitrary<bool>();
  std::vector<SimHost> hosts;
  for (int i = 0; i < 2 * half; ++i) {
    hosts.push_back({name(i), i < half ? off + gen_good_offset() : gen_good_offset()});
  }
  SimFleet fleet(
      hosts, *gen_network(),
      reference ? std::optional<Duration>(us(*rc::gen::inRange(-500, 501))) : std::nullopt,
      SkewSettings{}, *rc::gen::arbitrary<std::uint64_t>());
  fleet.run_rounds(kRounds);
  for (int i = 0; i < 2 * half; ++i) RC_ASSERT(fleet.fenced(name(i)) == (reference && i < half));
}

RC_GTEST_PROP(SkewFleet, TwentyMillisecondsOfOneWayDelayDoesNotFenceAGoodHost, ()) {
  const int n = *rc::gen::inRange(2, 10);
  std::vector<SimHost> hosts;
  for (int i = 0; i < n; ++i) hosts.push_back({name(i), gen_good_offset()});
  SimNetwork net = *gen_network();
  net.extra_into[name(0)] = 20ms;
  SkewSettings s;
  // Also with the widest RTT cap the fence allows, where the path is
  // measurable and its asymmetry shows as a 10 ms offset.
  if (*rc::gen::arbitrary<bool>()) s.rtt_cap = s.fence / 2;
  SimFleet fleet(hosts, net, gen_reference(), s, *rc::gen::arbitrary<std::uint64_t>());
  fleet.run_rounds(kRounds);
  RC_ASSERT(fleet.fences().empty());
}

RC_GTEST_PROP(SkewFleet, APausedHostIsFencedOnlyIfItsClockMovedMeanwhile, ()) {
  // A paused host (SIGSTOP, a frozen VM) is unreachable, which is not
  // skewed; after it resumes it measures afresh. A VM that migrated while
  // frozen may come back with its clock off: that one is fenced.
  const int n = *rc::gen::inRange(3, 10);
  const int paused = *rc::gen::inRange(0, n);
  const bool moved = *rc::gen::arbitrary<bool>();
  std::vector<SimHost> hosts;
  for (int i = 0; i < n; ++i) hosts.push_back({name(i), gen_good_offset()});
  SimFleet fleet(hosts, *gen_network(), gen_reference(), SkewSettings{},
                 *rc::gen::arbitrary<std::uint64_t>());
  fleet.run_rounds(*rc::gen::inRange(1, 4));
  fleet.pause(name(paused), *rc::gen::inRange(2, 9));
  if (moved) fleet.step(name(paused), gen_wrong_offset());
  fleet.run_rounds(10 + kRounds);
  for (int i = 0; i < n; ++i) RC_ASSERT(fleet.fenced(name(i)) == (moved && i == paused));
}

TEST(SkewFleet, AHostThatSleptThroughAPeersStepIsNotFencedAndThePeerIs) {
  std::vector<SimHost> hosts;
  for (int i = 0; i < 4; ++i) hosts.push_back({name(i), 0us});
  SimFleet fleet(hosts, SimNetwork{}, std::nullopt, SkewSettings{}, 3);
  fleet.run_rounds(3);
  fleet.pause(name(0), 5);
  // While h0 sleeps, another host's clock steps: h0's old estimate of it is
  // now wrong, and must not count when h0 wakes.
  fleet.step(name(1), 70ms);
  fleet.run_rounds(8);
  EXPECT_TRUE(fleet.fenced(name(1)));
  EXPECT_FALSE(fleet.fenced(name(0)));
  EXPECT_EQ(fleet.live(), 3u);
}

RC_GTEST_PROP(SkewFleet, ADryRunCountsButFencesNobody, ()) {
  const int n = *rc::gen::inRange(3, 10);
  std::vector<SimHost> hosts;
  for (int i = 0; i < n; ++i) hosts.push_back({name(i), i == 0 ? gen_wrong_offset() : 0us});
  SkewSettings s;
  s.dry_run = true;
  SimFleet fleet(hosts, *gen_network(), gen_reference(), s, *rc::gen::arbitrary<std::uint64_t>());
  fleet.run_rounds(kRounds);
  RC_ASSERT(fleet.live() == static_cast<std::size_t>(n));
  RC_ASSERT(fleet.would_be_fences() > 0u);
  for (const auto& f : fleet.fences()) RC_ASSERT(f.target == name(0));
}

TEST(SkewFleet, AStepBeyondTheFenceWhileServingIsFencedWithinTwoRounds) {
  std::vector<SimHost> hosts;
  for (int i = 0; i < 5; ++i) hosts.push_back({name(i), 0us});
  SimFleet fleet(hosts, SimNetwork{}, 0us, SkewSettings{}, 7);
  fleet.run_rounds(3);
  ASSERT_TRUE(fleet.fences().empty());
  fleet.step(name(2), 60ms);
  fleet.run_rounds(2);
  EXPECT_TRUE(fleet.fenced(name(2)));
  EXPECT_EQ(fleet.live(), 4u);
}

TEST(SkewFleet, AStepWithinTheFenceIsNotFenced) {
  std::vector<SimHost> hosts;
  for (int i = 0; i < 5; ++i) hosts.push_back({name(i), 0us});
  SimFleet fleet(hosts, SimNetwork{}, 0us, SkewSettings{}, 7);
  fleet.run_rounds(2);
  fleet.step(name(2), 40ms);
  fleet.run_rounds(4);
  EXPECT_TRUE(fleet.fences().empty());
}

}  // namespace
}  // namespace snowid::skew
