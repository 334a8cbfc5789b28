// Many threads on one generator. Built and run under ThreadSanitizer in CI.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "generator_test_support.h"
#include "mutex.h"
#include "snowid/generator.h"
#include "snowid/testing/memory_fence_store.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid {

using internal::CondVar;
using internal::Mutex;
using internal::MutexLock;
namespace {

using namespace std::chrono_literals;
using test_support::make_generator;
using test_support::small_sequence_layout;
using test_support::test_start;
using testing::MemoryFenceStore;
using testing::SimulatedClock;

void expect_all_distinct(std::vector<std::uint64_t> ids) {
  const std::size_t n = ids.size();
  std::sort(ids.begin(), ids.end());
  const auto dup = std::adjacent_find(ids.begin(), ids.end());
  EXPECT_EQ(dup, ids.end()) << "duplicate id " << (dup == ids.end() ? 0 : *dup);
  EXPECT_EQ(std::unique(ids.begin(), ids.end()) - ids.begin(), static_cast<std::ptrdiff_t>(n));
}

// Real clock, more threads than cores, singles and batches mixed.
TEST(GeneratorConcurrency, ThreadsOnTheRealClockNeverShareAnIdAndEachSeesIncreasingIds) {
  GeneratorOptions o;
  o.worker = {1, 42};
  auto g = make_generator(system_clock(), o);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 60000;
  std::vector<std::vector<std::uint64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto& mine = got[static_cast<std::size_t>(t)];
      mine.reserve(kPerThread + 64);
      std::uint32_t k = 0;
      while (mine.size() < kPerThread) {
        if (++k % 4 == 0) {
          const IdBatch b = g->reserve(1 + k % 50);
          ASSERT_TRUE(b.ok()) << code_name(b.code);
          for (std::uint32_t i = 0; i < b.count; ++i) mine.push_back(b.first + i);
        } else {
          const IdResult r = g->next();
          ASSERT_TRUE(r.ok()) << code_name(r.code);
          mine.push_back(r.id);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<std::uint64_t> all;
  for (const auto& mine : got) {
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
    EXPECT_EQ(std::adjacent_find(mine.begin(), mine.end()), mine.end());
    all.insert(all.end(), mine.begin(), mine.end());
  }
  expect_all_distinct(std::move(all));
  EXPECT_TRUE(g->healthy());
}

// A clock whose first read on a chosen thread blocks until released, to
// reproduce a thread preempted between reading the clock and its
// compare-and-swap while other threads move on.
class GatedClock final : public Clock {
 public:
  explicit GatedClock(SimulatedClock& inner) : inner_(inner) {}
  WallTime wall_now() const noexcept override {
    const WallTime t = inner_.wall_now();
    if (std::this_thread::get_id() == victim_.load() && !gated_once_.exchange(true)) {
      MutexLock lock(mu_);
      reading_taken_ = true;
      cv_.notify_all();
      while (!released_) cv_.wait(mu_);
    }
    return t;
  }
  MonoTime mono_now() const noexcept override { return inner_.mono_now(); }
  void pause(Duration hint) const noexcept override { inner_.pause(hint); }

  void set_victim(std::thread::id id) { victim_.store(id); }
  void wait_for_reading() {
    MutexLock lock(mu_);
    while (!reading_taken_) cv_.wait(mu_);
  }
  void release() {
    MutexLock lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  SimulatedClock& inner_;
  std::atomic<std::thread::id> victim_{};
  mutable std::atomic<bool> gated_once_{false};
  mutable Mutex mu_;
  mutable CondVar cv_;
  mutable bool reading_taken_ GUARDED_BY(mu_) = false;
  bool released_ GUARDED_BY(mu_) = false;
};

TEST(GeneratorConcurrency, ThreadPreemptedBetweenClockReadAndSwapIsNotMistakenForABackwardStep) {
  SimulatedClock sim(test_start());
  GatedClock clock(sim);
  GeneratorOptions o;
  o.random_start_bound = 0;
  auto g = make_generator(clock, o);
  ASSERT_TRUE(g->try_next().ok());

  IdResult victim_result;
  std::atomic<bool> go{false};
  std::thread victim([&] {
    while (!go.load()) std::this_thread::yield();
    victim_result = g->try_next();
  });
  clock.set_victim(victim.get_id());
  go.store(true);
  clock.wait_for_reading();
  sim.advance(10s);  // the victim is descheduled for 10 s
  const IdResult other = g->try_next();
  ASSERT_TRUE(other.ok());
  clock.release();
  victim.join();
  EXPECT_TRUE(victim_result.ok()) << code_name(victim_result.code);
  EXPECT_TRUE(g->healthy()) << g->health().to_string();
  EXPECT_NE(victim_result.id, other.id);
}

// The clock is stepped forward, stalled and stepped back by a driver while
// worker threads issue. Checked: no duplicate, each thread's ids increase,
// and a refusal happens exactly where the policy says: whenever the clock is
// set more than the allowance behind an issued tick, and never when it is
// within the allowance of every tick that could have been issued.
struct DrivenRound {
  std::uint64_t seed;
  std::int64_t backward_ms;
  std::int64_t borrow_ms;
};

class DrivenClock : public ::testing::TestWithParam<DrivenRound> {};

TEST_P(DrivenClock, NoDuplicatesAndRefusalsExactlyWherePolicySays) {
  const DrivenRound round = GetParam();
  std::mt19937_64 rng(round.seed);
  const Layout layout = small_sequence_layout();
  SimulatedClock clock(test_start());
  GeneratorOptions o;
  o.layout = layout;
  o.worker = {0, 9};
  o.random_start_bound = 4;
  o.max_backward = std::chrono::milliseconds(round.backward_ms);
  o.max_borrow = std::chrono::milliseconds(round.borrow_ms);
  o.fence_store = std::make_shared<MemoryFenceStore>();
  auto g = make_generator(clock, o);
  const std::int64_t limit = round.backward_ms + round.borrow_ms;  // in ticks of 1 ms

  std::atomic<bool> stop{false};
  std::atomic<bool> refused{false};
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::int64_t> max_issued{-1};
  constexpr int kWorkers = 3;
  std::vector<std::vector<std::uint64_t>> got(kWorkers);
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      auto& mine = got[static_cast<std::size_t>(w)];
      std::uint32_t k = static_cast<std::uint32_t>(w);
      while (!stop.load(std::memory_order_acquire)) {
        IdBatch b;
        if (++k % 3 == 0) {
          b = g->try_reserve(1 + k % 5);
        } else {
          b = test_support::as_batch(g->try_next());
        }
        if (b.ok()) {
          for (std::uint32_t i = 0; i < b.count; ++i) mine.push_back(b.first + i);
          const std::int64_t tick = layout.decode(b.first).value().ticks;
          std::int64_t seen = max_issued.load();
          while (tick > seen && !max_issued.compare_exchange_weak(seen, tick)) {
          }
        } else if (b.code == Code::kClockMovedBack || b.code == Code::kUnhealthy) {
          refused.store(true);
        } else {
          ASSERT_TRUE(is_retryable(b.code)) << code_name(b.code);
          std::this_thread::yield();
        }
        calls.fetch_add(1, std::memory_order_release);
        if (refused.load()) return;
      }
    });
  }
  // Waits until the workers have made `n` more calls (so they have read the
  // clock as it is now), bounded in time so a stuck round fails, not hangs.
  auto let_workers_call = [&](std::uint64_t n) {
    const std::uint64_t target = calls.load() + n;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (calls.load() < target && !refused.load()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "workers stopped calling";
      std::this_thread::yield();
    }
  };

  std::int64_t max_set = layout.ticks_at(clock.wall_now());
  int steps_back = 0, required_refusals = 0;
  for (int step = 0; step < 400 && !refused.load(); ++step) {
    const int action = static_cast<int>(rng() % 10);
    if (action < 6) {
      clock.advance(std::chrono::microseconds(rng() % 2500));
    } else if (action < 7) {
      clock.advance_monotonic(1ms);  // stall
    } else {
      // Mostly steps the policy waits out; now and then one it must refuse.
      const bool large = step >= 50 && rng() % 40 == 0;
      const auto back = std::chrono::microseconds(large ? (limit + 1) * 1000 + rng() % 2000
                                                        : rng() % (limit * 1000 + 1));
      const std::int64_t observed = max_issued.load();
      const std::int64_t possible = std::max(max_set + round.borrow_ms, observed);
      WallTime target = clock.wall_now() - back;
      if (!large) {
        // Steps add up: keep a small one within the allowance of every
        // tick that may have been issued.
        target = std::max(target, layout.time_of_ticks(possible - limit));
        if (target >= clock.wall_now()) continue;
      }
      const std::int64_t target_tick = layout.ticks_at(target);
      const bool must_refuse = observed - target_tick > limit;
      const bool may_refuse = possible - target_tick > limit;
      if (may_refuse && !must_refuse) continue;  // the policy's answer depends on timing
      clock.set_wall(target);
      ++steps_back;
      let_workers_call(30);
      if (must_refuse) {
        ++required_refusals;
        EXPECT_TRUE(refused.load()) << "step back by " << observed - target_tick
                                    << " ticks was not refused, limit " << limit;
        break;
      }
      EXPECT_FALSE(refused.load()) << "refused a step within the allowance";
      continue;
    }
    max_set = std::max(max_set, layout.ticks_at(clock.wall_now()));
    let_workers_call(10);
    EXPECT_FALSE(refused.load()) << "refused without a step back";
  }
  stop.store(true);
  for (auto& th : workers) th.join();

  std::vector<std::uint64_t> all;
  for (const auto& mine : got) {
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end())) << "a thread saw ids go down";
    all.insert(all.end(), mine.begin(), mine.end());
  }
  EXPECT_FALSE(all.empty());
  expect_all_distinct(std::move(all));
  EXPECT_EQ(g->healthy(), !refused.load());
  RecordProperty("steps_back", steps_back);
  RecordProperty("required_refusals", required_refusals);
}

std::vector<DrivenRound> driven_rounds() {
  std::vector<DrivenRound> rounds;
  const std::int64_t backward[] = {0, 2, 5};
  const std::int64_t borrow[] = {0, 1};
  std::uint64_t seed = 1;
  for (std::int64_t b : backward) {
    for (std::int64_t br : borrow) {
      for (int i = 0; i < 8; ++i) rounds.push_back({seed++ * 7919, b, br});
    }
  }
  return rounds;
}

INSTANTIATE_TEST_SUITE_P(Seeds, DrivenClock, ::testing::ValuesIn(driven_rounds()),
                         [](const ::testing::TestParamInfo<DrivenRound>& param) {
                           return "seed" + std::to_string(param.param.seed) + "_back" +
                                  std::to_string(param.param.backward_ms) + "_borrow" +
                                  std::to_string(param.param.borrow_ms);
                         });

TEST(GeneratorConcurrency, HookRunsOnceWhenManyThreadsSeeTheClockGoBack) {
  SimulatedClock clock(test_start());
  std::atomic<int> hook_calls{0};
  GeneratorOptions o;
  o.on_unhealthy = [&](const Status&) { hook_calls.fetch_add(1); };
  auto g = make_generator(clock, o);
  ASSERT_TRUE(g->try_next().ok());
  clock.step_wall(-1s);
  std::atomic<int> moved_back{0}, unhealthy{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        const Code c = g->try_next().code;
        if (c == Code::kClockMovedBack) moved_back.fetch_add(1);
        if (c == Code::kUnhealthy) unhealthy.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(hook_calls.load(), 1);
  EXPECT_EQ(moved_back.load(), 1);
  EXPECT_EQ(unhealthy.load(), 399);
}

// close() racing with issuing threads must record a fence at or after every
// tick issued, and exactly the last one.
TEST(GeneratorConcurrency, CloseWhileThreadsIssueRecordsTheExactLastTick) {
  for (int round = 0; round < 20; ++round) {
    SimulatedClock clock(test_start());
    auto store = std::make_shared<MemoryFenceStore>();
    GeneratorOptions o;
    o.layout = small_sequence_layout();
    o.random_start_bound = 4;
    o.fence_store = store;
    auto g = make_generator(clock, o);
    std::atomic<bool> go{true};
    std::atomic<int> issued{0};
    std::vector<std::vector<std::uint64_t>> got(3);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&, t] {
        while (go.load()) {
          const IdResult r = g->try_next();
          if (r.ok()) {
            got[static_cast<std::size_t>(t)].push_back(r.id);
            issued.fetch_add(1);
          }
          if (r.code == Code::kFailedPrecondition) return;
        }
      });
    }
    std::thread ticker([&] {
      while (go.load()) {
        clock.advance(300us);
        std::this_thread::yield();
      }
    });
    // Close in the middle of issuing, however slowly the threads get going.
    const int target = issued.load() + 20 + 10 * (round % 5);
    while (issued.load() < target) std::this_thread::yield();
    ASSERT_TRUE(g->close().is_ok());
    go.store(false);
    for (auto& th : threads) th.join();
    ticker.join();
    std::int64_t max_tick = -1;
    for (const auto& mine : got) {
      for (std::uint64_t id : mine)
        max_tick = std::max(max_tick, o.layout.decode(id).value().ticks);
    }
    ASSERT_TRUE(store->stored().has_value());
    EXPECT_EQ(o.layout.ticks_at(*store->stored()), max_tick) << "round " << round;
  }
}

}  // namespace
}  // namespace snowid
