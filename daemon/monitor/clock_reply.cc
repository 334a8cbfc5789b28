#include "clock_reply.h"

#include <chrono>
#include <optional>

namespace snowid::daemon {
namespace {

constexpr std::size_t kMaxElements = 32;  // 6 pairs today; room for more keys
constexpr std::size_t kMaxBulk = 64;

// One RESP element at `at`: its text (a bulk or simple string, an integer's
// digits), or null. Advances `at` past it.
struct Element {
  bool null = false;
  bool integer = false;
  std::string_view text;
};

enum class Read : std::uint8_t { kOk, kIncomplete, kBad };

// The line at `at` up to CRLF (exclusive), and `at` after it.
Read line(std::string_view in, std::size_t& at, std::string_view& out) {
  const std::size_t end = in.find("\r\n", at);
  if (end == std::string_view::npos) {
    return in.size() - at > kMaxClockReplyBytes ? Read::kBad : Read::kIncomplete;
  }
  out = in.substr(at, end - at);
  at = end + 2;
  return Read::kOk;
}

// A count or length: decimal digits, or -1; at most 4 digits.
std::optional<std::int64_t> small_number(std::string_view s) {
  if (s == "-1") return -1;
  if (s.empty() || s.size() > 4) return std::nullopt;
  std::int64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

Read element(std::string_view in, std::size_t& at, Element& out) {
  std::string_view head;
  if (Read r = line(in, at, head); r != Read::kOk) return r;
  if (head.empty()) return Read::kBad;
  const char type = head.front();
  const std::string_view rest = head.substr(1);
  switch (type) {
    case '$': {
      const std::optional<std::int64_t> n = small_number(rest);
      if (!n || *n > static_cast<std::int64_t>(kMaxBulk)) return Read::kBad;
      if (*n < 0) {
        out.null = true;
        return Read::kOk;
      }
      const auto len = static_cast<std::size_t>(*n);
      if (in.size() < at + len + 2) return Read::kIncomplete;
      if (in.substr(at + len, 2) != "\r\n") return Read::kBad;
      out.text = in.substr(at, len);
      at += len + 2;
      return Read::kOk;
    }
    case ':':
    case '+':
      if (rest.size() > kMaxBulk) return Read::kBad;
      out.text = rest;
      out.integer = type == ':';
      return Read::kOk;
    case '_':
      if (!rest.empty()) return Read::kBad;
      out.null = true;
      return Read::kOk;
    default:
      return Read::kBad;
  }
}

// Nanoseconds since the Unix epoch: 1 to 19 digits, no sign.
std::optional<WallTime> nanoseconds(const Element& e) {
  if (e.null || e.text.empty() || e.text.size() > 19) return std::nullopt;
  std::int64_t v = 0;
  for (const char c : e.text) {
    if (c < '0' || c > '9') return std::nullopt;
    const std::int64_t d = c - '0';
    if (v > (INT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return WallTime(std::chrono::nanoseconds(v));
}

ClockReply malformed(std::string why) {
  ClockReply r;
  r.outcome = ClockReply::Outcome::kError;
  r.error = "malformed SNOWID.CLOCK reply: " + std::move(why);
  return r;
}

}  // namespace

ClockReply read_clock_reply(std::string_view in) {
  ClockReply out;
  if (in.size() > kMaxClockReplyBytes) in = in.substr(0, kMaxClockReplyBytes + 1);
  std::size_t at = 0;
  std::string_view head;
  if (Read r = line(in, at, head); r != Read::kOk) {
    return r == Read::kBad ? malformed("no line within the size limit") : out;
  }
  if (head.empty()) return malformed("an empty line");
  if (head.front() == '-') {
    out.outcome = ClockReply::Outcome::kError;
    out.error = std::string(head.substr(1, 200));
    out.consumed = at;
    return out;
  }
  if (head.front() != '*' && head.front() != '%') return malformed("neither an array nor a map");
  const std::optional<std::int64_t> n = small_number(head.substr(1));
  if (!n || *n < 0) return malformed("a bad element count");
  const std::size_t pairs =
      head.front() == '%' ? static_cast<std::size_t>(*n) : static_cast<std::size_t>(*n) / 2;
  if (head.front() == '*' && *n % 2 != 0) return malformed("an odd number of elements");
  if (pairs * 2 > kMaxElements) return malformed("too many elements");
  std::optional<WallTime> received, sent;
  for (std::size_t i = 0; i < pairs; ++i) {
    Element key, value;
    for (Element* e : {&key, &value}) {
      const Read r = element(in, at, *e);
      if (r == Read::kIncomplete) return out;
      if (r == Read::kBad) return malformed("a bad element");
    }
    if (key.null || key.integer) return malformed("a key that is not a string");
    std::optional<WallTime>* slot = key.text == "receive_ns" ? &received
                                    : key.text == "send_ns"  ? &sent
                                                             : nullptr;
    if (slot == nullptr) continue;
    if (slot->has_value()) return malformed(std::string(key.text) + " given twice");
    *slot = nanoseconds(value);
    if (!*slot) return malformed(std::string(key.text) + " is not a time in nanoseconds");
  }
  if (!received || !sent) return malformed("receive_ns or send_ns is missing");
  if (*sent < *received) return malformed("send_ns is before receive_ns");
  out.outcome = ClockReply::Outcome::kClock;
  out.consumed = at;
  out.received = *received;
  out.sent = *sent;
  return out;
}

}  // namespace snowid::daemon
