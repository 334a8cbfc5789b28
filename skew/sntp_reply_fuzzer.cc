// check_sntp_reply on arbitrary bytes. Input: 8 bytes of the request's
// transmit, 8 of T1 (Unix nanoseconds, any value), 4 of the round trip in
// nanoseconds, then the reply. Invariants: a sample has a non-negative delay
// equal to (T4 - T1) - (T3 - T2) and an offset within the interval its four
// times allow; a refusal has a message and a code that says whether to
// retry; a kiss only with a Kiss-o'-Death; the era chosen for T2 is within
// half an era of T1.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_check.h"
#include "sntp_packet.h"

namespace {

using namespace snowid;
using namespace snowid::skew;

std::uint64_t read64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 20) return 0;
  const std::uint64_t sent_bits = read64(data);
  const NtpTimestamp sent{static_cast<std::uint32_t>(sent_bits >> 32),
                          static_cast<std::uint32_t>(sent_bits)};
  // T1 between 1970 and 2188 (wall_from_ntp's domain).
  const std::int64_t t1_ns =
      static_cast<std::int64_t>(read64(data + 8) % (std::uint64_t{6900000000} * 1000000000));
  const std::uint32_t rtt = (std::uint32_t{data[16]} << 24) | (std::uint32_t{data[17]} << 16) |
                            (std::uint32_t{data[18]} << 8) | data[19];
  const WallTime t1{Duration(t1_ns)};
  const WallTime t4 = t1 + Duration(rtt);
  const std::span<const std::uint8_t> reply(data + 20, size - 20);

  const SntpResult r = check_sntp_reply(reply, sent, t1, t4);
  SntpHeader h;
  const bool parsed = parse_sntp_header(reply, h);
  FUZZ_CHECK(parsed == (reply.size() >= kNtpPacketBytes));
  if (r.ok()) {
    FUZZ_CHECK(r.status.is_ok());
    FUZZ_CHECK(parsed && h.origin == sent && h.stratum >= 1 && h.stratum <= 15);
    const Duration d = r.sample.delay;
    FUZZ_CHECK(d >= Duration::zero());
    FUZZ_CHECK(d == (t4 - t1) - (r.sample.t3 - r.sample.t2));
    // Within half an era, give or take the seconds' fractions.
    const Duration half_era = std::chrono::seconds((std::int64_t{1} << 31) + 1);
    FUZZ_CHECK(r.sample.t2 - t1 <= half_era && t1 - r.sample.t2 <= half_era);
    // θ is the midpoint offset: twice it differs from the two one-way
    // differences' sum by at most the halving's rounding.
    const Duration twice = (r.sample.t2 - t1) + (r.sample.t3 - t4);
    const Duration rest = twice - 2 * r.sample.offset;
    FUZZ_CHECK(rest >= Duration(-1) && rest <= Duration(1));
    FUZZ_CHECK(r.kiss.empty());
  } else {
    FUZZ_CHECK(!r.status.is_ok());
    FUZZ_CHECK(!r.status.message().empty());
    FUZZ_CHECK(r.kiss.empty() || r.failure == SntpFailure::kKissOfDeath);
    FUZZ_CHECK(!r.stop() || r.status.code() == Code::kFailedPrecondition);
    FUZZ_CHECK(r.kiss.size() <= 4);
  }
  // What ntp_from_wall writes, wall_from_ntp reads back within a nanosecond.
  const NtpTimestamp back = ntp_from_wall(t1);
  const Duration drift = wall_from_ntp(back, t1) - t1;
  FUZZ_CHECK(drift >= Duration(-1) && drift <= Duration(1));
  return 0;
}
