// Shared set-up for the generator tests: a simulated clock at a known instant
// and layouts that make exhaustion easy to reach.
#pragma once

#include <gtest/gtest.h>

#include <memory>

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

inline std::int64_t ticks_of(const Layout& layout, std::uint64_t id) {
  return layout.decode(id).value().ticks;
}

inline std::uint64_t sequence_of(const Layout& layout, std::uint64_t id) {
  const auto d = layout.decode(id).value();
  return d.values[static_cast<std::size_t>(layout.index_of(FieldRole::kSequence))];
}

}  // namespace snowid::test_support
