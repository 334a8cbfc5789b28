#include "vote_record.h"

#include <gtest/gtest.h>

#include <string>

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

VoteRecord sample() {
  VoteRecord r;
  r.offset = {61'204'000ns, 31'000ns};
  r.delay = 52'000ns;
  r.measured_at = WallTime(1'800'000'000'123'456'789ns);
  r.reference = Reading{-10'000ns, 400'000ns};
  r.deviation = {61'150'000ns, 60'000ns};
  r.basis = VoteBasis::kBoth;
  r.voter_state = State::kAlert;
  r.holder_revision = 4711;
  return r;
}

const char* const kSampleText =
    R"({"v":1,"offset_ns":61204000,"uncertainty_ns":31000,"delay_ns":52000,)"
    R"("measured_at_ns":1800000000123456789,"reference_offset_ns":-10000,)"
    R"("reference_uncertainty_ns":400000,"deviation_ns":61150000,)"
    R"("deviation_uncertainty_ns":60000,"basis":"both","voter_state":"alert",)"
    R"("holder_revision":4711})";

TEST(VoteRecord, EncodesToThePinnedText) { EXPECT_EQ(encode_vote(sample()), kSampleText); }

TEST(VoteRecord, RoundTrips) {
  const Result<VoteRecord> r = parse_vote(encode_vote(sample()));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(encode_vote(r.value()), kSampleText);
  EXPECT_EQ(r->reference->uncertainty, 400us);
  EXPECT_EQ(r->basis, VoteBasis::kBoth);
}

TEST(VoteRecord, NoReferenceIsTwoNulls) {
  VoteRecord v = sample();
  v.reference.reset();
  const std::string text = encode_vote(v);
  EXPECT_NE(text.find(R"("reference_offset_ns":null,"reference_uncertainty_ns":null)"),
            std::string::npos);
  const Result<VoteRecord> r = parse_vote(text);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_FALSE(r->reference.has_value());
}

TEST(VoteRecord, AcceptsAnyKeyOrderAndWhitespace) {
  const Result<VoteRecord> r = parse_vote(
      R"( { "holder_revision" : 2 , "basis":"peers","voter_state":"ok","v":1,"offset_ns":-5,)"
      R"("uncertainty_ns":0,"delay_ns":0,"measured_at_ns":0,"reference_offset_ns":null,)"
      "\n\"reference_uncertainty_ns\":null,\"deviation_ns\":-5,\"deviation_uncertainty_ns\":0}\n");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->offset.value, -5ns);
  EXPECT_EQ(r->holder_revision, 2);
}

std::string replaced(std::string_view from, std::string_view to) {
  std::string text = kSampleText;
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return text;
}

void expect_refused(const std::string& text, std::string_view says) {
  const Result<VoteRecord> r = parse_vote(text);
  ASSERT_FALSE(r.is_ok()) << text;
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find(says), std::string::npos) << r.status().message();
}

TEST(VoteRecord, StrictReaderRefusesWhatTheFormatDoesNotSay) {
  expect_refused(replaced(R"("v":1)", R"("v":2)"), "unknown version 2");
  expect_refused(replaced(R"("v":1,)", ""), "\"v\" missing");
  expect_refused(replaced(R"("v":1)", R"("v":1,"v":1)"), "\"v\" repeated");
  expect_refused(replaced(R"("v":1)", R"("v":1,"extra":1)"), "unknown key \"extra\"");
  expect_refused(replaced("31000", "31000.5"), "whole");
  expect_refused(replaced("31000", "3e4"), "whole");
  expect_refused(replaced("31000", "031000"), "leading zero");
  expect_refused(replaced("31000", "-31000"), "\"uncertainty_ns\" must be >= 0");
  expect_refused(replaced("4711", "0"), "\"holder_revision\" must be >= 1");
  expect_refused(replaced("61204000", "99999999999999999999"), "out of range");
  expect_refused(replaced("-10000", "null"), "both be null");
  expect_refused(replaced(R"("both")", R"("majority")"), "\"basis\" must be");
  expect_refused(replaced(R"("alert")", R"("suspect")"), "\"voter_state\" must be");
  expect_refused(replaced(R"("both")", R"("bo\th")"), "unexpected character");
  expect_refused(replaced("61204000", R"("61204000")"), "\"offset_ns\" must be an integer");
  expect_refused(std::string(kSampleText) + "x", "text after the object");
  expect_refused("[]", "not a JSON object");
  expect_refused(std::string(kSampleText).substr(0, 60), "");
  expect_refused(std::string(1025, ' '), "longer than 1024 bytes");
}

TEST(VoteRecord, KeyNamesRegionTargetAndVoter) {
  EXPECT_EQ(vote_key("/snowid/default", 3, "host-b", "host-a"),
            "/snowid/default/skew/3/votes/host-b/host-a");
}

}  // namespace
}  // namespace snowid::skew
