// The mutex-based reference generator under the same conditions as
// next_bench.cc, so that the two can be divided.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>

#include "mutex_reference.h"
#include "support.h"

namespace snowid::bench {
namespace {

std::unique_ptr<MutexReference> g_reference;  // shared as in next_bench.cc

void BM_MutexNext(benchmark::State& state, Shape shape) {
  if (state.thread_index() == 0) g_reference = std::make_unique<MutexReference>(layout_of(shape));
  std::uint64_t ids = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(g_reference->next());
    ++ids;
  }
  report_ids(state, ids);
  if (state.thread_index() == 0) g_reference.reset();
}

BENCHMARK_CAPTURE(BM_MutexNext, default, Shape::kDefault)->UseRealTime()->Threads(1)->Threads(2);
BENCHMARK_CAPTURE(BM_MutexNext, wide, Shape::kWide)->UseRealTime()->Threads(1)->Threads(2);

}  // namespace
}  // namespace snowid::bench
