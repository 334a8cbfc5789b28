// The persisted time fence: restarts into an earlier clock never reuse time.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <set>
#include <string>

#include "generator_test_support.h"
#include "snowid/fence.h"
#include "snowid/generator.h"
#include "snowid/testing/memory_fence_store.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid {
namespace {

using namespace std::chrono_literals;
using test_support::make_generator;
using test_support::small_sequence_layout;
using test_support::test_start;
using test_support::ticks_of;
using testing::MemoryFenceStore;
using testing::SimulatedClock;

GeneratorOptions fenced(std::shared_ptr<FenceStore> store) {
  GeneratorOptions o;
  o.layout = small_sequence_layout();
  o.worker = {0, 5};
  o.random_start_bound = 0;
  o.fence_store = std::move(store);
  return o;
}

TEST(GeneratorFence, FirstIdStoresAFenceOneWindowAheadAndLaterIdsInsideItStoreNothing) {
  SimulatedClock clock(test_start());
  auto store = std::make_shared<MemoryFenceStore>();
  auto g = make_generator(clock, fenced(store));
  const IdResult first = g->try_next();
  ASSERT_TRUE(first.ok());
  const std::int64_t tick = ticks_of(g->layout(), first.id);
  ASSERT_TRUE(store->stored().has_value());
  EXPECT_EQ(g->layout().ticks_at(*store->stored()), tick + 1000);
  EXPECT_EQ(store->stores(), 1u);

  for (int i = 0; i < 999; ++i) {
    clock.advance(1ms);
    ASSERT_TRUE(g->try_next().ok());
  }
  EXPECT_EQ(store->stores(), 1u) << "no fsync per id";
  clock.advance(1ms);
  ASSERT_TRUE(g->try_next().ok());  // tick + 1000: still covered
  EXPECT_EQ(store->stores(), 1u);
  clock.advance(1ms);
  ASSERT_TRUE(g->try_next().ok());  // tick + 1001: beyond the fence
  EXPECT_EQ(store->stores(), 2u);
  EXPECT_EQ(g->layout().ticks_at(*store->stored()), tick + 1001 + 1000);
  EXPECT_EQ(g->stats().fence_writes, 2u);
}

TEST(GeneratorFence, FailingFenceStoreRefusesRetryablyAndIssuesNothingBeyondIt) {
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  auto store = std::make_shared<MemoryFenceStore>();
  store->set_fail_stores(true);
  auto g = make_generator(clock, fenced(store));
  const IdResult r = g->next();
  EXPECT_EQ(r.code, Code::kUnavailable);
  EXPECT_TRUE(is_retryable(r.code));
  EXPECT_EQ(g->stats().fence_write_failures, 1u) << "next() must not hammer a failing disk";
  EXPECT_EQ(g->try_reserve(10).code, Code::kUnavailable);
  EXPECT_TRUE(g->healthy());

  store->set_fail_stores(false);
  EXPECT_TRUE(g->next().ok());
}

TEST(GeneratorFence, UnreadableFenceRefusesToStart) {
  SimulatedClock clock(test_start());
  auto store = std::make_shared<MemoryFenceStore>();
  store->set_corrupt(true);
  auto g = Generator::create(clock, fenced(store));
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().code(), Code::kDataLoss);
}

TEST(GeneratorFence, RestartBehindTheFenceWaitsUntilTheClockPassesIt) {
  SimulatedClock clock(test_start());
  auto store = std::make_shared<MemoryFenceStore>();
  std::uint64_t last_id = 0;
  {
    auto g = make_generator(clock, fenced(store));
    for (int i = 0; i < 10; ++i) last_id = g->try_next().id;
    // A crash: no close(), so only the window-ahead fence is on record.
  }
  const std::int64_t fence_tick = small_sequence_layout().ticks_at(*store->stored());
  clock.advance(200ms);
  auto g = make_generator(clock, fenced(store));
  const IdResult waiting = g->try_next();
  EXPECT_EQ(waiting.code, Code::kClockBehind);
  EXPECT_TRUE(g->healthy()) << "a restart inside the window is expected, not a fault";

  clock.set_wall(small_sequence_layout().time_of_ticks(fence_tick));
  EXPECT_EQ(g->try_next().code, Code::kSequenceExhausted)
      << "the fence tick itself may have been used: it counts as used up";
  clock.advance(1ms);
  const IdResult r = g->try_next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_GT(ticks_of(g->layout(), r.id), fence_tick);
  EXPECT_GT(r.id, last_id);
}

TEST(GeneratorFence, NextWaitsThroughARestartWindowWhenMaxWaitAllowsIt) {
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  auto store = std::make_shared<MemoryFenceStore>();
  std::uint64_t last_id = 0;
  {
    auto g = make_generator(clock, fenced(store));
    last_id = g->next().id;
  }
  GeneratorOptions o = fenced(store);
  o.max_wait = 2s;
  auto g = make_generator(clock, o);
  const IdResult r = g->next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_GT(r.id, last_id);
}

TEST(GeneratorFence, RestartFarBehindTheFenceIsRefusedWithAClearError) {
  SimulatedClock clock(test_start());
  auto store = std::make_shared<MemoryFenceStore>();
  {
    auto g = make_generator(clock, fenced(store));
    ASSERT_TRUE(g->try_next().ok());
  }
  // The fence is 1 s ahead; 1 s + 100 ms behind it is the most a restart waits out.
  clock.step_wall(-(100ms + 2ms));
  auto refused = Generator::create(clock, fenced(store));
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("behind the time fence"), std::string::npos)
      << refused.status().message();

  clock.step_wall(2ms);
  EXPECT_TRUE(Generator::create(clock, fenced(store)).is_ok());
}

// A restart on a clock from before a layout cut-over, with the fence of ids
// issued after it: the generator of the earlier era (not_after the cut-over)
// is refused as for any fence, not started to refuse every id.
TEST(GeneratorFence, RestartFarBehindAFencePastNotAfterIsRefused) {
  SimulatedClock clock(test_start());
  auto store = std::make_shared<MemoryFenceStore>();
  ASSERT_TRUE(store->store(test_start() + 3s).is_ok());  // a later era's fence
  GeneratorOptions o = fenced(store);
  o.not_after = test_start() + 1s;
  auto refused = Generator::create(clock, o);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("3000 ms behind the time fence"), std::string::npos)
      << refused.status().message();
  // Within the restart allowance of the stored fence it starts, as before.
  clock.step_wall(3s - 500ms);
  EXPECT_TRUE(Generator::create(clock, o).is_ok());
}

TEST(GeneratorFence, ClockStepAfterRestartBeyondTheRestartAllowanceIsRefused) {
  SimulatedClock clock(test_start());
  auto store = std::make_shared<MemoryFenceStore>();
  {
    auto g = make_generator(clock, fenced(store));
    ASSERT_TRUE(g->try_next().ok());
  }
  auto g = make_generator(clock, fenced(store));
  clock.step_wall(-200ms);  // fence is now 1.2 s ahead
  EXPECT_EQ(g->try_next().code, Code::kClockMovedBack);
}

TEST(GeneratorFence, CloseRecordsTheExactLastTickSoARestartWaitsOnlyPastIt) {
  SimulatedClock clock(test_start());
  auto store = std::make_shared<MemoryFenceStore>();
  std::uint64_t last_id = 0;
  std::int64_t last_tick = 0;
  {
    auto g = make_generator(clock, fenced(store));
    for (int i = 0; i < 5; ++i) last_id = g->try_next().id;
    last_tick = ticks_of(g->layout(), last_id);
    ASSERT_TRUE(g->close().is_ok());
  }
  EXPECT_EQ(small_sequence_layout().ticks_at(*store->stored()), last_tick);

  auto g = make_generator(clock, fenced(store));
  EXPECT_EQ(g->try_next().code, Code::kSequenceExhausted) << "the last tick stays used up";
  clock.advance(1ms);
  const IdResult r = g->try_next();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ticks_of(g->layout(), r.id), last_tick + 1);
  EXPECT_GT(r.id, last_id);
}

// Crash after crash with the clock stepping back inside the allowance each
// time: no restart may issue an id that an earlier life issued.
TEST(GeneratorFence, RepeatedCrashesWithClockStepsNeverReuseAnId) {
  std::mt19937_64 rng(20261129);
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  auto store = std::make_shared<MemoryFenceStore>();
  std::set<std::uint64_t> seen;
  int refused_starts = 0;
  for (int life = 0; life < 300; ++life) {
    GeneratorOptions o = fenced(store);
    o.max_wait = 3s;
    auto created = Generator::create(clock, o);
    if (!created.is_ok()) {
      ASSERT_EQ(created.status().code(), Code::kFailedPrecondition);
      ++refused_starts;
      clock.advance(std::chrono::milliseconds(rng() % 2000));
      continue;
    }
    auto g = std::move(created).value();
    const int n = static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      const IdResult r = g->next();
      if (!r.ok()) {
        ASSERT_TRUE(r.code == Code::kClockMovedBack || r.code == Code::kUnhealthy)
            << code_name(r.code);
        break;
      }
      ASSERT_TRUE(seen.insert(r.id).second) << "duplicate id " << r.id << " in life " << life;
    }
    if (rng() % 4 == 0) (void)g->close();
    // Crash (or stop), then the clock steps back by up to 1.2 s or forward.
    const auto step = std::chrono::milliseconds(static_cast<int>(rng() % 1500) - 1200);
    clock.step_wall(step);
  }
  EXPECT_GT(seen.size(), 1000u);
  EXPECT_GT(refused_starts, 0) << "steps beyond the allowance must have been refused";
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/snowid-fence-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    (void)::unlink((path_ + "/fence").c_str());
    (void)::rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(GeneratorFence, FileFenceSurvivesARestartOnDisk) {
  TempDir dir;
  const std::string path = dir.path() + "/fence";
  SimulatedClock clock(test_start());
  std::uint64_t last_id = 0;
  {
    auto g = make_generator(clock, fenced(make_file_fence_store(path)));
    for (int i = 0; i < 3; ++i) last_id = g->try_next().id;
  }
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content.rfind("snowid-fence 1 ", 0), 0u) << content;

  clock.step_wall(-50ms);
  auto g = make_generator(clock, fenced(make_file_fence_store(path)));
  EXPECT_EQ(g->try_next().code, Code::kClockBehind);
  clock.advance(1051ms);
  const IdResult r = g->try_next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_GT(r.id, last_id);
}

TEST(GeneratorFence, CorruptFenceFileRefusesToStart) {
  TempDir dir;
  const std::string path = dir.path() + "/fence";
  std::ofstream(path) << "snowid-fence 1 12x\n";
  SimulatedClock clock(test_start());
  auto g = Generator::create(clock, fenced(make_file_fence_store(path)));
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().code(), Code::kDataLoss);
  EXPECT_NE(g.status().message().find(path), std::string::npos);
}

// --- continue_after: the last id of an earlier generator in this process ----

TEST(GeneratorContinueAfter, StartsPastThatTickAndWaitsForAClockBehindIt) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = fenced(std::make_shared<MemoryFenceStore>());
  const Layout layout = o.layout;
  const std::int64_t now_tick = layout.ticks_at(clock.wall_now());
  o.continue_after = layout.time_of_ticks(now_tick + 50);
  auto g = make_generator(clock, o);
  EXPECT_EQ(g->last_ticks(), now_tick + 50);
  const IdResult behind = g->try_next();
  EXPECT_EQ(behind.code, Code::kClockBehind) << "50 ms behind: waited out, as a step back is";
  EXPECT_GT(behind.retry_after, 50ms);
  EXPECT_TRUE(g->healthy());
  clock.advance(50ms);
  EXPECT_FALSE(g->try_next().ok()) << "the earlier generator's tick is used up";
  clock.advance(1ms);
  const IdResult r = g->try_next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_EQ(ticks_of(layout, r.id), now_tick + 51);

  // next() waits it out by itself (a store of its own: the first one's fence
  // lies a window ahead).
  o.fence_store = std::make_shared<MemoryFenceStore>();
  o.continue_after = layout.time_of_ticks(layout.ticks_at(clock.wall_now()) + 20);
  clock.set_auto_advance(true);
  auto waiting = make_generator(clock, o);
  const IdResult waited = waiting->next();
  ASSERT_TRUE(waited.ok()) << code_name(waited.code);
  EXPECT_GT(ticks_of(layout, waited.id), layout.ticks_at(*o.continue_after));
}

// Exact, unlike a restored fence: no fence_window on top of max_backward.
TEST(GeneratorContinueAfter, AClockBehindItByMoreThanMaxBackwardIsRefused) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = fenced(std::make_shared<MemoryFenceStore>());
  int reports = 0;
  o.on_unhealthy = [&](const Status& s) {
    EXPECT_EQ(s.code(), Code::kClockMovedBack);
    ++reports;
  };
  o.continue_after = clock.wall_now() + 200ms;
  auto g = make_generator(clock, o);
  EXPECT_EQ(g->try_next().code, Code::kClockMovedBack);
  EXPECT_FALSE(g->healthy());
  EXPECT_EQ(reports, 1);
  EXPECT_EQ(g->try_reserve(5).code, Code::kUnhealthy);
}

// A restored fence later than continue_after keeps the allowance of a
// restart: the fence may be up to fence_window ahead of what was issued.
TEST(GeneratorContinueAfter, ALaterRestoredFenceKeepsItsRestartAllowance) {
  SimulatedClock clock(test_start());
  auto store = std::make_shared<MemoryFenceStore>();
  ASSERT_TRUE(store->store(clock.wall_now() + 500ms).is_ok());
  GeneratorOptions o = fenced(store);
  o.continue_after = clock.wall_now() + 200ms;
  auto g = make_generator(clock, o);
  EXPECT_EQ(g->last_ticks(), o.layout.ticks_at(clock.wall_now() + 500ms));
  EXPECT_EQ(g->try_next().code, Code::kClockBehind);
  EXPECT_TRUE(g->healthy());
}

TEST(GeneratorContinueAfter, AnInstantAtOrBeforeTheEpochChangesNothing) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = fenced(std::make_shared<MemoryFenceStore>());
  o.continue_after = o.layout.epoch();
  auto g = make_generator(clock, o);
  const IdResult r = g->try_next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_EQ(ticks_of(o.layout, r.id), o.layout.ticks_at(clock.wall_now()));
}

}  // namespace
}  // namespace snowid
