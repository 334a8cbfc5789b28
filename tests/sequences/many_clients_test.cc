// Eight clients draw 1,000,000 numbers from one sequence on a real database:
// as threads of this process (each with a store connection and a
// SequenceBuffer of its own) and as eight sequence_client processes. Every
// number is distinct and below the table's next_value; the figures are the
// share of the numbers the table gave out that were lost to gaps (what the
// buffers held when they went away) and the round trips it took.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client_process.h"
#include "number_checks.h"
#include "scenario_database.h"
#include "snowid/sequence_buffer.h"

namespace snowid::sequence_scenarios {
namespace {

using namespace std::chrono_literals;

constexpr int kClients = 8;
constexpr std::int64_t kTotal = 1'000'000;
constexpr std::int64_t kEach = kTotal / kClients;
constexpr std::int64_t kStep = 1000;
// Not 0, so that "nothing below the start" means something.
constexpr std::int64_t kStart = 5000;

std::string seconds_text(std::chrono::steady_clock::duration d) {
  return std::to_string(std::chrono::duration<double>(d).count()) + " s";
}

bool increasing(const std::vector<std::int64_t>& v) {
  return std::adjacent_find(v.begin(), v.end(),
                            [](std::int64_t a, std::int64_t b) { return b <= a; }) == v.end();
}

// All the clients' numbers: distinct, at least kStart and below the table's
// next_value. Reports the gap figures under `label`.
void check_and_report(TicketStore& store, std::vector<std::int64_t> all, const std::string& label) {
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kTotal));
  const Repeats repeats = sort_and_find_repeats(all);
  EXPECT_EQ(repeats.count, 0u) << "first repeated number: "
                               << (repeats.examples.empty() ? -1 : repeats.examples[0]);
  Result<SequenceInfo> info = store.get("orders");
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_GE(all.front(), kStart);
  EXPECT_LT(all.back(), info->next_value);
  const GapFigures gaps = gap_figures(kStart, info->next_value, kTotal);
  // Each buffer holds at most its current range and one more when it goes.
  EXPECT_LE(gaps.lost, kClients * 2 * kStep);
  report_figure(label + ".gaps", to_string(gaps));
}

TEST_P(SequenceScenario, EightThreadsDrawAMillionDistinctNumbers) {
  ASSERT_TRUE(store_->create("orders", kStart, kStep).is_ok());
  std::vector<std::vector<std::int64_t>> got(kClients);
  std::vector<SequenceBufferStats> stats(kClients);
  std::vector<std::string> problems(kClients);
  const auto began = std::chrono::steady_clock::now();
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kClients; ++t) {
      threads.emplace_back([&, t] {
        Result<std::unique_ptr<TicketStore>> store = db_->open();
        if (!store.is_ok()) {
          problems[t] = store.status().to_string();
          return;
        }
        SequenceBufferOptions options;
        options.step = kStep;
        options.refill_at = 0.2;
        // Eight writers queue on one row (or one SQLite file): far more
        // than enough, so that a slow moment of the machine is no error.
        options.wait_timeout = 10s;
        Result<std::unique_ptr<SequenceBuffer>> buffer =
            SequenceBuffer::open(*store.value(), "orders", system_clock(), options);
        if (!buffer.is_ok()) {
          problems[t] = buffer.status().to_string();
          return;
        }
        got[t].reserve(kEach);
        while (static_cast<std::int64_t>(got[t].size()) < kEach) {
          Result<std::int64_t> n = buffer.value()->next();
          if (!n.is_ok()) {
            problems[t] = n.status().to_string();
            return;
          }
          got[t].push_back(n.value());
        }
        // Each thread stops at the end of a range (ranges of kStep from
        // kStart): the next one is in flight or about to be. Once it is in,
        // the buffer is idle and its stats count every range the table gave it.
        SequenceBuffer& b = *buffer.value();
        const auto deadline = std::chrono::steady_clock::now() + 30s;
        for (;;) {
          stats[t] = b.stats();
          if (stats[t].buffered > 0 &&
              stats[t].store_calls == stats[t].ranges_fetched + stats[t].store_failures) {
            break;
          }
          if (std::chrono::steady_clock::now() > deadline) {
            problems[t] = "the buffer never settled";
            return;
          }
          std::this_thread::sleep_for(1ms);
        }
        // The buffer goes before its store; what it holds becomes a gap.
      });
    }
    for (std::thread& t : threads) t.join();
  }
  const auto took = std::chrono::steady_clock::now() - began;

  std::vector<std::int64_t> all;
  all.reserve(kTotal);
  std::uint64_t store_calls = 0, ranges = 0, failures = 0, waits = 0;
  for (int t = 0; t < kClients; ++t) {
    ASSERT_EQ(problems[t], "") << "thread " << t;
    EXPECT_TRUE(increasing(got[t])) << "thread " << t << ": one buffer's numbers increase";
    all.insert(all.end(), got[t].begin(), got[t].end());
    store_calls += stats[t].store_calls;
    ranges += stats[t].ranges_fetched;
    failures += stats[t].store_failures;
    waits += stats[t].waits;
  }
  EXPECT_EQ(failures, 0u);
  check_and_report(*store_, std::move(all), "threads");
  // Every number the table gave out went to one of the buffers.
  Result<SequenceInfo> info = store_->get("orders");
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->next_value - kStart, static_cast<std::int64_t>(ranges) * kStep);
  report_figure("threads.round_trips",
                std::to_string(store_calls) + " take() calls for " + std::to_string(kTotal) +
                    " numbers; callers found both buffers dry " + std::to_string(waits) + " times");
  report_figure("threads.elapsed", seconds_text(took));
}

TEST_P(SequenceScenario, EightProcessesDrawAMillionDistinctNumbers) {
  ASSERT_TRUE(store_->create("orders", kStart, kStep).is_ok());
  const auto began = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<ClientProcess>> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.push_back(std::make_unique<ClientProcess>(
        SNOWID_SEQUENCE_CLIENT_PATH,
        std::vector<std::string>{"--store", db_->url(), "--sequence", "orders", "--count",
                                 std::to_string(kEach), "--step", std::to_string(kStep), "--refill",
                                 "0.2", "--wait-timeout-ms", "10000", "--flush", "4096"}));
    ASSERT_EQ(clients.back()->start_error(), "");
  }
  std::vector<std::int64_t> all;
  all.reserve(kTotal);
  std::int64_t store_calls = 0, waits = 0;
  for (int c = 0; c < kClients; ++c) {
    ClientProcess& client = *clients[c];
    const std::optional<int> code = client.wait_exit(120s);
    ASSERT_EQ(code, std::optional<int>(0)) << "client " << c << ": " << client.err_text();
    EXPECT_TRUE(client.bad_lines().empty()) << client.bad_lines().front();
    std::vector<std::int64_t> mine = client.numbers();
    EXPECT_EQ(static_cast<std::int64_t>(mine.size()), kEach) << "client " << c;
    EXPECT_TRUE(increasing(mine)) << "client " << c;
    const std::optional<nlohmann::json> summary = client.summary();
    ASSERT_TRUE(summary.has_value()) << client.err_text();
    EXPECT_EQ(summary->value("issued", -1), kEach) << summary->dump();
    EXPECT_EQ(summary->value("written", -1), kEach) << summary->dump();
    EXPECT_EQ(summary->value("store_failures", -1), 0) << summary->dump();
    store_calls += summary->value("store_calls", 0);
    waits += summary->value("waits", 0);
    all.insert(all.end(), mine.begin(), mine.end());
  }
  const auto took = std::chrono::steady_clock::now() - began;
  check_and_report(*store_, std::move(all), "processes");
  report_figure("processes.round_trips",
                std::to_string(store_calls) + " take() calls for " + std::to_string(kTotal) +
                    " numbers; callers found both buffers dry " + std::to_string(waits) + " times");
  report_figure("processes.elapsed", seconds_text(took));
}

}  // namespace
}  // namespace snowid::sequence_scenarios
