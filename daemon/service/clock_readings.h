// What the clock reference last measured, for INFO and /metrics: each SNTP
// server's latest burst, and chrony's bound. Written by ClockReference
// (clock_reference.h), read by any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mutex.h"
#include "snowid/time.h"

namespace snowid::daemon {

struct ServerReading {
  std::string server;                  // "host:port", as configured
  bool measured = false;               // a burst gave a sample (the last one did, if `ok`)
  bool ok = false;                     // the last burst gave a sample
  Duration offset = Duration::zero();  // the server's clock minus ours, of the last sample
  Duration delay = Duration::zero();   // its round trip less the server's own time
  WallTime at{};                       // when its answer arrived (t4), on our clock
  int stratum = 0;
  std::string failure;  // the last burst's reason ("timeout", "kiss_of_death", ...) or empty
  std::uint64_t bursts = 0;
  std::uint64_t failures = 0;
  bool stopped = false;  // the server said DENY or RSTR: no longer asked
};

struct ClockReadingsSnapshot {
  std::vector<ServerReading> servers;
  bool chrony_enabled = false;
  bool chrony_ok = false;
  Duration chrony_bound = Duration::zero();
  std::string chrony_error;  // why the last read gave no bound
  std::uint64_t chrony_failures = 0;
};

class ClockReadings {
 public:
  void set(ClockReadingsSnapshot s);
  ClockReadingsSnapshot snapshot() const;

 private:
  mutable internal::Mutex mu_;
  ClockReadingsSnapshot s_ GUARDED_BY(mu_);
};

}  // namespace snowid::daemon
