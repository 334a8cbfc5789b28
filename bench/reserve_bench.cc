// The batch API: reserve(n) on the wide layout, costed per id obtained.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>

#include "support.h"

namespace snowid::bench {
namespace {

void BM_SnowidReserve(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const std::unique_ptr<Generator> g = make_generator(Shape::kWide);
  std::uint64_t ids = 0;
  std::uint64_t errors = 0;
  for (auto _ : state) {
    const IdBatch b = g->reserve(n);
    benchmark::DoNotOptimize(b.first);
    if (b.ok()) {
      ids += b.count;  // may be fewer than n at the end of a tick
    } else {
      ++errors;
    }
  }
  report_ids(state, ids);
  // The wide layout's own cap is 2,097,152 ids per ms (0.477 ns per id); a
  // cap_share near 1 means the figure is that cap, not the call's cost.
  report_cap_share(state, ids, layout_of(Shape::kWide).sequence_capacity());
  state.counters["ids_per_call"] =
      benchmark::Counter(static_cast<double>(ids), benchmark::Counter::kAvgIterations);
  state.counters["errors"] = static_cast<double>(errors);
}

BENCHMARK(BM_SnowidReserve)->Arg(64)->Arg(1000)->Arg(4096)->UseRealTime();

}  // namespace
}  // namespace snowid::bench
