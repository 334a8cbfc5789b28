#include "evidence.h"

#include <gtest/gtest.h>

#include "state.h"

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

TEST(Verdict, LowerBoundDecidesBeyondAndUpperBoundDecidesWithin) {
  EXPECT_EQ(judge({60ms, 5ms}, 50ms), Verdict::kBeyond);
  EXPECT_EQ(judge({-60ms, 5ms}, 50ms), Verdict::kBeyond);
  EXPECT_EQ(judge({55ms, 5ms}, 50ms), Verdict::kUnclear);  // 50 is not beyond 50
  EXPECT_EQ(judge({45ms, 5ms}, 50ms), Verdict::kWithin);
  EXPECT_EQ(judge({0ms, 60ms}, 50ms), Verdict::kUnclear);
}

TEST(EvidenceHistory, FenceNeedsTwoOfTheLastThreeBursts) {
  const SkewSettings s;
  EvidenceHistory h;
  h.add(Reading{70ms, 100us});
  EXPECT_NE(h.fence_verdict(s), Verdict::kBeyond);
  h.add(Reading{1ms, 100us});
  EXPECT_EQ(h.fence_verdict(s), Verdict::kWithin);
  h.add(Reading{70ms, 100us});
  EXPECT_EQ(h.fence_verdict(s), Verdict::kBeyond);
  h.add(std::nullopt);  // the last 3: within, beyond, unmeasured
  EXPECT_EQ(h.fence_verdict(s), Verdict::kUnclear);
  h.add(Reading{-70ms, 100us});  // beyond, unmeasured, beyond
  EXPECT_EQ(h.fence_verdict(s), Verdict::kBeyond);
}

TEST(EvidenceHistory, BurstsWithTooMuchUncertaintyDoNotCountTowardsAFence) {
  const SkewSettings s;
  EvidenceHistory h;
  h.add(Reading{200ms, 6ms});
  h.add(Reading{200ms, 6ms});
  h.add(Reading{200ms, 6ms});
  EXPECT_EQ(h.fence_verdict(s), Verdict::kUnclear);
}

TEST(EvidenceHistory, AlertNeedsThreePreciseBurstsOverTheThreshold) {
  const SkewSettings s;
  EvidenceHistory h;
  h.add(Reading{6ms, 500us});
  h.add(Reading{-6ms, 500us});
  EXPECT_FALSE(h.alert_streak(s));
  h.add(Reading{6ms, 500us});
  EXPECT_TRUE(h.alert_streak(s));
  h.add(Reading{6ms, 2ms});
  EXPECT_FALSE(h.alert_streak(s));
}

TEST(State, EachThresholdGivesItsState) {
  const SkewSettings s;
  auto state_of = [&](Reading r, StateFlags flags = {}) {
    EvidenceHistory h;
    h.add(r);
    return classify(h, s, flags);
  };
  EXPECT_EQ(state_of({1ms, 100us}), State::kOk);
  EXPECT_EQ(state_of({7ms, 100us}), State::kAlert);
  EXPECT_EQ(state_of({30ms, 100us}), State::kSuspect);
  EXPECT_EQ(state_of({1ms, 100us}, {.fenced = true}), State::kFenced);
  EXPECT_EQ(state_of({1ms, 100us}, {.paused = true}), State::kSuspect);
  EXPECT_EQ(state_of({1ms, 100us}, {.vetoed = true}), State::kSuspect);
  EvidenceHistory none;
  none.add(std::nullopt);
  EXPECT_EQ(classify(none, s, {}), State::kUnmeasurable);
  EXPECT_EQ(classify(EvidenceHistory{}, s, {}), State::kUnmeasurable);
}

TEST(State, NamesRoundTrip) {
  for (State st :
       {State::kOk, State::kAlert, State::kSuspect, State::kFenced, State::kUnmeasurable}) {
    EXPECT_EQ(state_from_name(state_name(st)), st);
  }
  EXPECT_EQ(state_name(State::kUnmeasurable), "unmeasurable");
  EXPECT_FALSE(state_from_name("OK").has_value());
}

}  // namespace
}  // namespace snowid::skew
