// GeneratorOptions::observer: told about exactly the ids handed out.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "generator_test_support.h"
#include "snowid/generator.h"
#include "snowid/issue_observer.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid {
namespace {

using namespace std::chrono_literals;
using test_support::make_generator;
using test_support::test_start;
using testing::SimulatedClock;

struct Told {
  std::uint64_t first;
  std::uint32_t count;
  WorkerId worker;
};

class Recorder final : public IssueObserver {
 public:
  void issued(std::uint64_t first, std::uint32_t count, WorkerId worker) noexcept override {
    told.push_back({first, count, worker});
  }
  std::vector<Told> told;
};

TEST(GeneratorObserver, IsToldEveryIdOfNextAndReserveWithTheWorker) {
  SimulatedClock clock(test_start());
  auto recorder = std::make_shared<Recorder>();
  GeneratorOptions o;
  o.worker = {1, 42};
  o.observer = recorder;
  auto g = make_generator(clock, o);
  std::vector<Told> expected;
  const IdResult a = g->next();
  ASSERT_TRUE(a.ok());
  expected.push_back({a.id, 1, o.worker});
  const IdResult b = g->try_next();
  ASSERT_TRUE(b.ok());
  expected.push_back({b.id, 1, o.worker});
  const IdBatch c = g->reserve(100);
  ASSERT_TRUE(c.ok());
  expected.push_back({c.first, c.count, o.worker});
  clock.advance(1ms);
  const IdBatch d = g->try_reserve(7);
  ASSERT_TRUE(d.ok());
  expected.push_back({d.first, d.count, o.worker});

  ASSERT_EQ(recorder->told.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(recorder->told[i].first, expected[i].first) << i;
    EXPECT_EQ(recorder->told[i].count, expected[i].count) << i;
    EXPECT_EQ(recorder->told[i].worker, expected[i].worker) << i;
  }
}

TEST(GeneratorObserver, HearsNothingOfARefusal) {
  SimulatedClock clock(test_start());
  auto recorder = std::make_shared<Recorder>();
  GeneratorOptions o;
  o.observer = recorder;
  o.random_start_bound = 0;
  auto g = make_generator(clock, o);
  // The tick's whole sequence, then a refusal until the clock moves.
  const IdBatch all = g->try_reserve(4096);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all.count, 4096u);
  EXPECT_FALSE(g->try_next().ok());
  EXPECT_FALSE(g->try_reserve(3).ok());
  EXPECT_FALSE(g->reserve(0).ok());
  ASSERT_TRUE(g->close().is_ok());
  EXPECT_FALSE(g->try_next().ok());
  ASSERT_EQ(recorder->told.size(), 1u);
  EXPECT_EQ(recorder->told[0].count, 4096u);
}

}  // namespace
}  // namespace snowid
