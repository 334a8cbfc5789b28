// A JSON reader for configuration files: stricter than the library default.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

#include "snowid/status.h"

namespace snowid::host {

// Parses `text` as one JSON document. Beyond malformed JSON (message with line
// and column) it refuses, as kInvalidArgument:
// - a key that repeats within one object (the library would keep the last
//   one silently, so an edit that adds a key could be ignored), and
// - objects and arrays nested deeper than `max_depth`.
// Never throws; messages are one line of printable ASCII.
Result<nlohmann::json> parse_strict_json(std::string_view text, std::size_t max_depth);

}  // namespace snowid::host
