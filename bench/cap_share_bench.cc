// How much of its cap one worker on the default layout sustains: callers
// that never stop asking, from one thread and from two, over 200 ms windows
// (about 200 ticks each), so that the partial ticks at a window's edges weigh
// well under 1%. "cap_share" is ids per ms over 4,096.
//
// A new tick starts its sequence at a random value below 16 (the default
// random_start_bound), so the most a worker can reach is about 99.8%.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>

#include "mutex_reference.h"
#include "support.h"

namespace snowid::bench {
namespace {

constexpr auto kWindow = std::chrono::milliseconds(200);
constexpr int kCallsPerClockCheck = 16;

std::unique_ptr<Generator> g_generator;       // shared as in next_bench.cc
std::unique_ptr<MutexReference> g_reference;  // likewise

// Calls `next` until the window has passed; returns the ids it got.
template <typename Next>
std::uint64_t fill_window(Next next) {
  const auto end = std::chrono::steady_clock::now() + kWindow;
  std::uint64_t ids = 0;
  do {
    for (int i = 0; i < kCallsPerClockCheck; ++i) ids += next();
  } while (std::chrono::steady_clock::now() < end);
  return ids;
}

void BM_SnowidCapShare(benchmark::State& state) {
  if (state.thread_index() == 0) g_generator = make_generator(Shape::kDefault);
  std::uint64_t ids = 0;
  for (auto _ : state) {
    ids += fill_window([] {
      const IdResult r = g_generator->next();
      benchmark::DoNotOptimize(r.id);
      return r.ok() ? 1 : 0;
    });
  }
  report_cap_share(state, ids, layout_of(Shape::kDefault).sequence_capacity());
  report_ids(state, ids);
  if (state.thread_index() == 0) g_generator.reset();
}

void BM_MutexCapShare(benchmark::State& state) {
  if (state.thread_index() == 0)
    g_reference = std::make_unique<MutexReference>(layout_of(Shape::kDefault));
  std::uint64_t ids = 0;
  for (auto _ : state) {
    ids += fill_window([] {
      benchmark::DoNotOptimize(g_reference->next());
      return 1;
    });
  }
  report_cap_share(state, ids, layout_of(Shape::kDefault).sequence_capacity());
  report_ids(state, ids);
  if (state.thread_index() == 0) g_reference.reset();
}

// Five windows (1 s) per repetition, back to back.
BENCHMARK(BM_SnowidCapShare)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->Threads(1)
    ->Threads(2);
BENCHMARK(BM_MutexCapShare)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->Threads(1)
    ->Threads(2);

}  // namespace
}  // namespace snowid::bench
