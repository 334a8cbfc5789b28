// The in-memory ticket store and the fault-injecting wrapper: they stand in
// for the database in the sequence buffer's tests, so their own behaviour is
// pinned here.
#include "snowid/testing/memory_ticket_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <thread>

#include "snowid/testing/faulty_ticket_store.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid {
namespace {

using namespace std::chrono_literals;
using testing::FaultyTicketStore;
using testing::MemoryTicketStore;
using testing::SimulatedClock;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

class MemoryTicketStoreTest : public ::testing::Test {
 protected:
  SimulatedClock clock{wall_from_unix_ms(1'780'000'000'000)};
  MemoryTicketStore store{clock};
};

TEST_F(MemoryTicketStoreTest, TakesConsecutiveRangesOfTheStepOrOfTheSizeAsked) {
  ASSERT_TRUE(store.migrate().is_ok());
  ASSERT_TRUE(store.create("orders", 100, 10).is_ok());
  auto a = store.take("orders", 0);
  auto b = store.take("orders", 3);
  auto c = store.take("orders", 0);
  ASSERT_TRUE(a.is_ok() && b.is_ok() && c.is_ok());
  EXPECT_EQ(a.value(), (SequenceRange{100, 110}));
  EXPECT_EQ(b.value(), (SequenceRange{110, 113}));
  EXPECT_EQ(c.value(), (SequenceRange{113, 123}));
  EXPECT_EQ(store.get("orders")->next_value, 123);
  EXPECT_EQ(store.takes(), 3u);
}

TEST_F(MemoryTicketStoreTest, StampsCreatedAndUpdatedFromTheClock) {
  const WallTime t0 = clock.wall_now();
  ASSERT_TRUE(store.create("orders", 0, 5).is_ok());
  clock.advance(7s);
  ASSERT_TRUE(store.take("orders", 0).is_ok());
  auto info = store.get("orders");
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->name, "orders");
  EXPECT_EQ(info->step, 5);
  EXPECT_EQ(info->created, t0);
  EXPECT_EQ(info->updated, t0 + 7s);
}

TEST_F(MemoryTicketStoreTest, RefusesDuplicatesUnknownNamesAndBadArguments) {
  ASSERT_TRUE(store.create("orders", 0, 5).is_ok());
  EXPECT_EQ(store.create("orders", 0, 5).code(), Code::kAlreadyExists);
  EXPECT_EQ(store.take("missing", 1).status().code(), Code::kNotFound);
  EXPECT_EQ(store.get("missing").status().code(), Code::kNotFound);
  EXPECT_EQ(store.create("bad name", 0, 5).code(), Code::kInvalidArgument);
  EXPECT_EQ(store.create("x", -1, 5).code(), Code::kInvalidArgument);
  EXPECT_EQ(store.create("x", 0, 0).code(), Code::kInvalidArgument);
  EXPECT_EQ(store.take("orders", -1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store.take("orders", kMaxSequenceRange + 1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store.get("").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store.get("orders")->next_value, 0) << "refused takes leave the row alone";
  EXPECT_EQ(store.takes(), 3u) << "failed takes are counted";
}

TEST_F(MemoryTicketStoreTest, TakesUpToInt64MaxThenIsSpent) {
  ASSERT_TRUE(store.create("last", kInt64Max - 15, 10).is_ok());
  auto a = store.take("last", 0);
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ(a.value(), (SequenceRange{kInt64Max - 15, kInt64Max - 5}));
  EXPECT_EQ(store.take("last", 0).status().code(), Code::kOutOfRange);
  EXPECT_EQ(store.get("last")->next_value, kInt64Max - 5) << "a refused take moves nothing";
  auto b = store.take("last", 5);
  ASSERT_TRUE(b.is_ok()) << b.status().to_string();
  EXPECT_EQ(b.value(), (SequenceRange{kInt64Max - 5, kInt64Max}));
  EXPECT_EQ(store.take("last", 1).status().code(), Code::kOutOfRange);
}

TEST_F(MemoryTicketStoreTest, ListsEveryRowByName) {
  ASSERT_TRUE(store.create("b", 0, 1).is_ok());
  ASSERT_TRUE(store.create("a", 7, 2).is_ok());
  auto rows = store.list();
  ASSERT_TRUE(rows.is_ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ(rows.value()[0].name, "a");
  EXPECT_EQ(rows.value()[0].next_value, 7);
  EXPECT_EQ(rows.value()[1].name, "b");
  EXPECT_EQ(store.kind(), "memory");
}

class FaultyTicketStoreTest : public MemoryTicketStoreTest {
 protected:
  FaultyTicketStore faulty{store};
  void SetUp() override { ASSERT_TRUE(store.create("orders", 0, 10).is_ok()); }
};

TEST_F(FaultyTicketStoreTest, PassesCallsThroughWhenNoFaultIsSet) {
  auto r = faulty.take("orders", 0);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r.value(), (SequenceRange{0, 10}));
  EXPECT_EQ(faulty.get("orders")->next_value, 10);
  EXPECT_EQ(faulty.kind(), "memory");
  EXPECT_EQ(faulty.calls(), 2u);
  EXPECT_EQ(faulty.inner_calls(), 2u);
}

TEST_F(FaultyTicketStoreTest, AFailureRefusesEveryCallWithoutReachingTheStore) {
  faulty.set_failure(Status(Code::kUnavailable, "down"));
  EXPECT_EQ(faulty.take("orders", 0).status().to_string(), "UNAVAILABLE: down");
  EXPECT_EQ(faulty.get("orders").status().code(), Code::kUnavailable);
  EXPECT_EQ(faulty.create("x", 0, 1).code(), Code::kUnavailable);
  EXPECT_EQ(faulty.list().status().code(), Code::kUnavailable);
  EXPECT_EQ(faulty.migrate().code(), Code::kUnavailable);
  EXPECT_EQ(faulty.calls(), 5u);
  EXPECT_EQ(faulty.inner_calls(), 0u);
  EXPECT_EQ(store.get("orders")->next_value, 0);
  faulty.set_failure(Status::ok());
  EXPECT_TRUE(faulty.take("orders", 0).is_ok());
}

TEST_F(FaultyTicketStoreTest, ALostReplyCommitsButReportsUnavailable) {
  faulty.lose_replies(2);
  EXPECT_EQ(faulty.take("orders", 0).status().code(), Code::kUnavailable);
  EXPECT_EQ(faulty.take("orders", 0).status().code(), Code::kUnavailable);
  EXPECT_EQ(store.get("orders")->next_value, 20) << "both takes committed";
  auto r = faulty.take("orders", 0);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r.value(), (SequenceRange{20, 30}));
}

TEST_F(FaultyTicketStoreTest, ALostReplyIsOnlySpentOnATakeThatCommitted) {
  faulty.lose_replies(1);
  EXPECT_EQ(faulty.take("missing", 0).status().code(), Code::kNotFound);
  EXPECT_EQ(faulty.take("orders", 0).status().code(), Code::kUnavailable);
  EXPECT_TRUE(faulty.take("orders", 0).is_ok());
}

TEST_F(FaultyTicketStoreTest, AStallHoldsCallsUntilReleased) {
  faulty.set_stalled(true);
  std::atomic<bool> returned{false};
  Result<SequenceRange> r = Status(Code::kUnavailable, "not yet");
  std::thread caller([&] {
    r = faulty.take("orders", 0);
    returned = true;
  });
  // The call is inside the wrapper, held; it has not reached the store.
  while (faulty.calls() == 0) std::this_thread::yield();
  EXPECT_FALSE(returned.load());
  EXPECT_EQ(faulty.inner_calls(), 0u);
  faulty.set_stalled(false);
  caller.join();
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r.value(), (SequenceRange{0, 10}));
}

TEST_F(FaultyTicketStoreTest, ADelayIsSleptInRealTime) {
  faulty.set_delay(20ms);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(faulty.take("orders", 0).is_ok());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
}

}  // namespace
}  // namespace snowid
