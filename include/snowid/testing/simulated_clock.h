// A clock for tests that moves only when told: it can step back, stall and
// leap. Link snowid::testing to use it. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

#include "snowid/time.h"

namespace snowid::testing {

class SimulatedClock final : public Clock {
 public:
  // Starts at `start` on the wall clock and at an arbitrary monotonic time.
  explicit SimulatedClock(WallTime start) noexcept;

  WallTime wall_now() const noexcept override;
  MonoTime mono_now() const noexcept override;
  // With auto-advance on, moves both clocks forward by max(hint, 1 us): a
  // single-threaded test then never blocks. With it off (the default), yields
  // the thread and leaves time to whoever drives the clock.
  void pause(Duration hint) const noexcept override;

  // Moves both clocks forward by `d` (>= 0), as time passing does.
  void advance(Duration d) noexcept;
  // Moves only the wall clock, by `d` which may be negative: an NTP step, a
  // VM migration, an operator's mistake. The monotonic clock does not move.
  void step_wall(Duration d) noexcept;
  void set_wall(WallTime t) noexcept;
  // Moves only the monotonic clock: a wall clock that has stopped.
  void advance_monotonic(Duration d) noexcept;
  void set_auto_advance(bool on) noexcept;
  // How many times pause() was called.
  std::uint64_t pauses() const noexcept;

 private:
  mutable std::atomic<std::int64_t> wall_ns_;
  mutable std::atomic<std::int64_t> mono_ns_;
  std::atomic<bool> auto_advance_{false};
  mutable std::atomic<std::uint64_t> pauses_{0};
};

}  // namespace snowid::testing
