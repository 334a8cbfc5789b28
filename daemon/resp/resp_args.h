// What the RESP commands share to read their arguments and word their
// argument errors as Redis does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "resp_writer.h"

namespace snowid::daemon {

inline constexpr std::string_view kNotInteger = "value is not an integer or out of range";

// True when `text` equals `lower` (all lower case) ignoring ASCII case. No
// lower-cased copy is made: command names are compared on every command.
bool same_word(std::string_view text, std::string_view lower) noexcept;

// A signed decimal as Redis reads one: an optional '-', then digits without
// leading zeros (or the single digit 0), nothing else, within int64.
bool parse_int64(std::string_view text, std::int64_t& value) noexcept;

// -ERR wrong number of arguments for '<name>' command
void arity_error(RespWriter& w, std::string_view name);

}  // namespace snowid::daemon
