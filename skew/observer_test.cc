#include "observer.h"

#include <gtest/gtest.h>

#include "snowid/testing/simulated_clock.h"

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;
using snowid::testing::SimulatedClock;

constexpr WallTime kT = WallTime(std::chrono::seconds(1'800'000'000));

Burst measured(Duration offset, WallTime at, Duration delay = 60us) {
  Burst b;
  b.outcome = BurstOutcome::kMeasured;
  b.best = Measurement{{offset, delay / 2 + 1us}, delay, at};
  return b;
}

class ObserverTest : public ::testing::Test {
 protected:
  SimulatedClock clock_{kT};
  Observer observer_{"a", clock_, SkewSettings{}};

  ObserverRound round(Duration c_offset, std::optional<Burst> reference = std::nullopt) {
    const WallTime now = clock_.wall_now();
    const ObserverRound r =
        observer_.round({{"b", measured(20us, now)}, {"c", measured(c_offset, now)}}, reference);
    clock_.advance(1s);
    return r;
  }
};

TEST_F(ObserverTest, JudgesItselfFirstThenEachPeer) {
  const ObserverRound r = round(10us);
  ASSERT_EQ(r.judgements.size(), 3u);
  EXPECT_EQ(r.judgements[0].target, "a");
  EXPECT_TRUE(r.judgements[0].self);
  EXPECT_EQ(r.judgements[2].target, "c");
  EXPECT_EQ(r.judgements[2].delay, 60us);
  EXPECT_FALSE(r.paused);
}

TEST_F(ObserverTest, APeerSteppedBeyondTheFenceIsJudgedFenceOnTheSecondBurst) {
  (void)round(10us);
  EXPECT_EQ(round(70ms).judgements[2].outcome.action, Action::kNone);
  EXPECT_EQ(round(70ms).judgements[2].outcome.action, Action::kFence);
}

TEST_F(ObserverTest, APauseDropsEverythingAndMakesItSuspect) {
  (void)round(70ms);
  clock_.advance(5s);  // stopped
  const ObserverRound r = round(70ms);
  EXPECT_TRUE(r.paused);
  EXPECT_EQ(r.judgements[0].state, State::kSuspect);
  EXPECT_NE(r.judgements[2].outcome.action, Action::kFence);
  // Two bursts after the pause are needed, as after a start.
  EXPECT_EQ(round(70ms).judgements[2].outcome.action, Action::kFence);
}

TEST_F(ObserverTest, TheReferenceReadingIsHeldAndPassedOn) {
  const ObserverRound r = round(10us, measured(-3us, clock_.wall_now(), 400us));
  ASSERT_TRUE(r.reference.has_value());
  EXPECT_EQ(r.reference->value, -3us);
  EXPECT_TRUE(r.judgements[0].evidence.reference.has_value());
  EXPECT_FALSE(round(10us).reference.has_value());
}

}  // namespace
}  // namespace snowid::skew
