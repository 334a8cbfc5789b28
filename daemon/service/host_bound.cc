#include "host_bound.h"

#include <cmath>

namespace snowid::daemon {

std::string_view bound_source_name(BoundSource source) noexcept {
  switch (source) {
    case BoundSource::kChrony:
      return "chrony";
    case BoundSource::kUnknown:
      break;
  }
  return "unknown";
}

void HostBound::set(const BoundReading& reading) {
  internal::MutexLock lock(mu_);
  reading_ = reading;
}

void HostBound::clear() {
  internal::MutexLock lock(mu_);
  reading_ = BoundReading{};
}

BoundNow HostBound::at(MonoTime now) const {
  BoundReading r;
  {
    internal::MutexLock lock(mu_);
    r = reading_;
  }
  if (r.source == BoundSource::kUnknown) return {};
  const Duration age = now - r.taken;
  if (age < Duration::zero() || age > r.max_age) return {};
  // A bound must never understate the error: round the growth up.
  const double grown = std::ceil(static_cast<double>(age.count()) * r.drift_ppm / 1e6);
  return {r.source, r.bound + Duration(static_cast<Duration::rep>(grown))};
}

}  // namespace snowid::daemon
