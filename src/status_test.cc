#include "snowid/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace snowid {
namespace {

struct CodeCase {
  Code code;
  int value;
  std::string_view name;
  bool retryable;
};

// The numeric values and names appear in logs, metrics and protocols; they are pinned here.
const std::vector<CodeCase>& all_codes() {
  static const std::vector<CodeCase> cases = {
      {Code::kOk, 0, "OK", false},
      {Code::kSequenceExhausted, 1, "SEQUENCE_EXHAUSTED", true},
      {Code::kClockBehind, 2, "CLOCK_BEHIND", true},
      {Code::kUnavailable, 3, "UNAVAILABLE", true},
      {Code::kLeaseUncertain, 4, "LEASE_UNCERTAIN", true},
      {Code::kClockMovedBack, 10, "CLOCK_MOVED_BACK", false},
      {Code::kUnhealthy, 11, "UNHEALTHY", false},
      {Code::kOutOfRange, 12, "OUT_OF_RANGE", false},
      {Code::kInvalidArgument, 13, "INVALID_ARGUMENT", false},
      {Code::kFailedPrecondition, 14, "FAILED_PRECONDITION", false},
      {Code::kDataLoss, 15, "DATA_LOSS", false},
      {Code::kNotFound, 16, "NOT_FOUND", false},
      {Code::kLeaseLost, 17, "LEASE_LOST", false},
      {Code::kResourceExhausted, 18, "RESOURCE_EXHAUSTED", false},
      {Code::kAlreadyExists, 19, "ALREADY_EXISTS", false},
  };
  return cases;
}

TEST(StatusCode, NumericValuesAreStable) {
  for (const CodeCase& c : all_codes()) {
    EXPECT_EQ(static_cast<int>(c.code), c.value) << c.name;
  }
}

TEST(StatusCode, EachCodeHasItsStableName) {
  for (const CodeCase& c : all_codes()) {
    EXPECT_EQ(code_name(c.code), c.name) << "code " << c.value;
  }
}

TEST(StatusCode, UnknownValueIsNamedUnknown) {
  EXPECT_EQ(code_name(static_cast<Code>(99)), "UNKNOWN");
  EXPECT_EQ(code_name(static_cast<Code>(5)), "UNKNOWN");
}

TEST(StatusCode, OnlyWaitingCodesAreRetryable) {
  for (const CodeCase& c : all_codes()) {
    EXPECT_EQ(is_retryable(c.code), c.retryable) << c.name;
  }
  EXPECT_FALSE(is_retryable(static_cast<Code>(99)));
}

TEST(StatusCode, RetryabilityIsUsableAtCompileTime) {
  static_assert(is_retryable(Code::kClockBehind));
  static_assert(!is_retryable(Code::kClockMovedBack));
  SUCCEED();
}

TEST(Status, DefaultIsOkWithoutMessage) {
  const Status s;
  EXPECT_TRUE(s.is_ok());
  EXPECT_EQ(s.code(), Code::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_FALSE(s.retryable());
  EXPECT_EQ(s.to_string(), "OK");
}

TEST(Status, OkFactoryIsOk) {
  const Status s = Status::ok();
  EXPECT_TRUE(s.is_ok());
  EXPECT_EQ(s.code(), Code::kOk);
  EXPECT_EQ(s.to_string(), "OK");
}

TEST(Status, ErrorKeepsCodeAndMessage) {
  const Status s(Code::kDataLoss, "fence file is unreadable");
  EXPECT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_EQ(s.message(), "fence file is unreadable");
}

TEST(Status, RetryableFollowsTheCode) {
  for (const CodeCase& c : all_codes()) {
    const Status s(c.code, "x");
    EXPECT_EQ(s.retryable(), c.retryable) << c.name;
  }
}

TEST(Status, ToStringIsCodeNameColonMessage) {
  EXPECT_EQ(Status(Code::kClockMovedBack, "clock went back 5 s").to_string(),
            "CLOCK_MOVED_BACK: clock went back 5 s");
  EXPECT_EQ(Status(Code::kUnavailable, "etcd down").to_string(), "UNAVAILABLE: etcd down");
}

TEST(Status, ToStringWithoutMessageIsTheCodeNameAlone) {
  EXPECT_EQ(Status(Code::kNotFound, "").to_string(), "NOT_FOUND");
}

TEST(Status, ToStringOfOkIgnoresAnyMessage) {
  EXPECT_EQ(Status(Code::kOk, "all good").to_string(), "OK");
}

TEST(Result, HoldsAValue) {
  const Result<int> r = 42;
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r.value(), 42);
  EXPECT_TRUE(r.status().is_ok());
  EXPECT_EQ(r.status().code(), Code::kOk);
}

TEST(Result, HoldsAStatus) {
  const Result<int> r = Status(Code::kOutOfRange, "too late");
  EXPECT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kOutOfRange);
  EXPECT_EQ(r.status().message(), "too late");
  EXPECT_FALSE(r.status().retryable());
}

TEST(Result, RetryableStatusStaysRetryable) {
  const Result<std::string> r = Status(Code::kSequenceExhausted, "wait a tick");
  EXPECT_FALSE(r.is_ok());
  EXPECT_TRUE(r.status().retryable());
}

TEST(Result, ArrowReachesTheValue) {
  Result<std::string> r = std::string("snowid");
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->size(), 6u);
  r->append("!");
  EXPECT_EQ(r.value(), "snowid!");
}

TEST(Result, ValueIsMutableThroughLvalue) {
  Result<std::vector<int>> r = std::vector<int>{1, 2};
  r.value().push_back(3);
  EXPECT_EQ(r.value(), (std::vector<int>{1, 2, 3}));
}

TEST(Result, MoveOnlyValueCanBeMovedOut) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.is_ok());
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 7);
}

// The header promises that reading value() of a failed Result is caught by an
// assert in debug builds.
TEST(ResultDeathTest, ValueOfFailedResultAssertsInDebugBuilds) {
#ifdef NDEBUG
  GTEST_SKIP() << "asserts are compiled out";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Result<int> r = Status(Code::kNotFound, "nothing");
  EXPECT_DEATH(
      {
        const int v = r.value();
        static_cast<void>(v);
      },
      "");
#endif
}

}  // namespace
}  // namespace snowid
