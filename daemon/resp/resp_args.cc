#include "resp_args.h"

#include <cstddef>
#include <limits>

#include "ascii.h"

namespace snowid::daemon {

bool same_word(std::string_view text, std::string_view lower) noexcept {
  return equal_ignoring_ascii_case(text, lower);
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
  message += lower_ascii(name);
  message += "' command";
  w.error("ERR", message);
}

}  // namespace snowid::daemon
