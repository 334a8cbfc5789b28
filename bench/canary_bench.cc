// What the uniqueness canary costs the issuing threads: Generator::next() on
// the wide layout with no observer, and with a PostgresCanary keeping 1 id
// in 1,000 (the daemon's default) and every id. The canary's database is
// 127.0.0.1 port 1, unreachable, unless SNOWID_BENCH_POSTGRES names one: an
// issuing thread does the same work either way (a hash of each id; for a
// sampled id a push, or a counted drop once the queue is full), and the
// writer's work is on a thread of its own. Run:
//   build/release/bench/snowid_canary_bench
//   SNOWID_BENCH_POSTGRES=postgresql://... build/release/bench/snowid_canary_bench
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "snowid/postgres_canary.h"
#include "support.h"

namespace snowid::bench {
namespace {

std::unique_ptr<Generator> g_generator;
std::shared_ptr<PostgresCanary> g_canary;

std::string canary_database() {
  const char* named = std::getenv("SNOWID_BENCH_POSTGRES");
  return named != nullptr && *named != '\0' ? named : "postgresql://bench@127.0.0.1:1/bench";
}

// `every` 0: no observer.
void BM_NextWithCanary(benchmark::State& state, std::uint32_t every) {
  if (state.thread_index() == 0) {
    GeneratorOptions o;
    o.layout = layout_of(Shape::kWide);
    if (every > 0) {
      CanaryOptions c;
      c.conninfo = canary_database();
      c.sample_every = every;
      c.connect_timeout = std::chrono::seconds(2);
      Result<std::shared_ptr<PostgresCanary>> started = PostgresCanary::start(system_clock(), c);
      if (!started.is_ok()) {
        state.SkipWithError(started.status().message().c_str());
        return;
      }
      g_canary = started.value();
      o.observer = g_canary;
    }
    Result<std::unique_ptr<Generator>> g = Generator::create(system_clock(), std::move(o));
    if (!g.is_ok()) {
      state.SkipWithError(g.status().message().c_str());
      return;
    }
    g_generator = std::move(g).value();
  }
  std::uint64_t ids = 0;
  for (auto _ : state) {
    const IdResult r = g_generator->next();
    benchmark::DoNotOptimize(r.id);
    ids += r.ok() ? 1 : 0;
  }
  report_ids(state, ids);
  if (state.thread_index() == 0) {
    if (g_canary) {
      const CanaryStats s = g_canary->stats();
      state.counters["sampled"] = static_cast<double>(s.sampled);
      state.counters["dropped"] = static_cast<double>(s.dropped_full + s.dropped_unstored);
      g_canary->close(std::chrono::seconds(0));
      g_canary.reset();
    }
    g_generator.reset();
  }
}

BENCHMARK_CAPTURE(BM_NextWithCanary, none, 0)->UseRealTime()->Threads(1)->Threads(2);
BENCHMARK_CAPTURE(BM_NextWithCanary, one_in_1000, 1000)->UseRealTime()->Threads(1)->Threads(2);
BENCHMARK_CAPTURE(BM_NextWithCanary, every_id, 1)->UseRealTime()->Threads(1)->Threads(2);

}  // namespace
}  // namespace snowid::bench
