// A WorkerRegistry in memory for tests, with injectable faults. It keeps the
// whole contract of lease.h, so tests of the keeper and of LeasedGenerator
// exercise the same rules as the file and etcd registries:
// - Each region's block has layout.workers_per_region() ids; a grant is
//   create-if-absent and only after the id's quarantine.
// - Marks only grow on acquire and renew. A release records the larger of
//   the mark the grant carried (the previous holders') and the given one,
//   which may be lower than the holder's own renewed marks: the holder
//   reports the exact last instant it issued in.
// - A lease expires `ttl` after its last renewal took effect, on the clock's
//   monotonic time. An expired lease is not held; its mark stays.
// - An id is eligible when not held and wall now >= max(released_at,
//   high_water) + quarantine (an id without either is eligible); acquire
//   picks among eligible ids at random, from a seedable generator.
// - abandon() drops the holder as a fence would, but records nothing: the
//   mark stays and there is no release time, so the quarantine counts from
//   the mark alone.
// Link snowid::testing to use it. Thread-safe: one mutex guards everything.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "snowid/layout.h"
#include "snowid/lease.h"
#include "snowid/time.h"

namespace snowid::testing {

class MemoryRegistry final : public WorkerRegistry {
 public:
  // `layout` sizes the blocks: regions() of workers_per_region() ids each.
  // `quarantine` is how long a released or expired id stays out of reach
  // after max(released_at, high_water). A negative quarantine stands in for a
  // successor whose clock runs behind the previous holder's: it may take the
  // id before the old mark has passed on its own clock, so only wait_until
  // keeps its ids apart. The clock must outlive the registry.
  MemoryRegistry(const Clock& clock, Layout layout, Duration quarantine,
                 std::uint64_t seed = 0x5eed);

  Result<LeaseGrant> acquire(const LeaseRequest& request) override;
  using WorkerRegistry::renew;
  // Records `time_left` (last_renew_time_left()) and otherwise ignores it.
  Status renew(const LeaseGrant& grant, WallTime high_water, Duration time_left) override;
  Status release(const LeaseGrant& grant, WallTime high_water) override;
  // Drops the holder if `grant` still holds the id (nothing otherwise). While
  // unavailable it changes nothing, like a revoke that cannot reach etcd; the
  // lease then runs out on its own. Counted either way.
  void abandon(const LeaseGrant& grant) noexcept override;
  // Returns at once when the lease is not held (revoked, released, expired);
  // otherwise waits on a condition variable for at most `timeout` of real
  // time (less if the lease expires sooner by the injected clock), so a test
  // on a simulated clock never blocks for long.
  Result<bool> wait_lost(const LeaseGrant& grant, Duration timeout) override;
  void wake_waiters() noexcept override;
  Result<std::vector<WorkerRecord>> list(std::optional<std::uint32_t> region) override;
  Status fence(WorkerId worker) override;

  // Faults. While unavailable, every WorkerRegistry call returns kUnavailable
  // and changes nothing (waiters in wait_lost() are woken to say so).
  void set_unavailable(bool unavailable);
  // While set, acquire, renew, release and fence take effect but return
  // kUnavailable: the outcome is unknown to the caller.
  void set_lose_reply(bool lose_reply);
  // Called inside renew() before anything else, without the registry's lock
  // held: a test can advance a simulated clock (a slow network, a late reply)
  // or block. The renewal then takes effect at the clock's time after it.
  using RenewHook = std::function<void(const LeaseGrant& grant, WallTime high_water)>;
  void set_renew_hook(RenewHook hook);
  void set_seed(std::uint64_t seed);

  // Inspection; not affected by the faults above.
  std::optional<WorkerRecord> record(WorkerId worker) const;
  // Held: granted, not released or fenced, and not expired.
  bool held(WorkerId worker) const;
  // Operations that took effect (including those whose reply was lost).
  std::uint64_t acquires() const;
  std::uint64_t renewals() const;
  // The time_left of the last renew() call, whether or not it took effect.
  std::optional<Duration> last_renew_time_left() const;
  std::uint64_t releases() const;
  std::uint64_t fences() const;
  // abandon() calls, whether or not there was anything left to drop.
  std::uint64_t abandons() const;

 private:
  struct Holder {
    std::string token;
    HolderInfo info;
    Duration ttl{};
    MonoTime expires{};
    // The mark before this grant: a release never records less.
    std::optional<WallTime> previous_high_water;
  };
  struct Entry {
    std::optional<Holder> holder;  // may have expired; see live_holder()
    std::optional<WallTime> high_water;
    std::optional<WallTime> released_at;
  };
  using Key = std::pair<std::uint32_t, std::uint32_t>;  // region, host

  // The entry's holder if its lease is still alive at `now`. Requires mu_.
  const Holder* live_holder(const Entry& e, MonoTime now) const;
  // Held by `grant` right now. Requires mu_.
  Entry* held_by(const LeaseGrant& grant, MonoTime now);
  // When the quarantine of an unheld entry ends. Requires mu_.
  std::optional<WallTime> quarantine_end(const Entry& e) const;
  WorkerRecord make_record(WorkerId worker, const Entry& e, MonoTime mono, WallTime wall) const;
  Status lost_reply_or_ok() const;  // requires mu_

  const Clock& clock_;
  const Layout layout_;
  const Duration quarantine_;

  mutable std::mutex mu_;
  std::condition_variable changed_;  // notified on every change of a holder or a fault
  std::uint64_t wakes_ = 0;          // guarded by mu_: wake_waiters() calls
  std::map<Key, Entry> entries_;
  std::mt19937_64 rng_;
  std::uint64_t next_token_ = 1;
  bool unavailable_ = false;
  bool lose_reply_ = false;
  RenewHook renew_hook_;
  std::uint64_t acquires_ = 0;
  std::uint64_t renewals_ = 0;
  std::optional<Duration> last_renew_time_left_;
  std::uint64_t releases_ = 0;
  std::uint64_t fences_ = 0;
  std::uint64_t abandons_ = 0;
};

}  // namespace snowid::testing
