// Worker-id leases: the registry contract that every backend keeps (the file
// registry for one host, etcd for fleets), and the timing a holder follows.
//
// Uniqueness rests on two rules, documented in docs/leases.md:
// - No two live holders share a worker id: a registry grants an id only if no
//   one holds it, atomically (create-if-absent), and only after its quarantine.
// - A holder never issues an id whose time is past the high-water mark it has
//   recorded in the registry, and a later holder of the same id never issues
//   one at or before that mark. So even a holder that kept issuing after it
//   lost its lease (a paused process, a stalled thread) cannot collide with
//   its successor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "snowid/layout.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid {

// When a holder renews its lease and when it stops issuing. Defaults follow
// the design: renew every 3 s on a 10 s lease, stop by second 8.
struct LeaseTiming {
  // Lifetime of a lease in the registry without a renewal. Whole seconds
  // (etcd counts TTLs in seconds), from 2 s to 1 hour.
  Duration ttl = std::chrono::seconds(10);
  // Time between the send times of two renewals.
  Duration renew_every = std::chrono::seconds(3);
  // The holder stops issuing this long after the send time of its last
  // renewal that succeeded. renew_every < stop_after < ttl.
  Duration stop_after = std::chrono::seconds(8);
  // The largest clock difference allowed between hosts of the fleet (the
  // skew monitor enforces it). A new holder waits until its own clock is
  // this far past the previous holder's high-water mark. 0 to 1 minute.
  Duration max_clock_skew = std::chrono::milliseconds(100);
};

// OK, or kInvalidArgument naming the setting that is out of bounds.
Status validate(const LeaseTiming& timing);

// Who holds a worker id, shown to operators by `snowid workers list`.
struct HolderInfo {
  std::string host;  // host name
  std::int64_t pid = 0;
  WallTime started{};   // when the holding process started
  std::string address;  // the daemon's address, when there is one
};

// What a registry knows about one worker id.
struct WorkerRecord {
  WorkerId worker;
  std::optional<HolderInfo> holder;     // present while the id is held
  std::optional<Duration> ttl_left;     // while held, when the registry knows it
  std::optional<WallTime> high_water;   // the largest instant any holder may have issued in
  std::optional<WallTime> released_at;  // the last release or fence
  // Not held, but not yet free for reuse: until this instant.
  std::optional<WallTime> quarantined_until;
};

// Everything acquire() needs.
struct LeaseRequest {
  std::uint32_t region = 0;
  // Take exactly this host id of the region (an operator pinning a worker):
  // kResourceExhausted if it is held or quarantined. nullopt: any free id.
  std::optional<std::uint32_t> host;
  HolderInfo holder;
  LeaseTiming timing;
  // The first high-water mark: the latest instant the new holder may issue in
  // before its first renewal (its clock at send time plus stop_after). The
  // registry stores the larger of this and the mark already there.
  WallTime high_water{};
};

// A lease on one worker id.
struct LeaseGrant {
  WorkerId worker;
  // The registry's proof of ownership (etcd: the lease id and the holder
  // key's create revision; files: the lock's token). Opaque to callers.
  std::string token;
  // The previous holders' high-water mark, if the id was ever used. The new
  // holder must not issue at or before it (plus max_clock_skew).
  std::optional<WallTime> previous_high_water;
};

// A registry of worker ids. Implementations are thread-safe: the keeper calls
// renew() and wait_lost() from different threads.
//
// Error codes: kUnavailable when the registry cannot be reached or the
// outcome is unknown (retry later); kLeaseLost when the lease is gone (revoked
// or expired); kResourceExhausted when the region's block has no free id;
// kInvalidArgument for a bad region or request.
class WorkerRegistry {
 public:
  virtual ~WorkerRegistry() = default;

  // Takes a worker id in `request.region`'s block that no one holds and whose
  // quarantine is over, and records `request.high_water` as its mark.
  virtual Result<LeaseGrant> acquire(const LeaseRequest& request) = 0;

  // Extends the lease by its TTL and records `high_water` (which only grows).
  // OK only once both are durable in the registry and the lease is still ours.
  // `time_left` is how long the lease may still live, by the caller's count
  // from the send time of its last renewal that succeeded: a registry that
  // waits on a network gives up (kUnavailable, outcome unknown) once it has
  // passed, and bounds each request by what is left of it, since a later
  // answer is worth nothing. Duration::max(): no bound but the registry's own.
  virtual Status renew(const LeaseGrant& grant, WallTime high_water, Duration time_left) = 0;
  // renew() with no bound of the caller's.
  Status renew(const LeaseGrant& grant, WallTime high_water) {
    return renew(grant, high_water, Duration::max());
  }

  // Records `high_water` and the release time, then frees the id. The caller
  // has stopped issuing. kLeaseLost if it was no longer held (nothing to do).
  virtual Status release(const LeaseGrant& grant, WallTime high_water) = 0;

  // Lets go of a lease this holder will not use again, recording nothing:
  // frees what the registry holds locally for it (a file lock) and, best
  // effort and briefly, revokes it so that the id is not held until its TTL
  // runs out. The mark stays as last recorded, which covers every id issued.
  // For a lease that is lost, or whose release failed; harmless on one that
  // is already gone. The caller has stopped issuing.
  virtual void abandon(const LeaseGrant& grant) noexcept = 0;

  // Blocks until the lease is lost (revoked from outside, expired) or
  // `timeout` passes. true: lost for sure. Returns promptly (well within
  // 100 ms) after a revocation; the keeper runs it on a thread of its own.
  virtual Result<bool> wait_lost(const LeaseGrant& grant, Duration timeout) = 0;

  // Makes every wait_lost() in progress on this registry return false soon
  // (within about 20 ms). Returning early is harmless: callers ask again. A
  // keeper calls it to stop its watcher without waiting out a whole call.
  virtual void wake_waiters() noexcept = 0;

  // Every worker id that has a record, in `region` or in all regions.
  virtual Result<std::vector<WorkerRecord>> list(std::optional<std::uint32_t> region) = 0;

  // Revokes the lease on `worker` from outside (an operator, the skew
  // monitor) and starts its quarantine. kNotFound if no one holds it.
  virtual Status fence(WorkerId worker) = 0;
};

}  // namespace snowid
