// parse_chrony_tracking on arbitrary text, and chrony_bound on what it
// accepts. Input: 4 bytes of an age in microseconds (signed), then the line.
// Invariants: an accepted line has the terms the bound needs non-negative
// and a known leap status; a bound is at least each of its terms; a refusal
// says why.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chrony_tracking.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace snowid;
  using namespace snowid::skew;
  if (size < 4) return 0;
  const auto age_us =
      static_cast<std::int32_t>((std::uint32_t{data[0]} << 24) | (std::uint32_t{data[1]} << 16) |
                                (std::uint32_t{data[2]} << 8) | data[3]);
  const std::string_view line(reinterpret_cast<const char*>(data + 4), size - 4);
  const Result<ChronyTracking> r = parse_chrony_tracking(line);
  if (!r.is_ok()) {
    FUZZ_CHECK(r.status().code() == Code::kInvalidArgument);
    FUZZ_CHECK(!r.status().message().empty());
    return 0;
  }
  const ChronyTracking& t = r.value();
  FUZZ_CHECK(t.root_delay >= Duration::zero() && t.root_dispersion >= Duration::zero());
  FUZZ_CHECK(t.update_interval >= Duration::zero());
  FUZZ_CHECK(t.stratum >= 0 && t.stratum <= 16);
  FUZZ_CHECK(t.reference_time >= WallTime(Duration::zero()));
  const Result<Duration> bound =
      chrony_bound(t, t.reference_time + std::chrono::microseconds(age_us));
  if (!bound.is_ok()) {
    FUZZ_CHECK(bound.status().code() == Code::kUnavailable);
    return 0;
  }
  const Duration offset = t.system_offset < Duration::zero() ? -t.system_offset : t.system_offset;
  FUZZ_CHECK(bound.value() >= offset);
  FUZZ_CHECK(bound.value() >= t.root_dispersion);
  FUZZ_CHECK(bound.value() >= t.root_delay / 2);
  FUZZ_CHECK(t.leap_status != "Not synchronised");
  return 0;
}
