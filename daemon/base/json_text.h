// JSON string text for everything snowidd writes as JSON: the HTTP bodies and
// the JSON log lines. Any bytes go in, including a client's; valid JSON in
// valid UTF-8 comes out.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace snowid::daemon {

// The length of the well-formed UTF-8 sequence at the start of `s`: 1 for an
// ASCII byte, 2 to 4 for a multi-byte sequence, 0 if there is none (an empty
// `s`, a stray continuation byte, a truncated sequence, an overlong form, a
// surrogate, or a code point past U+10FFFF; RFC 3629, section 4).
std::size_t utf8_sequence_length(std::string_view s) noexcept;

// Appends `s` with JSON string escapes, without the quotes: '"', '\\', the
// control characters and DEL become escapes, and so do U+2028 and U+2029
// (for readers that treat JSON as JavaScript); each byte that is not part of
// well-formed UTF-8 becomes the escape \ufffd. The output is pure ASCII
// apart from the valid UTF-8 sequences of `s`, copied as they are.
void append_json_escaped(std::string& out, std::string_view s);

// `s` as a JSON string: append_json_escaped() between quotes.
void append_json_string(std::string& out, std::string_view s);

}  // namespace snowid::daemon
