#include "host_bound.h"

#include <gtest/gtest.h>

#include <chrono>

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;

const MonoTime kTaken{100s};

TEST(HostBound, WithoutAReadingTheSourceIsUnknown) {
  const HostBound b;
  EXPECT_FALSE(b.at(kTaken).known());
  EXPECT_EQ(bound_source_name(b.at(kTaken).source), "unknown");
}

TEST(HostBound, TheBoundGrowsByTheDriftAllowanceRoundedUp) {
  HostBound b;
  b.set({BoundSource::kChrony, 10us, kTaken, 50.0, 10s});
  EXPECT_EQ(b.at(kTaken).bound, 10us);
  EXPECT_EQ(b.at(kTaken + 1s).bound, 10us + 50us);
  EXPECT_EQ(b.at(kTaken + 1ns).bound, 10us + 1ns) << "0.00005 ns rounds up to 1";
  EXPECT_EQ(bound_source_name(b.at(kTaken).source), "chrony");
}

TEST(HostBound, AReadingPastItsMaxAgeOrFromTheFutureOrClearedIsUnknown) {
  HostBound b;
  b.set({BoundSource::kChrony, 10us, kTaken, 50.0, 10s});
  EXPECT_TRUE(b.at(kTaken + 10s).known());
  EXPECT_FALSE(b.at(kTaken + 10s + 1ns).known());
  EXPECT_FALSE(b.at(kTaken - 1ns).known());
  b.clear();
  EXPECT_FALSE(b.at(kTaken).known());
}

}  // namespace
}  // namespace snowid::daemon
