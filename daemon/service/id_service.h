// The one request handler's core: what both transports (RESP and HTTP) ask
// of the leased generator, with the daemon's counters. Private to the daemon.
//
// Refusals are Codes, worded for each protocol by refusals.h.
//
// Thread-safe: any number of connection threads call it at once.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "clock_readings.h"
#include "host_bound.h"
#include "refusals.h"
#include "skew_hold.h"
#include "skew_snapshot.h"
#include "snowid/layout.h"
#include "snowid/leased_generator.h"
#include "snowid/postgres_canary.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {

// `count` consecutive ids from `first`.
struct IdSpan {
  std::uint64_t first = 0;
  std::uint32_t count = 0;
};

// The answer to a request for n ids: the spans in issue order (ids
// increasing), or the refusal. On a refusal no ids are returned; any taken
// before it are lost (gaps, never duplicates).
struct IdsAnswer {
  Code code = Code::kOk;
  Duration retry_after = Duration::zero();
  std::string message;  // for a refusal: one line for humans
  std::vector<IdSpan> spans;
  bool ok() const noexcept { return code == Code::kOk; }
};

// Counters the transports and /metrics read. Monotonic, relaxed.
struct ServiceCounters {
  std::uint64_t ids_issued = 0;                      // handed to clients
  std::uint64_t ids_dropped = 0;                     // taken by a batch that was then refused: gaps
  std::uint64_t single_requests = 0;                 // NEXTID, count=1
  std::uint64_t batch_requests = 0;                  // NEXTIDS n, count=N (any n)
  std::uint64_t reserve_calls = 0;                   // generator reserve() calls for batches
  std::array<std::uint64_t, 32> refusals_by_code{};  // index: Code value
  std::uint64_t decodes = 0;
  std::uint64_t decode_errors = 0;
};

// What INFO and /metrics show, read at one moment (each part consistent with
// itself, not with each other).
// The public-id keyring as INFO and /metrics show it (the daemon's
// public_ids.h fills it in; off when the daemon has no keyring).
struct PublicIdKeyringStats {
  bool on = false;
  std::uint64_t reloads = 0;          // SIGHUP reloads that put a keyring in use
  std::uint64_t reload_failures = 0;  // reloads refused: the old keyring kept
  // Slots by state, indexed by snowid::KeyState: primary, active, decrypt, retired.
  std::array<std::uint32_t, 4> slots_by_state{};
  int primary_slot = -1;
  std::string primary_fingerprint;  // 8 hex digits; empty when off
  // WRAP, UNWRAP and the issuing forms (public_ids.h).
  std::uint64_t wrapped = 0;          // ids wrapped
  std::uint64_t wrap_refusals = 0;    // wraps refused (a bad type or id)
  std::uint64_t unwrapped = 0;        // public ids unwrapped
  std::uint64_t unwrap_refusals = 0;  // public ids refused (UNKNOWN_KEY, FORGED...)
  std::uint64_t unwrap_denied = 0;    // unwraps this caller may not make (public_id_unwrap)
};

// The lease state in lower case, as INFO, /readyz and the metrics' labels
// show it (lease_state_name() gives the protocols' upper-case words).
std::string_view lease_state_label(LeaseState s) noexcept;

struct ServiceSnapshot {
  Layout layout = Layout::snowid_default();
  WorkerId worker;
  LeaseState lease_state = LeaseState::kHeld;
  bool ready = false;
  Status health;
  ServiceCounters counters;
  GeneratorStats generator;
  LeaseStats lease;
  std::uint64_t reacquisitions = 0;
  std::uint32_t max_batch = 0;
  WallTime started;
  WallTime now;                        // the wall clock when the snapshot was taken
  Duration uptime = Duration::zero();  // on the monotonic clock
  std::uint64_t lease_losses = 0;      // leases lost while running (count_lease_loss)
  ClockReadingsSnapshot clock;         // the clock reference's last readings
  PublicIdKeyringStats public_ids;
  // The uniqueness canary's figures; all zero when it is off.
  bool canary_on = false;
  CanaryStats canary;
  // The skew monitor's last round; null when it is off or has not run yet.
  std::shared_ptr<const SkewSnapshot> skew;
};

class IdService {
 public:
  // `generator` and `clock` must outlive the service. `max_batch` bounds n.
  IdService(LeasedGenerator& generator, const Clock& clock, std::uint32_t max_batch);
  // A monitor-only daemon's service (docs/skew.md): it issues nothing (every
  // request for ids: kUnavailable, "monitor-only"), decodes by `layout` and
  // answers the clock probes from `clock`.
  IdService(const Layout& layout, const Clock& clock);

  // One id (waits as the generator does: for the next tick, a small clock
  // step back), or the refusal.
  IdResult next_id() noexcept;

  // `n` ids, 1 <= n <= max_batch() (kInvalidArgument otherwise, with a
  // message naming the bound), taken with as few reserve() calls as the
  // sequence allows: one per tick touched.
  IdsAnswer next_ids(std::uint64_t n);

  // Parses `text` (decimal; see snowid::parse_id) and splits it by the
  // daemon's layout. kInvalidArgument for malformed text, kOutOfRange for a
  // number that uses bits beyond the layout (both: HTTP 400).
  Result<DecodedId> decode(std::string_view text);

  // A line for humans after the word of a refusal of `code` (NEXTID answers
  // carry a code only): the generator's own account of a clock step, else a
  // fixed sentence per code.
  std::string refusal_message(Code code) const;

  // Ready to issue: the lease is held and the generator healthy, and close()
  // has not been called. Cheap.
  bool ready() const noexcept;
  // Why not ready, one line; empty when ready.
  std::string not_ready_reason() const;

  std::uint32_t max_batch() const noexcept { return max_batch_.load(std::memory_order_relaxed); }
  // A runtime setting.
  void set_max_batch(std::uint32_t n) noexcept { max_batch_.store(n, std::memory_order_relaxed); }

  // Counted by the daemon's event hook (lease losses and re-acquisitions).
  void count_lease_loss() noexcept { lease_losses_.fetch_add(1, std::memory_order_relaxed); }

  ServiceSnapshot snapshot() const;
  // Where snapshot() reads the public-id keyring's figures; set before the
  // service is shared between threads. Unset: off.
  void set_public_id_stats(std::function<PublicIdKeyringStats()> read) {
    public_id_stats_ = std::move(read);
  }
  // Where snapshot() reads the canary's figures; as set_public_id_stats.
  void set_canary_stats(std::function<CanaryStats()> read) { canary_stats_ = std::move(read); }
  const Layout& layout() const noexcept { return layout_; }
  // False for a monitor-only daemon, which has no generator.
  bool issues() const noexcept { return generator_ != nullptr; }
  // OK while the generator is healthy (always, without one); its refusal
  // once unhealthy: /healthz.
  Status health() const;
  WorkerId worker() const noexcept;
  LeaseState lease_state() const noexcept;
  // The generator's clock: the clock probes (TIME, SNOWID.CLOCK) read it, so
  // that they measure the clock that stamps the ids.
  const Clock& clock() const noexcept { return clock_; }
  // The host's claim about its clock error, set by whatever reads it.
  HostBound& host_bound() noexcept { return host_bound_; }
  const HostBound& host_bound() const noexcept { return host_bound_; }
  // The clock reference's readings (clock_reference.h writes them).
  ClockReadings& clock_readings() noexcept { return clock_readings_; }
  // The skew monitor's hold on this host (skew_hold.h): while held, every
  // request for ids is refused with kUnavailable (HTTP 503, retry after 1 s)
  // and the service is not ready. Set before the service is shared between
  // threads; must outlive it. Unset: never held.
  void set_skew_hold(const SkewHold* hold) noexcept { hold_ = hold; }
  // Where snapshot() reads the skew monitor's view (INFO skew, /metrics,
  // /v1/skew). Set before sharing; must outlive the service. Unset: off.
  void set_skew_source(const SkewSnapshotSource* source) noexcept { skew_source_ = source; }
  bool skew_monitor_on() const noexcept { return skew_source_ != nullptr; }
  // The monitor's last round; null when off or before its first round.
  std::shared_ptr<const SkewSnapshot> skew_snapshot() const {
    return skew_source_ != nullptr ? skew_source_->snapshot() : nullptr;
  }

  // Stops issuing (every later call: kFailedPrecondition, SHUTTING_DOWN),
  // then closes the generator: records the fence, releases the lease.
  Status close();

 private:
  void count_refusal(Code code) noexcept;
  bool held() const noexcept;

  static constexpr Duration kHeldRetryAfter = std::chrono::seconds(1);

  LeasedGenerator* generator_;  // null: monitor-only
  Layout layout_;
  const Clock& clock_;
  WallTime started_;
  MonoTime started_mono_;
  std::atomic<std::uint32_t> max_batch_;
  std::atomic<bool> closed_{false};
  std::atomic<std::uint64_t> lease_losses_{0};
  HostBound host_bound_;
  ClockReadings clock_readings_;
  std::function<PublicIdKeyringStats()> public_id_stats_;
  std::function<CanaryStats()> canary_stats_;
  const SkewHold* hold_ = nullptr;
  const SkewSnapshotSource* skew_source_ = nullptr;

  // Counters, one cache line per slot; a thread uses the slot of its index
  // modulo kSlots, so two event-loop threads do not share a line.
  static constexpr int kSlots = 8;
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> ids_issued{0};
    std::atomic<std::uint64_t> ids_dropped{0};
    std::atomic<std::uint64_t> single_requests{0};
    std::atomic<std::uint64_t> batch_requests{0};
    std::atomic<std::uint64_t> reserve_calls{0};
    std::atomic<std::uint64_t> decodes{0};
    std::atomic<std::uint64_t> decode_errors{0};
  };
  std::array<Slot, kSlots> slots_;
  std::array<std::atomic<std::uint64_t>, 32> refusals_{};
  Slot& slot() noexcept;
};

}  // namespace snowid::daemon
