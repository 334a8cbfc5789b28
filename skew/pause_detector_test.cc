#include "pause_detector.h"

#include <gtest/gtest.h>

#include "snowid/testing/simulated_clock.h"

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;
using snowid::testing::SimulatedClock;

TEST(PauseDetector, OnTimeTicksAreNotPauses) {
  SimulatedClock clock(WallTime(std::chrono::seconds(1'800'000'000)));
  PauseDetector d(clock, 1s);
  EXPECT_FALSE(d.tick());
  clock.advance(1s);
  EXPECT_FALSE(d.tick());
  clock.advance(2s);  // 1 s late: still not more than the limit
  EXPECT_FALSE(d.tick());
}

TEST(PauseDetector, ATickMoreThanASecondLateIsAPause) {
  SimulatedClock clock(WallTime(std::chrono::seconds(1'800'000'000)));
  PauseDetector d(clock, 1s);
  (void)d.tick();
  clock.advance(6s);  // SIGSTOP for 5 s
  const std::optional<Duration> late = d.tick();
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(*late, 5s);
  clock.advance(1s);
  EXPECT_FALSE(d.tick());
}

TEST(PauseDetector, AWallStepIsNotAPause) {
  SimulatedClock clock(WallTime(std::chrono::seconds(1'800'000'000)));
  PauseDetector d(clock, 1s);
  (void)d.tick();
  clock.step_wall(10s);
  clock.advance(1s);
  EXPECT_FALSE(d.tick());
}

}  // namespace
}  // namespace snowid::skew
