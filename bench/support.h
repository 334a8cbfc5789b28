// What the benchmarks share: the two generation layouts they compare, the
// set-up of a generator on the real clock, and the counters they report.
#pragma once

#include <benchmark/benchmark.h>
#include <time.h>

#include <cstdint>
#include <memory>

#include "snowid/generator.h"
#include "snowid/layout.h"
#include "snowid/lease_guard.h"

namespace snowid::bench {

// kDefault: 41 time, 2 region, 8 host, 12 sequence bits. The sequence caps a
//   worker at 4,096 ids per ms, so a fast caller measures the cap.
// kWide: 41 time, 1 host, 21 sequence bits: 2,097,152 ids per ms, far more
//   than one caller can take with next(), so next() shows its own cost.
enum class Shape { kDefault, kWide };

const Layout& layout_of(Shape shape);

// A generator with default options on snowid::system_clock(), worker 0, and
// `lease` as its guard when given. Aborts with a message if it cannot be
// created (the clock before the layout's epoch, for instance): no figure
// would mean anything then.
std::unique_ptr<Generator> make_generator(Shape shape,
                                          std::shared_ptr<const LeaseGuard> lease = nullptr);

// CLOCK_REALTIME in nanoseconds, read directly (the reference and the floor
// use this; the generator goes through snowid::system_clock()).
inline std::int64_t realtime_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Sets items_per_second and "ns_per_id": nanoseconds of benchmark time per id
// this thread obtained, summed over threads. With UseRealTime() and two
// threads that is wall time divided by the ids of both threads, the inverse
// of their combined throughput, which is what the ratios compare.
void report_ids(benchmark::State& state, std::uint64_t ids);

// Sets "cap_share": ids per millisecond of benchmark time (summed over
// threads) as a share of `capacity`, the layout's ids per millisecond.
void report_cap_share(benchmark::State& state, std::uint64_t ids, std::uint64_t capacity);

}  // namespace snowid::bench
