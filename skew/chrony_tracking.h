// chrony's own view of the host clock, from `chronyc -c tracking` (one line
// of 14 comma-separated fields, chrony 4), and the error bound it implies:
//
//   bound = |system time offset| + root dispersion + root delay / 2
//           + drift allowance × age of the last update
//
// (chronyc's documentation gives the first three terms; AWS ClockBound and
// Meta's fbclock add the growth). The bound is the host's claim, not a
// measurement: a migrated VM's chrony can be confidently wrong.
#pragma once

#include <string>
#include <string_view>

#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::skew {

struct ChronyTracking {
  std::string reference_id;    // hex, "7F000001"; "00000000" when unsynchronised
  std::string reference_name;  // an address or a name; may be empty
  int stratum = 0;
  WallTime reference_time;  // the last update; the epoch when there was none
  // chrony's "System time": how far the system clock is from chrony's idea
  // of true time, signed as chronyc -c prints it.
  Duration system_offset = Duration::zero();
  Duration last_offset = Duration::zero();
  Duration rms_offset = Duration::zero();
  double frequency_ppm = 0;
  double residual_frequency_ppm = 0;
  double skew_ppm = 0;
  Duration root_delay = Duration::zero();       // >= 0
  Duration root_dispersion = Duration::zero();  // >= 0
  Duration update_interval = Duration::zero();  // >= 0
  std::string leap_status;  // "Normal", "Insert second", "Delete second", "Not synchronised"
};

// Parses one line of `chronyc -c tracking` (a trailing line end allowed).
// kInvalidArgument names the field that is missing or malformed; a negative,
// NaN or infinite root delay, root dispersion or update interval is refused
// (a negative term would quietly narrow the bound), and so is any term but
// the reference time beyond 10^9 s in magnitude (no chrony prints one; the
// bound's sum would overflow).
Result<ChronyTracking> parse_chrony_tracking(std::string_view line);

struct ChronyBoundOptions {
  // The bound grows by this much per second since the last update. chrony
  // assumes 1 ppm; ClockBound's README calls that "VERY wrong" and says 50.
  double drift_ppm = 50.0;
  // The last update must be younger than this many update intervals (chrony
  // keeps 8 samples per source), and at most `max_age` whatever the interval.
  int intervals = 8;
  Duration min_age_limit = std::chrono::seconds(2);
  Duration max_age = std::chrono::seconds(1024);
};

// The bound at `now`, rounded up to the nanosecond, or why there is none:
// kUnavailable (retry later) when chrony is not synchronised (leap status,
// stratum 0 or no reference time) or its last update is older than the
// options allow or lies in the future by more than a second.
Result<Duration> chrony_bound(const ChronyTracking& t, WallTime now,
                              const ChronyBoundOptions& options = {});

// Runs `chronyc -c -n tracking` (with `-h socket` when `socket` is not
// empty) and parses its line: kUnavailable when chronyc cannot be started,
// fails (no chronyd answering), or takes longer than `timeout`.
Result<ChronyTracking> read_chrony_tracking(const std::string& chronyc, const std::string& socket,
                                            Duration timeout = std::chrono::seconds(2));

}  // namespace snowid::skew
