#include "snowid/id_text.h"

#include <string>

namespace snowid {
namespace {

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text.substr(0, 40)) {
    if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      out += '?';
    }
  }
  if (text.size() > 40) out += "...";
  out += '"';
  return out;
}

}  // namespace

Result<std::uint64_t> parse_id(std::string_view text) {
  if (text.empty()) return Status(Code::kInvalidArgument, "empty id");
  if (text.size() > 20) {
    return Status(Code::kInvalidArgument, "id " + quoted(text) + " has more than 20 digits");
  }
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      const char* why = c == '-' ? " is negative or has a stray '-'"
                        : c == ' ' || c == '\t' || c == '\r' || c == '\n'
                            ? " has surrounding or inner whitespace"
                            : " has a character that is not a decimal digit";
      return Status(Code::kInvalidArgument, "id " + quoted(text) + why);
    }
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) {
      return Status(Code::kOutOfRange, "id " + quoted(text) + " is larger than 2^64-1");
    }
    v = v * 10 + digit;
  }
  return v;
}

Result<std::uint64_t> parse_id(std::string_view text, const Layout& layout) {
  Result<std::uint64_t> v = parse_id(text);
  if (!v.is_ok()) return v;
  if (v.value() > layout.max_id()) {
    return Status(Code::kOutOfRange, "id " + quoted(text) + " does not fit layout " +
                                         layout.name() + " (" +
                                         std::to_string(layout.total_width()) + " bits, max " +
                                         std::to_string(layout.max_id()) + ")");
  }
  return v;
}

}  // namespace snowid
