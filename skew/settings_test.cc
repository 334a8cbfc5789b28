#include "settings.h"

#include <gtest/gtest.h>

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

TEST(SkewSettings, DefaultsFitTheDefaultLeaseBudget) {
  EXPECT_TRUE(validate(SkewSettings{}, LeaseTiming{}).is_ok());
}

TEST(SkewSettings, FenceWiderThanTheLeasesSkewBudgetIsRefusedByName) {
  SkewSettings s;
  s.fence = 120ms;
  s.suspect = 20ms;
  const Status st = validate(s, LeaseTiming{});
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("skew fence (120 ms) must be <= the leases' max_clock_skew (100 ms)"),
            std::string::npos)
      << st.message();
}

TEST(SkewSettings, FenceBelowFourAlertsIsRefused) {
  SkewSettings s;
  s.alert = 15ms;
  s.suspect = 20ms;
  const Status st = validate(s, LeaseTiming{});
  EXPECT_NE(st.message().find("skew fence (50 ms) must be >= 4 x skew alert (15 ms)"),
            std::string::npos)
      << st.message();
}

TEST(SkewSettings, RttCapOverHalfTheFenceIsRefused) {
  SkewSettings s;
  s.rtt_cap = 26ms;
  const Status st = validate(s, LeaseTiming{});
  EXPECT_NE(st.message().find("skew rtt_cap (26 ms)"), std::string::npos) << st.message();
  s.rtt_cap = 25ms;
  EXPECT_TRUE(validate(s, LeaseTiming{}).is_ok());
}

TEST(SkewSettings, ASmallerLeaseBudgetNeedsASmallerFence) {
  LeaseTiming lease;
  lease.max_clock_skew = 40ms;
  EXPECT_FALSE(validate(SkewSettings{}, lease).is_ok());
  SkewSettings s;
  s.fence = 40ms;
  s.alert = 10ms;
  s.rtt_cap = 20ms;
  EXPECT_TRUE(validate(s, lease).is_ok()) << validate(s, lease).message();
}

TEST(SkewSettings, EveryBrokenRuleIsNamedInOneMessage) {
  SkewSettings s;
  s.fence = 200ms;
  s.rtt_cap = 0ms;
  const Status st = validate(s, LeaseTiming{});
  EXPECT_NE(st.message().find("max_clock_skew"), std::string::npos);
  EXPECT_NE(st.message().find("rtt_cap"), std::string::npos);
}

TEST(SkewSettings, SuspectOutsideAlertToFenceIsRefused) {
  SkewSettings s;
  s.suspect = 60ms;
  EXPECT_NE(validate(s, LeaseTiming{}).message().find("skew suspect (60 ms)"), std::string::npos);
}

}  // namespace
}  // namespace snowid::skew
