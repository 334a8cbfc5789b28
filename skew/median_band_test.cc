#include "median_band.h"

#include <gtest/gtest.h>

#include <vector>

#include "evidence.h"

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

TEST(MedianBand, NeedsThreeClocks) {
  const std::vector<Reading> two = {{0ms, 0ms}, {80ms, 10us}};
  EXPECT_FALSE(median_band(two).has_value());
}

TEST(MedianBand, OneOutlierOfThreeIsBeyondAndTheOthersWithin) {
  const std::vector<Reading> clocks = {{0ms, 0ms}, {100us, 20us}, {80ms, 20us}};
  const std::optional<MedianBand> band = median_band(clocks);
  ASSERT_TRUE(band.has_value());
  EXPECT_EQ(judge(deviation_from(clocks[2], *band), 50ms), Verdict::kBeyond);
  EXPECT_EQ(judge(deviation_from(clocks[0], *band), 50ms), Verdict::kWithin);
  EXPECT_EQ(judge(deviation_from(clocks[1], *band), 50ms), Verdict::kWithin);
}

TEST(MedianBand, AnEvenSplitNeverCounts) {
  const std::vector<Reading> clocks = {{0ms, 0ms}, {0ms, 10us}, {90ms, 10us}, {90ms, 10us}};
  const std::optional<MedianBand> band = median_band(clocks);
  ASSERT_TRUE(band.has_value());
  for (const Reading& c : clocks) {
    EXPECT_NE(judge(deviation_from(c, *band), 50ms), Verdict::kBeyond);
  }
}

TEST(MedianBand, DeviationIsTheDistanceToTheNearestPointOfTheBand) {
  const MedianBand band{-1ms, 3ms};
  const Reading d = deviation_from({60ms, 2ms}, band);
  // The clock's interval [58, 62] against the band [-1, 3]: 55 to 63 ms away.
  EXPECT_EQ(d.value - d.uncertainty, 55ms);
  EXPECT_EQ(d.value + d.uncertainty, 63ms);
}

}  // namespace
}  // namespace snowid::skew
