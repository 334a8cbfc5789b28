// The floor on this machine: the least any generator that reads the clock and
// publishes its state with one atomic update must pay per id. One clock read
// and one successful compare-and-swap of a word derived from it; with two
// threads the swap retries on contention, as a generator's must.
//
// Also the two parts alone, to show where the time goes.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "snowid/time.h"
#include "support.h"

namespace snowid::bench {
namespace {

// Alone on its cache line, as the generator's state is.
struct alignas(64) Word {
  std::atomic<std::uint64_t> value{0};
};
Word g_word;

std::int64_t snowid_clock_ns() noexcept {
  return system_clock().wall_now().time_since_epoch().count();
}

// Stores max(old + 1, now): the smallest state that is both unique and
// follows the clock, so the swap depends on the clock read as a generator's
// does.
inline void publish(std::int64_t now) noexcept {
  std::uint64_t s = g_word.value.load(std::memory_order_acquire);
  std::uint64_t next;
  do {
    next = std::max(s + 1, static_cast<std::uint64_t>(now));
  } while (!g_word.value.compare_exchange_weak(s, next, std::memory_order_acq_rel,
                                               std::memory_order_acquire));
  benchmark::DoNotOptimize(next);
}

template <std::int64_t (*Read)() noexcept>
void BM_Floor(benchmark::State& state) {
  std::uint64_t n = 0;
  for (auto _ : state) {
    publish(Read());
    ++n;
  }
  report_ids(state, n);
}

template <std::int64_t (*Read)() noexcept>
void BM_ClockOnly(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Read());
}

void BM_CasOnly(benchmark::State& state) {
  std::int64_t now = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(now);
    publish(now);
  }
}

// "libc": clock_gettime(CLOCK_REALTIME) called directly.
// "snowid_clock": through snowid::system_clock().wall_now(), a virtual call,
// which is how the generator reads it.
BENCHMARK_TEMPLATE(BM_Floor, realtime_ns)
    ->Name("BM_Floor/libc")
    ->UseRealTime()
    ->Threads(1)
    ->Threads(2);
BENCHMARK_TEMPLATE(BM_Floor, snowid_clock_ns)
    ->Name("BM_Floor/snowid_clock")
    ->UseRealTime()
    ->Threads(1)
    ->Threads(2);
BENCHMARK_TEMPLATE(BM_ClockOnly, realtime_ns)->Name("BM_ClockOnly/libc")->UseRealTime();
BENCHMARK_TEMPLATE(BM_ClockOnly, snowid_clock_ns)->Name("BM_ClockOnly/snowid_clock")->UseRealTime();
BENCHMARK(BM_CasOnly)->UseRealTime()->Threads(1)->Threads(2);

}  // namespace
}  // namespace snowid::bench
