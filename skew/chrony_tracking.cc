#include "chrony_tracking.h"

#include <charconv>
#include <cmath>
#include <vector>

namespace snowid::skew {
namespace {

constexpr std::size_t kFields = 14;

// Every term but the reference time is at most this large in magnitude
// (about 31 years; chrony's own are seconds at most). It keeps the sum in
// chrony_bound, and the age limit, far inside a count of nanoseconds.
constexpr Duration kLargestTerm = std::chrono::seconds(1'000'000'000);

Status bad(std::string_view field, std::string_view text) {
  return Status(Code::kInvalidArgument, "chronyc tracking: " + std::string(field) + " is not " +
                                            "a number: \"" + std::string(text.substr(0, 32)) +
                                            "\"");
}

// A decimal number of seconds, "-0.000000908" or "1796235934.052358979",
// exact to the nanosecond (digits beyond the ninth are dropped).
bool parse_seconds(std::string_view text, Duration& out) {
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction =
      dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  if (whole.empty() || whole.size() > 11) return false;
  std::int64_t seconds = 0;
  const auto r = std::from_chars(whole.data(), whole.data() + whole.size(), seconds);
  if (r.ec != std::errc() || r.ptr != whole.data() + whole.size()) return false;
  // Beyond 2255 a count of nanoseconds no longer fits.
  if (seconds > 9'000'000'000) return false;
  std::int64_t nanos = 0;
  std::int64_t scale = 100'000'000;
  for (const char c : fraction) {
    if (c < '0' || c > '9') return false;
    nanos += (c - '0') * scale;
    scale /= 10;
  }
  if (dot != std::string_view::npos && fraction.empty()) return false;
  const std::int64_t total = seconds * 1'000'000'000 + nanos;
  out = Duration(negative ? -total : total);
  return true;
}

bool parse_ppm(std::string_view text, double& out) {
  const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size() && std::isfinite(out);
}

// One duration term: a number of seconds, non-negative unless `signed_term`,
// and within kLargestTerm.
Status parse_term(std::string_view field, std::string_view text, bool signed_term, Duration& out) {
  if (!parse_seconds(text, out)) return bad(field, text);
  if (!signed_term && out < Duration::zero()) {
    return Status(Code::kInvalidArgument, "chronyc tracking: " + std::string(field) +
                                              " is negative: \"" + std::string(text.substr(0, 32)) +
                                              "\"");
  }
  if (out > kLargestTerm || out < -kLargestTerm) {
    return Status(Code::kInvalidArgument, "chronyc tracking: " + std::string(field) +
                                              " is beyond 10^9 s: \"" +
                                              std::string(text.substr(0, 32)) + "\"");
  }
  return Status();
}

}  // namespace

Result<ChronyTracking> parse_chrony_tracking(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  std::vector<std::string_view> f;
  for (std::size_t start = 0;;) {
    const std::size_t comma = line.find(',', start);
    f.push_back(line.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (f.size() != kFields) {
    return Status(Code::kInvalidArgument, "chronyc tracking: " + std::to_string(f.size()) +
                                              " fields, not 14 (is this chronyc -c tracking?)");
  }
  ChronyTracking t;
  t.reference_id = std::string(f[0]);
  if (t.reference_id.empty() || t.reference_id.size() > 8 ||
      t.reference_id.find_first_not_of("0123456789ABCDEFabcdef") != std::string::npos) {
    return Status(Code::kInvalidArgument, "chronyc tracking: the reference id is not hex");
  }
  t.reference_name = std::string(f[1]);
  {
    const auto r = std::from_chars(f[2].data(), f[2].data() + f[2].size(), t.stratum);
    if (r.ec != std::errc() || r.ptr != f[2].data() + f[2].size() || t.stratum < 0 ||
        t.stratum > 16) {
      return bad("the stratum", f[2]);
    }
  }
  Duration ref = Duration::zero();
  if (!parse_seconds(f[3], ref) || ref < Duration::zero()) return bad("the reference time", f[3]);
  t.reference_time = WallTime(ref);
  const struct {
    std::string_view field;
    std::size_t index;
    bool signed_term;
    Duration& out;
  } terms[] = {
      {"the system time", 4, true, t.system_offset},
      {"the last offset", 5, true, t.last_offset},
      {"the RMS offset", 6, true, t.rms_offset},
      {"the root delay", 10, false, t.root_delay},
      {"the root dispersion", 11, false, t.root_dispersion},
      {"the update interval", 12, false, t.update_interval},
  };
  for (const auto& term : terms) {
    if (Status s = parse_term(term.field, f[term.index], term.signed_term, term.out); !s.is_ok()) {
      return s;
    }
  }
  if (!parse_ppm(f[7], t.frequency_ppm)) return bad("the frequency", f[7]);
  if (!parse_ppm(f[8], t.residual_frequency_ppm)) return bad("the residual frequency", f[8]);
  if (!parse_ppm(f[9], t.skew_ppm)) return bad("the skew", f[9]);
  t.leap_status = std::string(f[13]);
  if (t.leap_status != "Normal" && t.leap_status != "Insert second" &&
      t.leap_status != "Delete second" && t.leap_status != "Not synchronised") {
    return Status(Code::kInvalidArgument, "chronyc tracking: unknown leap status \"" +
                                              std::string(f[13].substr(0, 32)) + "\"");
  }
  return t;
}

Result<Duration> chrony_bound(const ChronyTracking& t, WallTime now,
                              const ChronyBoundOptions& options) {
  if (t.leap_status == "Not synchronised" || t.stratum == 0 ||
      t.reference_time == WallTime(Duration::zero())) {
    return Status(Code::kUnavailable, "chrony is not synchronised");
  }
  const Duration age = now - t.reference_time;
  if (age < -std::chrono::seconds(1)) {
    return Status(Code::kUnavailable, "chrony's last update is in the future by " +
                                          std::to_string(-age.count() / 1000000) + " ms");
  }
  // update_interval * intervals, without overflowing for any interval.
  const Duration intervals_limit =
      options.intervals > 0 && t.update_interval > options.max_age / options.intervals
          ? options.max_age
          : t.update_interval * std::max(options.intervals, 0);
  const Duration limit =
      std::min(options.max_age, std::max(options.min_age_limit, intervals_limit));
  if (age > limit) {
    return Status(Code::kUnavailable, "chrony's last update is " +
                                          std::to_string(age.count() / 1000000) +
                                          " ms old: free running");
  }
  const Duration grown = Duration(static_cast<Duration::rep>(std::ceil(
      static_cast<double>(std::max(age, Duration::zero()).count()) * options.drift_ppm / 1e6)));
  const Duration offset = t.system_offset < Duration::zero() ? -t.system_offset : t.system_offset;
  // Rounded up: a bound must never understate the error.
  const Duration half_delay = (t.root_delay + Duration(1)) / 2;
  return offset + t.root_dispersion + half_delay + grown;
}

}  // namespace snowid::skew
