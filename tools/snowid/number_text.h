// Strict reading of the numbers given on the command line.
#pragma once

#include <cstdint>
#include <string_view>

#include "snowid/layout.h"
#include "snowid/status.h"

namespace snowid::cli {

// Accepts plain decimal digits only (no sign, space, prefix or exponent) with
// a value in [min, max]. kInvalidArgument naming `what` (e.g. "--host")
// otherwise; a value outside the range is kOutOfRange.
Result<std::uint64_t> parse_number(std::string_view text, std::string_view what, std::uint64_t min,
                                   std::uint64_t max);

// The --region and --host texts as a worker id, each a 32-bit number; whether
// they fit a layout is the layout's check (Layout::check_worker).
Result<WorkerId> parse_worker(std::string_view region, std::string_view host);

}  // namespace snowid::cli
