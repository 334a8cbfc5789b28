// A generator on a leased worker id: what a service (or the daemon) uses.
//
// It acquires an id from a WorkerRegistry, keeps the lease renewed, and when
// the lease is lost (fenced from outside, or expired while the registry was
// unreachable) stops issuing at once, reports not ready, and acquires a fresh
// id under the same quarantine and high-water rules. The replacement issues
// only past the last id of the generator it replaces, whatever the clock says
// (it waits, or refuses, as for a clock step back), so the ids of one
// LeasedGenerator keep increasing across lost leases. When the generator turns
// unhealthy (the clock went back beyond max_backward) it releases its id and
// stays unhealthy: a host whose clock cannot be trusted must not take another.
// (If a fresh id was already taken when the report arrives, it is released
// too.) Every generator is stopped before the instant of its last id is
// recorded.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "snowid/fence.h"
#include "snowid/generator.h"
#include "snowid/lease.h"
#include "snowid/lease_keeper.h"

namespace snowid {

// What a LeasedGenerator tells its owner about its leases, for logs and
// counters. Owners switch on `kind`; to_string() gives the line to log.
struct LeaseEvent {
  enum class Kind {
    kAcquired,        // `worker` is leased and issuing
    kAcquireFailed,   // no worker could be leased (`status`); retried
    kLost,            // `worker`'s lease was lost (`status`); a fresh id is sought
    kReleased,        // close() gave `worker` back (`given_back`, else `status`)
    kReleasedUnused,  // `worker` was leased but never issued from, and given back
    kClockMovedBack,  // the clock went back beyond max_backward (`status`): `worker`
                      // is given back (`given_back`) and no other is taken
  };
  Kind kind = Kind::kAcquired;
  // The worker id concerned; nullopt only for kAcquireFailed.
  std::optional<WorkerId> worker;
  // Why (kAcquireFailed, kLost, kClockMovedBack), or the failure to give the
  // id back (given_back false); OK otherwise.
  Status status;
  // For kReleased, kReleasedUnused and kClockMovedBack: whether the registry
  // took the id back.
  bool given_back = false;
};

// The event as one line, e.g. "acquired worker 1/17" or "lease lost on
// worker 1/17" (without the status).
std::string to_string(const LeaseEvent& event);

struct LeasedGeneratorOptions {
  // `worker`, `lease`, `wait_until` and `continue_after` are filled in for
  // each lease; `on_unhealthy` is chained after the release of the lease.
  GeneratorOptions generator;
  LeaseKeeperOptions lease;
  // The persisted time fence of a worker id on this host, if any.
  std::function<std::shared_ptr<FenceStore>(WorkerId)> fence_store_for;
  // How long to wait before retrying after a failed attempt to acquire a
  // fresh id after a loss. The wait doubles with each failure in a row, up to
  // 30 s (or this, if longer), and starts again from this after a success.
  // An id whose generator could not be created (an unreadable fence) is given
  // back with the previous holders' mark, as nothing was issued on it.
  // Default 1 s; more than 0.
  Duration reacquire_every = std::chrono::seconds(1);
  // Asked before each attempt to acquire a fresh id after a loss (not before
  // the first one, which create() makes). A non-OK answer counts as a failed
  // attempt: told as kAcquireFailed with that status, and asked again after
  // reacquire_every (the delay does not grow for it). The skew monitor holds a host whose clock it
  // fenced this way, so that it does not churn through fresh ids. Unset: always. Must not call back
  // into the generator.
  std::function<Status()> may_acquire;
  // Told about acquisitions, losses and releases, from the thread that saw
  // them. Must not call back into the generator.
  std::function<void(const LeaseEvent& event)> on_event;
};

class LeasedGenerator {
 public:
  // Acquires the first id and starts keeping it. Fails (nothing issued) if
  // the registry is unreachable, the block is full or an option is invalid.
  static Result<std::unique_ptr<LeasedGenerator>> create(const Clock& clock,
                                                         WorkerRegistry& registry,
                                                         LeasedGeneratorOptions options);
  LeasedGenerator(const LeasedGenerator&) = delete;
  LeasedGenerator& operator=(const LeasedGenerator&) = delete;
  // Stops the threads without releasing (as a crash would, for the mark);
  // the keepers abandon their leases (see ~LeaseKeeper). Call close().
  ~LeasedGenerator();

  // As Generator's. While a lost lease is being replaced: kLeaseUncertain.
  IdResult next() noexcept;
  IdResult try_next() noexcept;
  IdBatch reserve(std::uint32_t n) noexcept;
  IdBatch try_reserve(std::uint32_t n) noexcept;

  // Stops issuing, records the fence and the exact last instant, releases
  // the lease. Later calls return kFailedPrecondition.
  Status close();

  // Issuing is possible now: the lease is held and the generator healthy.
  bool ready() const noexcept;
  // OK while healthy; the generator's refusal once unhealthy.
  Status health() const;
  WorkerId worker() const noexcept;
  const Layout& layout() const noexcept;
  LeaseState lease_state() const noexcept;
  // Summed over every generator this object has used.
  GeneratorStats stats() const noexcept;
  LeaseStats lease_stats() const noexcept;
  // How many times a lost lease was replaced by a fresh id.
  std::uint64_t reacquisitions() const noexcept;

 private:
  struct Impl;
  explicit LeasedGenerator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace snowid
