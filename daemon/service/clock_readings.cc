#include "clock_readings.h"

#include <utility>

namespace snowid::daemon {

void ClockReadings::set(ClockReadingsSnapshot s) {
  internal::MutexLock lock(mu_);
  s_ = std::move(s);
}

ClockReadingsSnapshot ClockReadings::snapshot() const {
  internal::MutexLock lock(mu_);
  return s_;
}

}  // namespace snowid::daemon
