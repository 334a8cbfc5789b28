// The host's own claim about how wrong its wall clock may be: the latest
// reading of a time daemon (chrony's tracking), grown by a drift allowance
// with its age, as SNOWID.CLOCK and /v1/clock report it. It is a claim, not a
// measurement: a migrated VM's chrony can be confidently wrong, which is why
// peers and a reference measure the clock independently.
//
// Thread-safe: one poller sets it, any connection thread reads it.
#pragma once

#include <cstdint>
#include <string_view>

#include "mutex.h"
#include "snowid/time.h"

namespace snowid::daemon {

enum class BoundSource : std::uint8_t {
  kUnknown,  // no reading, or the last one is too old
  kChrony,   // chronyc tracking: |system time| + root dispersion + root delay / 2
};

// "unknown", "chrony": the wire words.
std::string_view bound_source_name(BoundSource source) noexcept;

// One reading of the source.
struct BoundReading {
  BoundSource source = BoundSource::kUnknown;
  Duration bound = Duration::zero();  // the error bound when it was read, >= 0
  MonoTime taken;                     // when it was read
  // How much the bound grows per second of age: the worst drift of an
  // unsynchronised oscillator, in parts per million (ClockBound and fbclock
  // recommend 50 over chrony's own 1 ppm).
  double drift_ppm = 50.0;
  // Past this age the reading no longer counts: the source is unknown.
  Duration max_age = std::chrono::seconds(10);
};

// The bound as of a given moment.
struct BoundNow {
  BoundSource source = BoundSource::kUnknown;
  Duration bound = Duration::zero();  // zero when unknown
  bool known() const noexcept { return source != BoundSource::kUnknown; }
};

class HostBound {
 public:
  void set(const BoundReading& reading);
  // No source any more (chrony stopped, or lost its synchronisation).
  void clear();
  // The last reading grown by drift × age, rounded up to the nanosecond;
  // unknown when there is none, or it is older than its max_age (or taken
  // after `now`).
  BoundNow at(MonoTime now) const;

 private:
  mutable internal::Mutex mu_;
  BoundReading reading_ GUARDED_BY(mu_);
};

}  // namespace snowid::daemon
