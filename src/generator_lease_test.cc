// The lease guard and the two generator options a leased worker id needs:
// `lease` (issue only while the guard permits it) and `wait_until` (never
// issue an id before the previous holder's mark). Both bound id *times*, so
// these tests move the wall and monotonic clocks apart on purpose: stepped
// back, frozen, paused together, and at random.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "generator_test_support.h"
#include "snowid/generator.h"
#include "snowid/lease_guard.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid {
namespace {

using namespace std::chrono_literals;
using test_support::make_generator;
using test_support::small_options;
using test_support::test_start;
using test_support::ticks_of;
using testing::SimulatedClock;

MonoTime mono(std::int64_t ns) { return MonoTime(Duration(ns)); }
WallTime wall(std::int64_t ns) { return WallTime(Duration(ns)); }
std::int64_t ns_of(MonoTime t) { return t.time_since_epoch().count(); }
std::int64_t ns_of(WallTime t) { return t.time_since_epoch().count(); }

// ---------------------------------------------------------------------------
// LeaseGuard on its own.

TEST(LeaseGuard, PermitsNothingUntilExtended) {
  const LeaseGuard guard;
  EXPECT_FALSE(guard.lost());
  EXPECT_FALSE(guard.permits(INT64_MIN, INT64_MIN));
  EXPECT_FALSE(guard.permits(0, 0));
  EXPECT_FALSE(guard.permits(INT64_MAX - 1, INT64_MIN));
}

TEST(LeaseGuard, DeadlineIsExclusiveAndHighWaterInclusive) {
  LeaseGuard guard;
  guard.extend(mono(1000), wall(5000));
  EXPECT_TRUE(guard.permits(999, 5000));
  EXPECT_TRUE(guard.permits(-50, -7));
  EXPECT_FALSE(guard.permits(1000, 5000)) << "the deadline itself is too late";
  EXPECT_FALSE(guard.permits(999, 5001)) << "an id after the high-water mark";
  EXPECT_EQ(guard.deadline(), mono(1000));
  EXPECT_EQ(guard.high_water(), wall(5000));
}

TEST(LeaseGuard, ExtendNeverShortensEitherBound) {
  LeaseGuard guard;
  guard.extend(mono(100), wall(200));
  // A late reply to an older renewal: each bound lower, or only one of them.
  guard.extend(mono(50), wall(150));
  EXPECT_EQ(guard.deadline(), mono(100));
  EXPECT_EQ(guard.high_water(), wall(200));
  guard.extend(mono(50), wall(300));
  EXPECT_EQ(guard.deadline(), mono(100));
  EXPECT_EQ(guard.high_water(), wall(300));
  guard.extend(mono(150), wall(100));
  EXPECT_EQ(guard.deadline(), mono(150));
  EXPECT_EQ(guard.high_water(), wall(300));
  EXPECT_TRUE(guard.permits(149, 300));
  EXPECT_FALSE(guard.permits(150, 300));
}

TEST(LeaseGuard, LostStopsEverythingAtOnceAndForGood) {
  LeaseGuard guard;
  guard.extend(mono(1'000'000), wall(1'000'000));
  ASSERT_TRUE(guard.permits(0, 0));
  guard.mark_lost();
  EXPECT_TRUE(guard.lost());
  EXPECT_FALSE(guard.permits(0, 0));
  EXPECT_FALSE(guard.permits(INT64_MIN + 1, INT64_MIN));
  EXPECT_EQ(guard.high_water(), wall(1'000'000)) << "the mark stays known for the release";
  guard.extend(mono(INT64_MAX), wall(INT64_MAX));
  EXPECT_TRUE(guard.lost());
  EXPECT_FALSE(guard.permits(0, 0)) << "a renewal reply after the loss changes nothing";
  guard.mark_lost();
  EXPECT_FALSE(guard.permits(0, 0));
}

TEST(LeaseGuard, ConcurrentExtensionsKeepTheLargestOfEachBound) {
  LeaseGuard guard;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  std::atomic<std::int64_t> max_deadline{INT64_MIN}, max_hw{INT64_MIN};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + static_cast<std::uint64_t>(t));
      std::int64_t my_d = INT64_MIN, my_h = INT64_MIN;
      for (int i = 0; i < kPerThread; ++i) {
        const auto d = static_cast<std::int64_t>(rng() % 1'000'000'000);
        const auto h = static_cast<std::int64_t>(rng() % 1'000'000'000);
        guard.extend(mono(d), wall(h));
        my_d = std::max(my_d, d);
        my_h = std::max(my_h, h);
        // Whatever the others do, a bound never drops below what this thread set.
        ASSERT_GE(ns_of(guard.deadline()), my_d);
        ASSERT_GE(ns_of(guard.high_water()), my_h);
      }
      std::int64_t cur = max_deadline.load();
      while (cur < my_d && !max_deadline.compare_exchange_weak(cur, my_d)) {
      }
      cur = max_hw.load();
      while (cur < my_h && !max_hw.compare_exchange_weak(cur, my_h)) {
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ns_of(guard.deadline()), max_deadline.load());
  EXPECT_EQ(ns_of(guard.high_water()), max_hw.load());
}

// A renewal reply racing with the loss: once mark_lost() has returned, no
// extension may bring permission back, not even from a guard never extended
// before (its deadline reads the same before the first extension and after
// the loss).
TEST(LeaseGuard, ExtensionsRacingWithTheLossNeverRevivePermission) {
  for (int round = 0; round < 200; ++round) {
    LeaseGuard guard;
    std::atomic<bool> go{false}, stop{false};
    std::thread extender([&] {
      while (!go.load()) {
      }
      for (std::int64_t i = 1; !stop.load(); ++i) guard.extend(mono(i * 1000), wall(i * 1000));
    });
    go.store(true);
    if (round % 2 == 0) std::this_thread::yield();
    guard.mark_lost();
    for (int k = 0; k < 2000; ++k) ASSERT_FALSE(guard.permits(0, 0)) << "round " << round;
    stop.store(true);
    extender.join();
    EXPECT_FALSE(guard.permits(0, 0));
  }
}

// ---------------------------------------------------------------------------
// A generator with a lease.

GeneratorOptions leased(std::shared_ptr<const LeaseGuard> guard) {
  GeneratorOptions o = small_options();
  o.lease = std::move(guard);
  return o;
}

WallTime time_of(const Generator& g, std::uint64_t id) {
  return g.layout().decode(id).value().time;
}

// A clock that counts how often the generator reads the monotonic clock.
class CountingClock final : public Clock {
 public:
  explicit CountingClock(SimulatedClock& inner) : inner_(inner) {}
  WallTime wall_now() const noexcept override { return inner_.wall_now(); }
  MonoTime mono_now() const noexcept override {
    mono_reads_.fetch_add(1, std::memory_order_relaxed);
    return inner_.mono_now();
  }
  void pause(Duration hint) const noexcept override { inner_.pause(hint); }
  std::uint64_t mono_reads() const { return mono_reads_.load(); }

 private:
  SimulatedClock& inner_;
  mutable std::atomic<std::uint64_t> mono_reads_{0};
};

TEST(GeneratorLease, AGuardNeverExtendedPermitsNoIdAndNextDoesNotWaitForIt) {
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  auto guard = std::make_shared<LeaseGuard>();
  auto g = make_generator(clock, leased(guard));
  const IdResult r = g->try_next();
  EXPECT_EQ(r.code, Code::kLeaseUncertain);
  EXPECT_TRUE(is_retryable(r.code));
  EXPECT_EQ(r.retry_after, 10ms);
  EXPECT_EQ(g->next().code, Code::kLeaseUncertain);
  EXPECT_EQ(g->reserve(4).code, Code::kLeaseUncertain);
  EXPECT_EQ(g->try_reserve(4).code, Code::kLeaseUncertain);
  EXPECT_EQ(clock.pauses(), 0u) << "waiting cannot help until a renewal";
  EXPECT_EQ(g->stats().lease_refusals, 4u);
  EXPECT_EQ(g->stats().refusals, 0u) << "uncertain is not a refusal for good";
  EXPECT_EQ(g->stats().waits_gave_up, 0u);
  EXPECT_TRUE(g->healthy());
}

TEST(GeneratorLease, IdsStopExactlyAtTheMonotonicDeadlineWhateverTheWallClockDoes) {
  SimulatedClock clock(test_start());
  auto guard = std::make_shared<LeaseGuard>();
  const MonoTime deadline = clock.mono_now() + 50ms;
  guard->extend(deadline, clock.wall_now() + 1h);
  auto g = make_generator(clock, leased(guard));
  const IdResult first = g->try_next();
  ASSERT_TRUE(first.ok()) << code_name(first.code);

  // The wall clock steps back and then stops; only the monotonic clock runs.
  clock.step_wall(-5ms);
  clock.advance_monotonic(50ms - 1ns);
  const IdResult last = g->try_next();
  ASSERT_TRUE(last.ok()) << code_name(last.code) << ": 1 ns before the deadline";
  EXPECT_EQ(ticks_of(g->layout(), last.id), ticks_of(g->layout(), first.id));

  clock.advance_monotonic(1ns);
  ASSERT_EQ(clock.mono_now(), deadline);
  EXPECT_EQ(g->try_next().code, Code::kLeaseUncertain);
  EXPECT_EQ(g->try_reserve(3).code, Code::kLeaseUncertain);
  // A wall clock that leaps forward does not buy time either.
  clock.step_wall(10s);
  EXPECT_EQ(g->try_next().code, Code::kLeaseUncertain);
  EXPECT_EQ(g->next().code, Code::kLeaseUncertain);
  EXPECT_TRUE(g->healthy());
}

TEST(GeneratorLease, TheHighWaterMarkIsInclusiveAndAboutTheIdsTime) {
  SimulatedClock clock(test_start());
  auto guard = std::make_shared<LeaseGuard>();
  auto g = make_generator(clock, leased(guard));
  const std::int64_t tick = g->layout().ticks_at(clock.wall_now());
  const WallTime tick_start = g->layout().time_of_ticks(tick);
  ASSERT_LT(tick_start, clock.wall_now()) << "the clock is 100 us into its tick";

  guard->extend(clock.mono_now() + 1h, tick_start - 1ns);
  EXPECT_EQ(g->try_next().code, Code::kLeaseUncertain);
  // The clock is already past the mark, but the id carries its tick's start.
  guard->extend(clock.mono_now() + 1h, tick_start);
  const IdResult r = g->try_next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_EQ(time_of(*g, r.id), tick_start);
  clock.advance(1ms);
  EXPECT_EQ(g->try_next().code, Code::kLeaseUncertain) << "the next tick is past the mark";
}

TEST(GeneratorLease, BorrowedTicksAndBatchesNeverGoPastTheHighWaterMark) {
  SimulatedClock clock(test_start());
  auto guard = std::make_shared<LeaseGuard>();
  GeneratorOptions o = leased(guard);
  o.max_borrow = 5ms;
  auto g = make_generator(clock, o);
  const Layout& l = g->layout();
  const std::int64_t now_tick = l.ticks_at(clock.wall_now());
  WallTime hw = l.time_of_ticks(now_tick + 2);
  guard->extend(clock.mono_now() + 1h, hw);

  // The wall clock stays in now_tick: everything past it is borrowed.
  auto drain = [&](std::vector<std::uint64_t>& out) {
    for (;;) {
      const IdBatch b = g->try_reserve(5);
      if (!b.ok()) return b.code;
      for (std::uint32_t k = 0; k < b.count; ++k) out.push_back(b.first + k);
    }
  };
  std::vector<std::uint64_t> ids;
  EXPECT_EQ(drain(ids), Code::kLeaseUncertain) << "borrowing stops at the mark, not at max_borrow";
  ASSERT_EQ(ids.size(), 3u * 16u);
  for (const std::uint64_t id : ids) EXPECT_LE(time_of(*g, id), hw);
  EXPECT_EQ(ticks_of(l, ids.back()), now_tick + 2);
  EXPECT_EQ(g->next().code, Code::kLeaseUncertain) << "next() does not wait for a renewal";

  // A renewal one tick further frees exactly one more tick.
  hw = l.time_of_ticks(now_tick + 3);
  guard->extend(clock.mono_now() + 1h, hw);
  std::vector<std::uint64_t> more;
  EXPECT_EQ(drain(more), Code::kLeaseUncertain);
  ASSERT_EQ(more.size(), 16u);
  EXPECT_EQ(ticks_of(l, more.front()), now_tick + 3);
  EXPECT_EQ(ticks_of(l, more.back()), now_tick + 3);

  // With a generous mark, max_borrow is the limit again.
  guard->extend(clock.mono_now() + 1h, clock.wall_now() + 1s);
  more.clear();
  EXPECT_EQ(drain(more), Code::kSequenceExhausted);
  EXPECT_EQ(ticks_of(l, more.back()), now_tick + 5);
  EXPECT_EQ(g->stats().lease_refusals, 3u);
}

TEST(GeneratorLease, APausedProcessIsUncertainUntilARenewalThenIssuesAgain) {
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  auto guard = std::make_shared<LeaseGuard>();
  // As a keeper does: deadline and mark both stop_after past the send time.
  auto renew = [&] { guard->extend(clock.mono_now() + 8s, clock.wall_now() + 8s); };
  renew();
  auto g = make_generator(clock, leased(guard));
  const IdResult before = g->next();
  ASSERT_TRUE(before.ok());

  clock.advance(30s);  // SIGSTOP for 30 s: both clocks move, no renewal ran
  EXPECT_EQ(g->try_next().code, Code::kLeaseUncertain);
  EXPECT_EQ(g->next().code, Code::kLeaseUncertain);
  EXPECT_EQ(g->reserve(8).code, Code::kLeaseUncertain);

  renew();
  const IdResult after = g->next();
  ASSERT_TRUE(after.ok()) << code_name(after.code);
  EXPECT_GT(after.id, before.id);
  EXPECT_GE(time_of(*g, after.id), test_start() + 30s - 1ms);
  EXPECT_EQ(g->stats().lease_refusals, 3u);
}

TEST(GeneratorLease, LostLeaseRefusesForGoodEvenIfExtendedAgain) {
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  auto guard = std::make_shared<LeaseGuard>();
  guard->extend(clock.mono_now() + 1h, clock.wall_now() + 1h);
  auto g = make_generator(clock, leased(guard));
  ASSERT_TRUE(g->next().ok());

  guard->mark_lost();
  const IdResult r = g->try_next();
  EXPECT_EQ(r.code, Code::kLeaseLost);
  EXPECT_FALSE(is_retryable(r.code));
  EXPECT_EQ(g->next().code, Code::kLeaseLost);
  EXPECT_EQ(g->reserve(5).code, Code::kLeaseLost);
  guard->extend(clock.mono_now() + 2h, clock.wall_now() + 2h);  // a late renewal reply
  for (int i = 0; i < 100; ++i) {
    clock.advance(1ms);
    ASSERT_EQ(g->next().code, Code::kLeaseLost);
  }
  const GeneratorStats st = g->stats();
  EXPECT_EQ(st.lease_refusals, 103u);
  EXPECT_EQ(st.refusals, 103u) << "a lost lease is a refusal for good";
  EXPECT_TRUE(g->healthy()) << "the generator itself is fine; the holder needs a new id";
}

TEST(GeneratorLease, LostLeaseIsReportedAtOnceWhileWaitingForWaitUntil) {
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  auto guard = std::make_shared<LeaseGuard>();
  guard->extend(clock.mono_now() + 1h, clock.wall_now() + 1h);
  GeneratorOptions o = leased(guard);
  o.wait_until = clock.wall_now() + 50ms;
  auto g = make_generator(clock, o);
  guard->mark_lost();
  EXPECT_EQ(g->try_next().code, Code::kLeaseLost);
  EXPECT_EQ(g->next().code, Code::kLeaseLost);
  EXPECT_EQ(clock.pauses(), 0u);
}

TEST(GeneratorLease, OnlyALeasedGeneratorReadsTheMonotonicClockOncePerCall) {
  SimulatedClock sim(test_start());
  CountingClock clock(sim);
  auto plain = make_generator(clock, small_options());
  for (int i = 0; i < 100; ++i) {
    sim.advance(1ms);
    ASSERT_TRUE(plain->try_next().ok());
    ASSERT_TRUE(plain->try_reserve(3).ok());
  }
  EXPECT_EQ(clock.mono_reads(), 0u);

  auto guard = std::make_shared<LeaseGuard>();
  guard->extend(sim.mono_now() + 1h, sim.wall_now() + 1h);
  auto g = make_generator(clock, leased(guard));
  for (int i = 0; i < 100; ++i) {
    sim.advance(1ms);
    ASSERT_TRUE(g->try_next().ok());
    ASSERT_TRUE(g->try_reserve(3).ok());
  }
  EXPECT_EQ(clock.mono_reads(), 200u);
}

// ---------------------------------------------------------------------------
// wait_until.

TEST(WaitUntil, TryNextAnswersClockBehindWithTheTimeLeftThenIssuesFromIt) {
  SimulatedClock clock(test_start());  // 100 us into a tick
  GeneratorOptions o = small_options();
  const WallTime until = wall_from_unix_ms(unix_ms(test_start()) + 5);  // a tick boundary
  o.wait_until = until;
  auto g = make_generator(clock, o);

  IdResult r = g->try_next();
  EXPECT_EQ(r.code, Code::kClockBehind);
  EXPECT_EQ(r.retry_after, 4900us);
  EXPECT_EQ(g->try_reserve(4).code, Code::kClockBehind);
  clock.advance(4900us - 1ns);
  r = g->try_next();
  EXPECT_EQ(r.code, Code::kClockBehind);
  EXPECT_EQ(r.retry_after, 1ns);
  EXPECT_EQ(g->stats().clock_behind, 3u);
  EXPECT_EQ(g->stats().refusals, 0u);

  clock.advance(1ns);
  r = g->try_next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_EQ(time_of(*g, r.id), until) << "at the instant itself is allowed";
}

TEST(WaitUntil, AnInstantInsideATickWaitsForTheNextTick) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  const WallTime tick_start = wall_from_unix_ms(unix_ms(test_start()) + 5);
  o.wait_until = tick_start + 300us;
  auto g = make_generator(clock, o);
  clock.advance(tick_start + 300us - clock.wall_now());  // the clock is at wait_until
  IdResult r = g->try_next();
  EXPECT_EQ(r.code, Code::kClockBehind) << "its tick starts before wait_until";
  EXPECT_EQ(r.retry_after, 700us);
  clock.advance(700us);
  r = g->try_next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_EQ(time_of(*g, r.id), tick_start + 1ms);
}

TEST(WaitUntil, TenMillisecondTicksStartAtOrAfterIt) {
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  GeneratorOptions o;
  o.layout = test_support::ten_ms_layout();
  const WallTime until = clock.wall_now() + 3ms;
  o.wait_until = until;
  auto g = make_generator(clock, o);
  const IdResult r = g->next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_GE(time_of(*g, r.id), until);
  EXPECT_LT(time_of(*g, r.id), until + 10ms);
}

TEST(WaitUntil, NextAndReserveWaitForItThenIssueOnlyIdsAfterIt) {
  for (const bool batch : {false, true}) {
    SimulatedClock clock(test_start());
    clock.set_auto_advance(true);
    GeneratorOptions o = small_options();
    const WallTime until = clock.wall_now() + 30ms + 300us;
    o.wait_until = until;
    auto g = make_generator(clock, o);
    const IdBatch first = batch ? g->reserve(3) : test_support::as_batch(g->next());
    ASSERT_TRUE(first.ok()) << code_name(first.code);
    EXPECT_GT(time_of(*g, first.first), until);
    EXPECT_GE(clock.wall_now(), until) << "it waited on the clock";
    EXPECT_GT(clock.pauses(), 0u);
    EXPECT_EQ(g->stats().waits_gave_up, 0u);
    std::uint64_t prev = first.first + first.count - 1;
    for (int i = 0; i < 100; ++i) {
      const IdResult r = g->next();
      ASSERT_TRUE(r.ok());
      ASSERT_GT(r.id, prev);
      ASSERT_GT(time_of(*g, r.id), until);
      prev = r.id;
    }
  }
}

TEST(WaitUntil, FurtherAwayThanMaxWaitIsGivenUpAtOnce) {
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);
  GeneratorOptions o = small_options();
  o.max_wait = 20ms;
  o.wait_until = clock.wall_now() + 1s;
  auto g = make_generator(clock, o);
  const IdResult r = g->next();
  EXPECT_EQ(r.code, Code::kClockBehind);
  EXPECT_EQ(r.retry_after, 1s + 900us) << "to the first tick starting at or after wait_until";
  EXPECT_EQ(g->reserve(4).code, Code::kClockBehind);
  EXPECT_EQ(g->stats().waits_gave_up, 2u);
  EXPECT_LT(clock.wall_now(), test_start() + 20ms) << "no pause beyond max_wait";

  // Within max_wait, the same generator waits and issues.
  clock.advance(1s - 15ms);
  const IdResult ok = g->next();
  ASSERT_TRUE(ok.ok()) << code_name(ok.code);
  EXPECT_GE(time_of(*g, ok.id), test_start() + 1s);
}

TEST(WaitUntil, StoppedWallClockEndsTheWaitWithinMaxWait) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  o.max_wait = 20ms;
  o.wait_until = clock.wall_now() + 5ms;
  auto g = make_generator(clock, o);
  const IdResult r = test_support::while_wall_clock_stopped(clock, [&] { return g->next(); });
  EXPECT_EQ(r.code, Code::kClockBehind);
  EXPECT_EQ(g->stats().waits_gave_up, 1u);
}

TEST(WaitUntil, BeforeTheEpochOrNotBeforeChangesNothing) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  o.wait_until = wall_from_unix_ms(0);
  auto g = make_generator(clock, o);
  EXPECT_TRUE(g->try_next().ok());

  o.wait_until = clock.wall_now() - 1s;
  g = make_generator(clock, o);
  EXPECT_TRUE(g->try_next().ok());

  // Below not_before: the not_before answer, unchanged.
  o.not_before = clock.wall_now() + 10ms;
  o.wait_until = clock.wall_now() + 5ms;
  g = make_generator(clock, o);
  EXPECT_EQ(g->try_next().code, Code::kOutOfRange);
  clock.advance(10ms);
  EXPECT_TRUE(g->try_next().ok());

  // After not_before, waiting for wait_until is retryable.
  o.not_before = clock.wall_now() - 1s;
  o.wait_until = clock.wall_now() + 5ms;
  g = make_generator(clock, o);
  EXPECT_EQ(g->try_next().code, Code::kClockBehind);
}

TEST(WaitUntil, ClockBeforeTheEpochStillRefusesAsBefore) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  o.wait_until = clock.wall_now() + 5ms;
  auto g = make_generator(clock, o);
  clock.set_wall(wall_from_unix_ms(0));
  EXPECT_EQ(g->try_next().code, Code::kOutOfRange);
  EXPECT_TRUE(g->healthy()) << "nothing was issued";
}

TEST(WaitUntil, PastTheLayoutsEndOfLifeIsOutOfRange) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  o.wait_until = clock.wall_now() + std::chrono::hours(24 * 365 * 100);
  auto g = make_generator(clock, o);
  EXPECT_EQ(g->try_next().code, Code::kOutOfRange);
  EXPECT_EQ(g->next().code, Code::kOutOfRange);
}

TEST(WaitUntil, AClockSteppedBackBelowItAfterIssuingIsAnOrdinaryBackwardStep) {
  SimulatedClock clock(test_start());
  GeneratorOptions o = small_options();
  const WallTime until = wall_from_unix_ms(unix_ms(test_start()) + 5);
  o.wait_until = until;
  auto g = make_generator(clock, o);
  clock.advance(until - clock.wall_now());
  const IdResult first = g->try_next();
  ASSERT_TRUE(first.ok());

  // Back 20 ms, below wait_until: the last tick's sequence is used, no
  // earlier tick, then the usual kClockBehind until the clock is back.
  clock.step_wall(-20ms);
  for (int i = 1; i < 16; ++i) {
    const IdResult r = g->try_next();
    ASSERT_TRUE(r.ok()) << i << " " << code_name(r.code);
    EXPECT_EQ(time_of(*g, r.id), until);
  }
  const IdResult behind = g->try_next();
  EXPECT_EQ(behind.code, Code::kClockBehind);
  EXPECT_EQ(behind.retry_after, 21ms);
  EXPECT_TRUE(g->healthy());

  // Beyond max_backward it is refused like any backward step.
  clock.step_wall(-100ms);
  EXPECT_EQ(g->try_next().code, Code::kClockMovedBack);
  EXPECT_FALSE(g->healthy());
}

// ---------------------------------------------------------------------------
// Everything at once, at random: a keeper extending (sometimes with late,
// smaller values), clocks advancing together, the wall clock stepping, the
// process pausing, and calls of all four kinds with borrowing on. Every id
// must be unique, increasing, at or after wait_until, at or before the mark
// in force and issued before the deadline; and the generator must not refuse
// when the guard would have permitted the tick it had to use.
void run_random_lease_script(std::uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  SimulatedClock clock(test_start());
  clock.set_auto_advance(true);  // next()/reserve() waits move the clocks
  auto guard = std::make_shared<LeaseGuard>();
  GeneratorOptions o = leased(guard);
  o.max_borrow = 3ms;
  o.random_start_bound = 4;
  const WallTime until = clock.wall_now() + 7ms + 500us;
  o.wait_until = until;
  auto g = make_generator(clock, o);
  const Layout& l = g->layout();

  std::set<std::uint64_t> seen;
  std::uint64_t prev = 0;
  WallTime max_wall = clock.wall_now();
  int issued_calls = 0, past_deadline = 0, past_mark = 0;
  for (int step = 0; step < 4000; ++step) {
    const int op = static_cast<int>(rng() % 100);
    if (op < 12) {
      // A renewal reply, possibly late: both bounds may be below the current ones.
      guard->extend(clock.mono_now() + Duration(uniform(-20'000'000, 40'000'000)),
                    clock.wall_now() + Duration(uniform(-10'000'000, 20'000'000)));
    } else if (op < 27) {
      clock.advance(Duration(uniform(0, 3'000'000)));
    } else if (op < 31) {
      clock.advance_monotonic(Duration(uniform(0, 30'000'000)));  // wall clock stalls
    } else if (op < 36) {
      // An NTP step either way, never more than 50 ms behind the latest wall
      // time seen, so that the generator stays healthy.
      const WallTime to = clock.wall_now() + Duration(uniform(-8'000'000, 8'000'000));
      clock.set_wall(std::max(to, max_wall - 50ms));
    } else if (op < 38) {
      clock.advance(Duration(uniform(0, 2'000'000'000)));  // the process was paused
    } else {
      const std::int64_t last_before = g->last_ticks();
      const auto k = static_cast<std::uint32_t>(uniform(1, 6));
      IdBatch b;
      switch (op % 4) {
        case 0:
          b = test_support::as_batch(g->try_next());
          break;
        case 1:
          b = test_support::as_batch(g->next());
          break;
        case 2:
          b = g->try_reserve(k);
          break;
        default:
          b = g->reserve(k);
          break;
      }
      // Single-threaded: the clocks now read what the deciding attempt read.
      const std::int64_t mono_now = ns_of(clock.mono_now());
      const WallTime hw = guard->high_water();
      if (b.ok()) {
        ++issued_calls;
        ASSERT_GE(b.count, 1u);
        ASSERT_LT(mono_now, ns_of(guard->deadline())) << "issued at or past the deadline";
        for (std::uint32_t i = 0; i < b.count; ++i) {
          const std::uint64_t id = b.first + i;
          ASSERT_GT(id, prev);
          prev = id;
          ASSERT_TRUE(seen.insert(id).second) << "duplicate " << id;
          ASSERT_LE(time_of(*g, id), hw) << "past the high-water mark";
          ASSERT_GE(time_of(*g, id), until) << "before wait_until";
        }
      } else {
        ASSERT_TRUE(b.code == Code::kLeaseUncertain || b.code == Code::kSequenceExhausted ||
                    b.code == Code::kClockBehind)
            << code_name(b.code) << " at step " << step;
        if (b.code == Code::kLeaseUncertain) {
          // The tick it had to use is at most max(clock's tick, last + 1).
          const std::int64_t t = std::max(l.ticks_at(clock.wall_now()), last_before + 1);
          const bool late = mono_now >= ns_of(guard->deadline());
          const bool above = l.time_of_ticks(t) > hw;
          ASSERT_TRUE(late || above) << "refused although the guard permitted it";
          past_deadline += late ? 1 : 0;
          past_mark += above ? 1 : 0;
        }
      }
    }
    max_wall = std::max(max_wall, clock.wall_now());
  }
  EXPECT_GT(issued_calls, 500);
  EXPECT_GT(past_deadline, 20) << "the script must reach the deadline";
  EXPECT_GT(past_mark, 20) << "the script must reach the mark";
  EXPECT_TRUE(g->healthy());

  guard->mark_lost();
  guard->extend(clock.mono_now() + 1h, clock.wall_now() + 1h);
  for (int i = 0; i < 50; ++i) {
    clock.advance(Duration(uniform(0, 5'000'000)));
    ASSERT_EQ(g->next().code, Code::kLeaseLost);
    ASSERT_EQ(g->try_reserve(3).code, Code::kLeaseLost);
  }
}

TEST(GeneratorLease, RandomScriptsNeverIssueOutsideTheGuardOrBeforeWaitUntil) {
  for (std::uint64_t seed = 20261201; seed < 20261201 + 8; ++seed) {
    run_random_lease_script(seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace snowid
