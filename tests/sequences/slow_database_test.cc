// 50 ms of database latency, injected inside PostgreSQL: a trigger on the
// ticket table sleeps in every take(). Callers who draw no faster than a
// range's refill share lasts never find both buffers dry, so none of them
// waits for the database; callers who draw as fast as they can do wait,
// which shows that the double buffer is what spares the first ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "number_checks.h"
#include "postgres_database.h"
#include "scenario_database.h"
#include "snowid/sequence_buffer.h"

namespace snowid::sequence_scenarios {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

constexpr auto kLatency = 50ms;
constexpr std::int64_t kStep = 1000;

std::string ms_text(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", std::chrono::duration<double, std::milli>(d).count());
  return buf;
}

class SlowDatabaseScenario : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> schema = fresh_postgres_schema();
    ASSERT_TRUE(schema.is_ok()) << schema.status().to_string();
    db_ = database_at(schema.value());
    Result<std::unique_ptr<TicketStore>> store = db_->open();
    ASSERT_TRUE(store.is_ok()) << store.status().to_string();
    store_ = std::move(store.value());
    ASSERT_TRUE(store_->create("slow", 0, kStep).is_ok());
    // Every UPDATE of the ticket table, so every take(), sleeps first.
    Result<std::string> trigger = run_sql(schema.value(), R"sql(
      CREATE FUNCTION snowid_test_slow_take() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_sleep(0.05);
        RETURN NEW;
      END $$;
      CREATE TRIGGER snowid_test_slow_take BEFORE UPDATE ON snowid_sequences
        FOR EACH ROW EXECUTE FUNCTION snowid_test_slow_take();
    )sql");
    ASSERT_TRUE(trigger.is_ok()) << trigger.status().to_string();
    const Steady::time_point sent = Steady::now();
    Result<SequenceRange> probe = store_->take("slow", 1);
    ASSERT_TRUE(probe.is_ok()) << probe.status().to_string();
    ASSERT_GE(Steady::now() - sent, kLatency) << "the trigger did not slow take() down";
  }

  // A buffer over a store of its own (step 1000, refill at 20%: the next
  // range has 200 numbers' time to come), once its first range is in, so
  // that no caller waits for that one.
  std::unique_ptr<SequenceBuffer> primed_buffer() {
    Result<std::unique_ptr<TicketStore>> store = db_->open();
    EXPECT_TRUE(store.is_ok()) << store.status().to_string();
    if (!store.is_ok()) return nullptr;
    buffer_store_ = std::move(store.value());
    SequenceBufferOptions options;
    options.step = kStep;
    options.refill_at = 0.2;
    Result<std::unique_ptr<SequenceBuffer>> buffer =
        SequenceBuffer::open(*buffer_store_, "slow", system_clock(), options);
    EXPECT_TRUE(buffer.is_ok()) << buffer.status().to_string();
    if (!buffer.is_ok()) return nullptr;
    const Steady::time_point deadline = Steady::now() + 10s;
    while (buffer.value()->stats().ranges_fetched == 0 && Steady::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(buffer.value()->stats().ranges_fetched, 1u);
    return std::move(buffer.value());
  }

  // Mean take() latency, and no take() faster than the injected latency
  // could be (the histogram's buckets up to 25 ms are empty).
  static Duration checked_store_latency(const SequenceBufferStats& s) {
    for (std::size_t i = 0; i < kStoreLatencyBoundsMs.size() && kStoreLatencyBoundsMs[i] < 50;
         ++i) {
      EXPECT_EQ(s.store_latency[i], 0u) << "a take() within " << kStoreLatencyBoundsMs[i] << " ms";
    }
    // Over the calls that returned (the histogram's count): store_calls
    // also counts one still in flight.
    std::int64_t returned = 0;
    for (const std::uint64_t n : s.store_latency) returned += static_cast<std::int64_t>(n);
    return returned == 0 ? Duration::zero() : s.store_latency_total / returned;
  }

  std::unique_ptr<ScenarioDatabase> db_;
  std::unique_ptr<TicketStore> store_;
  std::unique_ptr<TicketStore> buffer_store_;
};

// What one caller thread saw.
struct Caller {
  std::vector<std::int64_t> numbers;
  Duration worst = Duration::zero();
  std::string error;
};

// Draws `count` numbers, timing each next(); with a `pause`, sleeps that
// long after each (never catching up after a late wake: a burst is not the
// pace this test promises to keep).
void draw(SequenceBuffer& buffer, std::int64_t count, Duration pause, Caller& c) {
  for (std::int64_t i = 0; i < count; ++i) {
    if (i > 0 && pause > Duration::zero()) std::this_thread::sleep_for(pause);
    const Steady::time_point asked = Steady::now();
    Result<std::int64_t> n = buffer.next();
    c.worst = std::max<Duration>(c.worst, Steady::now() - asked);
    if (!n.is_ok()) {
      c.error = n.status().to_string();
      return;
    }
    c.numbers.push_back(n.value());
  }
}

std::vector<std::int64_t> all_distinct(const std::vector<Caller>& callers) {
  std::vector<std::int64_t> all;
  for (const Caller& c : callers) all.insert(all.end(), c.numbers.begin(), c.numbers.end());
  const Repeats repeats = sort_and_find_repeats(all);
  EXPECT_EQ(repeats.count, 0u);
  return all;
}

TEST_F(SlowDatabaseScenario, PacedCallersNeverWaitForTheDatabase) {
  std::unique_ptr<SequenceBuffer> buffer = primed_buffer();
  ASSERT_NE(buffer, nullptr);
  // Four callers at no more than 50 numbers a second each: 200/s, so the
  // 200 numbers left at a refill last a second, twenty times the latency
  // (a loaded 2-core machine has been seen to stretch one take() to 3 s at
  // ten times). 2,000 numbers: two refills under the latency.
  constexpr int kCallers = 4;
  constexpr std::int64_t kEach = 500;
  std::vector<Caller> callers(kCallers);
  {
    std::vector<std::thread> threads;
    for (Caller& c : callers) threads.emplace_back([&] { draw(*buffer, kEach, 20ms, c); });
    for (std::thread& t : threads) t.join();
  }
  Duration worst = Duration::zero();
  for (const Caller& c : callers) {
    EXPECT_EQ(c.error, "");
    EXPECT_EQ(c.numbers.size(), static_cast<std::size_t>(kEach));
    worst = std::max(worst, c.worst);
  }
  all_distinct(callers);
  const SequenceBufferStats s = buffer->stats();
  EXPECT_EQ(s.waits, 0u) << "a caller found both buffers dry";
  EXPECT_EQ(s.wait_timeouts, 0u);
  EXPECT_GE(s.ranges_fetched, 3u) << "the refills happened under the latency";
  EXPECT_EQ(s.store_failures, 0u);
  const Duration store_latency = checked_store_latency(s);
  EXPECT_GE(store_latency, kLatency);
  report_figure("latency.paced", std::to_string(kCallers * kEach) + " numbers at <= 200/s, " +
                                     std::to_string(s.ranges_fetched) + " ranges in " +
                                     std::to_string(s.store_calls) + " take() calls; mean take() " +
                                     ms_text(store_latency) + "; worst next() " + ms_text(worst) +
                                     "; waits " + std::to_string(s.waits));
}

TEST_F(SlowDatabaseScenario, UnpacedCallersDoWaitForTheDatabase) {
  std::unique_ptr<SequenceBuffer> buffer = primed_buffer();
  ASSERT_NE(buffer, nullptr);
  // As fast as it can: 200 numbers take microseconds, a range 50 ms.
  std::vector<Caller> callers(1);
  draw(*buffer, 3 * kStep, Duration::zero(), callers[0]);
  EXPECT_EQ(callers[0].error, "");
  all_distinct(callers);
  const SequenceBufferStats s = buffer->stats();
  EXPECT_GT(s.waits, 0u);
  EXPECT_GT(s.wait_time, Duration::zero());
  const Duration store_latency = checked_store_latency(s);
  EXPECT_GE(store_latency, kLatency);
  report_figure("latency.unpaced",
                std::to_string(3 * kStep) + " numbers unpaced, " +
                    std::to_string(s.ranges_fetched) + " ranges; mean take() " +
                    ms_text(store_latency) + "; worst next() " + ms_text(callers[0].worst) +
                    "; waits " + std::to_string(s.waits) + " totalling " + ms_text(s.wait_time));
}

}  // namespace
}  // namespace snowid::sequence_scenarios
