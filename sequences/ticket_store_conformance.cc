// The contract of include/snowid/ticket_store.h, for every store.
#include "ticket_store_conformance.h"

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace snowid::sequences::conformance {

void StoreFixture::SetUp() {
  Result<std::unique_ptr<StoreBackend>> backend = GetParam().make();
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  backend_ = std::move(backend.value());
  Result<std::unique_ptr<TicketStore>> store = backend_->open(clock_, /*migrate=*/true);
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  store_ = std::move(store.value());
  const Status migrated = store_->migrate();
  ASSERT_TRUE(migrated.is_ok()) << migrated.to_string();
}

namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

std::vector<std::string> names_of(const std::vector<SequenceInfo>& rows) {
  std::vector<std::string> out;
  for (const SequenceInfo& r : rows) out.push_back(r.name);
  return out;
}

TEST_P(TicketStoreConformance, KindNamesTheBackend) {
  const std::string kind(store_->kind());
  const std::string expected = GetParam().name == "Memory"   ? "memory"
                               : GetParam().name == "Sqlite" ? "sqlite"
                                                             : "postgresql";
  EXPECT_EQ(kind, expected);
}

TEST_P(TicketStoreConformance, CreatedSequenceReadsBackWithStartStepAndClockTimes) {
  ASSERT_TRUE(store_->create("orders", 1, 1000).is_ok());
  Result<SequenceInfo> info = store_->get("orders");
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->name, "orders");
  EXPECT_EQ(info->next_value, 1);
  EXPECT_EQ(info->step, 1000);
  EXPECT_EQ(info->created, clock_.wall_now());
  EXPECT_EQ(info->updated, clock_.wall_now());
}

TEST_P(TicketStoreConformance, ListOfAnEmptyTableIsEmpty) {
  Result<std::vector<SequenceInfo>> rows = store_->list();
  ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
  EXPECT_TRUE(rows->empty());
}

TEST_P(TicketStoreConformance, ListHoldsEverySequenceInByteOrderOfName) {
  // '_' (0x5f) sorts between the capitals and the small letters in byte
  // order, not where a locale puts it; a name may not start with it.
  for (const char* name : {"b", "a.1", "B", "a", "B_z", "Ba", "0"}) {
    ASSERT_TRUE(store_->create(name, 5, 7).is_ok()) << name;
  }
  Result<std::vector<SequenceInfo>> rows = store_->list();
  ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
  EXPECT_EQ(names_of(rows.value()),
            (std::vector<std::string>{"0", "B", "B_z", "Ba", "a", "a.1", "b"}));
  for (const SequenceInfo& r : rows.value()) {
    EXPECT_EQ(r.next_value, 5);
    EXPECT_EQ(r.step, 7);
  }
}

TEST_P(TicketStoreConformance, CreatingAnExistingNameIsAlreadyExistsAndKeepsTheRow) {
  ASSERT_TRUE(store_->create("orders", 10, 100).is_ok());
  ASSERT_TRUE(store_->take("orders", 0).is_ok());
  const Status again = store_->create("orders", 0, 5);
  EXPECT_EQ(again.code(), Code::kAlreadyExists) << again.to_string();
  EXPECT_NE(again.message().find("orders"), std::string::npos) << again.message();
  Result<SequenceInfo> info = store_->get("orders");
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->next_value, 110);
  EXPECT_EQ(info->step, 100);
}

TEST_P(TicketStoreConformance, UnknownNameIsNotFoundAndNeverCreated) {
  Result<SequenceRange> taken = store_->take("ghost", 0);
  EXPECT_EQ(taken.status().code(), Code::kNotFound) << taken.status().to_string();
  EXPECT_NE(taken.status().message().find("ghost"), std::string::npos);
  Result<SequenceRange> sized = store_->take("ghost", 10);
  EXPECT_EQ(sized.status().code(), Code::kNotFound);
  Result<SequenceInfo> info = store_->get("ghost");
  EXPECT_EQ(info.status().code(), Code::kNotFound) << info.status().to_string();
  Result<std::vector<SequenceInfo>> rows = store_->list();
  ASSERT_TRUE(rows.is_ok());
  EXPECT_TRUE(rows->empty());
}

TEST_P(TicketStoreConformance, TakeOfSizeZeroTakesTheStep) {
  ASSERT_TRUE(store_->create("orders", 100, 10).is_ok());
  Result<SequenceRange> r = store_->take("orders", 0);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), (SequenceRange{100, 110}));
}

TEST_P(TicketStoreConformance, TakeOfAnExplicitSizeTakesThatMany) {
  ASSERT_TRUE(store_->create("orders", 100, 10).is_ok());
  Result<SequenceRange> r = store_->take("orders", 3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), (SequenceRange{100, 103}));
  Result<SequenceInfo> info = store_->get("orders");
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->next_value, 103);
  EXPECT_EQ(info->step, 10);
}

TEST_P(TicketStoreConformance, ConsecutiveTakesAreAdjacent) {
  ASSERT_TRUE(store_->create("orders", 0, 4).is_ok());
  std::int64_t expected_first = 0;
  for (const std::int64_t size : {0, 1, 0, 17, 1000, 0, 2}) {
    Result<SequenceRange> r = store_->take("orders", size);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->first, expected_first);
    EXPECT_EQ(r->size(), size == 0 ? 4 : size);
    expected_first = r->end;
  }
  Result<SequenceInfo> info = store_->get("orders");
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->next_value, expected_first);
}

TEST_P(TicketStoreConformance, SequencesAdvanceIndependently) {
  ASSERT_TRUE(store_->create("a", 0, 10).is_ok());
  ASSERT_TRUE(store_->create("b", 500, 10).is_ok());
  ASSERT_TRUE(store_->take("a", 0).is_ok());
  Result<SequenceRange> b = store_->take("b", 0);
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(b.value(), (SequenceRange{500, 510}));
  Result<SequenceRange> a = store_->take("a", 0);
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ(a.value(), (SequenceRange{10, 20}));
}

TEST_P(TicketStoreConformance, RangeMayEndExactlyAtInt64Max) {
  ASSERT_TRUE(store_->create("edge", kMax - 10, 5).is_ok());
  Result<SequenceRange> r = store_->take("edge", 10);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), (SequenceRange{kMax - 10, kMax}));
  Result<SequenceInfo> info = store_->get("edge");
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->next_value, kMax);
}

TEST_P(TicketStoreConformance, RangePastInt64MaxIsOutOfRangeAndLeavesTheRowUnchanged) {
  ASSERT_TRUE(store_->create("edge", kMax - 10, 1000).is_ok());
  clock_.advance(3s);
  Result<SequenceRange> by_step = store_->take("edge", 0);
  EXPECT_EQ(by_step.status().code(), Code::kOutOfRange) << by_step.status().to_string();
  EXPECT_NE(by_step.status().message().find("edge"), std::string::npos);
  Result<SequenceRange> by_size = store_->take("edge", 11);
  EXPECT_EQ(by_size.status().code(), Code::kOutOfRange) << by_size.status().to_string();
  Result<SequenceInfo> info = store_->get("edge");
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->next_value, kMax - 10);
  EXPECT_EQ(info->updated, info->created);
  // What still fits is still handed out.
  Result<SequenceRange> rest = store_->take("edge", 10);
  ASSERT_TRUE(rest.is_ok()) << rest.status().to_string();
  EXPECT_EQ(rest.value(), (SequenceRange{kMax - 10, kMax}));
  Result<SequenceRange> spent = store_->take("edge", 1);
  EXPECT_EQ(spent.status().code(), Code::kOutOfRange) << spent.status().to_string();
}

TEST_P(TicketStoreConformance, LargestStepAndSizeAreAccepted) {
  ASSERT_TRUE(store_->create("big", 0, kMaxSequenceRange).is_ok());
  Result<SequenceRange> by_step = store_->take("big", 0);
  ASSERT_TRUE(by_step.is_ok()) << by_step.status().to_string();
  EXPECT_EQ(by_step->size(), kMaxSequenceRange);
  Result<SequenceRange> by_size = store_->take("big", kMaxSequenceRange);
  ASSERT_TRUE(by_size.is_ok()) << by_size.status().to_string();
  EXPECT_EQ(by_size.value(), (SequenceRange{kMaxSequenceRange, 2 * kMaxSequenceRange}));
}

TEST_P(TicketStoreConformance, LongestNameWithEveryAllowedByteIsAccepted) {
  std::string name = "AZaz09_.-";
  name.resize(kMaxSequenceNameLength, 'x');
  ASSERT_TRUE(store_->create(name, 0, 1).is_ok());
  Result<SequenceInfo> info = store_->get(name);
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->name, name);
  Result<SequenceRange> r = store_->take(name, 0);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), (SequenceRange{0, 1}));
}

TEST_P(TicketStoreConformance, BadArgumentsAreRefusedWithoutTouchingTheTable) {
  const std::string too_long(kMaxSequenceNameLength + 1, 'a');
  for (const std::string& name :
       {std::string(), std::string("has space"), std::string("semi;colon"), std::string("quote'"),
        too_long, std::string("caf\xc3\xa9")}) {
    EXPECT_EQ(store_->create(name, 0, 1).code(), Code::kInvalidArgument) << name;
    EXPECT_EQ(store_->take(name, 0).status().code(), Code::kInvalidArgument) << name;
    EXPECT_EQ(store_->get(name).status().code(), Code::kInvalidArgument) << name;
  }
  EXPECT_EQ(store_->create("ok", -1, 1).code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->create("ok", kMax, 1).code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->create("ok", 0, 0).code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->create("ok", 0, -5).code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->create("ok", 0, kMaxSequenceRange + 1).code(), Code::kInvalidArgument);
  Result<std::vector<SequenceInfo>> rows = store_->list();
  ASSERT_TRUE(rows.is_ok());
  EXPECT_TRUE(rows->empty());

  ASSERT_TRUE(store_->create("ok", 0, 1).is_ok());
  EXPECT_EQ(store_->take("ok", -1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->take("ok", kMaxSequenceRange + 1).status().code(), Code::kInvalidArgument);
  Result<SequenceInfo> info = store_->get("ok");
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->next_value, 0);
}

TEST_P(TicketStoreConformance, TimesComeFromTheInjectedClock) {
  const WallTime created_at = clock_.wall_now();
  ASSERT_TRUE(store_->create("orders", 0, 10).is_ok());
  clock_.advance(5s);
  ASSERT_TRUE(store_->take("orders", 0).is_ok());
  Result<SequenceInfo> info = store_->get("orders");
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->created, created_at);
  EXPECT_EQ(info->updated, created_at + 5s);
  // A clock stepped back is recorded as it reads: the store keeps no order.
  clock_.step_wall(-1h);
  ASSERT_TRUE(store_->take("orders", 0).is_ok());
  info = store_->get("orders");
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->updated, created_at + 5s - 1h);
  EXPECT_EQ(info->created, created_at);
}

TEST_P(TicketStoreConformance, MigrateAgainIsHarmless) {
  ASSERT_TRUE(store_->create("orders", 7, 10).is_ok());
  ASSERT_TRUE(store_->migrate().is_ok());
  ASSERT_TRUE(store_->migrate().is_ok());
  Result<SequenceInfo> info = store_->get("orders");
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->next_value, 7);
}

}  // namespace
}  // namespace snowid::sequences::conformance
