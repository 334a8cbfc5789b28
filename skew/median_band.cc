#include "median_band.h"

#include <algorithm>
#include <vector>

namespace snowid::skew {

std::optional<MedianBand> median_band(std::span<const Reading> clocks) {
  if (clocks.size() < 3) return std::nullopt;
  std::vector<Duration> lows;
  std::vector<Duration> highs;
  lows.reserve(clocks.size());
  highs.reserve(clocks.size());
  for (const Reading& c : clocks) {
    lows.push_back(c.value - c.uncertainty);
    highs.push_back(c.value + c.uncertainty);
  }
  const std::size_t lower_middle = (clocks.size() - 1) / 2;
  const std::size_t upper_middle = clocks.size() / 2;
  std::nth_element(lows.begin(), lows.begin() + lower_middle, lows.end());
  std::nth_element(highs.begin(), highs.begin() + upper_middle, highs.end());
  MedianBand band{lows[lower_middle], highs[upper_middle]};
  if (band.low > band.high) std::swap(band.low, band.high);
  return band;
}

Reading deviation_from(const Reading& clock, const MedianBand& band) noexcept {
  // Midpoint and half-width of the band; adding the half-width to the
  // clock's uncertainty makes |value| - uncertainty the distance from the
  // nearest point of the band.
  const Duration half = (band.high - band.low) / 2;
  const Duration middle = band.low + half;
  return Reading{clock.value - middle, clock.uncertainty + half};
}

}  // namespace snowid::skew
