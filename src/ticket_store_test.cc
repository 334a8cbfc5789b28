// The argument checks every ticket store shares.
#include "snowid/ticket_store.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace snowid {
namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

struct NameCase {
  std::string name;
  bool ok;
};

TEST(SequenceNameTest, AcceptsOnlyShortNamesOfUrlSafeBytes) {
  const NameCase cases[] = {
      {"orders", true},
      {"a", true},
      {"Orders_2026.v1-eu", true},
      {"0", true},
      {std::string(kMaxSequenceNameLength, 'x'), true},
      {"", false},
      {std::string(kMaxSequenceNameLength + 1, 'x'), false},
      {"has space", false},
      {"slash/name", false},
      {"colon:name", false},
      {"new\nline", false},
      {"tab\t", false},
      {"quote'", false},
      {"percent%20", false},
      {"caf\xc3\xa9", false},  // UTF-8 beyond ASCII
      {std::string("nul\0byte", 8), false},
      // A URL path resolves "." and ".." away; "-x" reads as an option.
      {".", false},
      {"..", false},
      {".hidden", false},
      {"-x", false},
      {"_private", false},
      {"9lives", true},
  };
  for (const NameCase& c : cases) {
    const Status s = validate_sequence_name(c.name);
    EXPECT_EQ(s.is_ok(), c.ok) << "name of " << c.name.size() << " bytes: " << s.to_string();
    if (!c.ok) {
      EXPECT_EQ(s.code(), Code::kInvalidArgument);
    }
  }
}

TEST(SequenceNameTest, RefusalNamesTheRuleNotTheName) {
  const Status empty = validate_sequence_name("");
  EXPECT_NE(empty.message().find("empty"), std::string::npos) << empty.to_string();
  const Status long_name = validate_sequence_name(std::string(65, 'x'));
  EXPECT_NE(long_name.message().find("64"), std::string::npos) << long_name.to_string();
  const Status bad = validate_sequence_name("ab\ncd");
  EXPECT_NE(bad.message().find("[A-Za-z0-9_.-]"), std::string::npos) << bad.to_string();
  EXPECT_NE(bad.message().find("byte 2 is 0x0a"), std::string::npos) << bad.to_string();
  EXPECT_EQ(bad.message().find('\n'), std::string::npos) << "a control byte is not echoed";
}

TEST(SequenceCreateTest, AcceptsStartsBelowInt64MaxAndStepsUpToTheMaximumRange) {
  EXPECT_TRUE(validate_sequence_create("s", 0, 1).is_ok());
  EXPECT_TRUE(validate_sequence_create("s", kInt64Max - 1, kMaxSequenceRange).is_ok());
  EXPECT_TRUE(validate_sequence_create("s", 42, kDefaultSequenceStep).is_ok());
}

TEST(SequenceCreateTest, RefusesEachBadArgumentByName) {
  struct Case {
    std::string name;
    std::int64_t start;
    std::int64_t step;
    std::string word;
  };
  const Case cases[] = {
      {"", 0, 1, "name"},
      {"s", -1, 1, "start"},
      {"s", kInt64Max, 1, "start"},
      {"s", std::numeric_limits<std::int64_t>::min(), 1, "start"},
      {"s", 0, 0, "step"},
      {"s", 0, -5, "step"},
      {"s", 0, kMaxSequenceRange + 1, "step"},
  };
  for (const Case& c : cases) {
    const Status s = validate_sequence_create(c.name, c.start, c.step);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << c.start << " " << c.step;
    EXPECT_NE(s.message().find(c.word), std::string::npos) << s.to_string();
  }
}

TEST(SequenceTakeTest, AcceptsZeroForTheStepAndSizesUpToTheMaximumRange) {
  EXPECT_TRUE(validate_sequence_take("s", 0).is_ok());
  EXPECT_TRUE(validate_sequence_take("s", 1).is_ok());
  EXPECT_TRUE(validate_sequence_take("s", kMaxSequenceRange).is_ok());
}

TEST(SequenceTakeTest, RefusesNegativeAndOversizedRangesAndBadNames) {
  EXPECT_EQ(validate_sequence_take("s", -1).code(), Code::kInvalidArgument);
  EXPECT_EQ(validate_sequence_take("s", kMaxSequenceRange + 1).code(), Code::kInvalidArgument);
  EXPECT_NE(validate_sequence_take("s", -1).message().find("size"), std::string::npos);
  EXPECT_EQ(validate_sequence_take("a b", 1).code(), Code::kInvalidArgument);
}

TEST(SequenceRangeTest, IsHalfOpen) {
  const SequenceRange r{10, 13};
  EXPECT_EQ(r.size(), 3);
  EXPECT_EQ((SequenceRange{5, 5}).size(), 0);
  EXPECT_EQ(r, (SequenceRange{10, 13}));
  EXPECT_NE(r, (SequenceRange{10, 14}));
}

}  // namespace
}  // namespace snowid
