// Shared set-up for the daemon's tests of the named sequences: a
// SequenceService on the in-memory ticket table, behind a FaultyTicketStore
// that the test controls (a slow, failing or hung database), on a simulated
// clock. The buffers' fetcher threads are real.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sequence_service.h"
#include "service_test_support.h"
#include "snowid/testing/faulty_ticket_store.h"
#include "snowid/testing/memory_ticket_store.h"
#include "snowid/testing/simulated_clock.h"
#include "snowid/ticket_store.h"

namespace snowid::daemon::test_support {

// Generous waits (a loaded CI machine, ThreadSanitizer) and quick retries.
inline SequenceServiceOptions sequence_test_options() {
  SequenceServiceOptions o;
  o.buffer.wait_timeout = std::chrono::seconds(10);
  o.buffer.retry_backoff = std::chrono::milliseconds(2);
  o.buffer.retry_backoff_max = std::chrono::milliseconds(20);
  o.max_range = 1000;
  o.store_description = "memory:test";
  return o;
}

struct TestSequences {
  testing::SimulatedClock clock{service_test_start()};
  testing::MemoryTicketStore memory{clock};
  testing::FaultyTicketStore* faulty = nullptr;  // owned by `service`
  std::unique_ptr<SequenceService> service;

  explicit TestSequences(SequenceServiceOptions options = sequence_test_options()) {
    auto store = std::make_unique<testing::FaultyTicketStore>(memory);
    faulty = store.get();
    service = std::make_unique<SequenceService>(std::move(store), clock, std::move(options));
  }
  // A hung store would hold the buffers' destructors (they join their
  // fetchers), so it is released first.
  ~TestSequences() {
    faulty->set_stalled(false);
    service.reset();
  }
  TestSequences(const TestSequences&) = delete;
  TestSequences& operator=(const TestSequences&) = delete;

  // Creates `name` in the table directly, as another daemon or the tool would.
  void create(std::string_view name, std::int64_t start, std::int64_t step) {
    const Status s = memory.create(name, start, step);
    ASSERT_TRUE(s.is_ok()) << s.to_string();
  }
};

// Every number of `ranges`, in order.
inline std::vector<std::int64_t> numbers_of(const std::vector<SequenceRange>& ranges) {
  std::vector<std::int64_t> out;
  for (const SequenceRange& r : ranges) {
    for (std::int64_t n = r.first; n < r.end; ++n) out.push_back(n);
  }
  return out;
}

}  // namespace snowid::daemon::test_support
