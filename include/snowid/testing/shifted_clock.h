// The real clock with its wall time shifted by a fixed amount: a host whose
// clock is off by that much (its monotonic clock and pause() are the real
// ones). Header-only; part of snowid::testing. Thread-safe.
#pragma once

#include "snowid/time.h"

namespace snowid::testing {

class ShiftedClock final : public Clock {
 public:
  explicit ShiftedClock(Duration offset) noexcept : offset_(offset) {}
  WallTime wall_now() const noexcept override { return system_clock().wall_now() + offset_; }
  MonoTime mono_now() const noexcept override { return system_clock().mono_now(); }
  void pause(Duration hint) const noexcept override { system_clock().pause(hint); }

 private:
  Duration offset_;
};

}  // namespace snowid::testing
