#include <time.h>

#include <thread>

#include "snowid/time.h"

namespace snowid {
namespace {

std::int64_t read_ns(clockid_t id) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class SystemClock final : public Clock {
 public:
  WallTime wall_now() const noexcept override {
    return WallTime(Duration(read_ns(CLOCK_REALTIME)));
  }
  MonoTime mono_now() const noexcept override {
    return MonoTime(Duration(read_ns(CLOCK_MONOTONIC)));
  }
  // About 8 ns instead of about 32 ns on the machines measured (see
  // docs/benchmarks.md): the kernel's last tick, without reading the TSC.
  MonoTime mono_coarse_now() const noexcept override {
    return MonoTime(Duration(read_ns(CLOCK_MONOTONIC_COARSE)));
  }

  // Sleeping overshoots by the timer slack (about 50 us on Linux), so a short
  // wait spins; a long one sleeps most of the way and lets the caller spin the
  // rest. Ticks are 1 ms, so a tick's end is never slept past.
  void pause(Duration hint) const noexcept override {
    constexpr Duration kSpinBelow = std::chrono::microseconds(200);
    constexpr Duration kSleepMargin = std::chrono::microseconds(150);
    if (hint < kSpinBelow) {
      for (int i = 0; i < 16; ++i) cpu_relax();
      return;
    }
    std::this_thread::sleep_for(hint - kSleepMargin);
  }
};

}  // namespace

const Clock& system_clock() noexcept {
  static const SystemClock clock;
  return clock;
}

}  // namespace snowid
