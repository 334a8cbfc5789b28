// The argument checks shared by every TicketStore, so that SQLite, PostgreSQL
// and the memory store refuse the same calls with the same words.
#include "snowid/ticket_store.h"

#include <cstdint>
#include <limits>
#include <string>

namespace snowid {
namespace {

constexpr std::int64_t kNumberLimit = std::numeric_limits<std::int64_t>::max();

bool name_byte_ok(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

// The offending byte in hex: the name itself is not echoed, since it may hold
// anything (control characters, half a UTF-8 sequence).
std::string hex_byte(char c) {
  constexpr char kDigits[] = "0123456789abcdef";
  const auto b = static_cast<unsigned char>(c);
  return std::string("0x") + kDigits[b >> 4] + kDigits[b & 0xf];
}

Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

}  // namespace

Status validate_sequence_name(std::string_view name) {
  if (name.empty()) return invalid("sequence name is empty");
  if (name.size() > kMaxSequenceNameLength) {
    return invalid("sequence name is " + std::to_string(name.size()) + " bytes; at most " +
                   std::to_string(kMaxSequenceNameLength) + " are allowed");
  }
  // A first byte of [._-] would let "." and ".." through, which a URL path
  // resolves away, and "-x" reads as a command-line option.
  const char first = name.front();
  if (!((first >= 'A' && first <= 'Z') || (first >= 'a' && first <= 'z') ||
        (first >= '0' && first <= '9'))) {
    return invalid("sequence name must start with a letter or a digit; byte 0 is " +
                   hex_byte(first));
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!name_byte_ok(name[i])) {
      return invalid("sequence name may hold only [A-Za-z0-9_.-]; byte " + std::to_string(i) +
                     " is " + hex_byte(name[i]));
    }
  }
  return Status::ok();
}

Status validate_sequence_create(std::string_view name, std::int64_t start, std::int64_t step) {
  if (Status s = validate_sequence_name(name); !s.is_ok()) return s;
  if (start < 0 || start >= kNumberLimit) {
    return invalid("sequence start must be 0 <= start < 9223372036854775807, got " +
                   std::to_string(start));
  }
  if (step < 1 || step > kMaxSequenceRange) {
    return invalid("sequence step must be 1 to " + std::to_string(kMaxSequenceRange) + ", got " +
                   std::to_string(step));
  }
  return Status::ok();
}

Status validate_sequence_take(std::string_view name, std::int64_t size) {
  if (Status s = validate_sequence_name(name); !s.is_ok()) return s;
  if (size < 0 || size > kMaxSequenceRange) {
    return invalid("range size must be 0 (the sequence's step) to " +
                   std::to_string(kMaxSequenceRange) + ", got " + std::to_string(size));
  }
  return Status::ok();
}

}  // namespace snowid
