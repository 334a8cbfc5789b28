// Time types and the clock seam. Wall time, monotonic time and durations are
// distinct types so that they cannot be mixed by accident; nothing in snowid
// reads the system clock except SystemClock.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "snowid/status.h"

namespace snowid {

using Duration = std::chrono::nanoseconds;
// Wall-clock time since the Unix epoch (UTC, no leap seconds). Comparable across hosts.
using WallTime = std::chrono::sys_time<std::chrono::nanoseconds>;
// Monotonic time: never goes back, but only meaningful within one host and boot.
using MonoTime = std::chrono::time_point<std::chrono::steady_clock, std::chrono::nanoseconds>;

constexpr WallTime wall_from_unix_ms(std::int64_t ms) noexcept {
  return WallTime(std::chrono::milliseconds(ms));
}
// Milliseconds since the Unix epoch, rounded toward negative infinity.
constexpr std::int64_t unix_ms(WallTime t) noexcept {
  return std::chrono::floor<std::chrono::milliseconds>(t).time_since_epoch().count();
}

// The source of time. Implementations must be safe to call from many threads.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual WallTime wall_now() const noexcept = 0;
  virtual MonoTime mono_now() const noexcept = 0;
  // The same monotonic clock read cheaply: it may lag mono_now() by up to
  // the kernel's tick (4 ms where HZ is 250), and is never ahead of it. For
  // deadline checks on hot paths, where a few milliseconds late is harmless.
  // Defaults to mono_now().
  virtual MonoTime mono_coarse_now() const noexcept { return mono_now(); }
  // Called by a caller that must wait about `hint` before the wall clock can
  // satisfy it. The clock decides how: SystemClock spins for short hints and
  // sleeps for long ones; a simulated clock may advance itself. May return
  // early; callers re-read the time and decide again.
  virtual void pause(Duration hint) const noexcept = 0;
};

// The process-wide real clock (CLOCK_REALTIME and CLOCK_MONOTONIC).
const Clock& system_clock() noexcept;

// ISO 8601 / RFC 3339 in UTC with milliseconds, floored: "2026-01-01T00:00:00.000Z".
std::string format_iso8601(WallTime t);

// Parses "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS[.fraction]]" followed by "Z" or an
// offset "+HH:MM" / "-HH:MM" (a date-time without zone is refused: it would be
// ambiguous). "t" and "z" are accepted in lower case, as RFC 3339 allows, and
// "," as well as "." before the fraction, as ISO 8601 does. Years 1970 to 2261
// only. A fraction beyond nanoseconds is refused, as is any surrounding text.
Result<WallTime> parse_iso8601(std::string_view text);

}  // namespace snowid
