// Keeps one worker-id lease: acquires it, renews it on schedule, records the
// high-water mark, watches for revocation, and tells a Generator through a
// LeaseGuard whether it may issue. See docs/leases.md for the timeline.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "snowid/lease.h"
#include "snowid/lease_guard.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid {

// Whenever the keeper declares the lease LOST (a revocation seen by the
// watcher, a renewal answered kLeaseLost, no renewal for a whole TTL) or its
// release fails, it abandons the lease in the registry, at most once.
enum class LeaseState : std::uint8_t {
  kHeld = 0,       // renewed in time; issuing is permitted
  kUncertain = 1,  // renewals failing; issuing stopped at the deadline, the lease may live
  kLost = 2,       // revoked or expired for sure; this holder never issues again
  kReleased = 3,   // given back on shutdown
};
// "HELD", "UNCERTAIN", "LOST", "RELEASED".
std::string_view lease_state_name(LeaseState state) noexcept;

struct LeaseKeeperOptions {
  std::uint32_t region = 0;
  std::optional<std::uint32_t> host;  // see LeaseRequest::host
  HolderInfo holder;
  LeaseTiming timing;
  // After a failed renewal, how soon to try again (until the lease is
  // certainly expired). Default 500 ms; more than 0, at most renew_every.
  Duration retry_every = std::chrono::milliseconds(500);
  // Called on every state change, from the thread that saw it. Must not call
  // back into the keeper.
  std::function<void(LeaseState, const Status&)> on_state;
};

struct LeaseStats {
  std::uint64_t renewals = 0;          // renewals that succeeded
  std::uint64_t renewal_failures = 0;  // renewals that failed (any reason)
  Duration last_renewal_latency{};     // send to reply of the last successful renewal
  Duration max_renewal_latency{};
};

class LeaseKeeper {
 public:
  // Acquires a worker id in `options.region` and records its first mark. The
  // clock and registry must outlive the keeper. Nothing is permitted until
  // this returns; the guard then permits issuing until the first deadline.
  static Result<std::unique_ptr<LeaseKeeper>> acquire(const Clock& clock, WorkerRegistry& registry,
                                                      LeaseKeeperOptions options);
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;
  // Stops the threads and the guard. Does not release: for the mark, a keeper
  // destroyed without release() is a crashed holder (the mark stays as last
  // recorded). Unless released, it abandons the lease, so that what the
  // registry holds for it locally (a file lock) does not outlive it.
  ~LeaseKeeper();

  const LeaseGrant& grant() const noexcept;
  WorkerId worker() const noexcept;
  std::shared_ptr<const LeaseGuard> guard() const noexcept;
  // The instant before which this holder must not issue: the previous
  // holders' high-water mark plus max_clock_skew (at least one millisecond
  // past the mark). nullopt if the id was never used.
  std::optional<WallTime> wait_until() const noexcept;

  // Performs the renewal due at the clock's current monotonic time, if any,
  // and returns when the next one is due. A renewal is also due at once when
  // the wall clock has moved closer to the mark than stop_after - renew_every
  // (a forward step) and the last attempt succeeded: ids past the mark are
  // refused until a renewal raises it. The renewal thread calls it in a loop,
  // at least every 100 ms; tests call it directly with a simulated clock.
  MonoTime renew_if_due();
  // Starts the renewal thread, the revocation watcher and the timeline
  // thread (idempotent). The timeline thread moves the state to UNCERTAIN at
  // the guard's deadline and to LOST once a TTL has passed since the send
  // time of the last renewal that succeeded, even while a renewal call is
  // blocked; each renewal call is bounded by the time left until then.
  void start();
  // Stops the threads, then records `last_issued` (the exact last instant the
  // holder issued in, if known, else the current mark) and frees the id.
  // The caller must have stopped issuing first. If the release fails, the
  // lease is abandoned (WorkerRegistry::abandon) and the state is LOST. On a
  // lease already lost it only stops the threads and returns kLeaseLost:
  // the way to reclaim a lost keeper's threads without destroying it.
  Status release(std::optional<WallTime> last_issued);

  LeaseState state() const noexcept;
  LeaseStats stats() const noexcept;

 private:
  struct Impl;
  explicit LeaseKeeper(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace snowid
