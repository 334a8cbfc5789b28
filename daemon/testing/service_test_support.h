// Shared set-up for the daemon's unit tests: an IdService over a real
// LeasedGenerator on a simulated clock and the in-memory registry, so the
// request handlers are tested against the real generator rules (leases,
// clock steps, sequence exhaustion) without sockets or real time.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <utility>

#include "id_service.h"
#include "snowid/leased_generator.h"
#include "snowid/testing/memory_registry.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid::daemon::test_support {

// 2026-06-01T00:00:00Z.
inline WallTime service_test_start() { return wall_from_unix_ms(1780272000000); }

struct TestService {
  Layout layout;
  // The clock auto-advances on pause(), so a generator waiting for the next
  // tick (or a small step back) gets there without real sleeping.
  testing::SimulatedClock clock{service_test_start()};
  testing::MemoryRegistry registry{clock, layout, std::chrono::seconds(5)};
  std::unique_ptr<LeasedGenerator> generator;
  std::unique_ptr<IdService> service;

  // Region 1, random start off (ids of a tick start at sequence 0).
  explicit TestService(std::uint32_t max_batch = 10000,
                       Layout generator_layout = Layout::snowid_default())
      : layout(std::move(generator_layout)) {
    clock.set_auto_advance(true);
    LeasedGeneratorOptions o;
    o.generator.layout = layout;
    o.generator.random_start_bound = 0;
    o.lease.region = 1;
    o.lease.holder.host = "test-host";
    auto g = LeasedGenerator::create(clock, registry, std::move(o));
    EXPECT_TRUE(g.is_ok()) << g.status().to_string();
    if (!g.is_ok()) return;
    generator = std::move(g).value();
    service = std::make_unique<IdService>(*generator, clock, max_batch);
  }
  ~TestService() {
    if (service) (void)service->close();
  }
  TestService(const TestService&) = delete;
  TestService& operator=(const TestService&) = delete;
};

// Polls `done` on real time until it holds or `limit` passes.
template <typename F>
bool eventually(F done, Duration limit = std::chrono::seconds(10)) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace snowid::daemon::test_support
