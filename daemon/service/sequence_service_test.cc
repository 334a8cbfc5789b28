// SequenceService on the in-memory ticket table (sequence_test_support.h):
// never an implicit create, try_next() never touching the store, buffers
// opened only for rows that exist and dropped when the row goes, the direct
// calls, the counters, and sequences off.
#include "sequence_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "sequence_test_support.h"
#include "service_test_support.h"
#include "snowid/testing/memory_ticket_store.h"
#include "snowid/testing/simulated_clock.h"
#include "snowid/ticket_store.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using test_support::eventually;
using test_support::numbers_of;
using test_support::sequence_test_options;
using test_support::TestSequences;

// A pointer into `s`, which must outlive it.
const SequenceCounters* counters_of(const SequencesSnapshot& s, const std::string& name) {
  for (const SequenceCounters& c : s.sequences) {
    if (c.name == name) return &c;
  }
  return nullptr;
}
const SequenceCounters* counters_of(const SequencesSnapshot&& s, const std::string& name) = delete;

std::uint64_t latency_calls(const SequencesSnapshot& s) {
  return std::accumulate(s.store_latency.begin(), s.store_latency.end(), std::uint64_t{0});
}

TEST(SequenceServiceTest, UnknownNameIsNotFoundAndNeitherCreatesItNorKeepsABuffer) {
  TestSequences t;
  const SequenceNumbers got = t.service->next("nope", 1);
  EXPECT_EQ(got.status.code(), Code::kNotFound);
  EXPECT_EQ(got.status.message(), "sequence 'nope' does not exist");
  EXPECT_TRUE(got.ranges.empty());
  EXPECT_EQ(t.memory.get("nope").status().code(), Code::kNotFound) << "never an implicit create";
  EXPECT_EQ(t.memory.takes(), 0u);
  const SequencesSnapshot s = t.service->snapshot();
  EXPECT_EQ(s.buffers, 0u);
  EXPECT_TRUE(s.sequences.empty());
  // try_next has no buffer to answer from: the pool must look.
  EXPECT_TRUE(t.service->try_next("nope", 1).would_wait);
}

TEST(SequenceServiceTest, TryNextWaitsForTheFirstNextThenAnswersFromMemoryWithoutTheStore) {
  TestSequences t;
  t.create("orders", 1001, 10);
  const SequenceNumbers before = t.service->try_next("orders", 1);
  EXPECT_TRUE(before.would_wait);
  EXPECT_TRUE(before.status.is_ok());
  EXPECT_TRUE(before.ranges.empty());
  EXPECT_EQ(t.faulty->calls(), 0u) << "try_next never touches the store";

  const SequenceNumbers first = t.service->next("orders", 1);
  ASSERT_TRUE(first.ok()) << first.status.to_string();
  EXPECT_EQ(numbers_of(first.ranges), std::vector<std::int64_t>{1001});

  // The rest of the first range is in memory, whatever the store does now.
  t.faulty->set_stalled(true);
  const std::uint64_t calls = t.faulty->calls();
  for (std::int64_t want = 1002; want <= 1008; ++want) {
    const SequenceNumbers n = t.service->try_next("orders", 1);
    ASSERT_TRUE(n.ok()) << want << ": " << n.status.to_string() << " wait " << n.would_wait;
    EXPECT_EQ(numbers_of(n.ranges), std::vector<std::int64_t>{want});
  }
  EXPECT_LE(t.faulty->calls(), calls + 1) << "at most the refill, from the fetcher";
}

TEST(SequenceServiceTest, NextAcrossSeveralRangesGivesIncreasingDistinctNumbersAndCountsThem) {
  TestSequences t;
  t.create("orders", 1, 10);
  std::vector<std::int64_t> all;
  for (int i = 0; i < 5; ++i) {
    const SequenceNumbers got = t.service->next("orders", 25);
    ASSERT_TRUE(got.ok()) << got.status.to_string();
    const std::vector<std::int64_t> n = numbers_of(got.ranges);
    ASSERT_EQ(n.size(), 25u);
    all.insert(all.end(), n.begin(), n.end());
  }
  for (std::size_t i = 1; i < all.size(); ++i) ASSERT_LT(all[i - 1], all[i]) << i;
  EXPECT_GE(all.front(), 1);

  const SequencesSnapshot s = t.service->snapshot();
  const SequenceCounters* c = counters_of(s, "orders");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->numbers_issued, 125u);
  // A batch short of numbers asks for a range that holds what it lacks, so
  // fewer takes than 125 / 10; but one range of 10 cannot serve a batch.
  EXPECT_GE(c->ranges_fetched, 2u);
  EXPECT_TRUE(c->has_buffer);
  EXPECT_EQ(s.buffers, 1u);
  EXPECT_EQ(s.store_kind, "memory");
  EXPECT_EQ(s.store, "memory:test");
  EXPECT_EQ(s.store_calls, latency_calls(s));
  EXPECT_GE(s.store_calls, c->ranges_fetched + 1) << "the takes and the get before the buffer";
}

TEST(SequenceServiceTest, BadNamesAndCountsAreRefusedBeforeTheStore) {
  TestSequences t;
  for (const std::string& bad :
       std::vector<std::string>{"", "has space", "a/b", std::string(65, 'x'), "\xc3\xa9"}) {
    EXPECT_EQ(t.service->next(bad, 1).status.code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(t.service->try_next(bad, 1).status.code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(t.service->range(bad, 1).status().code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(t.service->create(bad, 1, 1).code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(t.service->info(bad).status().code(), Code::kInvalidArgument) << bad;
  }
  t.create("orders", 1, 10);
  EXPECT_EQ(t.service->next("orders", 0).status.code(), Code::kInvalidArgument);
  EXPECT_EQ(t.service->try_next("orders", -1).status.code(), Code::kInvalidArgument);
  EXPECT_EQ(t.service->create("x", -1, 10).code(), Code::kInvalidArgument);
  EXPECT_EQ(t.service->create("x", 1, 0).code(), Code::kInvalidArgument);
  EXPECT_EQ(t.faulty->calls(), 0u);
}

TEST(SequenceServiceTest, RangeTakesStraightFromTheStoreWithinMaxRange) {
  TestSequences t;
  t.create("orders", 500, 10);
  EXPECT_EQ(t.service->range("orders", 0).status().code(), Code::kInvalidArgument);
  const Result<SequenceRange> over = t.service->range("orders", 1001);
  EXPECT_EQ(over.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(over.status().message(), "size must be between 1 and 1000");
  EXPECT_EQ(t.memory.takes(), 0u);

  const Result<SequenceRange> a = t.service->range("orders", 1000);
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  EXPECT_EQ(a.value(), (SequenceRange{500, 1500}));
  const Result<SequenceRange> b = t.service->range("orders", 3);
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(b.value(), (SequenceRange{1500, 1503}));
  EXPECT_EQ(t.memory.takes(), 2u);
  EXPECT_EQ(t.service->snapshot().buffers, 0u) << "SEQRANGE opens no buffer";

  // A buffer opened afterwards starts above them.
  const SequenceNumbers next = t.service->next("orders", 1);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(numbers_of(next.ranges), std::vector<std::int64_t>{1503});

  const SequencesSnapshot s = t.service->snapshot();
  const SequenceCounters* c = counters_of(s, "orders");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->ranges_served, 2u);
}

TEST(SequenceServiceTest, RangeOfAnUnknownNameIsNotFoundAndLeavesNoCounters) {
  TestSequences t;
  const Result<SequenceRange> r = t.service->range("ghost", 5);
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_EQ(r.status().message(), "sequence 'ghost' does not exist");
  EXPECT_TRUE(t.service->snapshot().sequences.empty());
  const SequencesSnapshot s = t.service->snapshot();
  EXPECT_EQ(s.store_calls, 1u);
  EXPECT_EQ(s.store_failures, 0u) << "an answer, not a failure of the store";
}

TEST(SequenceServiceTest, CreateThenCreateAgainIsAlreadyExists) {
  TestSequences t;
  ASSERT_TRUE(t.service->create("invoices", 7, 50).is_ok());
  const Result<SequenceInfo> row = t.memory.get("invoices");
  ASSERT_TRUE(row.is_ok());
  EXPECT_EQ(row->next_value, 7);
  EXPECT_EQ(row->step, 50);
  const Status again = t.service->create("invoices", 1, 1);
  EXPECT_EQ(again.code(), Code::kAlreadyExists);
  EXPECT_EQ(again.message(), "sequence 'invoices' exists already");
  EXPECT_EQ(t.memory.get("invoices")->next_value, 7) << "untouched";
}

TEST(SequenceServiceTest, InfoShowsTheRowAndTheBufferOnceOneServesIt) {
  TestSequences t;
  t.create("orders", 1, 10);
  Result<SequenceDetails> d = t.service->info("orders");
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ(d->row.name, "orders");
  EXPECT_EQ(d->row.next_value, 1);
  EXPECT_EQ(d->row.step, 10);
  EXPECT_EQ(d->row.created, t.clock.wall_now());
  EXPECT_FALSE(d->buffered);

  ASSERT_TRUE(t.service->next("orders", 3).ok());
  d = t.service->info("orders");
  ASSERT_TRUE(d.is_ok());
  EXPECT_TRUE(d->buffered);
  EXPECT_EQ(d->buffer.numbers_issued, 3u);
  EXPECT_GE(d->buffer.ranges_fetched, 1u);
  EXPECT_GE(d->row.next_value, 11) << "the buffer's range is taken";

  EXPECT_EQ(t.service->info("ghost").status().code(), Code::kNotFound);
}

TEST(SequenceServiceTest, ListGivesEveryNameInOrder) {
  TestSequences t;
  EXPECT_TRUE(t.service->list().value().empty());
  t.create("b", 1, 1);
  t.create("a", 1, 1);
  t.create("c.d-e_f", 1, 1);
  EXPECT_EQ(t.service->list().value(), (std::vector<std::string>{"a", "b", "c.d-e_f"}));
}

TEST(SequenceServiceTest, ABufferWhoseRowIsGoneIsDroppedSoThatALaterCreateWorks) {
  TestSequences t;
  t.create("orders", 1, 5);
  ASSERT_TRUE(t.service->next("orders", 1).ok());
  EXPECT_EQ(t.service->snapshot().buffers, 1u);

  // The row disappears (deleted by hand): the fetcher's next take says so.
  t.faulty->set_failure(Status(Code::kNotFound, "no such row (injected)"));
  std::set<std::int64_t> seen = {1};
  Status last;
  for (int i = 0; i < 100 && last.is_ok(); ++i) {
    const SequenceNumbers n = t.service->next("orders", 1);
    last = n.status;
    for (std::int64_t v : numbers_of(n.ranges)) EXPECT_TRUE(seen.insert(v).second) << v;
  }
  EXPECT_EQ(last.code(), Code::kNotFound);
  EXPECT_EQ(last.message(), "sequence 'orders' does not exist");
  EXPECT_EQ(t.service->snapshot().buffers, 0u) << "dropped";

  // Back (re-created, or the fault gone): a fresh buffer serves it, above
  // every number seen.
  t.faulty->set_failure(Status::ok());
  const SequenceNumbers again = t.service->next("orders", 1);
  ASSERT_TRUE(again.ok()) << again.status.to_string();
  EXPECT_GT(numbers_of(again.ranges).front(), *seen.rbegin());
  const SequencesSnapshot s = t.service->snapshot();
  const SequenceCounters* c = counters_of(s, "orders");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->numbers_issued, seen.size() + 1) << "counters survive the dropped buffer";
}

TEST(SequenceServiceTest, DryBufferWithAHungStoreAnswersUnavailableAfterTheWaitAndCountsIt) {
  SequenceServiceOptions o = sequence_test_options();
  o.buffer.wait_timeout = 50ms;
  TestSequences t(o);
  t.create("orders", 1, 4);
  // Opening the buffer may need more than 50 ms on a loaded machine: retry.
  ASSERT_TRUE(eventually([&] { return t.service->next("orders", 1).ok(); }));
  t.faulty->set_stalled(true);
  // Empty what is in memory; no refill can come.
  std::int64_t drained = 0;
  while (drained < 100) {
    const SequenceNumbers n = t.service->try_next("orders", 1);
    if (!n.ok()) {
      EXPECT_TRUE(n.would_wait) << n.status.to_string();
      break;
    }
    ++drained;
  }
  EXPECT_LT(drained, 100);

  const SequenceNumbers late = t.service->next("orders", 1);
  EXPECT_EQ(late.status.code(), Code::kUnavailable) << late.status.to_string();
  EXPECT_TRUE(late.ranges.empty()) << "never a made-up number";
  const SequencesSnapshot s = t.service->snapshot();
  EXPECT_GE(s.buffer_waits, 1u);
  EXPECT_GE(s.buffer_wait_timeouts, 1u);

  t.faulty->set_stalled(false);
  ASSERT_TRUE(eventually([&] { return t.service->next("orders", 1).ok(); }));
}

TEST(SequenceServiceTest, ASpentSequenceIsOutOfRange) {
  TestSequences t;
  t.create("last", std::numeric_limits<std::int64_t>::max() - 2, 10);
  const SequenceNumbers n = t.service->next("last", 1);
  EXPECT_EQ(n.status.code(), Code::kOutOfRange) << n.status.to_string();
  EXPECT_NE(n.status.message().find("last"), std::string::npos) << n.status.message();
  EXPECT_EQ(t.service->range("last", 5).status().code(), Code::kOutOfRange);
  // The answer stands for the buffer: try_next gives it too, from memory.
  EXPECT_EQ(t.service->try_next("last", 1).status.code(), Code::kOutOfRange);
}

TEST(SequenceServiceTest, UnreachableStoreIsUnavailableForEveryDirectCall) {
  TestSequences t;
  t.create("orders", 1, 10);
  t.faulty->set_failure(Status(Code::kUnavailable, "connection refused (injected)"));
  EXPECT_EQ(t.service->range("orders", 1).status().code(), Code::kUnavailable);
  EXPECT_EQ(t.service->create("other", 1, 1).code(), Code::kUnavailable);
  EXPECT_EQ(t.service->info("orders").status().code(), Code::kUnavailable);
  EXPECT_EQ(t.service->list().status().code(), Code::kUnavailable);
  EXPECT_EQ(t.service->next("orders", 1).status.code(), Code::kUnavailable);
  const SequencesSnapshot s = t.service->snapshot();
  EXPECT_EQ(s.store_failures, 5u);
  EXPECT_EQ(s.store_calls, 5u);
}

// Forwards to `inner`, moving the simulated clock by `latency` during each
// call: a store that takes that long, as the service's clock sees it.
class TimedStore final : public TicketStore {
 public:
  TimedStore(TicketStore& inner, testing::SimulatedClock& clock) : inner_(inner), clock_(clock) {}
  void set_latency(Duration d) { latency_ = d; }

  Status migrate() override { return inner_.migrate(); }
  Status create(std::string_view name, std::int64_t start, std::int64_t step) override {
    clock_.advance(latency_);
    return inner_.create(name, start, step);
  }
  Result<SequenceRange> take(std::string_view name, std::int64_t size) override {
    clock_.advance(latency_);
    return inner_.take(name, size);
  }
  Result<SequenceInfo> get(std::string_view name) override {
    clock_.advance(latency_);
    return inner_.get(name);
  }
  Result<std::vector<SequenceInfo>> list() override {
    clock_.advance(latency_);
    return inner_.list();
  }
  std::string_view kind() const noexcept override { return "timed"; }

 private:
  TicketStore& inner_;
  testing::SimulatedClock& clock_;
  std::atomic<Duration> latency_{Duration::zero()};
};

TEST(SequenceServiceTest, DirectStoreCallsLandInTheBucketOfTheirLatency) {
  testing::SimulatedClock clock(test_support::service_test_start());
  testing::MemoryTicketStore memory(clock);
  ASSERT_TRUE(memory.create("orders", 1, 10).is_ok());
  auto owned = std::make_unique<TimedStore>(memory, clock);
  TimedStore& store = *owned;
  SequenceService service(std::move(owned), clock, sequence_test_options());

  store.set_latency(30ms);  // bucket "<= 50 ms", the sixth
  ASSERT_TRUE(service.info("orders").is_ok());
  ASSERT_TRUE(service.range("orders", 1).is_ok());
  store.set_latency(3s);  // beyond the last bound
  ASSERT_TRUE(service.list().is_ok());
  const SequencesSnapshot s = service.snapshot();
  ASSERT_EQ(kStoreLatencyBoundsMs[5], 50.0);
  EXPECT_EQ(s.store_latency[5], 2u);
  EXPECT_EQ(s.store_latency.back(), 1u);
  EXPECT_EQ(latency_calls(s), 3u);
  EXPECT_EQ(s.store_latency_total, 3060ms);
  EXPECT_EQ(s.store_kind, "timed");
}

TEST(SequenceServiceTest, CloseDropsTheBuffersCountingWhatTheyHeldAsLost) {
  TestSequences t;
  t.create("orders", 1, 10);
  ASSERT_TRUE(t.service->next("orders", 1).ok());
  ASSERT_TRUE(eventually([&] {
    const SequencesSnapshot s = t.service->snapshot();
    const SequenceCounters* c = counters_of(s, "orders");
    return c != nullptr && c->buffered > 0;
  }));
  t.service->close();
  const SequencesSnapshot s = t.service->snapshot();
  EXPECT_EQ(s.buffers, 0u);
  const SequenceCounters* c = counters_of(s, "orders");
  ASSERT_NE(c, nullptr);
  EXPECT_GE(c->numbers_lost, 9u) << "the rest of the range: a gap";
  EXPECT_EQ(c->numbers_issued, 1u);
  EXPECT_EQ(t.service->next("orders", 1).status.code(), Code::kUnavailable);
  EXPECT_EQ(t.service->try_next("orders", 1).status.code(), Code::kUnavailable);
}

TEST(SequenceServiceTest, OffAnswersFailedPreconditionAndNeverAStore) {
  testing::SimulatedClock clock(test_support::service_test_start());
  SequenceService off(nullptr, clock, sequence_test_options());
  EXPECT_FALSE(off.enabled());
  for (const Status& s : {off.try_next("orders", 1).status, off.next("orders", 1).status,
                          off.range("orders", 1).status(), off.create("orders", 1, 1),
                          off.info("orders").status(), off.list().status()}) {
    EXPECT_EQ(s.code(), Code::kFailedPrecondition);
    EXPECT_EQ(s.message(), kSequencesOffMessage);
  }
  const SequencesSnapshot s = off.snapshot();
  EXPECT_FALSE(s.enabled);
  EXPECT_EQ(s.store_kind, "off");
}

// The in-memory table, except that the next `n` takes find no row: as if
// the row had been deleted and re-created between two takes.
class RowRecreatedStore final : public TicketStore {
 public:
  explicit RowRecreatedStore(TicketStore& inner) : inner_(inner) {}
  void lose_row_for_next_takes(int n) { missing_ = n; }
  int missing() const { return missing_.load(); }

  Status migrate() override { return inner_.migrate(); }
  Status create(std::string_view name, std::int64_t start, std::int64_t step) override {
    return inner_.create(name, start, step);
  }
  Result<SequenceRange> take(std::string_view name, std::int64_t size) override {
    for (int n = missing_.load(); n > 0;) {
      if (missing_.compare_exchange_weak(n, n - 1)) {
        return Status(Code::kNotFound, "no such row (injected)");
      }
    }
    return inner_.take(name, size);
  }
  Result<SequenceInfo> get(std::string_view name) override { return inner_.get(name); }
  Result<std::vector<SequenceInfo>> list() override { return inner_.list(); }
  std::string_view kind() const noexcept override { return "memory"; }

 private:
  TicketStore& inner_;
  std::atomic<int> missing_{0};
};

TEST(SequenceServiceTest, ARowReCreatedOutsideTheDaemonIsServedWithoutANotFound) {
  testing::SimulatedClock clock{test_support::service_test_start()};
  testing::MemoryTicketStore memory{clock};
  ASSERT_TRUE(memory.create("orders", 1, 3).is_ok());
  auto owned = std::make_unique<RowRecreatedStore>(memory);
  RowRecreatedStore& store = *owned;
  SequenceService service(std::move(owned), clock, sequence_test_options());
  ASSERT_TRUE(service.next("orders", 1).ok());

  store.lose_row_for_next_takes(1);
  std::set<std::int64_t> seen = {1};
  for (int i = 0; i < 12; ++i) {
    const SequenceNumbers n = service.next("orders", 1);
    ASSERT_TRUE(n.ok()) << "call " << i << ": " << n.status.to_string();
    for (std::int64_t v : numbers_of(n.ranges)) EXPECT_TRUE(seen.insert(v).second) << v;
  }
  EXPECT_EQ(store.missing(), 0) << "the buffer met the missing row";
  EXPECT_EQ(service.snapshot().buffers, 1u) << "a new buffer serves it";
}

TEST(SequenceServiceTest, ADryBufferWhoseStoreFailsAnswersUnavailableAtOnceFromTryNext) {
  TestSequences t;
  t.create("orders", 1, 4);
  ASSERT_TRUE(t.service->next("orders", 1).ok());
  t.faulty->set_failure(Status(Code::kUnavailable, "database down (injected)"));
  // What is in memory is served; once it is gone and the refill has failed,
  // try_next says so instead of sending the caller to wait.
  SequenceNumbers last;
  ASSERT_TRUE(eventually([&] {
    last = t.service->try_next("orders", 1);
    return !last.ok() && !last.would_wait;
  })) << "would_wait: "
      << last.would_wait;
  EXPECT_EQ(last.status.code(), Code::kUnavailable);
  EXPECT_NE(last.status.message().find("database down (injected)"), std::string::npos)
      << last.status.message();
  EXPECT_TRUE(last.ranges.empty());

  t.faulty->set_failure(Status::ok());
  EXPECT_TRUE(eventually([&] { return t.service->try_next("orders", 1).ok(); }))
      << "served again once the fetcher's retry succeeds";
}

TEST(SequenceServiceTest, OpeningMoreThanMaxSequencesBuffersIsRefusedUntilOneIsDropped) {
  SequenceServiceOptions o = sequence_test_options();
  o.max_sequences = 2;
  TestSequences t(o);
  // Ranges of 1000: once a buffer holds its first range its fetcher is idle,
  // so the store's call count below moves only if the service asks it.
  for (const char* name : {"a", "b", "c"}) t.create(name, 1, 1000);
  ASSERT_TRUE(t.service->next("a", 1).ok());
  ASSERT_TRUE(t.service->next("b", 1).ok());
  const std::uint64_t calls = t.faulty->calls();
  const SequenceNumbers refused = t.service->next("c", 1);
  EXPECT_EQ(refused.status.code(), Code::kResourceExhausted);
  EXPECT_NE(refused.status.message().find("max_sequences"), std::string::npos)
      << refused.status.message();
  EXPECT_FALSE(refused.status.retryable());
  EXPECT_EQ(t.faulty->calls(), calls) << "refused before asking the store";
  EXPECT_EQ(t.service->snapshot().buffers, 2u);
  // The open ones are still served.
  EXPECT_TRUE(t.service->next("a", 1).ok());

  // "b" loses its row: its buffer is dropped, which frees a place.
  t.faulty->set_failure(Status(Code::kNotFound, "no such row (injected)"));
  Status last;
  // 1000 numbers: more than the buffer holds, so it must ask the store.
  for (int i = 0; i < 100 && last.is_ok(); ++i) last = t.service->next("b", 1000).status;
  ASSERT_EQ(last.code(), Code::kNotFound);
  t.faulty->set_failure(Status::ok());
  const SequenceNumbers c = t.service->next("c", 1);
  EXPECT_TRUE(c.ok()) << c.status.to_string();
  EXPECT_EQ(t.service->snapshot().buffers, 2u);
}

}  // namespace
}  // namespace snowid::daemon
