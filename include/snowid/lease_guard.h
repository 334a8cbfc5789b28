// The hot-path view of a worker-id lease, shared between a LeaseKeeper (which
// writes it) and a Generator (which reads it on every call).
//
// A generator with a guard issues an id only if both hold:
// - the monotonic clock is before the stop deadline (send time of the last
//   successful renewal plus stop_after), so a stalled renewal thread or a
//   paused process stops issuing by itself (the generator reads the coarse
//   monotonic clock, so this may be up to one kernel tick late);
// - the id's time is at or before the high-water mark already recorded in the
//   registry, so an id issued late (a thread preempted across its deadline)
//   still cannot collide with a later holder of the same worker id.
// Otherwise it answers kLeaseUncertain (retryable), or kLeaseLost once the
// keeper knows the lease is gone.
#pragma once

#include <atomic>
#include <cstdint>

#include "snowid/time.h"

namespace snowid {

class LeaseGuard {
 public:
  // Starts permitting nothing.
  LeaseGuard() noexcept = default;
  LeaseGuard(const LeaseGuard&) = delete;
  LeaseGuard& operator=(const LeaseGuard&) = delete;

  // Permits issuing until `deadline` for times up to `high_water`. Call only
  // after `high_water` is durable in the registry. Never moves either bound
  // back (a late reply to an older renewal cannot shorten a newer grant), and
  // does nothing once lost.
  void extend(MonoTime deadline, WallTime high_water) noexcept;
  // The lease is gone: stops issuing at once, for good.
  void mark_lost() noexcept;

  bool lost() const noexcept { return lost_.load(std::memory_order_acquire); }
  MonoTime deadline() const noexcept {
    return MonoTime(Duration(deadline_ns_.load(std::memory_order_acquire)));
  }
  WallTime high_water() const noexcept {
    return WallTime(Duration(high_water_ns_.load(std::memory_order_acquire)));
  }
  // Hot path: may an id with time `id_time_ns` (ns since the Unix epoch) be
  // issued at monotonic time `now`?
  bool permits(std::int64_t mono_now_ns, std::int64_t id_time_ns) const noexcept {
    return mono_now_ns < deadline_ns_.load(std::memory_order_acquire) &&
           id_time_ns <= high_water_ns_.load(std::memory_order_acquire);
  }

 private:
  std::atomic<std::int64_t> deadline_ns_{INT64_MIN};
  std::atomic<std::int64_t> high_water_ns_{INT64_MIN};
  std::atomic<bool> lost_{false};
};

}  // namespace snowid
