// Notices that this process was paused (SIGSTOP, a VM frozen or migrated):
// its ticks came late. After a pause, every held estimate relates a clock
// that may have been stepped meanwhile, so the monitor drops them and marks
// itself suspect until it has measured again (docs/skew.md, "Measuring").
#pragma once

#include <optional>

#include "snowid/time.h"

namespace snowid::skew {

// Not thread-safe: the monitor task calls tick() once per period.
class PauseDetector {
 public:
  // `clock` must outlive the detector. A tick more than `late_limit` after
  // it was due (the previous tick plus `period`) is a pause.
  PauseDetector(const Clock& clock, Duration period,
                Duration late_limit = std::chrono::seconds(1)) noexcept;

  // Records a tick. Returns how late it was when that is more than
  // late_limit (a pause), else nullopt. The first tick is never late.
  std::optional<Duration> tick() noexcept;

 private:
  const Clock& clock_;
  Duration period_;
  Duration late_limit_;
  std::optional<MonoTime> last_;
};

}  // namespace snowid::skew
