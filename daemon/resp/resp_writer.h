// The reply side of the Redis protocol (RESP) for snowidd: appends replies in
// RESP2 (what every client speaks first) or RESP3 (after HELLO 3) to a string
// the connection sends. Private to the daemon; no dependency beyond the
// standard library.
//
// Only what snowidd replies with is here: simple strings, errors, integers,
// bulk strings, null, arrays and maps. RESP3 doubles, booleans, verbatim
// strings, sets and pushes are not.
//
// Example, an id and then the reply to a bad command:
//
//   std::string out;
//   RespWriter w(out, RespVersion::kResp2);
//   w.wide_integer(id);                    // $19\r\n<19 digits>\r\n
//   w.error("ERR", "unknown command");     // -ERR unknown command\r\n
//
// A writer is a small view of the string it appends to: copy it freely; it
// must not outlive the string. Not thread-safe (nor is the string).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace snowid::daemon {

// The protocol version a connection speaks; HELLO changes it.
enum class RespVersion : std::uint8_t { kResp2 = 2, kResp3 = 3 };

// How a connection receives the integers that can pass 2^53: ids and
// sequence numbers. JavaScript's Redis clients turn a RESP integer into a
// double, exact only up to 2^53, so such values go by default as bulk
// strings of their decimal digits, which every client hands over exactly.
// kInteger (IDFORMAT INTEGER) sends them as RESP integers for clients that
// keep 64 bits.
enum class WideFormat : std::uint8_t { kString, kInteger };

// The largest integer every client holds exactly: 2^53 - 1.
inline constexpr std::uint64_t kMaxExactInteger = (std::uint64_t{1} << 53) - 1;

class RespWriter {
 public:
  RespWriter(std::string& out, RespVersion version, WideFormat wide = WideFormat::kString) noexcept
      : out_(&out), version_(version), wide_(wide) {}

  RespVersion version() const noexcept { return version_; }
  WideFormat wide_format() const noexcept { return wide_; }
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

  // A value that can pass 2^53 (an id, a sequence number): with
  // WideFormat::kString the bulk string of its decimal digits
  // ($<length>\r\n<digits>\r\n), with kInteger as integer() or
  // unsigned_integer() write it.
  void wide_integer(std::int64_t value);
  void wide_integer(std::uint64_t value);

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

  // The array of the `count` values first, first + 1, ... first + count - 1,
  // each written by wide_integer(), as a batch of consecutive ids is.
  // Precondition: first + count - 1 does not overflow.
  void wide_range(std::uint64_t first, std::size_t count);
  void wide_range(std::int64_t first, std::size_t count);

  // The most bytes wide_integer() writes for one value.
  static constexpr std::size_t kMaxWideBytes = 1 + 2 + 2 + 20 + 2;

 private:
  template <typename Int>
  void wide_digits(Int value);
  void header(char type, std::uint64_t n);
  void reserve_more(std::size_t n);

  std::string* out_;
  RespVersion version_;
  WideFormat wide_;
};

}  // namespace snowid::daemon
