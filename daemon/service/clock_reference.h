// The clock reference of one daemon: a thread that every second reads
// chrony's tracking (when `chronyc` is set) into the host's bound, which
// SNOWID.CLOCK reports, and every `poll` measures this host's clock against
// each SNTP server with a burst of 4 queries, keeping the one of least
// delay. Both land in ClockReadings for INFO and /metrics. Both read the
// generator's clock. A server that answers DENY or RSTR is not asked again;
// RATE skips its next poll.
//
// Thread-safe; stop() (or the destructor) joins the thread.
#pragma once

#include <string>
#include <thread>
#include <vector>

#include "clock_readings.h"
#include "host_bound.h"
#include "mutex.h"
#include "snowid/time.h"

namespace snowid::daemon {

struct ClockReferenceOptions {
  std::vector<std::pair<std::string, std::uint16_t>> servers;  // host, port
  Duration poll = std::chrono::seconds(16);
  std::string chronyc;  // empty: chrony is not read
  std::string chrony_socket;
};

class ClockReference {
 public:
  // `clock`, `bound` and `readings` must outlive this.
  ClockReference(const Clock& clock, HostBound& bound, ClockReadings& readings,
                 ClockReferenceOptions options);
  ~ClockReference();
  ClockReference(const ClockReference&) = delete;
  ClockReference& operator=(const ClockReference&) = delete;

  // Something to do: a server or chrony.
  bool enabled() const noexcept { return !options_.servers.empty() || !options_.chronyc.empty(); }
  // Starts the thread (once; nothing when not enabled).
  void start();
  void stop();

 private:
  void run();
  void read_chrony(ClockReadingsSnapshot& s);
  void measure(ClockReadingsSnapshot& s);

  const Clock& clock_;
  HostBound& bound_;
  ClockReadings& readings_;
  const ClockReferenceOptions options_;
  std::vector<int> skip_;  // polls each server sits out (RATE)
  internal::Mutex mu_;
  internal::CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace snowid::daemon
