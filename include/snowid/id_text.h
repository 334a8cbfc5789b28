// Reading ids from text. Ids travel as decimal strings (JSON clients lose
// precision above 2^53), so this parser is strict: anything but a plain
// decimal number that fits the layout is refused with a reason.
#pragma once

#include <cstdint>
#include <string_view>

#include "snowid/layout.h"
#include "snowid/status.h"

namespace snowid {

// Accepts 1 to 20 ASCII digits and nothing else (no sign, space or prefix).
// Values above 2^64-1 are refused.
Result<std::uint64_t> parse_id(std::string_view text);
// As above, and the value must fit the layout (below 2^63 for a 63-bit layout).
Result<std::uint64_t> parse_id(std::string_view text, const Layout& layout);

}  // namespace snowid
