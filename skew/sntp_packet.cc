#include "sntp_packet.h"

#include <cstdlib>
#include <utility>

namespace snowid::skew {
namespace {

constexpr std::int64_t kNanos = 1'000'000'000;
constexpr std::int64_t kEraSeconds = std::int64_t{1} << 32;

std::uint32_t read32(std::span<const std::uint8_t> b, std::size_t at) noexcept {
  return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) |
         (std::uint32_t{b[at + 2]} << 8) | std::uint32_t{b[at + 3]};
}

NtpTimestamp read_timestamp(std::span<const std::uint8_t> b, std::size_t at) noexcept {
  return {read32(b, at), read32(b, at + 4)};
}

void write32(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

// A 16.16 fixed-point number of seconds (the root delay and dispersion).
Duration short_format(std::int64_t raw) noexcept { return Duration((raw * kNanos) >> 16); }

// Printable ASCII, or '?': a kiss code goes into logs and metric labels.
std::string kiss_code(const std::array<char, 4>& id) {
  std::string code;
  for (const char c : id) {
    if (c == '\0') break;
    code += (c >= '!' && c <= '~') ? c : '?';
  }
  return code;
}

}  // namespace

NtpTimestamp ntp_from_wall(WallTime t) noexcept {
  // Seconds and nanoseconds apart: nanoseconds since 1900 pass 2^63 in 2192.
  const std::int64_t ns = t.time_since_epoch().count();
  std::int64_t seconds = ns / kNanos;
  std::int64_t nanos = ns % kNanos;
  if (nanos < 0) {
    nanos += kNanos;
    --seconds;
  }
  seconds += kNtpUnixSeconds;
  std::uint64_t fraction =
      ((static_cast<std::uint64_t>(nanos) << 32) + static_cast<std::uint64_t>(kNanos / 2)) /
      static_cast<std::uint64_t>(kNanos);
  if (fraction > 0xffffffffU) {
    fraction = 0;
    ++seconds;
  }
  return {static_cast<std::uint32_t>(seconds), static_cast<std::uint32_t>(fraction)};
}

WallTime wall_from_ntp(NtpTimestamp t, WallTime near) noexcept {
  const std::int64_t near_ns = near.time_since_epoch().count();
  std::int64_t near_seconds = near_ns / kNanos;
  if (near_ns % kNanos < 0) --near_seconds;
  near_seconds += kNtpUnixSeconds;
  const std::int64_t era = near_seconds >= 0 ? near_seconds / kEraSeconds
                                             : -((-near_seconds + kEraSeconds - 1) / kEraSeconds);
  std::int64_t best = era * kEraSeconds + t.seconds;
  for (const std::int64_t e : {era - 1, era + 1}) {
    const std::int64_t candidate = e * kEraSeconds + t.seconds;
    if (std::llabs(candidate - near_seconds) < std::llabs(best - near_seconds)) best = candidate;
  }
  const std::int64_t nanos = static_cast<std::int64_t>(
      (std::uint64_t{t.fraction} * static_cast<std::uint64_t>(kNanos) + (std::uint64_t{1} << 31)) >>
      32);
  return WallTime(Duration((best - kNtpUnixSeconds) * kNanos + nanos));
}

std::array<std::uint8_t, kNtpPacketBytes> sntp_request(NtpTimestamp transmit) noexcept {
  std::array<std::uint8_t, kNtpPacketBytes> p{};
  p[0] = (0 << 6) | (4 << 3) | 3;  // LI 0, version 4, mode 3 (client)
  write32(p.data() + 40, transmit.seconds);
  write32(p.data() + 44, transmit.fraction);
  return p;
}

std::string_view sntp_failure_name(SntpFailure f) noexcept {
  switch (f) {
    case SntpFailure::kNone:
      return "none";
    case SntpFailure::kMalformed:
      return "malformed";
    case SntpFailure::kNotServer:
      return "not_server";
    case SntpFailure::kBadOrigin:
      return "bad_origin";
    case SntpFailure::kKissOfDeath:
      return "kiss_of_death";
    case SntpFailure::kUnsynchronised:
      return "unsynchronised";
    case SntpFailure::kZeroTime:
      return "zero_time";
    case SntpFailure::kNegativeDelay:
      return "negative_delay";
    case SntpFailure::kTimeout:
      return "timeout";
    case SntpFailure::kNetwork:
      return "network";
  }
  return "unknown";
}

SntpResult sntp_failed(SntpFailure failure, std::string message, std::string kiss) {
  SntpResult r;
  r.failure = failure;
  r.kiss = std::move(kiss);
  Code code = Code::kInvalidArgument;
  switch (failure) {
    case SntpFailure::kTimeout:
    case SntpFailure::kNetwork:
    case SntpFailure::kUnsynchronised:
      code = Code::kUnavailable;
      break;
    case SntpFailure::kKissOfDeath:
      code = r.stop() ? Code::kFailedPrecondition : Code::kUnavailable;
      break;
    default:
      break;
  }
  r.status = Status(code, std::move(message));
  return r;
}

bool parse_sntp_header(std::span<const std::uint8_t> b, SntpHeader& h) noexcept {
  if (b.size() < kNtpPacketBytes) return false;
  h.leap = static_cast<LeapIndicator>(b[0] >> 6);
  h.version = (b[0] >> 3) & 7;
  h.mode = b[0] & 7;
  h.stratum = b[1];
  h.poll = static_cast<std::int8_t>(b[2]);
  h.precision = static_cast<std::int8_t>(b[3]);
  h.root_delay = short_format(static_cast<std::int32_t>(read32(b, 4)));
  h.root_dispersion = short_format(read32(b, 8));
  for (std::size_t i = 0; i < 4; ++i) h.reference_id[i] = static_cast<char>(b[12 + i]);
  h.reference = read_timestamp(b, 16);
  h.origin = read_timestamp(b, 24);
  h.receive = read_timestamp(b, 32);
  h.transmit = read_timestamp(b, 40);
  return true;
}

SntpResult check_sntp_reply(std::span<const std::uint8_t> bytes, NtpTimestamp sent, WallTime t1,
                            WallTime t4) {
  SntpHeader h;
  if (!parse_sntp_header(bytes, h)) {
    return sntp_failed(SntpFailure::kMalformed,
                       "an SNTP reply of " + std::to_string(bytes.size()) + " bytes, under 48");
  }
  if (h.mode != 4 || h.version < 3 || h.version > 4) {
    return sntp_failed(SntpFailure::kNotServer, "not a server reply: mode " +
                                                    std::to_string(h.mode) + ", version " +
                                                    std::to_string(h.version));
  }
  if (h.origin != sent) {
    return sntp_failed(SntpFailure::kBadOrigin, "the reply's origin is not the request's transmit");
  }
  if (h.stratum == 0) {
    std::string kiss = kiss_code(h.reference_id);
    return sntp_failed(SntpFailure::kKissOfDeath, "Kiss-o'-Death " + kiss, kiss);
  }
  if (h.leap == LeapIndicator::kAlarm || h.stratum > 15) {
    return sntp_failed(SntpFailure::kUnsynchronised,
                       "the server is not synchronised (leap indicator " +
                           std::to_string(static_cast<int>(h.leap)) + ", stratum " +
                           std::to_string(h.stratum) + ")");
  }
  if (h.receive.zero() || h.transmit.zero()) {
    return sntp_failed(SntpFailure::kZeroTime, "a receive or transmit timestamp of zero");
  }
  SntpResult r;
  SntpSample& s = r.sample;
  s.t1 = t1;
  s.t4 = t4;
  s.t2 = wall_from_ntp(h.receive, t1);
  s.t3 = wall_from_ntp(h.transmit, t1);
  s.delay = (t4 - t1) - (s.t3 - s.t2);
  s.offset = ((s.t2 - t1) + (s.t3 - t4)) / 2;
  s.stratum = h.stratum;
  s.leap = h.leap;
  s.root_delay = h.root_delay;
  s.root_dispersion = h.root_dispersion;
  if (s.delay < Duration::zero()) {
    return sntp_failed(SntpFailure::kNegativeDelay,
                       "negative delay " + std::to_string(s.delay.count()) +
                           " ns: the server's interval exceeds the round trip");
  }
  return r;
}

}  // namespace snowid::skew
