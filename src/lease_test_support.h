// Shared set-up for the lease tests: the instant their simulated clocks start
// at, the in-memory registry on such a clock, layouts with blocks of worker
// ids small enough to fill, and waiting on real time for what other threads
// do.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "snowid/layout.h"
#include "snowid/testing/memory_registry.h"
#include "snowid/testing/simulated_clock.h"
#include "snowid/time.h"

namespace snowid::test_support {

// 2026-06-01T00:00:00Z.
inline WallTime lease_test_start() { return wall_from_unix_ms(1780272000000); }

// A simulated clock at lease_test_start() and, on it, an in-memory registry
// of the default layout with a 5 s quarantine.
class MemoryRegistryFixture : public ::testing::Test {
 protected:
  testing::SimulatedClock clock{lease_test_start()};
  testing::MemoryRegistry registry{clock, Layout::snowid_default(), std::chrono::seconds(5)};
};

// 41 time bits, then `region_bits` and `host_bits`, and the sequence in the
// rest of the 63 bits.
inline Layout worker_block_layout(std::string name, int region_bits, int host_bits) {
  LayoutSpec spec;
  spec.name = std::move(name);
  spec.fields = {{"time", FieldRole::kTime, 41},
                 {"region", FieldRole::kRegion, region_bits},
                 {"host", FieldRole::kHost, host_bits},
                 {"sequence", FieldRole::kSequence, 22 - region_bits - host_bits}};
  return Layout::create(std::move(spec)).value();
}

// Polls `done` on real time until it holds (true) or `limit` has passed
// (false): for what the threads of a keeper or a generator do.
template <typename F>
bool eventually(F done, Duration limit = std::chrono::seconds(10)) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace snowid::test_support
