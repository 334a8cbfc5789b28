// IdService over a real LeasedGenerator on a simulated clock: the answers
// both transports give, the batch path's reserve() calls and the counters.
#include "id_service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "service_test_support.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using test_support::TestService;

std::vector<std::uint64_t> flatten(const IdsAnswer& a) {
  std::vector<std::uint64_t> ids;
  for (const IdSpan& s : a.spans) {
    for (std::uint32_t i = 0; i < s.count; ++i) ids.push_back(s.first + i);
  }
  return ids;
}

TEST(IdServiceTest, NextIdIssuesIncreasingIdsOnTheLeasedWorkerAndCountsThem) {
  TestService t;
  ASSERT_TRUE(t.service);
  std::uint64_t last = 0;
  for (int i = 0; i < 10000; ++i) {
    const IdResult r = t.service->next_id();
    ASSERT_TRUE(r.ok()) << code_name(r.code);
    ASSERT_GT(r.id, last);
    last = r.id;
  }
  const DecodedId d = t.service->layout().decode(last).value();
  const Layout& l = t.service->layout();
  EXPECT_EQ(d.values[static_cast<std::size_t>(l.index_of(FieldRole::kRegion))], 1u);
  const ServiceSnapshot s = t.service->snapshot();
  EXPECT_EQ(s.counters.ids_issued, 10000u);
  EXPECT_EQ(s.counters.single_requests, 10000u);
  EXPECT_EQ(s.counters.batch_requests, 0u);
  EXPECT_TRUE(s.ready);
  EXPECT_EQ(s.worker.region, 1u);
}

TEST(IdServiceTest, NextIdsReturnsExactlyNIncreasingIdsWithOneReservePerTickTouched) {
  TestService t;
  ASSERT_TRUE(t.service);
  const std::uint64_t capacity = t.service->layout().sequence_capacity();  // 4096
  const IdsAnswer a = t.service->next_ids(10000);
  ASSERT_TRUE(a.ok()) << a.message;
  const std::vector<std::uint64_t> ids = flatten(a);
  ASSERT_EQ(ids.size(), 10000u);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(std::set<std::uint64_t>(ids.begin(), ids.end()).size(), ids.size());
  // 10000 ids need at least 3 ticks of 4096; a tick already started can add one.
  EXPECT_GE(a.spans.size(), (10000 + capacity - 1) / capacity);
  EXPECT_LE(a.spans.size(), (10000 + capacity - 1) / capacity + 1);
  const ServiceSnapshot s = t.service->snapshot();
  EXPECT_EQ(s.counters.reserve_calls, a.spans.size());
  EXPECT_EQ(s.counters.ids_issued, 10000u);
  EXPECT_EQ(s.counters.batch_requests, 1u);
}

TEST(IdServiceTest, SmallBatchesComeFromOneReserveAndNeverOverlapSingleIds) {
  TestService t;
  ASSERT_TRUE(t.service);
  std::set<std::uint64_t> seen;
  for (int round = 0; round < 500; ++round) {
    const IdsAnswer a = t.service->next_ids(7);
    ASSERT_TRUE(a.ok()) << a.message;
    for (std::uint64_t id : flatten(a)) ASSERT_TRUE(seen.insert(id).second);
    const IdResult r = t.service->next_id();
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(seen.insert(r.id).second);
  }
  EXPECT_EQ(seen.size(), 500u * 8u);
}

TEST(IdServiceTest, NextIdsRefusesCountsOutsideOneToMaxBatchNamingTheBound) {
  TestService t(100);
  ASSERT_TRUE(t.service);
  for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{101}, std::uint64_t{1} << 40}) {
    const IdsAnswer a = t.service->next_ids(n);
    EXPECT_EQ(a.code, Code::kInvalidArgument) << n;
    EXPECT_NE(a.message.find("100"), std::string::npos) << a.message;
    EXPECT_TRUE(a.spans.empty());
  }
  EXPECT_TRUE(t.service->next_ids(100).ok());
  t.service->set_max_batch(200);
  EXPECT_TRUE(t.service->next_ids(150).ok());
  EXPECT_EQ(t.service->snapshot().max_batch, 200u);
  EXPECT_EQ(
      t.service->snapshot().counters.refusals_by_code[static_cast<int>(Code::kInvalidArgument)],
      3u);
}

TEST(IdServiceTest, DecodeSplitsAnIssuedIdAndRefusesMalformedText) {
  TestService t;
  ASSERT_TRUE(t.service);
  const IdResult r = t.service->next_id();
  ASSERT_TRUE(r.ok());
  const Result<DecodedId> d = t.service->decode(std::to_string(r.id));
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ(d->id, r.id);
  EXPECT_LE(d->time, t.clock.wall_now());
  EXPECT_GT(d->time, t.clock.wall_now() - 10s);
  for (const char* bad :
       {"", "abc", "-1", "+5", "1 2", "9223372036854775808", "99999999999999999999999"}) {
    const Result<DecodedId> e = t.service->decode(bad);
    ASSERT_FALSE(e.is_ok()) << bad;
    // A well-formed number past the layout's 63 bits is out of its range.
    EXPECT_TRUE(e.status().code() == Code::kInvalidArgument ||
                (e.status().code() == Code::kOutOfRange && bad[0] == '9'))
        << bad << ": " << e.status().to_string();
  }
  const ServiceSnapshot s = t.service->snapshot();
  EXPECT_EQ(s.counters.decodes, 8u);
  EXPECT_EQ(s.counters.decode_errors, 7u);
}

TEST(IdServiceTest, ClockStepBackBeyondTheThresholdRefusesAndTurnsUnready) {
  TestService t;
  ASSERT_TRUE(t.service);
  ASSERT_TRUE(t.service->next_id().ok());
  ASSERT_TRUE(t.service->ready());
  t.clock.step_wall(-2s);
  const IdResult r = t.service->next_id();
  EXPECT_EQ(r.code, Code::kClockMovedBack);
  EXPECT_FALSE(is_retryable(r.code));
  const IdsAnswer a = t.service->next_ids(10);
  EXPECT_FALSE(a.ok());
  EXPECT_TRUE(a.code == Code::kUnhealthy || a.code == Code::kClockMovedBack) << code_name(a.code);
  EXPECT_FALSE(a.message.empty());
  EXPECT_TRUE(test_support::eventually([&] { return !t.service->ready(); }));
  EXPECT_NE(t.service->not_ready_reason().find("unhealthy"), std::string::npos)
      << t.service->not_ready_reason();
  const ServiceSnapshot s = t.service->snapshot();
  EXPECT_FALSE(s.health.is_ok());
  EXPECT_EQ(s.counters.refusals_by_code[static_cast<int>(Code::kClockMovedBack)] +
                s.counters.refusals_by_code[static_cast<int>(Code::kUnhealthy)],
            2u);
}

TEST(IdServiceTest, AfterCloseEveryCallIsRefusedAsShuttingDown) {
  TestService t;
  ASSERT_TRUE(t.service);
  ASSERT_TRUE(t.service->next_id().ok());
  ASSERT_TRUE(t.service->close().is_ok());
  const IdResult r = t.service->next_id();
  EXPECT_EQ(r.code, Code::kFailedPrecondition);
  EXPECT_EQ(error_word(r.code), "SHUTTING_DOWN");
  const IdsAnswer a = t.service->next_ids(5);
  EXPECT_EQ(a.code, Code::kFailedPrecondition);
  EXPECT_TRUE(a.spans.empty());
  EXPECT_FALSE(t.service->ready());
  EXPECT_EQ(t.service->not_ready_reason(), "shutting down");
  EXPECT_EQ(t.service->close().code(), Code::kFailedPrecondition);
  EXPECT_EQ(t.service->snapshot().lease_state, LeaseState::kReleased);
}

// A clock that steps the wall clock back 2 s the first time a caller waits
// for the next tick once armed: a batch refused between two reserve() calls.
class StepBackOnFirstWait final : public Clock {
 public:
  explicit StepBackOnFirstWait(testing::SimulatedClock& inner) : inner_(inner) {}
  WallTime wall_now() const noexcept override { return inner_.wall_now(); }
  MonoTime mono_now() const noexcept override { return inner_.mono_now(); }
  void pause(Duration hint) const noexcept override {
    if (armed_.exchange(false)) {
      inner_.step_wall(-2s);
      return;
    }
    inner_.pause(hint);
  }
  void arm() noexcept { armed_ = true; }

 private:
  testing::SimulatedClock& inner_;
  mutable std::atomic<bool> armed_{false};
};

TEST(IdServiceTest, ABatchRefusedPartWayHandsOutNothingAndCountsTheDroppedIds) {
  testing::SimulatedClock sim{test_support::service_test_start()};
  sim.set_auto_advance(true);
  StepBackOnFirstWait clock(sim);
  testing::MemoryRegistry registry{clock, Layout::snowid_default(), 5s};
  LeasedGeneratorOptions o;
  o.generator.random_start_bound = 0;
  o.lease.region = 1;
  auto g = LeasedGenerator::create(clock, registry, std::move(o));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  IdService service(*g.value(), clock, 10000);
  clock.arm();
  // The first reserve() takes the rest of the current tick; waiting for the
  // next one finds the clock 2 s back.
  const IdsAnswer a = service.next_ids(5000);
  EXPECT_EQ(a.code, Code::kClockMovedBack);
  EXPECT_TRUE(a.spans.empty());
  const ServiceCounters c = service.snapshot().counters;
  EXPECT_EQ(c.ids_issued, 0u);
  EXPECT_GT(c.ids_dropped, 0u);
  EXPECT_LT(c.ids_dropped, 5000u);
  (void)service.close();
}

TEST(IdServiceTest, UptimeIsMonotonicWhenTheWallClockStepsBack) {
  TestService t;
  ASSERT_TRUE(t.service);
  t.clock.advance(30s);
  t.clock.step_wall(-20s);
  EXPECT_GE(t.service->snapshot().uptime, 30s);
}

TEST(IdServiceTest, ErrorWordsAndHttpStatusesSayWhetherToRetry) {
  EXPECT_EQ(error_word(Code::kClockMovedBack), "CLOCK_MOVED_BACK");
  EXPECT_EQ(error_word(Code::kLeaseUncertain), "LEASE_UNCERTAIN");
  EXPECT_EQ(error_word(Code::kLeaseLost), "LEASE_LOST");
  EXPECT_EQ(error_word(Code::kInvalidArgument), "INVALID_ARGUMENT");
  EXPECT_EQ(error_word(Code::kFailedPrecondition), "SHUTTING_DOWN");
  EXPECT_EQ(http_status(Code::kInvalidArgument, Refusing::kIssue), 400u);
  EXPECT_EQ(http_status(Code::kOutOfRange, Refusing::kDecode), 400u);
  EXPECT_EQ(http_status(Code::kOutOfRange, Refusing::kIssue), 503u);
  for (Code c :
       {Code::kSequenceExhausted, Code::kClockBehind, Code::kUnavailable, Code::kLeaseUncertain,
        Code::kClockMovedBack, Code::kUnhealthy, Code::kLeaseLost, Code::kFailedPrecondition}) {
    EXPECT_EQ(http_status(c, Refusing::kIssue), 503u) << code_name(c);
  }
  EXPECT_EQ(http_status(Code::kDataLoss, Refusing::kIssue), 500u);
}

TEST(IdServiceTest, SequenceRefusalsHaveTheirOwnStatusesAndWords) {
  EXPECT_EQ(error_word(Code::kNotFound, Refusing::kSequence), "NOT_FOUND");
  EXPECT_EQ(error_word(Code::kAlreadyExists, Refusing::kSequence), "ALREADY_EXISTS");
  EXPECT_EQ(error_word(Code::kUnavailable, Refusing::kSequence), "UNAVAILABLE");
  EXPECT_EQ(error_word(Code::kOutOfRange, Refusing::kSequence), "OUT_OF_RANGE");
  EXPECT_EQ(error_word(Code::kInvalidArgument, Refusing::kSequence), "INVALID_ARGUMENT");
  // A schema the daemon does not know is not a shutdown.
  EXPECT_EQ(error_word(Code::kFailedPrecondition, Refusing::kSequence), "FAILED_PRECONDITION");
  EXPECT_EQ(error_word(Code::kFailedPrecondition, Refusing::kDecode), "SHUTTING_DOWN");
  EXPECT_EQ(http_status(Code::kNotFound, Refusing::kSequence), 404u);
  EXPECT_EQ(http_status(Code::kAlreadyExists, Refusing::kSequence), 409u);
  EXPECT_EQ(http_status(Code::kOutOfRange, Refusing::kSequence), 409u);
  EXPECT_EQ(http_status(Code::kUnavailable, Refusing::kSequence), 503u);
  EXPECT_EQ(http_status(Code::kInvalidArgument, Refusing::kSequence), 400u);
  EXPECT_EQ(http_status(Code::kFailedPrecondition, Refusing::kSequence), 503u);
  EXPECT_EQ(http_status(Code::kDataLoss, Refusing::kSequence), 500u);
}

TEST(IdServiceTest, ConcurrentSingleAndBatchCallersNeverShareAnId) {
  TestService t;
  ASSERT_TRUE(t.service);
  constexpr int kThreads = 4;
  std::vector<std::vector<std::uint64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 3000; ++k) {
        if (k % 3 == 0) {
          const IdsAnswer a = t.service->next_ids(1 + k % 50);
          if (!a.ok()) continue;
          const std::vector<std::uint64_t> ids = flatten(a);
          got[i].insert(got[i].end(), ids.begin(), ids.end());
        } else {
          const IdResult r = t.service->next_id();
          if (r.ok()) got[i].push_back(r.id);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  std::set<std::uint64_t> all;
  std::size_t total = 0;
  for (const auto& v : got) {
    total += v.size();
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(all.size(), total);
  EXPECT_EQ(t.service->snapshot().counters.ids_issued, total);
  EXPECT_GT(total, 10000u);
}

}  // namespace
}  // namespace snowid::daemon
