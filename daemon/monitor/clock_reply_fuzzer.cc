// libFuzzer target: read_clock_reply() on any bytes never reads past them,
// consumes no more than it was given, and gives times only in order.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "clock_reply.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const snowid::daemon::ClockReply r = snowid::daemon::read_clock_reply(in);
  if (r.consumed > size) std::abort();
  if (r.outcome == snowid::daemon::ClockReply::Outcome::kClock) {
    if (r.sent < r.received || r.consumed == 0) std::abort();
    // Reading the reply again from its own bytes gives the same times.
    const snowid::daemon::ClockReply again =
        snowid::daemon::read_clock_reply(in.substr(0, r.consumed));
    if (again.outcome != r.outcome || again.received != r.received || again.sent != r.sent) {
      std::abort();
    }
  }
  return 0;
}
