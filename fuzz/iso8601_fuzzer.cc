// parse_iso8601 on arbitrary bytes. Whatever it accepts must print as
// canonical RFC 3339 (UTC, milliseconds) and parse back to the same instant
// floored to the millisecond.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "snowid/time.h"

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "YYYY-MM-DDTHH:MM:SS.mmmZ", exactly.
bool canonical_shape(std::string_view s) {
  constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (s.size() != kShape.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (kShape[i] == 'd' ? !is_digit(s[i]) : s[i] != kShape[i]) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  snowid::Result<snowid::WallTime> parsed = snowid::parse_iso8601(text);
  if (!parsed.is_ok()) {
    FUZZ_CHECK(parsed.status().code() == snowid::Code::kInvalidArgument);
    return 0;
  }
  const snowid::WallTime t = parsed.value();

  // Only a date, or a date and a time, is accepted.
  FUZZ_CHECK(text.size() >= 10 && is_digit(text[0]) && text[4] == '-' && text[7] == '-');
  if (text.size() == 10) {
    FUZZ_CHECK(t.time_since_epoch() % std::chrono::days(1) == snowid::Duration::zero());
  }

  const std::string printed = snowid::format_iso8601(t);
  FUZZ_CHECK(canonical_shape(printed));
  snowid::Result<snowid::WallTime> again = snowid::parse_iso8601(printed);
  FUZZ_CHECK(again.is_ok());
  FUZZ_CHECK(again.value() == std::chrono::floor<std::chrono::milliseconds>(t));
  FUZZ_CHECK(snowid::format_iso8601(again.value()) == printed);

  // Lower-case 't' and 'z' mean the same as upper-case ones.
  std::string upper(text);
  for (char& c : upper) {
    if (c == 't') c = 'T';
    if (c == 'z') c = 'Z';
  }
  snowid::Result<snowid::WallTime> upper_parsed = snowid::parse_iso8601(upper);
  FUZZ_CHECK(upper_parsed.is_ok() && upper_parsed.value() == t);
  return 0;
}
