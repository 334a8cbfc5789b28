// The SNTP wire format (RFC 4330; RFC 5905 section 7 for the packet, section 8
// for the on-wire arithmetic): a client request, a server reply parsed field
// by field, and the checks that turn a reply into an offset and a delay.
// Pure functions of their arguments; the UDP exchange is sntp_client.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::skew {

inline constexpr std::size_t kNtpPacketBytes = 48;
// Seconds from the NTP prime epoch (1900-01-01) to the Unix epoch.
inline constexpr std::int64_t kNtpUnixSeconds = 2208988800;

// A 64-bit NTP timestamp: 32 bits of seconds since the start of its era, 32
// bits of fraction. The era (136 years; era 1 starts 2036-02-07T06:28:16Z)
// is not on the wire.
struct NtpTimestamp {
  std::uint32_t seconds = 0;
  std::uint32_t fraction = 0;
  std::uint64_t bits() const noexcept { return (std::uint64_t{seconds} << 32) | fraction; }
  bool zero() const noexcept { return seconds == 0 && fraction == 0; }
  friend bool operator==(const NtpTimestamp&, const NtpTimestamp&) = default;
};

// `t` on the wire (its era dropped), the fraction rounded to the nearest.
NtpTimestamp ntp_from_wall(WallTime t) noexcept;
// The wall time of `t` in the era that puts it nearest `near` (the local
// clock): right across the 2036 rollover for any clock within 68 years.
// `near` between 1900 and 2190, so that the result fits a WallTime.
WallTime wall_from_ntp(NtpTimestamp t, WallTime near) noexcept;

// A version 4 client request (LI 0, mode 3) carrying `transmit`, which the
// server echoes as the reply's origin. RFC 5905 advises a value that cannot
// be guessed rather than the send time: the send time stays local.
std::array<std::uint8_t, kNtpPacketBytes> sntp_request(NtpTimestamp transmit) noexcept;

enum class LeapIndicator : std::uint8_t { kNone = 0, kInsert = 1, kDelete = 2, kAlarm = 3 };

// The header of a reply, as sent; nothing checked but its length.
struct SntpHeader {
  LeapIndicator leap = LeapIndicator::kNone;
  int version = 0;
  int mode = 0;
  int stratum = 0;
  int poll = 0;       // log2 seconds, signed
  int precision = 0;  // log2 seconds, signed
  Duration root_delay = Duration::zero();
  Duration root_dispersion = Duration::zero();
  std::array<char, 4> reference_id{};  // the kiss code when stratum is 0
  NtpTimestamp reference;
  NtpTimestamp origin;
  NtpTimestamp receive;
  NtpTimestamp transmit;
};

// Why a reply is not a sample.
enum class SntpFailure : std::uint8_t {
  kNone,
  kMalformed,       // shorter than 48 bytes
  kNotServer,       // a mode other than 4 (server), or a version other than 3 or 4
  kBadOrigin,       // the origin is not what the request sent: stale or spoofed
  kKissOfDeath,     // stratum 0: the server says not to use it (the kiss code says how)
  kUnsynchronised,  // leap indicator 3 (alarm) or a stratum above 15
  kZeroTime,        // a receive or transmit timestamp of zero
  kNegativeDelay,   // the server's own interval exceeds the round trip
  kTimeout,         // no valid reply in time
  kNetwork,         // the socket failed or the name did not resolve
};
// The word for metrics and logs: "malformed", "kiss_of_death", ...
std::string_view sntp_failure_name(SntpFailure f) noexcept;

// A valid reply, with the four timestamps (T1, T4 the local clock's) and
// RFC 5905's offset θ = ((T2 − T1) + (T3 − T4)) / 2 and delay
// δ = (T4 − T1) − (T3 − T2) >= 0. The true offset lies within θ ± δ/2.
struct SntpSample {
  WallTime t1, t2, t3, t4;
  Duration offset = Duration::zero();
  Duration delay = Duration::zero();
  int stratum = 0;
  LeapIndicator leap = LeapIndicator::kNone;
  Duration root_delay = Duration::zero();
  Duration root_dispersion = Duration::zero();
};

// A sample, or why not. `status` is kOk with a sample; kUnavailable (retry
// later) for a timeout, a network error, an unsynchronised server or a kiss
// other than DENY and RSTR; kFailedPrecondition (do not ask this server
// again) for the kisses DENY and RSTR; kInvalidArgument for a reply that is
// not a usable answer to this request.
struct SntpResult {
  SntpFailure failure = SntpFailure::kNone;
  Status status;
  SntpSample sample;
  std::string kiss;  // the kiss code of a Kiss-o'-Death: "DENY", "RATE", ...
  bool ok() const noexcept { return failure == SntpFailure::kNone; }
  // DENY or RSTR (RFC 5905 section 7.4): the client must stop asking.
  bool stop() const noexcept { return kiss == "DENY" || kiss == "RSTR"; }
  // RATE: the client must ask less often.
  bool slow_down() const noexcept { return kiss == "RATE"; }
};

SntpResult sntp_failed(SntpFailure failure, std::string message, std::string kiss = {});

// The header of `bytes`, or false when it is shorter than 48 bytes (longer
// replies carry extension fields or a MAC, which are ignored).
bool parse_sntp_header(std::span<const std::uint8_t> bytes, SntpHeader& out) noexcept;

// Checks `bytes` as the reply to a request that carried `sent` and went out
// at `t1` on the local clock, received at `t4`: RFC 4330 section 5's checks
// (mode, version, origin echo, Kiss-o'-Death, leap alarm, stratum, zero
// timestamps) and then a non-negative delay.
SntpResult check_sntp_reply(std::span<const std::uint8_t> bytes, NtpTimestamp sent, WallTime t1,
                            WallTime t4);

}  // namespace snowid::skew
