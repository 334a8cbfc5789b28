// Figures of the named sequences (docs/benchmarks.md), not tests:
// - SequenceBufferNext: numbers a second from a SequenceBuffer's memory,
//   with a range so large that the store is almost never called; one buffer
//   shared by 1 to 8 threads, and a buffer per thread.
// - SequenceRoundTrips: store round trips to draw 1,000,000 numbers with a
//   fixed step of 1,000 and of 10,000, and with the adaptive step (min 100,
//   max 100,000, starting from the sequence's step of 1,000), on an SQLite
//   file in a temporary directory, and on PostgreSQL when
//   SNOWID_BENCH_POSTGRES holds a conninfo (e.g. what scripts/pg-scratch
//   start prints).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "snowid/postgres_ticket_store.h"
#include "snowid/sequence_buffer.h"
#include "snowid/sqlite_ticket_store.h"
#include "snowid/testing/memory_ticket_store.h"

namespace snowid {
namespace {

// --- numbers from memory ---------------------------------------------------

constexpr int kMaxThreads = 8;

// Built by Setup before the threads start and dropped by Teardown after
// they end, so that no thread sees it half made.
struct MemoryBuffers {
  testing::MemoryTicketStore store{system_clock()};
  std::vector<std::unique_ptr<SequenceBuffer>> buffers;
};
MemoryBuffers* g_memory = nullptr;

void make_buffers(int count) {
  g_memory = new MemoryBuffers();
  if (!g_memory->store.create("bench", 0, kMaxSequenceRange).is_ok()) std::abort();
  SequenceBufferOptions options;
  options.step = kMaxSequenceRange;  // a billion numbers a range: no refill within a run
  for (int i = 0; i < count; ++i) {
    Result<std::unique_ptr<SequenceBuffer>> b =
        SequenceBuffer::open(g_memory->store, "bench", system_clock(), options);
    if (!b.is_ok()) std::abort();
    g_memory->buffers.push_back(std::move(b.value()));
  }
}

void setup_shared(const benchmark::State&) { make_buffers(1); }
void setup_per_thread(const benchmark::State&) { make_buffers(kMaxThreads); }
void teardown_buffers(const benchmark::State&) {
  delete g_memory;
  g_memory = nullptr;
}

// Sets items_per_second (all threads) and "per_thread": numbers a second
// one thread obtained, averaged over the threads.
void report_numbers(benchmark::State& state, std::int64_t numbers) {
  state.SetItemsProcessed(numbers);
  state.counters["per_thread"] = benchmark::Counter(
      static_cast<double>(numbers), benchmark::Counter::kIsRate | benchmark::Counter::kAvgThreads);
}

void draw_from_memory(benchmark::State& state, SequenceBuffer& buffer) {
  std::int64_t numbers = 0;
  for (auto _ : state) {
    Result<std::int64_t> n = buffer.next();
    if (!n.is_ok()) {
      state.SkipWithError(n.status().to_string().c_str());
      break;
    }
    benchmark::DoNotOptimize(n.value());
    ++numbers;
  }
  report_numbers(state, numbers);
}

// One buffer, as the daemon keeps one per sequence for all its threads.
void BM_SequenceBufferNextShared(benchmark::State& state) {
  draw_from_memory(state, *g_memory->buffers[0]);
}
BENCHMARK(BM_SequenceBufferNextShared)
    ->Setup(setup_shared)
    ->Teardown(teardown_buffers)
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->Threads(8)
    ->UseRealTime();

// A buffer per thread: no lock shared between them.
void BM_SequenceBufferNextPerThread(benchmark::State& state) {
  draw_from_memory(state, *g_memory->buffers[static_cast<std::size_t>(state.thread_index())]);
}
BENCHMARK(BM_SequenceBufferNextPerThread)
    ->Setup(setup_per_thread)
    ->Teardown(teardown_buffers)
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->Threads(8)
    ->UseRealTime();

// --- round trips per million ------------------------------------------------

constexpr std::int64_t kMillion = 1'000'000;

enum class Mode : std::int64_t { kStep1000 = 0, kStep10000 = 1, kAdaptive = 2 };

SequenceBufferOptions options_for(Mode mode) {
  SequenceBufferOptions o;
  switch (mode) {
    case Mode::kStep1000:
      o.step = 1000;
      break;
    case Mode::kStep10000:
      o.step = 10'000;
      break;
    case Mode::kAdaptive:
      o.step = 0;  // the sequence's own (1,000), then doubling while ranges go fast
      o.adaptive = true;
      o.min_step = 100;
      o.max_step = 100'000;
      break;
  }
  o.wait_timeout = std::chrono::seconds(30);
  return o;
}

// Draws a million numbers from a new sequence of `store` per iteration;
// reports the store's round trips as "round_trips_per_million" and how
// often a caller found both buffers dry as "waits_per_million".
void draw_a_million(benchmark::State& state, TicketStore& store) {
  static std::atomic<int> sequences{0};
  const Mode mode = static_cast<Mode>(state.range(0));
  std::uint64_t calls = 0, waits = 0;
  for (auto _ : state) {
    const std::string name =
        "bench_" + std::to_string(::getpid()) + "_" + std::to_string(sequences++);
    if (Status s = store.create(name, 0, kDefaultSequenceStep); !s.is_ok()) {
      state.SkipWithError(s.to_string().c_str());
      return;
    }
    Result<std::unique_ptr<SequenceBuffer>> buffer =
        SequenceBuffer::open(store, name, system_clock(), options_for(mode));
    if (!buffer.is_ok()) {
      state.SkipWithError(buffer.status().to_string().c_str());
      return;
    }
    for (std::int64_t i = 0; i < kMillion; ++i) {
      Result<std::int64_t> n = buffer.value()->next();
      if (!n.is_ok()) {
        state.SkipWithError(n.status().to_string().c_str());
        return;
      }
      benchmark::DoNotOptimize(n.value());
    }
    const SequenceBufferStats s = buffer.value()->stats();
    calls += s.store_calls;
    waits += s.waits;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kMillion);
  state.counters["round_trips_per_million"] =
      benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kAvgIterations);
  state.counters["waits_per_million"] =
      benchmark::Counter(static_cast<double>(waits), benchmark::Counter::kAvgIterations);
}

void BM_SequenceRoundTripsSqlite(benchmark::State& state) {
  std::string dir = (std::filesystem::temp_directory_path() / "snowid-bench-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) {
    state.SkipWithError("cannot make a temporary directory");
    return;
  }
  {
    Result<std::unique_ptr<TicketStore>> store =
        open_sqlite_ticket_store(dir + "/tickets.db", system_clock());
    if (store.is_ok()) {
      draw_a_million(state, *store.value());
    } else {
      state.SkipWithError(store.status().to_string().c_str());
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}
BENCHMARK(BM_SequenceRoundTripsSqlite)
    ->ArgName("mode")
    ->Arg(static_cast<std::int64_t>(Mode::kStep1000))
    ->Arg(static_cast<std::int64_t>(Mode::kStep10000))
    ->Arg(static_cast<std::int64_t>(Mode::kAdaptive))
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_SequenceRoundTripsPostgres(benchmark::State& state) {
  const char* conninfo = std::getenv("SNOWID_BENCH_POSTGRES");
  if (conninfo == nullptr || *conninfo == '\0') {
    state.SkipWithError("SNOWID_BENCH_POSTGRES is not set (a conninfo, e.g. from pg-scratch)");
    return;
  }
  Result<std::unique_ptr<TicketStore>> store = open_postgres_ticket_store(conninfo, system_clock());
  if (!store.is_ok()) {
    state.SkipWithError(store.status().to_string().c_str());
    return;
  }
  draw_a_million(state, *store.value());
}
BENCHMARK(BM_SequenceRoundTripsPostgres)
    ->ArgName("mode")
    ->Arg(static_cast<std::int64_t>(Mode::kStep1000))
    ->Arg(static_cast<std::int64_t>(Mode::kStep10000))
    ->Arg(static_cast<std::int64_t>(Mode::kAdaptive))
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace snowid
