#include "fence_budget.h"

#include <gtest/gtest.h>

#include "snowid/testing/simulated_clock.h"

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;
using snowid::testing::SimulatedClock;

constexpr WallTime kT = WallTime(std::chrono::seconds(1'800'000'000));

TEST(FenceBudget, LimitIsAFifthOfTheRegionAndAtLeastOne) {
  EXPECT_EQ(FenceBudget::limit_for(2), 1u);
  EXPECT_EQ(FenceBudget::limit_for(9), 1u);
  EXPECT_EQ(FenceBudget::limit_for(10), 2u);
  EXPECT_EQ(FenceBudget::limit_for(100), 20u);
}

TEST(FenceBudget, BeyondTheCapRaisesMassSkewUntilTheWindowPasses) {
  SimulatedClock clock(kT);
  FenceBudget budget(clock, SkewSettings{});
  EXPECT_EQ(budget.peer_fence(10), FenceGrant::kGranted);
  clock.advance(1min);
  EXPECT_EQ(budget.peer_fence(10), FenceGrant::kGranted);
  EXPECT_EQ(budget.peer_fence(10), FenceGrant::kCapped);
  EXPECT_EQ(budget.mass_skew_alarms(), 1u);
  clock.advance(9min);  // the first fence leaves the window
  EXPECT_EQ(budget.peer_fence(10), FenceGrant::kGranted);
  EXPECT_EQ(budget.peer_fence(10), FenceGrant::kCapped);
}

TEST(FenceBudget, SelfFencesAreNeverCapped) {
  SimulatedClock clock(kT);
  FenceBudget budget(clock, SkewSettings{});
  EXPECT_EQ(budget.peer_fence(3), FenceGrant::kGranted);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(budget.self_fence(), FenceGrant::kGranted);
  EXPECT_EQ(budget.mass_skew_alarms(), 0u);
}

TEST(FenceBudget, FencesByOtherFencersCount) {
  SimulatedClock clock(kT);
  FenceBudget budget(clock, SkewSettings{});
  budget.note_fence(kT - 5min);
  EXPECT_EQ(budget.peer_fence(5), FenceGrant::kCapped);
  budget.note_fence(kT - 11min);  // outside the window
  clock.advance(5min);
  EXPECT_EQ(budget.peer_fence(5), FenceGrant::kGranted);
}

// room() grants without counting: a fencer that loses the transaction's race
// spends nothing; the fence counts once, when its record is noted.
TEST(FenceBudget, RoomCountsNothingUntilTheFenceIsNoted) {
  SimulatedClock clock(kT);
  FenceBudget budget(clock, SkewSettings{});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(budget.room(5), FenceGrant::kGranted);
  budget.note_fence(kT);
  EXPECT_EQ(budget.room(5), FenceGrant::kCapped);
  EXPECT_EQ(budget.mass_skew_alarms(), 1u);
  clock.advance(10min);
  EXPECT_EQ(budget.room(5), FenceGrant::kGranted);
  SkewSettings dry;
  dry.dry_run = true;
  FenceBudget would(clock, dry);
  EXPECT_EQ(would.room(5), FenceGrant::kDryRun);
  EXPECT_EQ(would.room(5), FenceGrant::kCapped) << "a dry run's would-be fence counts at once";
  EXPECT_EQ(would.would_be_fences(), 1u);
}

TEST(FenceBudget, DryRunCountsWouldBeFencesAndStillHonoursTheCap) {
  SimulatedClock clock(kT);
  SkewSettings s;
  s.dry_run = true;
  FenceBudget budget(clock, s);
  EXPECT_EQ(budget.peer_fence(4), FenceGrant::kDryRun);
  EXPECT_EQ(budget.peer_fence(4), FenceGrant::kCapped);
  EXPECT_EQ(budget.self_fence(), FenceGrant::kDryRun);
  EXPECT_EQ(budget.would_be_fences(), 2u);
  EXPECT_EQ(budget.mass_skew_alarms(), 1u);
}

}  // namespace
}  // namespace snowid::skew
