// The offset of one peer, held across bursts (docs/skew.md, "Measuring").
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "measurement.h"

namespace snowid::skew {

// Holds the best of the last kBursts measured bursts: the one whose
// uncertainty, grown by the drift allowed since it was taken, is lowest.
// A step detector keeps a good old burst from hiding a jump: a burst whose
// interval does not overlap the held one replaces the whole history at once.
// Not thread-safe: one monitor task owns it.
class PeerEstimate {
 public:
  static constexpr std::size_t kBursts = 8;

  explicit PeerEstimate(double max_drift_ppm) noexcept : max_drift_ppm_(max_drift_ppm) {}

  enum class Update : std::uint8_t {
    kHeld,          // added to the history; the held estimate is the best of it
    kStep,          // no overlap with the held estimate: history restarted from it
    kUnmeasurable,  // over the RTT cap: nothing held any more
    kEmpty,         // no usable sample: nothing held any more
  };
  Update add(const Burst& burst);

  // Forgets every burst: after this host was paused, none of them can be
  // trusted to relate its clock to the peer's.
  void drop() noexcept;

  // The held offset, its uncertainty grown to the time of the latest burst.
  // nullopt when the latest burst was not measured, or after drop().
  std::optional<Reading> held() const;
  // The measurement the held offset comes from.
  std::optional<Measurement> held_measurement() const;
  // What the latest burst was.
  BurstOutcome latest_outcome() const noexcept { return latest_; }
  std::uint64_t steps() const noexcept { return steps_; }

 private:
  Duration aged_uncertainty(const Measurement& m, WallTime now) const;
  // The best burst, with uncertainties aged to `now`.
  std::optional<std::size_t> best_index(WallTime now) const;
  std::optional<Reading> held_at(WallTime now) const;

  double max_drift_ppm_;
  std::deque<Measurement> bursts_;  // oldest first
  BurstOutcome latest_ = BurstOutcome::kEmpty;
  std::uint64_t steps_ = 0;
};

// Whether two readings can describe the same clock: their intervals overlap.
bool overlaps(const Reading& a, const Reading& b) noexcept;

}  // namespace snowid::skew
