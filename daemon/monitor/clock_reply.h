// The reader of a peer's SNOWID.CLOCK reply (docs/daemon.md, "Clock
// probes"), for the skew monitor's probes: a RESP2 flat array or a RESP3 map
// of six keys, whose receive_ns and send_ns are the peer's clock when it
// took the request and when it wrote the reply, nanoseconds since the Unix
// epoch, written as ids are (bulk strings of digits, or integers after
// IDFORMAT INTEGER). It reads exactly one reply and bounds what it accepts,
// since the bytes come from the network.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "snowid/time.h"

namespace snowid::daemon {

struct ClockReply {
  enum class Outcome : std::uint8_t {
    kIncomplete,  // more bytes are needed
    kClock,       // a reply with both times
    kError,       // an error reply (-NOAUTH ...) or a malformed one: close the connection
  };
  Outcome outcome = Outcome::kIncomplete;
  std::size_t consumed = 0;  // the reply's bytes, when complete
  WallTime received{};       // the peer's receive_ns
  WallTime sent{};           // its send_ns
  std::string error;         // kError: the peer's error line, or what was malformed
};

// The most bytes one reply may take; a longer one is malformed.
inline constexpr std::size_t kMaxClockReplyBytes = 2048;

// Reads the reply at the start of `in`. Keys other than the two times are
// skipped (their values may be bulk strings, integers or nulls); the times
// must be present once each, non-negative, and received <= sent.
ClockReply read_clock_reply(std::string_view in);

}  // namespace snowid::daemon
