// The skew monitor's thresholds and their check against the leases' skew
// budget (docs/skew.md, "Thresholds").
#pragma once

#include <chrono>
#include <cstddef>

#include "snowid/lease.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::skew {

struct SkewSettings {
  // A clock this far from the fleet (or the reference) in 3 bursts running,
  // each with uncertainty at most alert_max_uncertainty, raises an alert.
  Duration alert = std::chrono::milliseconds(5);
  Duration alert_max_uncertainty = std::chrono::milliseconds(1);
  // Surely (lower bound) this far off: suspect, though not yet fenced.
  Duration suspect = std::chrono::milliseconds(20);
  // Surely this far off in 2 of the last 3 bursts, each with uncertainty at
  // most fence_max_uncertainty: fenced. At most the leases' max_clock_skew.
  Duration fence = std::chrono::milliseconds(50);
  Duration fence_max_uncertainty = std::chrono::milliseconds(5);
  // A burst whose lowest round trip is above this counts as unmeasurable,
  // not skewed. At most fence / 2, so that u = RTT / 2 can never hide a fence.
  Duration rtt_cap = std::chrono::milliseconds(10);
  // How fast a held estimate's uncertainty grows with its age: the drift a
  // disciplined clock may have between two bursts (50 ppm, as ClockBound
  // recommends).
  double max_drift_ppm = 50.0;
  // A vote older than this does not count.
  Duration vote_max_age = std::chrono::seconds(5);
  // Each target is watched by this many observers at most.
  std::size_t max_observers = 8;
  // The blast-radius cap: peer fences per region within this window.
  Duration fence_window = std::chrono::minutes(10);
  // Count would-be fences without acting.
  bool dry_run = false;
};

// OK, or kInvalidArgument naming the settings that break the rules:
// 0 < alert, fence >= 4 x alert, alert <= suspect <= fence,
// fence <= lease.max_clock_skew (the margin a new holder adds to the previous
// high-water mark, which a wider fence would let a skewed host eat through),
// 0 < rtt_cap <= fence / 2, 0 < fence_max_uncertainty <= fence / 2,
// 0 < alert_max_uncertainty <= alert, 0 <= max_drift_ppm <= 1000,
// 0 < vote_max_age <= lease.ttl, 1 <= max_observers <= 64, 0 < fence_window.
Status validate(const SkewSettings& settings, const LeaseTiming& lease);

}  // namespace snowid::skew
