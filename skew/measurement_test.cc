#include "measurement.h"

#include <gtest/gtest.h>

#include <vector>

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

constexpr WallTime kT = WallTime(std::chrono::seconds(1'800'000'000));

// A probe to a peer `offset` ahead, with one-way delays `there` and `back`.
ProbeSample probe(Duration offset, Duration there, Duration back, Duration processing = 10us) {
  const WallTime t0 = kT;
  return {t0, t0 + there + offset, t0 + there + processing + offset,
          t0 + there + processing + back};
}

TEST(Measurement, SymmetricPathGivesTheExactOffset) {
  const Result<Measurement> m = measure(probe(3ms, 100us, 100us), {1us, 2us});
  ASSERT_TRUE(m.is_ok());
  EXPECT_EQ(m->offset.value, 3ms);
  EXPECT_EQ(m->delay, 200us);
  EXPECT_EQ(m->offset.uncertainty, 100us + 1us + 2us);
}

TEST(Measurement, AsymmetryStaysWithinTheUncertainty) {
  const Result<Measurement> m = measure(probe(-7ms, 900us, 100us), {1us, 0us});
  ASSERT_TRUE(m.is_ok());
  EXPECT_EQ(m->offset.value, -7ms + 400us);
  EXPECT_LE(m->offset.value - (-7ms), m->offset.uncertainty);
}

TEST(Measurement, NegativeDelayIsRefused) {
  ProbeSample s = probe(0ms, 100us, 100us);
  s.t3 = s.t0 + 5us;  // answer before the peer sent it
  const Result<Measurement> m = measure(s, {});
  EXPECT_EQ(m.status().code(), Code::kInvalidArgument);
  EXPECT_NE(m.status().message().find("negative delay"), std::string::npos);
}

TEST(Burst, KeepsTheLowestDelaySample) {
  const std::vector<ProbeSample> samples = {probe(1ms, 3ms, 100us), probe(1ms, 60us, 60us),
                                            probe(1ms, 100us, 2ms)};
  const Burst b = best_of_burst(samples, {}, 10ms);
  EXPECT_EQ(b.outcome, BurstOutcome::kMeasured);
  EXPECT_EQ(b.best->delay, 120us);
  EXPECT_EQ(b.best->offset.value, 1ms);
  EXPECT_EQ(b.samples, 3u);
}

TEST(Burst, OverTheRttCapIsUnmeasurableNotSkewed) {
  const std::vector<ProbeSample> samples = {probe(80ms, 20ms, 100us), probe(80ms, 21ms, 100us)};
  const Burst b = best_of_burst(samples, {}, 10ms);
  EXPECT_EQ(b.outcome, BurstOutcome::kUnmeasurable);
  ASSERT_TRUE(b.best.has_value());
}

TEST(Burst, RefusedAndMissingSamplesLeaveItEmpty) {
  ProbeSample s = probe(0ms, 100us, 100us);
  s.t3 = s.t0;
  const std::vector<ProbeSample> samples = {s};
  const Burst b = best_of_burst(samples, {}, 10ms);
  EXPECT_EQ(b.outcome, BurstOutcome::kEmpty);
  EXPECT_EQ(b.refused, 1u);
  EXPECT_EQ(best_of_burst({}, {}, 10ms).outcome, BurstOutcome::kEmpty);
}

}  // namespace
}  // namespace snowid::skew
