#include "peer_estimate.h"

#include <gtest/gtest.h>

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

constexpr WallTime kT = WallTime(std::chrono::seconds(1'800'000'000));

Burst measured(Duration offset, Duration uncertainty, WallTime at) {
  Burst b;
  b.outcome = BurstOutcome::kMeasured;
  b.best = Measurement{{offset, uncertainty}, 2 * uncertainty, at};
  return b;
}

TEST(PeerEstimate, HoldsTheBestOfTheRecentBursts) {
  PeerEstimate e(0.0);
  EXPECT_EQ(e.add(measured(1000us, 50us, kT)), PeerEstimate::Update::kHeld);
  EXPECT_EQ(e.add(measured(1010us, 10us, kT + 1s)), PeerEstimate::Update::kHeld);
  EXPECT_EQ(e.add(measured(990us, 40us, kT + 2s)), PeerEstimate::Update::kHeld);
  ASSERT_TRUE(e.held().has_value());
  EXPECT_EQ(e.held()->value, 1010us);
  EXPECT_EQ(e.held()->uncertainty, 10us);
}

TEST(PeerEstimate, HeldUncertaintyGrowsWithDrift) {
  PeerEstimate e(50.0);  // 50 us per second
  (void)e.add(measured(1000us, 10us, kT));
  (void)e.add(measured(1000us, 100us, kT + 2s));
  EXPECT_EQ(e.held()->uncertainty, 100us);  // the old one has grown to 110 us
  (void)e.add(measured(1000us, 90us, kT + 3s));
  EXPECT_EQ(e.held()->uncertainty, 90us);
}

TEST(PeerEstimate, ForgetsBurstsOlderThanEight) {
  PeerEstimate e(0.0);
  (void)e.add(measured(0us, 1us, kT));
  for (int i = 1; i <= 8; ++i) (void)e.add(measured(2us, 5us, kT + i * 1s));
  EXPECT_EQ(e.held()->uncertainty, 5us);
}

TEST(PeerEstimate, AStepReplacesTheHeldEstimateAtOnce) {
  PeerEstimate e(0.0);
  (void)e.add(measured(0us, 5us, kT));
  EXPECT_EQ(e.add(measured(60ms, 40us, kT + 1s)), PeerEstimate::Update::kStep);
  EXPECT_EQ(e.held()->value, 60ms);
  EXPECT_EQ(e.steps(), 1u);
  // The pre-step burst is gone for good: a later, worse burst still wins over it.
  (void)e.add(measured(60ms, 45us, kT + 2s));
  EXPECT_EQ(e.held()->value, 60ms);
}

TEST(PeerEstimate, AnUnmeasurableBurstLeavesNothingHeld) {
  PeerEstimate e(0.0);
  (void)e.add(measured(0us, 5us, kT));
  Burst slow;
  slow.outcome = BurstOutcome::kUnmeasurable;
  EXPECT_EQ(e.add(slow), PeerEstimate::Update::kUnmeasurable);
  EXPECT_FALSE(e.held().has_value());
  EXPECT_EQ(e.latest_outcome(), BurstOutcome::kUnmeasurable);
}

TEST(PeerEstimate, DropForgetsEverything) {
  PeerEstimate e(0.0);
  (void)e.add(measured(0us, 5us, kT));
  e.drop();
  EXPECT_FALSE(e.held().has_value());
  EXPECT_EQ(e.add(measured(70ms, 5us, kT + 1s)), PeerEstimate::Update::kHeld);
  EXPECT_EQ(e.steps(), 0u);
}

}  // namespace
}  // namespace snowid::skew
