// Shared set-up for the generator tests: a simulated clock at a known instant
// and layouts that make exhaustion easy to reach, options on them, and a
// wall clock that stands still while the monotonic clock runs.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "snowid/generator.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid::test_support {

using namespace std::chrono_literals;

// 2026-06-01T00:00:00.000Z plus 100 us, so a tick boundary is 900 us away.
inline WallTime test_start() { return wall_from_unix_ms(1780272000000) + 100us; }

// time 41 · host 18 · sequence 4: 16 ids per ms, so exhaustion is cheap to reach.
inline Layout small_sequence_layout() {
  LayoutSpec spec;
  spec.name = "small_sequence";
  spec.fields = {{"time", FieldRole::kTime, 41},
                 {"host", FieldRole::kHost, 18},
                 {"sequence", FieldRole::kSequence, 4}};
  return Layout::create(std::move(spec)).value();
}

// 10 ms ticks: time 39 · host 16 · sequence 8.
inline Layout ten_ms_layout() {
  LayoutSpec spec;
  spec.name = "ten_ms";
  spec.unit_ms = 10;
  spec.fields = {{"time", FieldRole::kTime, 39},
                 {"host", FieldRole::kHost, 16},
                 {"sequence", FieldRole::kSequence, 8}};
  return Layout::create(std::move(spec)).value();
}

// The small-sequence layout, worker 0/77, and no random start: ids are
// predictable.
inline GeneratorOptions small_options() {
  GeneratorOptions o;
  o.layout = small_sequence_layout();
  o.worker = {0, 77};
  o.random_start_bound = 0;
  return o;
}

inline std::unique_ptr<Generator> make_generator(const Clock& clock, GeneratorOptions options) {
  auto g = Generator::create(clock, std::move(options));
  EXPECT_TRUE(g.is_ok()) << g.status().to_string();
  if (!g.is_ok()) return nullptr;
  return std::move(g).value();
}

// A single id as a batch of one, so tests can treat next() and reserve() alike.
inline IdBatch as_batch(const IdResult& r) {
  return IdBatch{r.id, r.ok() ? 1u : 0u, r.code, r.retry_after};
}

// Returns call() as made while the wall clock stands still and the monotonic
// clock runs (another thread advances it 1 ms every 100 us of real time).
template <typename F>
auto while_wall_clock_stopped(testing::SimulatedClock& clock, F call) {
  std::atomic<bool> done{false};
  std::thread ticker([&] {
    while (!done.load()) {
      clock.advance_monotonic(1ms);
      std::this_thread::sleep_for(100us);
    }
  });
  auto result = call();
  done.store(true);
  ticker.join();
  return result;
}

inline std::int64_t ticks_of(const Layout& layout, std::uint64_t id) {
  return layout.decode(id).value().ticks;
}

inline std::uint64_t sequence_of(const Layout& layout, std::uint64_t id) {
  const auto d = layout.decode(id).value();
  return d.values[static_cast<std::size_t>(layout.index_of(FieldRole::kSequence))];
}

}  // namespace snowid::test_support
