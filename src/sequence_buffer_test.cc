// The sequence buffer against the in-memory ticket store, with faults
// injected by FaultyTicketStore. One caller thread; the buffer's fetcher is
// the only other thread, and the tests wait for it by polling its stats, so
// every assertion is about a state the fetcher has reached, never about time.
#include "snowid/sequence_buffer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lease_test_support.h"
#include "mutex.h"
#include "snowid/testing/faulty_ticket_store.h"
#include "snowid/testing/memory_ticket_store.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid {

using internal::Mutex;
using internal::MutexLock;
namespace {

using namespace std::chrono_literals;
using testing::FaultyTicketStore;
using testing::MemoryTicketStore;
using testing::SimulatedClock;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

using test_support::eventually;

// Forwards to another store, recording the size of every take() asked and
// the most take() calls ever in flight at once; optionally moves a simulated
// clock during each take(), as a slow database would.
class ProbeStore final : public TicketStore {
 public:
  explicit ProbeStore(TicketStore& inner) : inner_(inner) {}
  void set_latency(SimulatedClock& clock, Duration latency) {
    MutexLock lock(mu_);
    clock_ = &clock;
    latency_ = latency;
  }
  Status migrate() override { return inner_.migrate(); }
  Status create(std::string_view name, std::int64_t start, std::int64_t step) override {
    return inner_.create(name, start, step);
  }
  Result<SequenceRange> take(std::string_view name, std::int64_t size) override {
    {
      MutexLock lock(mu_);
      asked_.push_back(size);
      max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
      if (clock_ != nullptr) clock_->advance(latency_);
    }
    Result<SequenceRange> r = inner_.take(name, size);
    MutexLock lock(mu_);
    --in_flight_;
    return r;
  }
  Result<SequenceInfo> get(std::string_view name) override { return inner_.get(name); }
  Result<std::vector<SequenceInfo>> list() override { return inner_.list(); }
  std::string_view kind() const noexcept override { return inner_.kind(); }

  std::vector<std::int64_t> asked() const {
    MutexLock lock(mu_);
    return asked_;
  }
  int max_in_flight() const {
    MutexLock lock(mu_);
    return max_in_flight_;
  }

 private:
  TicketStore& inner_;
  mutable Mutex mu_;
  std::vector<std::int64_t> asked_ GUARDED_BY(mu_);
  int in_flight_ GUARDED_BY(mu_) = 0;
  int max_in_flight_ GUARDED_BY(mu_) = 0;
  SimulatedClock* clock_ GUARDED_BY(mu_) = nullptr;
  Duration latency_ GUARDED_BY(mu_) = Duration::zero();
};

class SequenceBufferTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(memory.create("orders", 0, 10).is_ok()); }
  // A stalled store would hold the buffer's destructor: release it first.
  void TearDown() override {
    faulty.set_stalled(false);
    buffer.reset();
  }

  static SequenceBufferOptions quick_options() {
    SequenceBufferOptions o;
    o.wait_timeout = 10s;  // long: a test that times out waits on purpose
    o.retry_backoff = 100us;
    o.retry_backoff_max = 1ms;
    return o;
  }

  // Opens `buffer` over `store` (the faulty wrapper unless told otherwise).
  void open(SequenceBufferOptions o, std::string name = "orders") { open_on(faulty, o, name); }
  void open_on(TicketStore& store, SequenceBufferOptions o, std::string name = "orders") {
    auto b = SequenceBuffer::open(store, std::move(name), clock, o);
    ASSERT_TRUE(b.is_ok()) << b.status().to_string();
    buffer = std::move(b).value();
  }

  SequenceBufferStats stats() const { return buffer->stats(); }
  bool fetched(std::uint64_t n) {
    return eventually([&] { return buffer->stats().ranges_fetched >= n; });
  }

  std::int64_t next_ok() {
    auto r = buffer->next();
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r.is_ok() ? r.value() : -1;
  }

  SimulatedClock clock{wall_from_unix_ms(1'780'000'000'000)};
  MemoryTicketStore memory{clock};
  FaultyTicketStore faulty{memory};
  ProbeStore probe{faulty};                // for tests about what the buffer asks
  std::unique_ptr<SequenceBuffer> buffer;  // dies first: the stores outlive it
};

TEST_F(SequenceBufferTest, HandsOutTheNumbersOfTheRangesInOrder) {
  open(quick_options());
  for (std::int64_t want = 0; want < 35; ++want) ASSERT_EQ(next_ok(), want);
  EXPECT_EQ(stats().numbers_issued, 35u);
  EXPECT_EQ(stats().step, 10) << "step 0 asks for the sequence's own step and learns it";
  EXPECT_EQ(buffer->name(), "orders");
}

TEST_F(SequenceBufferTest, FetchesTheStandbyWhenTwentyPercentOfTheCurrentRemain) {
  open(quick_options());
  ASSERT_TRUE(fetched(1));
  for (int i = 0; i < 7; ++i) next_ok();
  EXPECT_EQ(faulty.calls(), 1u) << "3 of 10 left: no fetch yet";
  EXPECT_EQ(stats().buffered, 3);
  EXPECT_EQ(next_ok(), 7);  // 2 of 10 left: the standby is fetched
  ASSERT_TRUE(fetched(2));
  EXPECT_EQ(stats().buffered, 12) << "fetched while the current range still held numbers";
  EXPECT_EQ(next_ok(), 8);
  EXPECT_EQ(next_ok(), 9);
  EXPECT_EQ(next_ok(), 10) << "the standby takes over at once";
  EXPECT_EQ(faulty.calls(), 2u) << "the promoted range is full: no fetch until its threshold";
  for (int i = 0; i < 6; ++i) next_ok();
  EXPECT_EQ(faulty.calls(), 2u);
  EXPECT_EQ(next_ok(), 17);
  ASSERT_TRUE(fetched(3));
  EXPECT_EQ(stats().waits, 0u) << "with a prompt store no caller ever waits";
}

TEST_F(SequenceBufferTest, ARangeOfOneNumberStillFetchesItsSuccessorAhead) {
  ASSERT_TRUE(memory.create("single", 0, 1).is_ok());
  open(quick_options(), "single");
  ASSERT_TRUE(fetched(2)) << "the first range, of one number, is already at its threshold";
  EXPECT_EQ(stats().buffered, 2);
  for (std::int64_t want = 0; want < 20; ++want) ASSERT_EQ(next_ok(), want);
}

TEST_F(SequenceBufferTest, KeepsOneTakeInFlightAtATime) {
  faulty.set_delay(200us);
  SequenceBufferOptions o = quick_options();
  o.step = 3;
  open_on(probe, o);
  std::int64_t last = -1;
  for (int i = 0; i < 300; ++i) {
    const std::int64_t n = next_ok();
    ASSERT_GT(n, last);
    last = n;
  }
  EXPECT_EQ(probe.max_in_flight(), 1);
  EXPECT_GE(probe.asked().size(), 100u);
  for (std::int64_t size : probe.asked()) EXPECT_EQ(size, 3);
}

TEST_F(SequenceBufferTest, AStalledStoreDoesNotHoldCallersWhileNumbersRemain) {
  SequenceBufferOptions o = quick_options();
  o.wait_timeout = 20ms;
  open(o);
  ASSERT_TRUE(fetched(1));
  faulty.set_stalled(true);
  for (std::int64_t want = 0; want < 10; ++want) ASSERT_EQ(next_ok(), want);
  EXPECT_EQ(stats().waits, 0u);
  ASSERT_TRUE(eventually([&] { return faulty.calls() == 2; })) << "the fetcher is held";
  auto dry = buffer->next();
  ASSERT_FALSE(dry.is_ok());
  EXPECT_EQ(dry.status().code(), Code::kUnavailable);
  EXPECT_NE(dry.status().message().find("no range of 'orders' within 20 ms"), std::string::npos)
      << dry.status().to_string();
  faulty.set_stalled(false);
  ASSERT_TRUE(fetched(2));
  EXPECT_EQ(next_ok(), 10);
}

TEST_F(SequenceBufferTest, BothBuffersDryWaitsThenFailsWithTheStoreError) {
  faulty.set_failure(Status(Code::kUnavailable, "database down"));
  SequenceBufferOptions o = quick_options();
  o.wait_timeout = 30ms;
  open(o);
  ASSERT_TRUE(eventually([&] { return stats().store_failures >= 1; }));
  auto r = buffer->next();
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_EQ(r.status().message(), "no range of 'orders' within 30 ms: UNAVAILABLE: database down");
  const SequenceBufferStats s = stats();
  EXPECT_EQ(s.numbers_issued, 0u) << "never a made-up number";
  EXPECT_EQ(s.waits, 1u);
  EXPECT_EQ(s.wait_timeouts, 1u);
  EXPECT_EQ(s.ranges_fetched, 0u);
  EXPECT_EQ(s.last_error.to_string(), "UNAVAILABLE: database down");
  EXPECT_EQ(memory.get("orders")->next_value, 0);
}

TEST_F(SequenceBufferTest, RecoversWhenTheStoreComesBack) {
  faulty.set_failure(Status(Code::kUnavailable, "database down"));
  SequenceBufferOptions o = quick_options();
  o.wait_timeout = 1ms;
  open(o);
  ASSERT_TRUE(eventually([&] { return stats().store_failures >= 3; })) << "retried";
  EXPECT_FALSE(buffer->next().is_ok());
  faulty.set_failure(Status::ok());
  ASSERT_TRUE(fetched(1));
  EXPECT_EQ(next_ok(), 0);
  EXPECT_TRUE(stats().last_error.is_ok()) << "cleared by the success";
}

TEST_F(SequenceBufferTest, RetriesBackOffUpToTheMaximum) {
  faulty.set_failure(Status(Code::kUnavailable, "down"));
  SequenceBufferOptions o = quick_options();
  o.retry_backoff = 1ms;
  o.retry_backoff_max = 4ms;
  open(o);
  // Doubling from 1 ms would pass the maximum within a few tries; if it did
  // not stop at 4 ms, 40 tries would take minutes.
  ASSERT_TRUE(eventually([&] { return stats().store_failures >= 40; }, 60s));
}

TEST_F(SequenceBufferTest, ALostReplyLeavesAGapAndNoDuplicate) {
  faulty.lose_replies(1);
  open(quick_options());
  EXPECT_EQ(next_ok(), 10) << "[0, 10) was committed but never seen: a gap";
  std::set<std::int64_t> seen{10};
  faulty.lose_replies(2);
  std::int64_t last = 10;
  for (int i = 0; i < 60; ++i) {
    const std::int64_t n = next_ok();
    ASSERT_GT(n, last);
    ASSERT_TRUE(seen.insert(n).second) << n;
    ASSERT_GE(n, 10);
    last = n;
  }
  EXPECT_EQ(stats().store_failures, 3u);
  EXPECT_GE(memory.get("orders")->next_value, last + 1);
}

TEST_F(SequenceBufferTest, AnUnknownSequenceIsNotFoundForEveryCall) {
  open(quick_options(), "missing");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(buffer->next().status().code(), Code::kNotFound);
  std::vector<SequenceRange> out;
  EXPECT_EQ(buffer->next_n(5, out).code(), Code::kNotFound);
  EXPECT_EQ(buffer->try_next_n(1, out).status().code(), Code::kNotFound);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(faulty.calls(), 1u) << "a final answer is not retried";
  EXPECT_EQ(stats().last_error.code(), Code::kNotFound);
}

TEST_F(SequenceBufferTest, ASpentSequenceEndsWithOutOfRangeAfterItsLastNumber) {
  const std::int64_t start = kInt64Max - 25;
  ASSERT_TRUE(memory.create("last", start, 10).is_ok());
  open(quick_options(), "last");
  // [start, start+10) and [start+10, start+20) fit; the next 10 would pass
  // INT64_MAX. The numbers already buffered are still handed out.
  for (std::int64_t i = 0; i < 20; ++i) ASSERT_EQ(next_ok(), start + i);
  auto end = buffer->next();
  EXPECT_EQ(end.status().code(), Code::kOutOfRange) << end.status().to_string();
  EXPECT_EQ(buffer->next().status().code(), Code::kOutOfRange) << "the answer stands";
}

TEST_F(SequenceBufferTest, NextNSpansTheCurrentRangeAndTheNextAndMergesThem) {
  open(quick_options());
  for (int i = 0; i < 5; ++i) next_ok();
  std::vector<SequenceRange> out{{100, 101}};
  ASSERT_TRUE(buffer->next_n(8, out).is_ok());
  EXPECT_EQ(out, (std::vector<SequenceRange>{{100, 101}, {5, 13}}))
      << "appended, not merged with what out held";
  EXPECT_EQ(next_ok(), 13);
  EXPECT_EQ(stats().numbers_issued, 14u);
}

TEST_F(SequenceBufferTest, NextNLargerThanAStepAsksForARangeThatHoldsWhatItLacks) {
  open(quick_options());
  std::vector<SequenceRange> out;
  ASSERT_TRUE(buffer->next_n(35, out).is_ok());
  EXPECT_EQ(out, (std::vector<SequenceRange>{{0, 35}}));
  EXPECT_GE(next_ok(), 35) << "numbers after the batch follow it";
}

// Regression: a batch of 500 from a sequence of step 1 took 500 round trips
// (0.7 s on SQLite, 25 s at 50 ms each), one range at a time.
TEST_F(SequenceBufferTest, ABatchFromASmallStepCostsAFewRoundTripsNotOnePerStep) {
  ASSERT_TRUE(memory.create("tiny", 0, 1).is_ok());
  open_on(probe, quick_options(), "tiny");
  std::vector<SequenceRange> out;
  ASSERT_TRUE(buffer->next_n(500, out).is_ok());
  std::int64_t got = 0;
  for (const SequenceRange& r : out) got += r.size();
  EXPECT_EQ(got, 500);
  EXPECT_LE(stats().store_calls, 5u) << "one take for what the batch lacked, not 500";
  bool asked_big = false;
  for (std::int64_t size : probe.asked()) asked_big = asked_big || size >= 400;
  EXPECT_TRUE(asked_big) << "a take sized for the batch";
}

// A batch that gave up lacks nothing any more: the takes after it ask for
// the usual size, not for a range as large as the batch that left (which a
// restart would then lose whole).
TEST_F(SequenceBufferTest, ABatchThatGaveUpNoLongerSizesTheTakesAfterIt) {
  SequenceBufferOptions o = quick_options();
  o.wait_timeout = 20ms;
  open_on(probe, o);
  ASSERT_TRUE(fetched(1));
  faulty.set_failure(Status(Code::kUnavailable, "down"));
  for (std::int64_t want = 0; want < 10; ++want) ASSERT_EQ(next_ok(), want);
  std::vector<SequenceRange> out;
  EXPECT_EQ(buffer->next_n(500, out).code(), Code::kUnavailable);
  // Two more tries after the batch left: the second chose its size after it.
  const std::uint64_t calls = faulty.calls();
  ASSERT_TRUE(eventually([&] { return faulty.calls() >= calls + 2; }));
  faulty.set_failure(Status::ok());
  ASSERT_TRUE(fetched(2));
  EXPECT_EQ(stats().buffered, 10);
  EXPECT_EQ(probe.asked().back(), 0) << "the sequence's own step, as before the batch";
  EXPECT_EQ(next_ok(), 10);
}

TEST_F(SequenceBufferTest, NextNKeepsGapsBetweenRangesApart) {
  open(quick_options());
  ASSERT_TRUE(fetched(1));
  faulty.lose_replies(1);
  std::vector<SequenceRange> out;
  ASSERT_TRUE(buffer->next_n(15, out).is_ok());
  EXPECT_EQ(out, (std::vector<SequenceRange>{{0, 10}, {20, 25}}));
}

TEST_F(SequenceBufferTest, NextNIsAllOrNothing) {
  SequenceBufferOptions o = quick_options();
  o.wait_timeout = 20ms;
  open(o);
  ASSERT_TRUE(fetched(1));
  faulty.set_failure(Status(Code::kUnavailable, "down"));
  std::vector<SequenceRange> out{{100, 101}};
  const Status s = buffer->next_n(15, out);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.to_string();
  EXPECT_EQ(out, (std::vector<SequenceRange>{{100, 101}})) << "out is left as it was";
  EXPECT_EQ(stats().numbers_lost, 10u);
  EXPECT_EQ(stats().numbers_issued, 0u);
  faulty.set_failure(Status::ok());
  ASSERT_TRUE(fetched(2));
  EXPECT_EQ(next_ok(), 10) << "the numbers taken by the failed call are lost, not reissued";
}

TEST_F(SequenceBufferTest, NextNRefusesCountsOutOfBounds) {
  open(quick_options());
  std::vector<SequenceRange> out;
  EXPECT_EQ(buffer->next_n(0, out).code(), Code::kInvalidArgument);
  EXPECT_EQ(buffer->next_n(-3, out).code(), Code::kInvalidArgument);
  EXPECT_EQ(buffer->next_n(kMaxSequenceRange + 1, out).code(), Code::kInvalidArgument);
  EXPECT_EQ(buffer->try_next_n(0, out).status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(out.empty());
}

TEST_F(SequenceBufferTest, TryNextNNeverWaits) {
  faulty.set_stalled(true);
  SequenceBufferOptions o = quick_options();
  o.wait_timeout = std::chrono::hours(1);  // a wait would hang the test
  open(o);
  std::vector<SequenceRange> out;
  auto r = buffer->try_next_n(1, out);
  ASSERT_TRUE(r.is_ok());
  EXPECT_FALSE(r.value());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(stats().waits, 0u);
  faulty.set_stalled(false);
  ASSERT_TRUE(fetched(1));

  ASSERT_TRUE(buffer->try_next_n(8, out).value());  // 2 of 10 left: fetch
  EXPECT_EQ(out, (std::vector<SequenceRange>{{0, 8}}));
  ASSERT_TRUE(fetched(2));
  out.clear();
  EXPECT_FALSE(buffer->try_next_n(13, out).value()) << "12 buffered";
  EXPECT_TRUE(out.empty()) << "takes nothing when it cannot take all";
  EXPECT_EQ(stats().buffered, 12);
  ASSERT_TRUE(buffer->try_next_n(5, out).value());
  EXPECT_EQ(out, (std::vector<SequenceRange>{{8, 13}})) << "across both ranges, merged";
  EXPECT_EQ(stats().numbers_issued, 13u);
}

TEST_F(SequenceBufferTest, DestructionInterruptsTheRetryBackoff) {
  faulty.set_failure(Status(Code::kUnavailable, "down"));
  SequenceBufferOptions o = quick_options();
  o.retry_backoff = std::chrono::hours(1);
  o.retry_backoff_max = std::chrono::hours(1);
  open(o);
  ASSERT_TRUE(eventually([&] { return stats().store_failures == 1; }));
  buffer.reset();  // would hang for an hour if the backoff were not cut short
  EXPECT_EQ(faulty.calls(), 1u);
}

TEST_F(SequenceBufferTest, DestructionWaitsForATakeInFlight) {
  faulty.set_stalled(true);
  open(quick_options());
  ASSERT_TRUE(eventually([&] { return faulty.calls() == 1; }));
  std::atomic<bool> destroyed{false};
  std::thread closer([&] {
    buffer.reset();
    destroyed = true;
  });
  EXPECT_FALSE(destroyed.load()) << "the take is still held";
  faulty.set_stalled(false);
  closer.join();
  EXPECT_TRUE(destroyed.load());
  EXPECT_EQ(memory.get("orders")->next_value, 10) << "the range taken is a gap";
}

TEST_F(SequenceBufferTest, MeasuresStoreLatencyOnTheInjectedClock) {
  probe.set_latency(clock, 30ms);
  open_on(probe, quick_options());
  ASSERT_TRUE(fetched(1));
  SequenceBufferStats s = stats();
  EXPECT_EQ(s.store_calls, 1u);
  EXPECT_EQ(s.store_latency[5], 1u) << "30 ms: the bucket of at most 50 ms";
  EXPECT_EQ(s.store_latency_total, 30ms);

  probe.set_latency(clock, 3s);
  for (int i = 0; i < 8; ++i) next_ok();
  ASSERT_TRUE(fetched(2));
  s = stats();
  EXPECT_EQ(s.store_latency.back(), 1u) << "past the last bound";
  EXPECT_EQ(s.store_latency_total, 3030ms);

  probe.set_latency(clock, 1ms);
  for (int i = 0; i < 10; ++i) next_ok();
  ASSERT_TRUE(fetched(3));
  EXPECT_EQ(stats().store_latency[0], 1u) << "a bound is inclusive";
  std::uint64_t total = 0;
  for (std::uint64_t n : stats().store_latency) total += n;
  EXPECT_EQ(total, 3u);
}

// --- adaptive step ---

class AdaptiveStepTest : public SequenceBufferTest {
 protected:
  SequenceBufferOptions adaptive(std::int64_t step) {
    SequenceBufferOptions o = quick_options();
    o.adaptive = true;
    o.step = step;
    o.min_step = 100;
    o.max_step = 800;
    o.target_range_life = 60s;
    return o;
  }

  // Uses up `ranges` ranges, each lasting `life` on the simulated clock:
  // takes all but the threshold's share, lets the standby arrive, moves the
  // clock, then takes the rest. Each request's size is thus decided before
  // the range after it ends.
  void use_ranges(int ranges, Duration life) {
    for (int i = 0; i < ranges; ++i) {
      const std::uint64_t k = stats().ranges_fetched;
      const std::int64_t size = stats().buffered;  // the current range, whole
      const auto rest = static_cast<std::int64_t>(std::ceil(0.2 * static_cast<double>(size)));
      ASSERT_TRUE(take_now(size - rest));
      ASSERT_TRUE(fetched(k + 1));
      clock.advance(life);
      ASSERT_TRUE(take_now(rest));
    }
  }

  bool take_now(std::int64_t count) {
    std::vector<SequenceRange> out;
    auto r = buffer->try_next_n(count, out);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r.is_ok() && r.value();
  }
};

TEST_F(AdaptiveStepTest, GrowsWhenRangesAreUsedQuicklyUpToMaxStep) {
  open_on(probe, adaptive(100));
  ASSERT_TRUE(fetched(1));
  use_ranges(5, 1s);
  EXPECT_EQ(probe.asked(), (std::vector<std::int64_t>{100, 100, 200, 400, 800, 800}));
  EXPECT_EQ(stats().step, 800);
}

TEST_F(AdaptiveStepTest, ShrinksWhenRangesLastLongDownToMinStep) {
  open_on(probe, adaptive(800));
  ASSERT_TRUE(fetched(1));
  use_ranges(5, 3min);
  EXPECT_EQ(probe.asked(), (std::vector<std::int64_t>{800, 800, 400, 200, 100, 100}));
  EXPECT_EQ(stats().step, 100);
}

TEST_F(AdaptiveStepTest, KeepsTheSizeWhileRangesLastAboutTheTarget) {
  open_on(probe, adaptive(200));
  ASSERT_TRUE(fetched(1));
  use_ranges(2, 30s);   // exactly half the target: not "less than"
  use_ranges(2, 120s);  // exactly twice: not "more than"
  EXPECT_EQ(probe.asked(), (std::vector<std::int64_t>{200, 200, 200, 200, 200}));
}

TEST_F(AdaptiveStepTest, TheFirstRequestIsClampedIntoTheBounds) {
  open_on(probe, adaptive(5));
  ASSERT_TRUE(fetched(1));
  EXPECT_EQ(probe.asked().front(), 100);
}

TEST_F(AdaptiveStepTest, WithoutAStepStartsFromTheSequenceStepClamped) {
  ASSERT_TRUE(memory.create("big", 0, 5000).is_ok());
  open_on(probe, adaptive(0), "big");
  ASSERT_TRUE(fetched(1));
  EXPECT_EQ(probe.asked().front(), 800) << "the sequence's 5000, clamped to max_step";
  EXPECT_EQ(stats().step, 800);
}

// --- options ---

TEST(SequenceBufferOptionsTest, DefaultsAreValid) {
  EXPECT_TRUE(validate(SequenceBufferOptions{}).is_ok());
}

TEST(SequenceBufferOptionsTest, NamesEachFieldOutOfBounds) {
  struct Case {
    std::string field;
    std::function<void(SequenceBufferOptions&)> spoil;
  };
  const Case cases[] = {
      {"step", [](auto& o) { o.step = -1; }},
      {"step", [](auto& o) { o.step = kMaxSequenceRange + 1; }},
      {"refill_at", [](auto& o) { o.refill_at = 0; }},
      {"refill_at", [](auto& o) { o.refill_at = 1; }},
      {"refill_at", [](auto& o) { o.refill_at = -0.5; }},
      {"refill_at", [](auto& o) { o.refill_at = std::nan(""); }},
      {"wait_timeout", [](auto& o) { o.wait_timeout = Duration::zero(); }},
      {"wait_timeout", [](auto& o) { o.wait_timeout = -1ms; }},
      {"retry_backoff", [](auto& o) { o.retry_backoff = Duration::zero(); }},
      {"retry_backoff_max", [](auto& o) { o.retry_backoff_max = 10ms; }},
      {"min_step", [](auto& o) { o.min_step = 0; }},
      {"min_step", [](auto& o) { o.min_step = kMaxSequenceRange + 1; }},
      {"max_step", [](auto& o) { o.max_step = 50; }},
      {"max_step", [](auto& o) { o.max_step = kMaxSequenceRange + 1; }},
      {"target_range_life", [](auto& o) { o.target_range_life = Duration::zero(); }},
  };
  for (const Case& c : cases) {
    SequenceBufferOptions o;
    c.spoil(o);
    const Status s = validate(o);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << c.field;
    EXPECT_NE(s.message().find("SequenceBufferOptions." + c.field + " "), std::string::npos)
        << s.to_string();
  }
}

TEST(SequenceBufferOpenTest, RefusesBadOptionsAndBadNamesWithoutCallingTheStore) {
  SimulatedClock clock{wall_from_unix_ms(1'780'000'000'000)};
  MemoryTicketStore store{clock};
  SequenceBufferOptions bad;
  bad.refill_at = 2;
  EXPECT_EQ(SequenceBuffer::open(store, "orders", clock, bad).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(SequenceBuffer::open(store, "no spaces", clock).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(store.takes(), 0u);
}

TEST(SequenceBufferStats, PlusEqualsAddsTheCountersAndKeepsTheGauges) {
  SequenceBufferStats sum;
  sum.numbers_issued = 1;
  sum.store_latency[2] = 1;
  sum.store_latency_total = 5ms;
  sum.step = 7;
  sum.buffered = 3;
  SequenceBufferStats more;
  more.numbers_issued = 10;
  more.numbers_lost = 2;
  more.ranges_fetched = 3;
  more.store_calls = 4;
  more.store_failures = 1;
  more.waits = 5;
  more.wait_timeouts = 6;
  more.wait_time = 20ms;
  more.store_latency[2] = 2;
  more.store_latency.back() = 9;
  more.store_latency_total = 15ms;
  more.step = 100;
  more.buffered = 50;
  more.last_error = Status(Code::kUnavailable, "down");
  sum += more;
  EXPECT_EQ(sum.numbers_issued, 11u);
  EXPECT_EQ(sum.numbers_lost, 2u);
  EXPECT_EQ(sum.ranges_fetched, 3u);
  EXPECT_EQ(sum.store_calls, 4u);
  EXPECT_EQ(sum.store_failures, 1u);
  EXPECT_EQ(sum.waits, 5u);
  EXPECT_EQ(sum.wait_timeouts, 6u);
  EXPECT_EQ(sum.wait_time, 20ms);
  EXPECT_EQ(sum.store_latency[2], 3u);
  EXPECT_EQ(sum.store_latency.back(), 9u);
  EXPECT_EQ(sum.store_latency[0], 0u);
  EXPECT_EQ(sum.store_latency_total, 20ms);
  EXPECT_EQ(sum.step, 7);
  EXPECT_EQ(sum.buffered, 3);
  EXPECT_TRUE(sum.last_error.is_ok());
}

}  // namespace
}  // namespace snowid
