// Request bodies that are one flat JSON object of integer fields, such as
// PUT /v1/sequences/{name}'s {"start":1000,"step":100}.
//
// Strict: the body must be valid JSON (RFC 8259, UTF-8, no comments, nothing
// after the value) whose top level is an object; every member must be one of
// the names allowed, at most once; and each value a JSON integer or a string,
// so that a client whose numbers would lose precision as doubles (above
// 2^53) can send decimal strings. Fractions and exponents are refused, even
// "1.0" or "1e3": an integer is wanted, and a rounded one would be wrong.
//
// The values come back as text: the digits of an integer as written (a
// minus sign included), or the string's contents, for the caller to check
// against its bounds exactly as it checks a query parameter.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "snowid/status.h"

namespace snowid::daemon {

// (name, text) in the order of the body. kInvalidArgument with a message
// saying what is wrong (malformed JSON and where, not an object, an unknown
// or repeated member, a value that is not an integer or a string).
Result<std::vector<std::pair<std::string, std::string>>> parse_integer_fields(
    std::string_view body, std::span<const std::string_view> allowed);
inline Result<std::vector<std::pair<std::string, std::string>>> parse_integer_fields(
    std::string_view body, std::initializer_list<std::string_view> allowed) {
  return parse_integer_fields(body,
                              std::span<const std::string_view>(allowed.begin(), allowed.size()));
}

}  // namespace snowid::daemon
