// What the skew monitor knows at one instant, for operators: GET /v1/skew,
// the /fleet page, `snowid skew status|watch`, INFO and /readyz. The monitor
// (daemon/monitor/) fills it each round; readers only copy it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "measurement.h"
#include "snowid/layout.h"
#include "snowid/time.h"
#include "state.h"

namespace snowid::daemon {

// How far back the snapshot's history reaches.
inline constexpr Duration kSkewHistory = std::chrono::minutes(5);

// One host as this monitor sees it. Offsets are the host's clock minus this
// monitor's (positive: the host is ahead).
struct SkewPeerView {
  std::string host;
  std::string address;
  bool self = false;     // this monitor's own host (offset zero by definition)
  bool monitor = false;  // runs a monitor (has an agent key): observes and votes
  std::vector<WorkerId> workers;
  std::optional<skew::Reading> offset;     // the held estimate; none: unmeasured
  std::optional<Duration> rtt;             // the held sample's delay
  std::optional<skew::Reading> deviation;  // from the median band, when there are >= 3 clocks
  skew::State state = skew::State::kUnmeasurable;
  std::size_t observers = 0;               // how many hosts observe it
  std::vector<std::string> votes_against;  // voters with a live vote against it
  std::optional<WallTime> measured_at;     // when the held sample was taken
  std::uint64_t probe_failures = 0;
};

// A fence recorded in etcd (docs/protocol.md section 13), as shown.
struct SkewFenceView {
  std::string target;
  std::string fencer;
  WallTime at{};  // on the fencer's clock
  std::vector<std::string> voters;
  std::vector<WorkerId> workers;
  std::string reason;
};

// One round's held offsets, for the chart of the last minutes.
struct SkewSample {
  WallTime at{};
  std::vector<std::pair<std::string, Duration>> offsets;  // measured hosts only
};

struct SkewSnapshot {
  WallTime at{};  // on this host's clock
  std::string self;
  std::uint32_t region = 0;
  skew::State self_state = skew::State::kUnmeasurable;
  // This host fenced its own clock and holds: no ids, no fresh worker id.
  bool held = false;
  std::string hold_reason;  // the self-fence's explanation while held
  bool dry_run = false;
  bool monitor_only = false;
  std::optional<skew::Reading> reference;  // the SNTP reference minus this host
  std::string reference_server;
  std::optional<Duration> chrony_bound;
  std::vector<SkewPeerView> peers;    // self included, sorted by host
  std::vector<SkewFenceView> fences;  // recent, newest first
  std::uint64_t fences_total = 0;
  std::uint64_t vetoes_total = 0;
  std::uint64_t would_fence_total = 0;  // dry run
  std::uint64_t mass_skew_total = 0;    // peer fences refused by the blast-radius cap
  std::uint64_t rounds = 0;
  std::vector<SkewSample> history;  // the last kSkewHistory, oldest first
};

// Implemented by the monitor; thread-safe.
class SkewSnapshotSource {
 public:
  virtual ~SkewSnapshotSource() = default;
  // The latest round's snapshot; nullptr before the first round.
  virtual std::shared_ptr<const SkewSnapshot> snapshot() const = 0;
};

}  // namespace snowid::daemon
