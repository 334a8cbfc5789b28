// Model-based property test: random scripts of clock moves and calls, with
// the generator's every answer checked against a small reference model of
// the policies in generator.h. One thread; see generator_concurrency_test.cc
// for many.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "generator_test_support.h"
#include "snowid/generator.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid {
namespace {

using namespace std::chrono_literals;
using test_support::small_sequence_layout;
using test_support::test_start;
using testing::SimulatedClock;

enum class Op { kAdvance, kStepBack, kTryNext, kTryReserve, kStall };

struct Step {
  Op op;
  int arg;
};

// The policies, restated as plainly as possible.
struct Model {
  std::int64_t last = 0;
  std::uint64_t seq = 15;  // 4-bit sequence; the start tick counts as used up
  bool unhealthy = false;
  std::int64_t backward = 0;
  std::int64_t borrow = 0;

  struct Expect {
    Code code;
    std::int64_t tick = 0;
    std::uint64_t first_seq = 0;
    std::uint32_t count = 0;
  };

  Expect call(std::int64_t now, std::uint32_t n) {
    if (unhealthy) return {Code::kUnhealthy};
    auto issue = [&](std::int64_t t, std::uint64_t first) {
      const std::uint32_t count =
          static_cast<std::uint32_t>(std::min<std::uint64_t>(n, 16 - first));
      last = t;
      seq = first + count - 1;
      return Expect{Code::kOk, t, first, count};
    };
    if (now > last) return issue(now, 0);
    const std::int64_t behind = last - now;
    const bool clock_behind = behind > borrow;
    if (clock_behind && last > 0 && behind > backward + borrow) {
      unhealthy = true;
      return {Code::kClockMovedBack};
    }
    if (seq < 15) return issue(last, seq + 1);
    if (last + 1 - now <= borrow) return issue(last + 1, 0);
    return {clock_behind ? Code::kClockBehind : Code::kSequenceExhausted};
  }
};

RC_GTEST_PROP(GeneratorModel, EveryAnswerMatchesThePolicyAndIdsNeverRepeat, ()) {
  const auto backward_ms = *rc::gen::element<std::int64_t>(0, 1, 5, 100);
  const auto borrow_ms = *rc::gen::element<std::int64_t>(0, 0, 1, 3);
  const auto steps = *rc::gen::container<std::vector<Step>>(
      rc::gen::construct<Step>(rc::gen::weightedElement<Op>({{3, Op::kAdvance},
                                                             {1, Op::kStepBack},
                                                             {6, Op::kTryNext},
                                                             {3, Op::kTryReserve},
                                                             {1, Op::kStall}}),
                               rc::gen::inRange(0, 150'000)));

  const Layout layout = small_sequence_layout();
  SimulatedClock clock(test_start());
  GeneratorOptions o;
  o.layout = layout;
  o.worker = {0, 12345};
  o.random_start_bound = 0;
  o.max_backward = std::chrono::milliseconds(backward_ms);
  o.max_borrow = std::chrono::milliseconds(borrow_ms);
  auto created = Generator::create(clock, o);
  RC_ASSERT(created.is_ok());
  auto g = std::move(created).value();

  Model model;
  model.backward = backward_ms;
  model.borrow = borrow_ms;
  std::uint64_t prev = 0;
  std::set<std::uint64_t> seen;

  for (const Step& s : steps) {
    switch (s.op) {
      case Op::kAdvance:
        clock.advance(std::chrono::microseconds(s.arg % 2500));
        continue;
      case Op::kStepBack:
        clock.step_wall(-std::chrono::microseconds(s.arg));
        continue;
      case Op::kStall:  // the wall clock stops while time passes
        clock.advance_monotonic(std::chrono::microseconds(s.arg));
        continue;
      case Op::kTryNext:
      case Op::kTryReserve:
        break;
    }
    const std::uint32_t n = s.op == Op::kTryNext ? 1 : static_cast<std::uint32_t>(1 + s.arg % 20);
    const std::int64_t now = layout.ticks_at(clock.wall_now());
    const Model::Expect want = model.call(now, n);
    const IdBatch got =
        s.op == Op::kTryNext ? test_support::as_batch(g->try_next()) : g->try_reserve(n);
    RC_ASSERT(got.code == want.code);
    if (!got.ok()) {
      if (is_retryable(got.code)) RC_ASSERT(got.retry_after > Duration::zero());
      continue;
    }
    RC_ASSERT(got.count == want.count);
    const std::uint64_t expected = layout.encode(want.tick, o.worker, want.first_seq).value();
    RC_ASSERT(got.first == expected);
    RC_ASSERT(got.first > prev);
    for (std::uint32_t k = 0; k < got.count; ++k) RC_ASSERT(seen.insert(got.first + k).second);
    prev = got.first + got.count - 1;
    RC_ASSERT(g->last_ticks() == want.tick);
  }
  RC_ASSERT(g->healthy() == !model.unhealthy);
}

}  // namespace
}  // namespace snowid
