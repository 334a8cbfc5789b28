// SNTP over UDP: one query with a timeout, and a burst that keeps the
// lowest-delay sample (the one least disturbed by queueing, hence by path
// asymmetry). T1 and T4 come from the injected clock, the one the generator
// stamps ids with, never from kernel timestamps.
//
// RFC 4330 section 10: a client must not poll a server more often than every
// 15 s. Bursts are for servers we run ourselves; poll shared ones slowly, and
// stop asking a server that answered DENY or RSTR.
//
// Blocking; thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>

#include "snowid/time.h"
#include "sntp_packet.h"

namespace snowid::skew {

struct SntpServer {
  std::string host;  // a name or a numeric IPv4 or IPv6 address
  std::uint16_t port = 123;
};

struct SntpBurstOptions {
  int probes = 8;                                     // 1..64
  Duration spacing = std::chrono::milliseconds(5);    // between probes
  Duration timeout = std::chrono::milliseconds(500);  // per probe
};

// One request and its reply. Replies whose origin is not this request's
// (stale or spoofed) are dropped and the wait goes on until `timeout`.
SntpResult sntp_query(const Clock& clock, const SntpServer& server, Duration timeout);

// `options.probes` queries; the valid sample of least delay, or, when none
// is valid, the failure of the last probe. A Kiss-o'-Death ends the burst at
// once (its result is returned): the server asked us to stop or slow down.
SntpResult sntp_burst(const Clock& clock, const SntpServer& server,
                      const SntpBurstOptions& options = {});

}  // namespace snowid::skew
