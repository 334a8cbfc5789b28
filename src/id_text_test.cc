#include "snowid/id_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace snowid {
namespace {

std::uint64_t parse_ok(std::string_view text) {
  Result<std::uint64_t> r = parse_id(text);
  EXPECT_TRUE(r.is_ok()) << "\"" << text << "\": " << r.status().to_string();
  return r.is_ok() ? r.value() : 0;
}

Status refusal(std::string_view text) {
  Result<std::uint64_t> r = parse_id(text);
  EXPECT_FALSE(r.is_ok()) << "accepted \"" << text << "\" as " << r.value();
  return r.status();
}

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

Layout discord() {
  Result<Layout> r = preset("discord");
  EXPECT_TRUE(r.is_ok());
  return r.is_ok() ? r.value() : Layout::snowid_default();
}

// ---- accepted ----

TEST(ParseId, AcceptsZero) { EXPECT_EQ(parse_ok("0"), 0u); }

TEST(ParseId, AcceptsPlainDecimals) {
  EXPECT_EQ(parse_ok("1"), 1u);
  EXPECT_EQ(parse_ok("42"), 42u);
  EXPECT_EQ(parse_ok("175928847299117063"), 175928847299117063u);
}

TEST(ParseId, AcceptsTheLargest63BitValue) {
  EXPECT_EQ(parse_ok("9223372036854775807"), 9223372036854775807u);
}

TEST(ParseId, AcceptsLeadingZeros) {
  EXPECT_EQ(parse_ok("007"), 7u);
  EXPECT_EQ(parse_ok("00000000000000000000"), 0u);
  EXPECT_EQ(parse_ok("00000000000000000042"), 42u);
}

TEST(ParseId, AcceptsTwentyDigitsUpTo2To64Minus1) {
  EXPECT_EQ(parse_ok("10000000000000000000"), 10000000000000000000u);
  EXPECT_EQ(parse_ok("18446744073709551614"), 18446744073709551614u);
  EXPECT_EQ(parse_ok("18446744073709551615"), UINT64_MAX);
}

TEST(ParseId, EveryValuePrintedInDecimalParsesBack) {
  std::mt19937_64 rng(64);
  for (int i = 0; i < 50000; ++i) {
    // Spread over all magnitudes, not just 19- and 20-digit numbers.
    const std::uint64_t v = rng() >> (rng() % 64);
    Result<std::uint64_t> r = parse_id(std::to_string(v));
    ASSERT_TRUE(r.is_ok()) << v;
    ASSERT_EQ(r.value(), v);
  }
}

// ---- refused ----

TEST(ParseId, RefusesEmpty) {
  const Status s = refusal("");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "empty")) << s.message();
}

TEST(ParseId, RefusesSurroundingWhitespace) {
  for (std::string_view text : {" 1", "1 ", "\t1", "1\r\n", "1 2"}) {
    const Status s = refusal(text);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << text;
    EXPECT_TRUE(contains(s.message(), "whitespace")) << s.message();
  }
  EXPECT_TRUE(contains(refusal(" 1").message(), "\" 1\"")) << refusal(" 1").message();
  EXPECT_TRUE(contains(refusal("1 ").message(), "\"1 \"")) << refusal("1 ").message();
}

TEST(ParseId, RefusesSigns) {
  const Status plus = refusal("+1");
  EXPECT_EQ(plus.code(), Code::kInvalidArgument);
  EXPECT_TRUE(contains(plus.message(), "\"+1\"")) << plus.message();
  EXPECT_TRUE(contains(plus.message(), "not a decimal digit")) << plus.message();

  const Status minus = refusal("-1");
  EXPECT_EQ(minus.code(), Code::kInvalidArgument);
  EXPECT_TRUE(contains(minus.message(), "\"-1\"")) << minus.message();
  EXPECT_TRUE(contains(minus.message(), "negative")) << minus.message();
}

TEST(ParseId, RefusesHexExponentsAndLetters) {
  for (std::string_view text : {"0x10", "1e5", "12a", "1.0", "1_000", "abc", "\xef\xbc\x91"}) {
    const Status s = refusal(text);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << text;
    EXPECT_TRUE(contains(s.message(), "not a decimal digit")) << s.message();
  }
  EXPECT_TRUE(contains(refusal("0x10").message(), "id \"0x10\"")) << refusal("0x10").message();
  EXPECT_TRUE(contains(refusal("12a").message(), "\"12a\"")) << refusal("12a").message();
}

TEST(ParseId, RefusesALoneNewlineWithoutEchoingIt) {
  const Status s = refusal("\n");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_FALSE(contains(s.message(), "\n")) << s.message();
  EXPECT_TRUE(contains(s.message(), "\"?\"")) << s.message();
}

TEST(ParseId, MessagesNeverEchoNonPrintableBytes) {
  const std::string text = std::string("12") + '\0' + "\x01\x1b[31m\x7f\xff";
  const Status s = refusal(text);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  for (char c : s.message()) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(u >= 0x20 && u < 0x7f) << "byte " << static_cast<int>(u) << " in message";
  }
  EXPECT_TRUE(contains(s.message(), "\"12???[31m??\"")) << s.message();
}

TEST(ParseId, RefusesMoreThanTwentyDigits) {
  for (std::string_view text : {"000000000000000000001", "100000000000000000000"}) {
    const Status s = refusal(text);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << text;
    EXPECT_TRUE(contains(s.message(), "more than 20 digits")) << s.message();
    EXPECT_TRUE(contains(s.message(), std::string("\"") + std::string(text) + "\"")) << s.message();
  }
}

TEST(ParseId, MessagesShortenLongInput) {
  const std::string text(500, '7');
  const Status s = refusal(text);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "\"" + std::string(40, '7') + "...\"")) << s.message();
  EXPECT_LT(s.message().size(), 100u);
}

TEST(ParseId, RefusesValuesAbove2To64Minus1AsOutOfRange) {
  for (std::string_view text : {"18446744073709551616", "18446744073709551620",
                                "20000000000000000000", "99999999999999999999"}) {
    const Status s = refusal(text);
    EXPECT_EQ(s.code(), Code::kOutOfRange) << text;
    EXPECT_FALSE(s.retryable());
    EXPECT_TRUE(contains(s.message(), std::string("\"") + std::string(text) + "\"")) << s.message();
    EXPECT_TRUE(contains(s.message(), "larger than 2^64-1")) << s.message();
  }
}

// ---- against a layout ----

TEST(ParseIdForLayout, AcceptsIdsThatFit) {
  Result<std::uint64_t> r = parse_id("9223372036854775807", Layout::snowid_default());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), 9223372036854775807u);
  Result<std::uint64_t> zero = parse_id("0", Layout::snowid_default());
  ASSERT_TRUE(zero.is_ok());
  EXPECT_EQ(zero.value(), 0u);
}

TEST(ParseIdForLayout, RefusesIdsAbove63BitsOnA63BitLayout) {
  for (std::string_view text : {"9223372036854775808", "18446744073709551615"}) {
    Result<std::uint64_t> r = parse_id(text, Layout::snowid_default());
    ASSERT_FALSE(r.is_ok()) << text;
    EXPECT_EQ(r.status().code(), Code::kOutOfRange);
    EXPECT_TRUE(contains(r.status().message(), std::string("\"") + std::string(text) + "\""))
        << r.status().message();
    EXPECT_TRUE(contains(r.status().message(),
                         "does not fit layout snowid (63 bits, max 9223372036854775807)"))
        << r.status().message();
  }
}

TEST(ParseIdForLayout, A64BitLayoutAcceptsEvery64BitValue) {
  const Layout l = discord();
  Result<std::uint64_t> r = parse_id("18446744073709551615", l);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), UINT64_MAX);
  Result<std::uint64_t> over = parse_id("18446744073709551616", l);
  ASSERT_FALSE(over.is_ok());
  EXPECT_EQ(over.status().code(), Code::kOutOfRange);
}

TEST(ParseIdForLayout, SyntaxErrorsStayInvalidArgument) {
  for (std::string_view text : {"", "-1", " 5", "0x1"}) {
    Result<std::uint64_t> r = parse_id(text, Layout::snowid_default());
    ASSERT_FALSE(r.is_ok()) << text;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << text;
  }
}

}  // namespace
}  // namespace snowid
