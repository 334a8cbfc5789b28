#include <cstdio>
#include <string>

#include "snowid/time.h"

namespace snowid {
namespace {

using std::chrono::days;
using std::chrono::floor;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

Status bad(std::string_view text, std::string_view why) {
  std::string msg = "bad time \"";
  msg.append(text.substr(0, 64));
  msg += "\": ";
  msg += why;
  msg += " (expected e.g. 2026-01-01T00:00:00.000Z)";
  return Status(Code::kInvalidArgument, std::move(msg));
}

// Reads exactly `n` digits at `pos`; false if any is not a digit.
bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

}  // namespace

std::string format_iso8601(WallTime t) {
  const auto ms = floor<milliseconds>(t);
  const auto day = floor<days>(ms);
  const std::chrono::year_month_day ymd{day};
  const std::chrono::hh_mm_ss<milliseconds> hms{ms - day};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", int{ymd.year()},
                unsigned{ymd.month()}, unsigned{ymd.day()}, static_cast<int>(hms.hours().count()),
                static_cast<int>(hms.minutes().count()), static_cast<int>(hms.seconds().count()),
                static_cast<int>(hms.subseconds().count()));
  return buf;
}

Result<WallTime> parse_iso8601(std::string_view s) {
  int y = 0, mo = 0, d = 0;
  if (!digits(s, 0, 4, y) || s.size() < 10 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d)) {
    return bad(s, "the date must be YYYY-MM-DD");
  }
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{unsigned(mo)},
                                        std::chrono::day{unsigned(d)}};
  if (!ymd.ok()) return bad(s, "no such date");
  // Nanoseconds in 64 bits reach 2262-04-11; ids never predate the Unix epoch.
  if (y < 1970 || y > 2261) return bad(s, "the year must be between 1970 and 2261");
  WallTime t{std::chrono::sys_days{ymd}};
  if (s.size() == 10) return t;

  if (s[10] != 'T' && s[10] != 't') return bad(s, "a 'T' must separate date and time");
  std::size_t pos = 11;
  int h = 0, mi = 0, sec = 0;
  if (!digits(s, pos, 2, h) || pos + 2 >= s.size() || s[pos + 2] != ':' ||
      !digits(s, pos + 3, 2, mi)) {
    return bad(s, "the time must be HH:MM[:SS[.fraction]]");
  }
  pos += 5;
  if (h > 23 || mi > 59) return bad(s, "hour or minute out of range");
  Duration frac{0};
  if (pos < s.size() && s[pos] == ':') {
    if (!digits(s, pos + 1, 2, sec)) return bad(s, "seconds must be two digits");
    if (sec > 59) return bad(s, "seconds out of range (leap seconds are not representable)");
    pos += 3;
    if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
      ++pos;
      std::size_t n = 0;
      std::int64_t ns = 0;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        if (++n > 9) return bad(s, "more than 9 fraction digits");
        ns = ns * 10 + (s[pos] - '0');
        ++pos;
      }
      if (n == 0) return bad(s, "a fraction needs digits");
      for (std::size_t i = n; i < 9; ++i) ns *= 10;
      frac = Duration(ns);
    }
  }
  t += hours(h) + minutes(mi) + seconds(sec) + frac;

  if (pos >= s.size()) return bad(s, "a zone is required: 'Z' or an offset such as +02:00");
  if (s[pos] == 'Z' || s[pos] == 'z') {
    ++pos;
  } else if (s[pos] == '+' || s[pos] == '-') {
    const int sign = s[pos] == '-' ? -1 : 1;
    int oh = 0, om = 0;
    if (!digits(s, pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !digits(s, pos + 4, 2, om)) {
      return bad(s, "the offset must be +HH:MM or -HH:MM");
    }
    if (oh > 23 || om > 59) return bad(s, "offset out of range");
    // Local time = UTC + offset, so UTC = local - offset.
    t -= sign * (hours(oh) + minutes(om));
    pos += 6;
  } else {
    return bad(s, "a zone is required: 'Z' or an offset such as +02:00");
  }
  if (pos != s.size()) return bad(s, "unexpected text after the zone");
  // An offset can carry the instant across the year bounds checked above.
  if (t < WallTime(std::chrono::sys_days{std::chrono::year{1970} / 1 / 1}) ||
      t >= WallTime(std::chrono::sys_days{std::chrono::year{2262} / 1 / 1})) {
    return bad(s, "the instant must be between 1970 and 2261 UTC");
  }
  return t;
}

}  // namespace snowid
