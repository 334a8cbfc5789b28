#include "pause_detector.h"

namespace snowid::skew {

PauseDetector::PauseDetector(const Clock& clock, Duration period, Duration late_limit) noexcept
    : clock_(clock), period_(period), late_limit_(late_limit) {}

std::optional<Duration> PauseDetector::tick() noexcept {
  // Monotonic: a wall step is what the monitor measures, not a pause.
  const MonoTime now = clock_.mono_now();
  std::optional<Duration> late;
  if (last_) {
    const Duration lateness = now - (*last_ + period_);
    if (lateness > late_limit_) late = lateness;
  }
  last_ = now;
  return late;
}

}  // namespace snowid::skew
