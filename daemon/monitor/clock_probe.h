// The skew monitor's probe of one peer's clock (docs/skew.md, "Measuring"):
// SNOWID.CLOCK over the peer's TCP RESP listener, t0 and t3 read on this
// host's clock around each request, t1 and t2 from the reply. A burst sends
// a few probes a few milliseconds apart and keeps the lowest-delay one
// (skew::best_of_burst): queueing only ever adds delay, so the fastest
// answer bounds the offset best.
//
// One TCP connection per peer (TCP_NODELAY), opened on the first burst and
// kept while it works; any failure closes it, and the next probe opens a new
// one. Every wait is bounded by `timeout`, so a paused or dead peer costs a
// burst at most probes x timeout.
//
// Not thread-safe: one monitor task probes each peer in turn.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "clock_reply.h"
#include "measurement.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {

struct ClockProbeOptions {
  std::size_t probes = 8;
  Duration spacing = std::chrono::milliseconds(5);
  // For connecting, and for each reply.
  Duration timeout = std::chrono::milliseconds(250);
  // Sent with AUTH first when not empty (the peer's http_token).
  std::string token;
  // Bursts whose best delay is above this are unmeasurable (skew settings).
  Duration rtt_cap = std::chrono::milliseconds(10);
};

class ClockProbe {
 public:
  // `clock` (this host's, the one the generator reads) must outlive the
  // probe. `address` is "host:port" with a numeric IPv4 or IPv6 host
  // ("[::1]:7391").
  ClockProbe(const Clock& clock, std::string address, ClockProbeOptions options);
  ~ClockProbe();
  ClockProbe(const ClockProbe&) = delete;
  ClockProbe& operator=(const ClockProbe&) = delete;

  // One burst. kEmpty when no probe was answered (last_error() says why).
  skew::Burst burst();

  // One probe's four timestamps, or why there is none (kUnavailable: the
  // peer did not answer in time or closed; kInvalidArgument: the address or
  // the reply is malformed; kFailedPrecondition: the peer refused, e.g.
  // NOAUTH).
  Result<skew::ProbeSample> probe();

  const std::string& address() const noexcept { return address_; }
  const Status& last_error() const noexcept { return last_error_; }

 private:
  Status connect();
  void disconnect() noexcept;
  Status send_all(std::string_view bytes, MonoTime deadline);
  // Reads until one reply is complete; its bytes are removed from the buffer.
  Status read_reply(MonoTime deadline, ClockReply& out);

  const Clock& clock_;
  std::string address_;
  ClockProbeOptions options_;
  int fd_ = -1;
  std::string buffer_;
  Status last_error_;
};

}  // namespace snowid::daemon
