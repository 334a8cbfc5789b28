#include "number_text.h"

#include <string>

#include "message_text.h"

namespace snowid::cli {

Result<std::uint64_t> parse_number(std::string_view text, std::string_view what, std::uint64_t min,
                                   std::uint64_t max) {
  const std::string range = " (allowed " + std::to_string(min) + " to " + std::to_string(max) + ")";
  if (text.empty()) return Status(Code::kInvalidArgument, std::string(what) + " is empty" + range);
  std::uint64_t v = 0;
  bool overflow = false;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return Status(Code::kInvalidArgument, std::string(what) + " " + host::quote_input(text) +
                                                " is not a non-negative decimal number" + range);
    }
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) {
      overflow = true;
      break;
    }
    v = v * 10 + digit;
  }
  if (overflow || v < min || v > max) {
    return Status(Code::kOutOfRange,
                  std::string(what) + " " + host::quote_input(text) + " is out of range" + range);
  }
  return v;
}

Result<WorkerId> parse_worker(std::string_view region, std::string_view host) {
  Result<std::uint64_t> r = parse_number(region, "--region", 0, UINT32_MAX);
  if (!r.is_ok()) return r.status();
  Result<std::uint64_t> h = parse_number(host, "--host", 0, UINT32_MAX);
  if (!h.is_ok()) return h.status();
  return WorkerId{static_cast<std::uint32_t>(r.value()), static_cast<std::uint32_t>(h.value())};
}

}  // namespace snowid::cli
