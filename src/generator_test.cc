#include "snowid/generator.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "generator_test_support.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid {
namespace {

using namespace std::chrono_literals;
using test_support::make_generator;
using test_support::sequence_of;
using test_support::small_options;
using test_support::test_start;
using test_support::ticks_of;
using testing::SimulatedClock;

TEST(Generator, IssuesIncreasingUniqueIdsThatDecodeToItsWorkerAndTime) {
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  GeneratorOptions o;
  o.worker = {2, 201};
  auto g = make_generator(clock, o);
  const Layout& layout = Layout::snowid_default();
  std::uint64_t prev = 0;
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 20000; ++i) {
    if (i % 1000 == 0) clock.advance(1ms);
    const IdResult r = g->next();
    ASSERT_TRUE(r.ok()) << code_name(r.code);
    ASSERT_GT(r.id, prev);
    prev = r.id;
    ASSERT_TRUE(seen.insert(r.id).second);
    const DecodedId d = layout.decode(r.id).value();
    EXPECT_EQ(d.values[1], 2u);    // region
    EXPECT_EQ(d.values[2], 201u);  // host
    EXPECT_LE(d.time, clock.wall_now());
    EXPECT_GT(d.time, clock.wall_now() - 10ms);
  }
  EXPECT_LT(prev, std::uint64_t{1} << 63) << "the sign bit must stay 0";
}

TEST(Generator, NewTickStartsSequenceBelowRandomBoundAndNotAlwaysAtZero) {
  SimulatedClock clock(test_start());
  GeneratorOptions o;
  o.random_start_bound = 16;
  auto g = make_generator(clock, o);
  std::set<std::uint64_t> starts;
  for (int i = 0; i < 400; ++i) {
    clock.advance(1ms);
    const IdResult r = g->try_next();
    ASSERT_TRUE(r.ok());
    const std::uint64_t seq = sequence_of(g->layout(), r.id);
    EXPECT_LT(seq, 16u);
    starts.insert(seq);
  }
  EXPECT_GT(starts.size(), 8u) << "starts should spread over the bound";
}

TEST(Generator, RandomStartBoundZeroStartsEveryTickAtZero) {
  SimulatedClock clock(test_start());
  auto g = make_generator(clock, small_options());
  for (int i = 0; i < 50; ++i) {
    clock.advance(1ms);
    const IdResult r = g->try_next();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(sequence_of(g->layout(), r.id), 0u);
  }
}

TEST(Generator, ExhaustedSequenceIsRefusedUntilTheNextTickAndNeverWraps) {
  SimulatedClock clock(test_start());
  auto g = make_generator(clock, small_options());
  const std::int64_t tick = g->layout().ticks_at(clock.wall_now());
  for (std::uint64_t i = 0; i < 16; ++i) {
    const IdResult r = g->try_next();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(ticks_of(g->layout(), r.id), tick);
    EXPECT_EQ(sequence_of(g->layout(), r.id), i);
  }
  const IdResult full = g->try_next();
  EXPECT_EQ(full.code, Code::kSequenceExhausted);
  EXPECT_TRUE(is_retryable(full.code));
  EXPECT_EQ(full.retry_after, 900us) << "the next tick starts 900 us later";
  EXPECT_EQ(g->stats().sequence_exhausted, 1u);

  clock.advance(899us);
  EXPECT_EQ(g->try_next().code, Code::kSequenceExhausted);
  clock.advance(1us);
  const IdResult r = g->try_next();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ticks_of(g->layout(), r.id), tick + 1);
  EXPECT_EQ(sequence_of(g->layout(), r.id), 0u);
}

TEST(Generator, NextWaitsForTheNextTickWhenTheSequenceRunsOut) {
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  auto g = make_generator(clock, small_options());
  std::uint64_t prev = 0;
  for (int i = 0; i < 16 * 5; ++i) {
    const IdResult r = g->next();
    ASSERT_TRUE(r.ok()) << code_name(r.code);
    ASSERT_GT(r.id, prev);
    prev = r.id;
  }
  EXPECT_GE(g->stats().sequence_exhausted, 4u);
  EXPECT_GT(clock.pauses(), 0u);
}

TEST(Generator, SmallBackwardStepKeepsIssuingFromTheLastTickThenWaits) {
  SimulatedClock clock(test_start());
  auto g = make_generator(clock, small_options());
  const IdResult first = g->try_next();
  ASSERT_TRUE(first.ok());
  const std::int64_t tick = ticks_of(g->layout(), first.id);

  clock.step_wall(-5ms);
  for (std::uint64_t i = 1; i < 16; ++i) {
    const IdResult r = g->try_next();
    ASSERT_TRUE(r.ok()) << code_name(r.code);
    EXPECT_EQ(ticks_of(g->layout(), r.id), tick) << "reuses no earlier tick";
    EXPECT_EQ(sequence_of(g->layout(), r.id), i);
  }
  const IdResult behind = g->try_next();
  EXPECT_EQ(behind.code, Code::kClockBehind);
  EXPECT_TRUE(is_retryable(behind.code));
  EXPECT_EQ(behind.retry_after, 5ms + 900us);
  EXPECT_TRUE(g->healthy());

  clock.advance(5ms + 900us);
  const IdResult r = g->try_next();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ticks_of(g->layout(), r.id), tick + 1);
}

TEST(Generator, NextWaitsOutASmallBackwardStepWithoutError) {
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  auto g = make_generator(clock, small_options());
  std::uint64_t last = 0;
  for (int i = 0; i < 16; ++i) last = g->next().id;
  clock.step_wall(-5ms);
  const IdResult r = g->next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_GT(r.id, last);
  EXPECT_TRUE(g->healthy());
  EXPECT_GE(g->stats().clock_behind, 1u);
}

TEST(Generator, StepBackOfExactlyTheThresholdIsWaitedOut) {
  SimulatedClock clock(test_start());
  auto g = make_generator(clock, small_options());
  ASSERT_TRUE(g->try_next().ok());
  clock.step_wall(-100ms);
  EXPECT_TRUE(g->try_next().ok());
  EXPECT_TRUE(g->healthy());
}

TEST(Generator, StepBackBeyondTheThresholdRefusesForGoodAndCallsTheHookOnce) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  int hook_calls = 0;
  Status hook_status;
  o.on_unhealthy = [&](const Status& s) {
    ++hook_calls;
    hook_status = s;
  };
  auto g = make_generator(clock, o);
  ASSERT_TRUE(g->try_next().ok());

  clock.step_wall(-101ms);
  const IdResult refused = g->try_next();
  EXPECT_EQ(refused.code, Code::kClockMovedBack);
  EXPECT_FALSE(is_retryable(refused.code));
  EXPECT_FALSE(g->healthy());
  EXPECT_EQ(g->health().code(), Code::kClockMovedBack);
  EXPECT_NE(g->health().message().find("101 ms"), std::string::npos) << g->health().message();
  EXPECT_EQ(hook_calls, 1);
  EXPECT_EQ(hook_status.code(), Code::kClockMovedBack);

  // Later calls keep refusing, even once the clock has recovered.
  EXPECT_EQ(g->next().code, Code::kUnhealthy);
  clock.advance(1s);
  EXPECT_EQ(g->try_next().code, Code::kUnhealthy);
  EXPECT_EQ(g->reserve(10).code, Code::kUnhealthy);
  EXPECT_EQ(hook_calls, 1);
}

TEST(Generator, ConfiguredThresholdIsHonoured) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  o.max_backward = 10ms;
  auto g = make_generator(clock, o);
  ASSERT_TRUE(g->try_next().ok());
  clock.step_wall(-10ms);
  EXPECT_TRUE(g->try_next().ok());
  clock.step_wall(-1ms);
  EXPECT_EQ(g->try_next().code, Code::kClockMovedBack);
}

TEST(Generator, ZeroThresholdRefusesAnyBackwardStep) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  o.max_backward = 0ms;
  auto g = make_generator(clock, o);
  ASSERT_TRUE(g->try_next().ok());
  clock.step_wall(-1ms);
  EXPECT_EQ(g->try_next().code, Code::kClockMovedBack);
}

TEST(Generator, ForwardLeapIsFollowed) {
  SimulatedClock clock(test_start());
  auto g = make_generator(clock, small_options());
  const IdResult a = g->try_next();
  clock.advance(std::chrono::hours(24 * 30));
  const IdResult b = g->try_next();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(ticks_of(g->layout(), b.id) - ticks_of(g->layout(), a.id), 30LL * 24 * 3600 * 1000);
}

TEST(Generator, BorrowingMovesAnExhaustedTickAheadOfTheClockWithinTheLimit) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  o.max_borrow = 2ms;
  auto g = make_generator(clock, o);
  const std::int64_t now_tick = g->layout().ticks_at(clock.wall_now());
  std::vector<std::int64_t> ticks;
  for (int i = 0; i < 16 * 3; ++i) {
    const IdResult r = g->try_next();
    ASSERT_TRUE(r.ok()) << i << " " << code_name(r.code);
    ticks.push_back(ticks_of(g->layout(), r.id));
  }
  EXPECT_EQ(ticks.front(), now_tick);
  EXPECT_EQ(ticks.back(), now_tick + 2);
  // The next tick may be borrowed as soon as the clock reaches now_tick + 1,
  // 900 us from now: the hint must not send the caller to sleep longer.
  const IdResult full = g->try_next();
  EXPECT_EQ(full.code, Code::kSequenceExhausted);
  EXPECT_EQ(full.retry_after, 900us);
  clock.advance(900us);
  const IdResult r = g->try_next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_EQ(ticks_of(g->layout(), r.id), now_tick + 3);
  EXPECT_EQ(g->stats().borrowed_ticks, 3u);
}

TEST(Generator, BorrowedTicksAheadOfTheClockAreNotMistakenForABackwardStep) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  o.max_borrow = 3ms;
  o.max_backward = 0ms;
  auto g = make_generator(clock, o);
  for (int i = 0; i < 16 * 4; ++i) ASSERT_TRUE(g->try_next().ok());
  EXPECT_EQ(g->try_next().code, Code::kSequenceExhausted);
  EXPECT_TRUE(g->healthy());
  EXPECT_EQ(g->stats().clock_behind, 0u);
  // A real step back on top of the borrowed ticks is still refused.
  clock.step_wall(-1ms);
  EXPECT_EQ(g->try_next().code, Code::kClockMovedBack);
}

TEST(Generator, BorrowingIsOffByDefault) {
  SimulatedClock clock(test_start());
  auto g = make_generator(clock, small_options());
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(g->try_next().ok());
  EXPECT_EQ(g->try_next().code, Code::kSequenceExhausted);
  EXPECT_EQ(g->stats().borrowed_ticks, 0u);
}

TEST(Generator, ReserveHandsOutConsecutiveIdsUpToTheRestOfTheTick) {
  SimulatedClock clock(test_start());
  GeneratorOptions o;
  o.random_start_bound = 0;
  auto g = make_generator(clock, o);
  const IdBatch a = g->try_reserve(100);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.count, 100u);
  EXPECT_EQ(sequence_of(g->layout(), a.first), 0u);
  const IdBatch b = g->try_reserve(5000);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.count, 4096u - 100u) << "no more than the rest of the tick";
  EXPECT_EQ(b.first, a.first + 100) << "consecutive with the previous batch";
  const std::uint64_t last = b.first + b.count - 1;
  EXPECT_EQ(sequence_of(g->layout(), last), 4095u);
  EXPECT_EQ(ticks_of(g->layout(), last), ticks_of(g->layout(), a.first));
  EXPECT_EQ(g->try_reserve(1).code, Code::kSequenceExhausted);
}

TEST(Generator, ReserveWaitsLikeNextAndBatchesNeverOverlapSingleIds) {
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  auto g = make_generator(clock, small_options());
  std::set<std::uint64_t> seen;
  std::uint64_t prev = 0;
  for (int i = 0; i < 500; ++i) {
    if (i % 3 == 0) {
      const IdResult r = g->next();
      ASSERT_TRUE(r.ok());
      ASSERT_GT(r.id, prev);
      prev = r.id;
      ASSERT_TRUE(seen.insert(r.id).second);
    } else {
      const IdBatch b = g->reserve(static_cast<std::uint32_t>(1 + i % 7));
      ASSERT_TRUE(b.ok());
      ASSERT_GE(b.count, 1u);
      ASSERT_GT(b.first, prev);
      for (std::uint32_t k = 0; k < b.count; ++k) ASSERT_TRUE(seen.insert(b.first + k).second);
      prev = b.first + b.count - 1;
    }
  }
}

TEST(Generator, ReserveOfZeroIsInvalid) {
  SimulatedClock clock(test_start());
  auto g = make_generator(clock, small_options());
  EXPECT_EQ(g->reserve(0).code, Code::kInvalidArgument);
  EXPECT_EQ(g->try_reserve(0).code, Code::kInvalidArgument);
}

TEST(Generator, ClockBeforeNotBeforeIsOutOfRange) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  o.not_before = test_start() + 10ms;
  auto g = make_generator(clock, o);
  const IdResult r = g->try_next();
  EXPECT_EQ(r.code, Code::kOutOfRange);
  EXPECT_TRUE(g->healthy()) << "nothing was issued, so no time was reused";
  clock.advance(10ms);
  const IdResult ok = g->try_next();
  ASSERT_TRUE(ok.ok());
  EXPECT_GE(g->layout().decode(ok.id).value().time, test_start() + 10ms - 1ms);
}

// A small step back across not_before (an era's cut-over) after issuing in
// the era: retryable and waited out, as any step within max_backward, never
// the not-retryable kOutOfRange, and no id before not_before.
TEST(Generator, SmallStepBackAcrossNotBeforeAfterIssuingIsWaitedOut) {
  SimulatedClock clock(test_start() + 20ms);
  GeneratorOptions o = small_options();
  o.not_before = test_start() + 10ms;
  auto g = make_generator(clock, o);
  const IdResult first = g->try_next();
  ASSERT_TRUE(first.ok());
  clock.set_wall(test_start() + 5ms);  // 15 ms back, 5 ms before not_before
  const IdResult behind = g->try_next();
  EXPECT_EQ(behind.code, Code::kClockBehind);
  EXPECT_EQ(behind.retry_after, 5ms);
  EXPECT_TRUE(g->healthy());
  // next() waits for the clock (which moves as next() sleeps on it).
  clock.set_auto_advance(true);
  const IdResult waited = g->next();
  ASSERT_TRUE(waited.ok()) << code_name(waited.code);
  EXPECT_GT(waited.id, first.id);
  EXPECT_GE(g->layout().decode(waited.id).value().time, test_start() + 10ms);
}

TEST(Generator, ClockJumpingBeforeTheEpochAfterIssuingIsABackwardStep) {
  SimulatedClock clock(test_start());
  auto g = make_generator(clock, small_options());
  ASSERT_TRUE(g->try_next().ok());
  clock.set_wall(wall_from_unix_ms(0));  // an RTC reset to 1970
  EXPECT_EQ(g->try_next().code, Code::kClockMovedBack);
  EXPECT_FALSE(g->healthy());
}

TEST(Generator, RefusesPastTheLayoutsEndOfLife) {
  // time 20 bits of ms: about 17.5 minutes of life.
  LayoutSpec spec;
  spec.name = "short_lived";
  spec.epoch_unix_ms = unix_ms(test_start()) - 10 * 60 * 1000;
  spec.fields = {{"time", FieldRole::kTime, 20},
                 {"host", FieldRole::kHost, 31},
                 {"sequence", FieldRole::kSequence, 12}};
  SimulatedClock clock(test_start());
  GeneratorOptions o;
  o.layout = Layout::create(spec).value();
  auto g = make_generator(clock, o);
  ASSERT_TRUE(g->try_next().ok());
  clock.advance(std::chrono::minutes(8));
  EXPECT_EQ(g->try_next().code, Code::kOutOfRange);
}

// The next era's cut-over ends this layout's ids: an id issued after it
// would read as an id of the next layout (and could equal one of its ids).
TEST(Generator, RefusesFromNotAfterOnAsPastTheEndOfLife) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  o.not_after = test_start() + 5ms + 500us;  // inside a tick: that tick starts before it
  auto g = make_generator(clock, o);
  clock.advance(5ms);
  const IdResult last = g->try_next();
  ASSERT_TRUE(last.ok());
  EXPECT_LT(g->layout().decode(last.id).value().time, *o.not_after);
  // The whole last tick may be used up, but no tick after it.
  const IdBatch rest = g->reserve(1 << 20);
  ASSERT_TRUE(rest.ok());
  EXPECT_LT(g->layout().decode(rest.first + rest.count - 1).value().time, *o.not_after);
  clock.advance(1ms);
  EXPECT_EQ(g->try_next().code, Code::kOutOfRange);
  EXPECT_EQ(g->try_reserve(3).code, Code::kOutOfRange);
  clock.advance(std::chrono::hours(1));
  EXPECT_EQ(g->try_next().code, Code::kOutOfRange);
  EXPECT_TRUE(g->healthy()) << "refusing past the era is no clock fault";
}

TEST(Generator, CreateRefusesBadOptions) {
  SimulatedClock clock(test_start());
  auto refused = [&](GeneratorOptions o) {
    auto g = Generator::create(clock, std::move(o));
    EXPECT_FALSE(g.is_ok());
    return g.is_ok() ? Code::kOk : g.status().code();
  };
  GeneratorOptions o;
  o.layout = preset("twitter").value();
  EXPECT_EQ(refused(o), Code::kInvalidArgument) << "decode-only layouts do not generate";
  o = {};
  o.worker = {4, 0};
  EXPECT_EQ(refused(o), Code::kInvalidArgument) << "region 4 does not fit 2 bits";
  o = {};
  o.worker = {0, 256};
  EXPECT_EQ(refused(o), Code::kInvalidArgument);
  o = {};
  o.random_start_bound = 1025;
  EXPECT_EQ(refused(o), Code::kInvalidArgument);
  o = {};
  o.max_backward = -1ms;
  EXPECT_EQ(refused(o), Code::kInvalidArgument);
  o = {};
  o.max_borrow = 2s;
  EXPECT_EQ(refused(o), Code::kInvalidArgument);
  o = {};
  o.fence_window = 1ms;
  EXPECT_EQ(refused(o), Code::kInvalidArgument);
  o = {};
  o.not_before = test_start();
  o.not_after = test_start();
  EXPECT_EQ(refused(o), Code::kInvalidArgument) << "an era that ends as it begins";

  LayoutSpec future;
  future.epoch_unix_ms = unix_ms(test_start()) + 1000;
  future.fields = {{"time", FieldRole::kTime, 41},
                   {"region", FieldRole::kRegion, 2},
                   {"host", FieldRole::kHost, 8},
                   {"sequence", FieldRole::kSequence, 12}};
  o = {};
  o.layout = Layout::create(future).value();
  EXPECT_EQ(refused(o), Code::kInvalidArgument) << "epoch in the future";
}

TEST(Generator, StoppedWallClockEndsTheWaitAfterMaxWait) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  o.max_wait = 20ms;
  auto g = make_generator(clock, o);
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(g->try_next().ok());
  const IdResult r = test_support::while_wall_clock_stopped(clock, [&] { return g->next(); });
  EXPECT_EQ(r.code, Code::kSequenceExhausted);
  EXPECT_EQ(g->stats().waits_gave_up, 1u);
}

TEST(Generator, CloseStopsIssuing) {
  SimulatedClock clock(test_start());
  auto g = make_generator(clock, small_options());
  ASSERT_TRUE(g->try_next().ok());
  EXPECT_TRUE(g->close().is_ok());
  EXPECT_EQ(g->try_next().code, Code::kFailedPrecondition);
  EXPECT_EQ(g->reserve(3).code, Code::kFailedPrecondition);
  EXPECT_TRUE(g->healthy()) << "closing is not a fault";
}

TEST(Generator, TenMillisecondUnitsCountTicksOfTenMilliseconds) {
  SimulatedClock clock(test_start());
  GeneratorOptions o;
  o.layout = test_support::ten_ms_layout();
  o.random_start_bound = 0;
  auto g = make_generator(clock, o);
  const IdResult a = g->try_next();
  clock.advance(9ms);
  const IdResult b = g->try_next();
  clock.advance(1ms);
  const IdResult c = g->try_next();
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(ticks_of(g->layout(), a.id), ticks_of(g->layout(), b.id));
  EXPECT_EQ(ticks_of(g->layout(), c.id), ticks_of(g->layout(), a.id) + 1);
}

TEST(GeneratorStats, PlusEqualsAddsEveryCounter) {
  GeneratorStats sum{1, 2, 3, 4, 5, 6, 7, 8};
  sum += GeneratorStats{10, 20, 30, 40, 50, 60, 70, 80};
  EXPECT_EQ(sum.sequence_exhausted, 11u);
  EXPECT_EQ(sum.clock_behind, 22u);
  EXPECT_EQ(sum.waits_gave_up, 33u);
  EXPECT_EQ(sum.borrowed_ticks, 44u);
  EXPECT_EQ(sum.fence_writes, 55u);
  EXPECT_EQ(sum.fence_write_failures, 66u);
  EXPECT_EQ(sum.refusals, 77u);
  EXPECT_EQ(sum.lease_refusals, 88u);
}

}  // namespace
}  // namespace snowid
