// Generator::next() on the real clock: one thread, and two threads sharing
// one generator, on the default and the wide layout; and on the wide layout
// with a worker-id lease guard attached.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>

#include "support.h"

namespace snowid::bench {
namespace {

// One generator per run, shared by the run's threads. Thread 0 builds it
// before the timed loop and drops it after; the loop's start and stop
// barriers order both steps against the other thread.
std::unique_ptr<Generator> g_generator;

// The timed loop: next() on the run's generator, which thread 0 builds (with
// `lease` as its guard when given) before the loop and drops after it,
// reporting `stat` of its stats as the counter `stat_name`. "errors" counts
// the calls that issued nothing.
void run_next(benchmark::State& state, Shape shape, std::shared_ptr<const LeaseGuard> lease,
              const char* stat_name, std::uint64_t GeneratorStats::*stat) {
  if (state.thread_index() == 0) g_generator = make_generator(shape, std::move(lease));
  std::uint64_t ids = 0;
  std::uint64_t errors = 0;
  for (auto _ : state) {
    const IdResult r = g_generator->next();
    benchmark::DoNotOptimize(r.id);
    if (r.ok()) {
      ++ids;
    } else {
      ++errors;
    }
  }
  report_ids(state, ids);
  state.counters["errors"] = static_cast<double>(errors);
  if (state.thread_index() == 0) {
    state.counters[stat_name] = static_cast<double>(g_generator->stats().*stat);
    g_generator.reset();
  }
}

// "exhausted": attempts that found the tick's sequence used up, 0 when the
// sequence was never the limit.
void BM_SnowidNext(benchmark::State& state, Shape shape) {
  run_next(state, shape, nullptr, "exhausted", &GeneratorStats::sequence_exhausted);
}

BENCHMARK_CAPTURE(BM_SnowidNext, default, Shape::kDefault)->UseRealTime()->Threads(1)->Threads(2);
BENCHMARK_CAPTURE(BM_SnowidNext, wide, Shape::kWide)->UseRealTime()->Threads(1)->Threads(2);

// As BM_SnowidNext/wide, with a lease guard attached: what the permission
// check adds to a call (one monotonic clock read and two atomic loads). The
// guard is extended an hour ahead, so every call is permitted; "errors"
// counts any that were not.
void BM_SnowidNextLeased(benchmark::State& state, Shape shape) {
  std::shared_ptr<LeaseGuard> guard;
  if (state.thread_index() == 0) {
    guard = std::make_shared<LeaseGuard>();
    guard->extend(system_clock().mono_now() + std::chrono::hours(1),
                  system_clock().wall_now() + std::chrono::hours(1));
  }
  run_next(state, shape, std::move(guard), "lease_refusals", &GeneratorStats::lease_refusals);
}

BENCHMARK_CAPTURE(BM_SnowidNextLeased, wide, Shape::kWide)->UseRealTime()->Threads(1)->Threads(2);

}  // namespace
}  // namespace snowid::bench
