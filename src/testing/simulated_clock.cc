#include "snowid/testing/simulated_clock.h"

#include <algorithm>
#include <thread>

namespace snowid::testing {
namespace {
// An arbitrary monotonic origin, far from zero so that mistakes stand out.
constexpr std::int64_t kMonoStartNs = 1'000'000'000'000;
}  // namespace

SimulatedClock::SimulatedClock(WallTime start) noexcept
    : wall_ns_(start.time_since_epoch().count()), mono_ns_(kMonoStartNs) {}

WallTime SimulatedClock::wall_now() const noexcept {
  return WallTime(Duration(wall_ns_.load(std::memory_order_acquire)));
}

MonoTime SimulatedClock::mono_now() const noexcept {
  return MonoTime(Duration(mono_ns_.load(std::memory_order_acquire)));
}

void SimulatedClock::pause(Duration hint) const noexcept {
  pauses_.fetch_add(1, std::memory_order_relaxed);
  if (auto_advance_.load(std::memory_order_acquire)) {
    const std::int64_t step = std::max<std::int64_t>(hint.count(), 1'000);
    mono_ns_.fetch_add(step, std::memory_order_acq_rel);
    wall_ns_.fetch_add(step, std::memory_order_acq_rel);
    return;
  }
  std::this_thread::yield();
}

void SimulatedClock::advance(Duration d) noexcept {
  mono_ns_.fetch_add(d.count(), std::memory_order_acq_rel);
  wall_ns_.fetch_add(d.count(), std::memory_order_acq_rel);
}

void SimulatedClock::step_wall(Duration d) noexcept {
  wall_ns_.fetch_add(d.count(), std::memory_order_acq_rel);
}

void SimulatedClock::set_wall(WallTime t) noexcept {
  wall_ns_.store(t.time_since_epoch().count(), std::memory_order_release);
}

void SimulatedClock::advance_monotonic(Duration d) noexcept {
  mono_ns_.fetch_add(d.count(), std::memory_order_acq_rel);
}

void SimulatedClock::set_auto_advance(bool on) noexcept {
  auto_advance_.store(on, std::memory_order_release);
}

std::uint64_t SimulatedClock::pauses() const noexcept {
  return pauses_.load(std::memory_order_relaxed);
}

}  // namespace snowid::testing
