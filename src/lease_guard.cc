#include "snowid/lease_guard.h"

#include "mutex.h"

namespace snowid {

using internal::Mutex;
using internal::MutexLock;
namespace {

// Raises `a` to `v` unless it is already at least `v`. Readers never see a
// bound move back, whatever order extensions arrive in.
void raise_to(std::atomic<std::int64_t>& a, std::int64_t v) noexcept {
  std::int64_t cur = a.load(std::memory_order_acquire);
  while (cur < v &&
         !a.compare_exchange_weak(cur, v, std::memory_order_acq_rel, std::memory_order_acquire)) {
  }
}

// Orders extend() against mark_lost(). Without it an extend() that checked
// lost() just before a concurrent mark_lost() could raise the deadline again
// after mark_lost() returned (the deadline may read INT64_MIN both before the
// first extension and after the loss, so a compare-and-swap cannot tell the
// two apart). Both run on the keeper's threads, a few times per lease period;
// the hot path, permits(), never takes it.
Mutex& writers_mutex() noexcept {
  static Mutex mu;
  return mu;
}

}  // namespace

void LeaseGuard::extend(MonoTime deadline, WallTime high_water) noexcept {
  MutexLock lock(writers_mutex());
  if (lost_.load(std::memory_order_acquire)) return;
  raise_to(high_water_ns_, high_water.time_since_epoch().count());
  raise_to(deadline_ns_, deadline.time_since_epoch().count());
}

void LeaseGuard::mark_lost() noexcept {
  MutexLock lock(writers_mutex());
  lost_.store(true, std::memory_order_release);
  // permits() compares against the deadline first: no monotonic time is
  // before INT64_MIN, so from here on nothing is permitted.
  deadline_ns_.store(INT64_MIN, std::memory_order_release);
}

}  // namespace snowid
