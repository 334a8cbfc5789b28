// Many threads on SequenceService at once, as the event loops (try_next,
// snapshot) and the pool (next, range, info) call it: no number is handed
// out twice, in one daemon or in two sharing a table, even while buffers
// are dropped (their row gone) and opened again under the callers' feet.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sequence_service.h"
#include "sequence_test_support.h"
#include "snowid/testing/faulty_ticket_store.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using test_support::numbers_of;
using test_support::sequence_test_options;
using test_support::TestSequences;

// What a caller does: try from memory first, as an event loop would, and
// go to next() (the pool's call) when that would wait; now and then a range
// for itself. Unavailable answers are allowed (a table that fails); a
// number handed out is recorded.
void call_many(SequenceService& service, int rounds, std::vector<std::int64_t>& got,
               std::atomic<int>& hard_errors) {
  for (int i = 0; i < rounds; ++i) {
    const std::int64_t count = 1 + i % 4;
    if (i % 7 == 6) {
      const Result<SequenceRange> r = service.range("orders", 3);
      if (r.is_ok()) {
        for (std::int64_t n = r->first; n < r->end; ++n) got.push_back(n);
      } else if (r.status().code() != Code::kUnavailable && r.status().code() != Code::kNotFound) {
        hard_errors.fetch_add(1);
      }
      continue;
    }
    SequenceNumbers n = service.try_next("orders", count);
    if (n.would_wait) n = service.next("orders", count);
    if (n.ok()) {
      const std::vector<std::int64_t> v = numbers_of(n.ranges);
      if (static_cast<std::int64_t>(v.size()) != count) hard_errors.fetch_add(1);
      got.insert(got.end(), v.begin(), v.end());
    } else if (n.status.code() != Code::kUnavailable && n.status.code() != Code::kNotFound) {
      hard_errors.fetch_add(1);
    }
  }
}

TEST(SequenceServiceConcurrency, CallersOnTwoServicesSharingATableNeverShareANumber) {
  TestSequences one;
  one.create("orders", 1, 7);
  // A second daemon on the same table.
  SequenceService two(std::make_unique<testing::FaultyTicketStore>(one.memory), one.clock,
                      sequence_test_options());
  constexpr int kThreads = 4;
  constexpr int kRounds = 1500;
  std::vector<std::vector<std::int64_t>> got(kThreads);
  std::atomic<int> hard_errors{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    SequenceService& s = t % 2 == 0 ? *one.service : two;
    threads.emplace_back([&, t] { call_many(s, kRounds, got[t], hard_errors); });
  }
  // Metrics and INFO read while numbers fly.
  std::thread reader([&] {
    while (!done.load()) {
      (void)one.service->snapshot();
      (void)two.snapshot();
      (void)one.service->info("orders");
    }
  });
  for (std::thread& th : threads) th.join();
  done = true;
  reader.join();

  EXPECT_EQ(hard_errors.load(), 0);
  std::set<std::int64_t> all;
  std::size_t total = 0;
  for (const auto& v : got) {
    total += v.size();
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(all.size(), total) << "a number handed out twice";
  EXPECT_GT(total, std::size_t{kThreads} * kRounds);
}

TEST(SequenceServiceConcurrency, BuffersDroppedAndReopenedUnderCallersNeverRepeatANumber) {
  TestSequences t;
  t.create("orders", 1, 5);
  constexpr int kThreads = 3;
  std::vector<std::vector<std::int64_t>> got(kThreads);
  std::atomic<int> hard_errors{0};
  std::atomic<bool> flipping{true};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      while (flipping.load()) call_many(*t.service, 20, got[i], hard_errors);
      call_many(*t.service, 50, got[i], hard_errors);  // the row back for good
    });
  }
  // The row goes and comes back, again and again: each time the buffer
  // learns it is gone, it is dropped, and the next call opens a fresh one.
  for (int flip = 0; flip < 40; ++flip) {
    t.faulty->set_failure(Status(Code::kNotFound, "no such row (injected)"));
    std::this_thread::sleep_for(1ms);
    t.faulty->set_failure(Status::ok());
    std::this_thread::sleep_for(1ms);
  }
  flipping = false;
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(hard_errors.load(), 0);
  std::set<std::int64_t> all;
  std::size_t total = 0;
  for (const auto& v : got) {
    total += v.size();
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(all.size(), total) << "a number handed out twice";
  EXPECT_GE(total, std::size_t{kThreads} * 50);
}

}  // namespace
}  // namespace snowid::daemon
