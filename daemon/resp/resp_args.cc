#include "resp_args.h"

#include <cstddef>
#include <limits>

namespace snowid::daemon {

namespace {

char ascii_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

bool same_word(std::string_view text, std::string_view lower) noexcept {
  if (text.size() != lower.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (ascii_lower(text[i]) != lower[i]) return false;
  }
  return true;
}

std::string lower_copy(std::string_view text) {
  std::string s(text);
  for (char& c : s) c = ascii_lower(c);
  return s;
}

bool parse_int64(std::string_view text, std::int64_t& value) noexcept {
  if (text.empty() || text.size() > 20) return false;
  const bool negative = text.front() == '-';
  const std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty() || (digits.front() == '0' && (digits.size() > 1 || negative))) return false;
  std::uint64_t magnitude = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return false;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (magnitude > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
    magnitude = magnitude * 10 + d;
  }
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (negative) {
    if (magnitude > kMax + 1) return false;
    value = magnitude == kMax + 1 ? std::numeric_limits<std::int64_t>::min()
                                  : -static_cast<std::int64_t>(magnitude);
  } else {
    if (magnitude > kMax) return false;
    value = static_cast<std::int64_t>(magnitude);
  }
  return true;
}

void arity_error(RespWriter& w, std::string_view name) {
  std::string message = "wrong number of arguments for '";
  message += lower_copy(name);
  message += "' command";
  w.error("ERR", message);
}

}  // namespace snowid::daemon
