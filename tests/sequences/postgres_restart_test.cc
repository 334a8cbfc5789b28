// PostgreSQL restarted under load (a server of the test's own, so that no
// other test loses its database): four callers keep drawing at a steady
// pace from their buffers while the server is down, the fetches that fail
// meanwhile are retried, and once the server is back new ranges come in.
// No caller ever sees an error, and every number is distinct.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "number_checks.h"
#include "scenario_database.h"
#include "snowid/sequence_buffer.h"
#include "testing/postgres_server.h"

namespace snowid::sequence_scenarios {
namespace {

using namespace std::chrono_literals;
using sequences::testing::PostgresServer;
using Steady = std::chrono::steady_clock;

constexpr int kCallers = 4;
constexpr std::int64_t kStep = 20'000;
constexpr double kRate = 2000;  // numbers a second, per caller: a range lasts 10 s
// The refill is asked for with 10,000 numbers left: 5 s of them.
constexpr double kRefillAt = 0.5;

// One caller: a store and a buffer of its own, drawing at kRate until told
// to stop.
struct Caller {
  std::unique_ptr<TicketStore> store;
  std::unique_ptr<SequenceBuffer> buffer;
  std::vector<std::int64_t> numbers;
  std::atomic<std::int64_t> issued{0};
  std::vector<std::string> errors;  // each with what the buffers held then

  void run(const std::atomic<bool>& stop) {
    const Steady::time_point began = Steady::now();
    for (std::int64_t i = 0; !stop.load(); ++i) {
      std::this_thread::sleep_until(
          began + std::chrono::duration_cast<Steady::duration>(
                      std::chrono::duration<double>(static_cast<double>(i) / kRate)));
      Result<std::int64_t> n = buffer->next();
      if (!n.is_ok()) {
        errors.push_back(n.status().to_string() + " (buffered " +
                         std::to_string(buffer->stats().buffered) + ")");
        continue;
      }
      numbers.push_back(n.value());
      issued.store(static_cast<std::int64_t>(numbers.size()));
    }
  }
};

// Polls `done` every millisecond for up to `timeout`.
bool eventually(const std::function<bool()>& done, Steady::duration timeout) {
  const Steady::time_point deadline = Steady::now() + timeout;
  while (!done()) {
    if (Steady::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(PostgresRestartScenario, BuffersServeThroughARestartAndRefillAfterIt) {
  Result<std::unique_ptr<PostgresServer>> launched = PostgresServer::launch();
  ASSERT_TRUE(launched.is_ok()) << launched.status().to_string();
  PostgresServer& server = *launched.value();
  std::unique_ptr<ScenarioDatabase> db = database_at(server.conninfo());
  Result<std::unique_ptr<TicketStore>> store = db->open();
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  ASSERT_TRUE(store.value()->create("orders", 0, kStep).is_ok());

  std::vector<std::unique_ptr<Caller>> callers;
  for (int i = 0; i < kCallers; ++i) {
    auto c = std::make_unique<Caller>();
    Result<std::unique_ptr<TicketStore>> own = db->open();
    ASSERT_TRUE(own.is_ok()) << own.status().to_string();
    c->store = std::move(own.value());
    SequenceBufferOptions options;
    options.step = kStep;
    options.refill_at = kRefillAt;
    options.retry_backoff = 20ms;
    options.retry_backoff_max = 250ms;
    Result<std::unique_ptr<SequenceBuffer>> buffer =
        SequenceBuffer::open(*c->store, "orders", system_clock(), options);
    ASSERT_TRUE(buffer.is_ok()) << buffer.status().to_string();
    c->buffer = std::move(buffer.value());
    callers.push_back(std::move(c));
  }
  // Every first range in before anyone draws: no caller waits for it.
  ASSERT_TRUE(eventually(
      [&] {
        return std::all_of(callers.begin(), callers.end(),
                           [](const auto& c) { return c->buffer->stats().ranges_fetched == 1; });
      },
      10s));

  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (auto& c : callers) threads.emplace_back([&stop, c = c.get()] { c->run(stop); });
  // Stops the callers however the test ends.
  struct Joiner {
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
    ~Joiner() {
      stop = true;
      for (std::thread& t : threads) {
        if (t.joinable()) t.join();
      }
    }
  } joiner{stop, threads};

  // Down about a second before the refills are due, so that they fail.
  ASSERT_TRUE(eventually(
      [&] {
        return std::all_of(callers.begin(), callers.end(),
                           [](const auto& c) { return c->buffer->stats().buffered <= 12'000; });
      },
      30s));
  ASSERT_TRUE(server.stop().is_ok()) << server.log_tail();
  const Steady::time_point down = Steady::now();
  std::vector<std::int64_t> issued_at_down;
  for (auto& c : callers) issued_at_down.push_back(c->issued.load());

  // Stays down at least a second and until every buffer has failed a fetch.
  ASSERT_TRUE(eventually(
      [&] {
        return Steady::now() - down >= 1s &&
               std::all_of(callers.begin(), callers.end(),
                           [](const auto& c) { return c->buffer->stats().store_failures > 0; });
      },
      20s));
  std::vector<std::int64_t> issued_at_up;
  std::vector<std::uint64_t> ranges_at_up;
  std::int64_t least_buffered = kStep * 2;
  for (auto& c : callers) {
    issued_at_up.push_back(c->issued.load());
    const SequenceBufferStats s = c->buffer->stats();
    ranges_at_up.push_back(s.ranges_fetched);
    least_buffered = std::min(least_buffered, s.buffered);
  }
  const Steady::time_point start_asked = Steady::now();
  ASSERT_TRUE(server.start().is_ok()) << server.log_tail();
  const Steady::duration outage = Steady::now() - down;
  const Steady::duration start_took = Steady::now() - start_asked;

  // Once it is back, every buffer gets its next range.
  ASSERT_TRUE(eventually(
      [&] {
        for (std::size_t i = 0; i < callers.size(); ++i) {
          if (callers[i]->buffer->stats().ranges_fetched <= ranges_at_up[i]) return false;
        }
        return true;
      },
      20s));
  const Steady::duration recovered = Steady::now() - down;
  // And they go on drawing: half a second more.
  std::vector<std::int64_t> issued_after;
  for (auto& c : callers) issued_after.push_back(c->issued.load());
  ASSERT_TRUE(eventually(
      [&] {
        for (std::size_t i = 0; i < callers.size(); ++i) {
          if (callers[i]->issued.load() < issued_after[i] + 1000) return false;
        }
        return true;
      },
      20s));
  stop = true;
  for (std::thread& t : threads) t.join();

  std::int64_t during_outage = 0;
  std::uint64_t failures = 0;
  std::vector<std::int64_t> all;
  for (std::size_t i = 0; i < callers.size(); ++i) {
    Caller& c = *callers[i];
    EXPECT_TRUE(c.errors.empty()) << "caller " << i << ": " << c.errors.front();
    EXPECT_GT(issued_at_up[i], issued_at_down[i]) << "caller " << i << " drew nothing while down";
    during_outage += issued_at_up[i] - issued_at_down[i];
    const SequenceBufferStats s = c.buffer->stats();
    EXPECT_EQ(s.waits, 0u) << "caller " << i << " found its buffers dry";
    EXPECT_GT(s.store_failures, 0u);
    failures += s.store_failures;
    c.buffer.reset();  // its rest becomes a gap before the table is read
    all.insert(all.end(), c.numbers.begin(), c.numbers.end());
  }
  const std::int64_t handed_out = static_cast<std::int64_t>(all.size());
  const Repeats repeats = sort_and_find_repeats(all);
  EXPECT_EQ(repeats.count, 0u);
  Result<SequenceInfo> info = store.value()->get("orders");
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  ASSERT_FALSE(all.empty());
  EXPECT_LT(all.back(), info->next_value);

  auto secs = [](Steady::duration d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f s", std::chrono::duration<double>(d).count());
    return std::string(buf);
  };
  report_figure("restart.outage",
                secs(outage) + " down (start took " + secs(start_took) + "); " +
                    std::to_string(during_outage) + " numbers handed out meanwhile by " +
                    std::to_string(kCallers) + " callers; " + std::to_string(failures) +
                    " failed take() calls retried; the least any buffer held at restart: " +
                    std::to_string(least_buffered) + "; every buffer refilled " + secs(recovered) +
                    " after the stop");
  report_figure("restart.gaps", to_string(gap_figures(0, info->next_value, handed_out)));
}

}  // namespace
}  // namespace snowid::sequence_scenarios
