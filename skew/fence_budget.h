// The blast-radius cap on peer fences, and the dry run (docs/skew.md, "The
// vote rule"). Skew that hits many hosts at once is far more likely a wrong
// reference, a network fault or a bug than many bad clocks, and fencing them
// all would take the region down: beyond the cap, the monitor raises the
// "mass skew" alarm instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "skew_settings.h"
#include "snowid/time.h"

namespace snowid::skew {

enum class FenceGrant : std::uint8_t {
  kGranted,  // go ahead
  kDryRun,   // would have been granted; counted, not acted on
  kCapped,   // over the cap: do not fence, raise "mass skew"
};

// Not thread-safe: one fencer per monitor. The window runs on `clock`'s wall
// time, since fences by other hosts arrive as wall-time records.
class FenceBudget {
 public:
  // `clock` must outlive the budget.
  FenceBudget(const Clock& clock, const SkewSettings& settings) noexcept;

  // max(1, floor(fleet / 5)) peer fences per window.
  static std::size_t limit_for(std::size_t fleet) noexcept;

  // A peer fence in a region of `fleet` hosts. Counts against the window
  // when granted (or would be, in a dry run).
  FenceGrant peer_fence(std::size_t fleet);
  // The grant peer_fence() would give, without counting a granted fence:
  // for a fencer that may lose the race to another (the fence transaction
  // decides) and counts only the fences made, through note_fence(). A dry
  // run's would-be fence counts at once, as there is no record of it.
  FenceGrant room(std::size_t fleet);
  // A host fencing itself: never capped (stopping is always safe).
  FenceGrant self_fence() noexcept;
  // A peer fence another fencer of the region made at `at` (from its record).
  void note_fence(WallTime at);

  std::uint64_t would_be_fences() const noexcept { return would_be_; }
  std::uint64_t mass_skew_alarms() const noexcept { return mass_skew_; }

 private:
  void expire(WallTime now);

  const Clock& clock_;
  Duration window_;
  bool dry_run_;
  std::deque<WallTime> fences_;  // in the window, oldest first
  std::uint64_t would_be_ = 0;
  std::uint64_t mass_skew_ = 0;
};

}  // namespace snowid::skew
