#include "skew_settings.h"

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

TEST(SkewSettings, VoteAgeObserversDriftAndWindowHaveBounds) {
  auto refused = [](SkewSettings s, std::string_view names) {
    const Status st = validate(s, LeaseTiming{});
    EXPECT_EQ(st.code(), Code::kInvalidArgument);
    EXPECT_NE(st.message().find(names), std::string::npos) << st.message();
  };
  SkewSettings s;
  s.vote_max_age = 11s;  // longer than the 10 s lease: a dead voter's vote would outlive it
  refused(s, "skew vote_max_age");
  s = SkewSettings{};
  s.max_observers = 0;
  refused(s, "skew max_observers");
  s = SkewSettings{};
  s.max_drift_ppm = -1;
  refused(s, "skew max_drift_ppm");
  s = SkewSettings{};
  s.fence_window = 0s;
  refused(s, "skew fence_window");
  s = SkewSettings{};
  s.alert_max_uncertainty = 6ms;
  refused(s, "skew alert_max_uncertainty (6 ms)");
  s = SkewSettings{};
  s.fence_max_uncertainty = 25500us;
  refused(s, "skew fence_max_uncertainty (25.500 ms)");
}

}  // namespace
}  // namespace snowid::skew
