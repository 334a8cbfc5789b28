// The reply side of the Redis protocol (RESP) for snowidd: appends replies in
// RESP2 (what every client speaks first) or RESP3 (after HELLO 3) to a string
// the connection sends. Private to the daemon; no dependency beyond the
// standard library.
//
// Only what snowidd replies with is here: simple strings, errors, integers,
// bulk strings, null, arrays and maps. RESP3 doubles, booleans, verbatim
// strings, sets and pushes are not.
//
// Example, the reply to NEXTIDS 3 and then to a bad command:
//
//   std::string out;
//   RespWriter w(out, RespVersion::kResp2);
//   w.integer_range(first_id, 3);          // *3\r\n:<id>\r\n:<id+1>\r\n:<id+2>\r\n
//   w.error("ERR", "unknown command");     // -ERR unknown command\r\n
//
// A writer is a small view of the string it appends to: copy it freely; it
// must not outlive the string. Not thread-safe (nor is the string).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace snowid::daemon {

// The protocol version a connection speaks; HELLO changes it.
enum class RespVersion : std::uint8_t { kResp2 = 2, kResp3 = 3 };

class RespWriter {
 public:
  RespWriter(std::string& out, RespVersion version) noexcept : out_(&out), version_(version) {}

  RespVersion version() const noexcept { return version_; }
  std::string& output() const noexcept { return *out_; }

  // +text\r\n. A CR or LF in `text` would end the reply early and is written
  // as a space instead.
  void simple_string(std::string_view text);

  // -CODE message\r\n, or -CODE\r\n when `message` is empty. Clients act on
  // the code, the first word, so it should be one upper-case word such as ERR,
  // WRONGTYPE or CLOCK_MOVED_BACK: a space, CR or LF in it is written as '_',
  // and an empty code as ERR. A CR or LF in `message` is written as a space.
  void error(std::string_view code, std::string_view message);

  // -ERR Protocol error: <message>\r\n, the reply before closing a connection
  // whose parser failed (RespParser::error()).
  void protocol_error(std::string_view message);

  // :value\r\n
  void integer(std::int64_t value);

  // An unsigned value such as a 64-bit id or field. Up to 2^63-1 it is an
  // integer (:value); above, which no RESP integer can hold, it is a RESP3 big
  // number ((value) or, in RESP2, a bulk string of its decimal digits.
  void unsigned_integer(std::uint64_t value);

  // $<length>\r\n<bytes>\r\n; binary-safe.
  void bulk_string(std::string_view bytes);

  // The null reply: $-1\r\n in RESP2, _\r\n in RESP3.
  void null();

  // *<count>\r\n; the caller then writes `count` elements.
  void array_header(std::size_t count);

  // A map of `pairs` key-value pairs; the caller then writes 2 × `pairs`
  // elements, key, value, key, value... RESP3: %<pairs>\r\n; RESP2, which has
  // no maps: the flat array *<2 × pairs>\r\n.
  void map_header(std::size_t pairs);

  // An array of integers: *<n>\r\n then :value\r\n for each.
  void integer_array(std::span<const std::int64_t> values);

  // The array of the `count` integers first, first + 1, ... first + count - 1,
  // as a batch of consecutive ids is. Precondition: the last one fits in int64
  // (first + count - 1 <= INT64_MAX).
  void integer_range(std::int64_t first, std::size_t count);

 private:
  void header(char type, std::uint64_t n);
  void reserve_more(std::size_t n);

  std::string* out_;
  RespVersion version_;
};

}  // namespace snowid::daemon
