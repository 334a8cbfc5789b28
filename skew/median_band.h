// Peer evidence: how far one clock is from the middle of all the clocks an
// observer measures (docs/skew.md, "Who is wrong").
#pragma once

#include <optional>
#include <span>

#include "measurement.h"

namespace snowid::skew {

// Where the median clock may be: [low, high]. low is the median of the
// clocks' lower bounds (the lower middle one for an even count) and high the
// median of their upper bounds (the upper middle one). With an even split
// the band spans both halves, so that neither half is an outlier: a 1-1 (or
// 2-2) split never counts against anyone.
struct MedianBand {
  Duration low{};
  Duration high{};
};

// The band of `clocks` (offsets from the observer, the observer itself
// included as 0 +- 0). nullopt with fewer than 3 clocks: too few to say which
// one is wrong.
std::optional<MedianBand> median_band(std::span<const Reading> clocks);

// `clock` relative to the band, as a reading whose interval is every distance
// the clock may have from a point of the band: surely beyond a limit only if
// the clock's whole interval is outside the band widened by that limit.
Reading deviation_from(const Reading& clock, const MedianBand& band) noexcept;

}  // namespace snowid::skew
