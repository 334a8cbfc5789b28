// The C++ driver's injectable clock: the system wall clock plus an offset the
// harness sets at run time, the system monotonic clock unchanged. Stepping the
// offset is a step of this process's wall clock, as a host's NTP step is, and
// needs no libfaketime.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "snowid/time.h"

namespace snowid::polyglot {

class OffsetClock final : public Clock {
 public:
  void set_offset(std::chrono::milliseconds offset) noexcept {
    offset_ns_.store(std::chrono::duration_cast<Duration>(offset).count(),
                     std::memory_order_relaxed);
  }
  WallTime wall_now() const noexcept override {
    return system_clock().wall_now() + Duration(offset_ns_.load(std::memory_order_relaxed));
  }
  MonoTime mono_now() const noexcept override { return system_clock().mono_now(); }
  MonoTime mono_coarse_now() const noexcept override { return system_clock().mono_coarse_now(); }
  void pause(Duration hint) const noexcept override { system_clock().pause(hint); }

 private:
  std::atomic<std::int64_t> offset_ns_{0};
};

}  // namespace snowid::polyglot
