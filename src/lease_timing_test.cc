#include <gtest/gtest.h>

#include <string>

#include "snowid/lease.h"
#include "snowid/lease_keeper.h"

namespace snowid {
namespace {

using namespace std::chrono_literals;

// A timing valid at the low end of ttl, so each bound can be probed alone.
LeaseTiming short_timing() {
  LeaseTiming t;
  t.ttl = 2s;
  t.renew_every = 500ms;
  t.stop_after = 1500ms;
  t.max_clock_skew = 0ms;
  return t;
}

// Expects kInvalidArgument with a message that names `setting`.
void expect_refused(const LeaseTiming& t, const std::string& setting) {
  const Status s = validate(t);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.to_string();
  EXPECT_NE(s.message().find(setting), std::string::npos) << s.message();
}

TEST(LeaseTiming, DefaultsAreValidAndFollowTheDesign) {
  const LeaseTiming t;
  EXPECT_TRUE(validate(t).is_ok()) << validate(t).to_string();
  EXPECT_EQ(t.ttl, 10s);
  EXPECT_EQ(t.renew_every, 3s);
  EXPECT_EQ(t.stop_after, 8s);
  EXPECT_EQ(t.max_clock_skew, 100ms);
}

TEST(LeaseTiming, TtlIsWholeSecondsFromTwoSecondsToAnHour) {
  LeaseTiming t = short_timing();
  EXPECT_TRUE(validate(t).is_ok()) << validate(t).to_string();
  t.ttl = 1s;
  t.stop_after = 900ms;
  expect_refused(t, "ttl");
  t.ttl = 1999ms;
  expect_refused(t, "ttl");

  t = LeaseTiming{};
  t.ttl = 3600s;
  EXPECT_TRUE(validate(t).is_ok()) << validate(t).to_string();
  t.ttl = 3601s;
  expect_refused(t, "ttl");
  t.ttl = 3600s + 1ns;
  expect_refused(t, "ttl");

  t = LeaseTiming{};
  t.ttl = 10s + 500ms;  // within bounds, but not whole seconds
  expect_refused(t, "ttl");
}

TEST(LeaseTiming, TtlMessageShowsTheValueExactly) {
  LeaseTiming t;
  t.ttl = 10s + 1ms;
  const Status s = validate(t);
  EXPECT_NE(s.message().find("10001 ms"), std::string::npos) << s.message();
}

TEST(LeaseTiming, RenewEveryMustBePositive) {
  LeaseTiming t = short_timing();
  t.renew_every = 0ns;
  expect_refused(t, "renew_every");
  t.renew_every = -1s;
  expect_refused(t, "renew_every");
  t.renew_every = 1ns;
  EXPECT_TRUE(validate(t).is_ok()) << validate(t).to_string();
}

TEST(LeaseTiming, StopAfterMustBeAboveRenewEvery) {
  LeaseTiming t;
  t.stop_after = t.renew_every;
  expect_refused(t, "stop_after");
  t.stop_after = t.renew_every - 1ns;
  expect_refused(t, "renew_every");
  t.stop_after = t.renew_every + 1ns;
  EXPECT_TRUE(validate(t).is_ok()) << validate(t).to_string();
}

TEST(LeaseTiming, StopAfterMustBeBelowTtl) {
  LeaseTiming t;
  t.stop_after = t.ttl;
  expect_refused(t, "ttl");
  t.stop_after = t.ttl + 1s;
  expect_refused(t, "stop_after");
  t.stop_after = t.ttl - 1ns;
  EXPECT_TRUE(validate(t).is_ok()) << validate(t).to_string();
}

TEST(LeaseTiming, MaxClockSkewIsFromZeroToOneMinute) {
  LeaseTiming t;
  t.max_clock_skew = 0ns;
  EXPECT_TRUE(validate(t).is_ok());
  t.max_clock_skew = -1ns;
  expect_refused(t, "max_clock_skew");
  t.max_clock_skew = 1min;
  EXPECT_TRUE(validate(t).is_ok());
  t.max_clock_skew = 1min + 1ns;
  expect_refused(t, "max_clock_skew");
}

TEST(LeaseTiming, StateNamesAreStable) {
  EXPECT_EQ(lease_state_name(LeaseState::kHeld), "HELD");
  EXPECT_EQ(lease_state_name(LeaseState::kUncertain), "UNCERTAIN");
  EXPECT_EQ(lease_state_name(LeaseState::kLost), "LOST");
  EXPECT_EQ(lease_state_name(LeaseState::kReleased), "RELEASED");
  EXPECT_EQ(lease_state_name(static_cast<LeaseState>(200)), "UNKNOWN");
}

}  // namespace
}  // namespace snowid
