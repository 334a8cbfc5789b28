// ASCII case for protocol words (command names, header fields, media types,
// setting types): only A-Z and a-z change; every other byte, UTF-8 included,
// is left as it is.
#pragma once

#include <string>
#include <string_view>

namespace snowid::daemon {

constexpr char ascii_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
constexpr char ascii_upper(char c) noexcept {
  return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}

std::string lower_ascii(std::string_view text);
std::string upper_ascii(std::string_view text);
// Whether `a` and `b` are the same but for ASCII case.
bool equal_ignoring_ascii_case(std::string_view a, std::string_view b) noexcept;

}  // namespace snowid::daemon
