#include "skew_values.h"

#include <gtest/gtest.h>

#include <string>

#include "vote_record.h"

namespace snowid::etcd {
namespace {

using namespace std::chrono_literals;

skew::VoteRecord vote(std::int64_t holder_revision) {
  skew::VoteRecord r;
  r.offset = {61'204'000ns, 31'000ns};
  r.delay = 52'000ns;
  r.measured_at = WallTime(1'800'000'000'123'456'789ns);
  r.reference = skew::Reading{-10'000ns, 400'000ns};
  r.deviation = {61'150'000ns, 60'000ns};
  r.basis = skew::VoteBasis::kBoth;
  r.voter_state = skew::State::kAlert;
  r.holder_revision = holder_revision;
  return r;
}

FenceRecord sample() {
  FenceRecord r;
  r.target = "h3";
  r.fencer = "h1";
  r.at = WallTime(1'800'000'000'987'654'321ns);
  r.votes = {{"h1", vote(4711)}, {"h2", vote(4711)}};
  r.votes[1].record.reference.reset();
  r.votes[1].record.basis = skew::VoteBasis::kPeers;
  r.votes[1].record.voter_state = skew::State::kOk;
  r.workers = {{1, 17}, {1, 4294967295u}};
  r.reason = "skew decision=fence target=h3 reason=\"peers\"";
  return r;
}

// What etcdctl shows: compact, every object's members sorted by name.
const char* const kSampleText =
    R"({"at_ns":1800000000987654321,"fencer":"h1",)"
    R"("reason":"skew decision=fence target=h3 reason=\"peers\"","target":"h3","v":1,)"
    R"("votes":[{"vote":{"basis":"both","delay_ns":52000,"deviation_ns":61150000,)"
    R"("deviation_uncertainty_ns":60000,"holder_revision":4711,)"
    R"("measured_at_ns":1800000000123456789,"offset_ns":61204000,)"
    R"("reference_offset_ns":-10000,"reference_uncertainty_ns":400000,)"
    R"("uncertainty_ns":31000,"v":1,"voter_state":"alert"},"voter":"h1"},)"
    R"({"vote":{"basis":"peers","delay_ns":52000,"deviation_ns":61150000,)"
    R"("deviation_uncertainty_ns":60000,"holder_revision":4711,)"
    R"("measured_at_ns":1800000000123456789,"offset_ns":61204000,)"
    R"("reference_offset_ns":null,"reference_uncertainty_ns":null,)"
    R"("uncertainty_ns":31000,"v":1,"voter_state":"ok"},"voter":"h2"}],)"
    R"("workers":[{"host":17,"region":1},{"host":4294967295,"region":1}]})";

void expect_same(const FenceRecord& a, const FenceRecord& b) {
  EXPECT_EQ(a.target, b.target);
  EXPECT_EQ(a.fencer, b.fencer);
  EXPECT_EQ(a.at, b.at);
  ASSERT_EQ(a.votes.size(), b.votes.size());
  for (std::size_t i = 0; i < a.votes.size(); ++i) {
    EXPECT_EQ(a.votes[i].voter, b.votes[i].voter);
    EXPECT_EQ(skew::encode_vote(a.votes[i].record), skew::encode_vote(b.votes[i].record));
  }
  EXPECT_EQ(a.workers, b.workers);
  EXPECT_EQ(a.reason, b.reason);
}

TEST(FenceRecord, EncodesToThePinnedText) { EXPECT_EQ(encode_fence_record(sample()), kSampleText); }

TEST(FenceRecord, RoundTripsEveryField) {
  const Result<FenceRecord> r = decode_fence_record(encode_fence_record(sample()));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_same(r.value(), sample());
  EXPECT_EQ(r->votes[0].record.reference->value, -10us);
  EXPECT_FALSE(r->votes[1].record.reference.has_value());
}

TEST(FenceRecord, ReadsAbsentOrNullListsAsEmptyAndIgnoresUnknownMembers) {
  const Result<FenceRecord> r = decode_fence_record(
      R"({"v":1,"target":"h3","at_ns":-5,"fencer":null,"votes":null,"client":"go/0.1"})");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->target, "h3");
  EXPECT_EQ(r->at, WallTime(-5ns));
  EXPECT_TRUE(r->fencer.empty());
  EXPECT_TRUE(r->votes.empty());
  EXPECT_TRUE(r->workers.empty());
  EXPECT_TRUE(r->reason.empty());
}

void expect_unreadable(const std::string& text, const std::string& why) {
  const Result<FenceRecord> r = decode_fence_record(text);
  ASSERT_FALSE(r.is_ok()) << text;
  EXPECT_EQ(r.status().code(), Code::kDataLoss) << text;
  EXPECT_NE(r.status().message().find(why), std::string::npos)
      << text << ": " << r.status().message();
}

TEST(FenceRecord, RefusesWhatItCannotReadWithDataLoss) {
  expect_unreadable("", "not a JSON object");
  expect_unreadable("[1]", "not a JSON object");
  expect_unreadable(R"({"target":"h","at_ns":1})", "\"v\" is missing");
  expect_unreadable(R"({"v":2,"target":"h","at_ns":1})", "unknown version 2");
  expect_unreadable(R"({"v":1.0,"target":"h","at_ns":1})", "not an integer");
  expect_unreadable(R"({"v":1,"at_ns":1})", "\"target\" is missing");
  expect_unreadable(R"({"v":1,"target":7,"at_ns":1})", "not a string");
  expect_unreadable(R"({"v":1,"target":"h"})", "\"at_ns\" is missing");
  expect_unreadable(R"({"v":1,"target":"h","at_ns":1e3})", "not an integer");
  expect_unreadable(R"({"v":1,"target":"h","at_ns":9223372036854775808})", "out of range");
  expect_unreadable(R"({"v":1,"target":"h","at_ns":1,"votes":{}})", "not an array");
  expect_unreadable(R"({"v":1,"target":"h","at_ns":1,"votes":[{"voter":"x"}]})",
                    "votes[0].vote is not an object");
  expect_unreadable(R"({"v":1,"target":"h","at_ns":1,"votes":[{"voter":"x","vote":{"v":1}}]})",
                    "votes[0]: vote record: key");
  expect_unreadable(R"({"v":1,"target":"h","at_ns":1,"workers":[{"region":1}]})",
                    "workers[0] needs region and host");
  expect_unreadable(R"({"v":1,"target":"h","at_ns":1,"workers":[{"region":1,"host":-1}]})",
                    "workers[0].host is out of range");
  expect_unreadable(R"({"v":1,"target":"h","at_ns":1,"workers":[{"region":4294967296,"host":1}]})",
                    "workers[0].region is out of range");
}

TEST(FenceRecord, ANestedVoteIsReadByTheVoteRecordsOwnStrictReader) {
  std::string text = kSampleText;
  const std::string from = "\"holder_revision\":4711,";
  text.replace(text.find(from), from.size(), "\"holder_revision\":0,");
  expect_unreadable(text, "\"holder_revision\" must be >= 1");
}

TEST(AgentValue, RoundTripsAndIgnoresUnknownMembers) {
  EXPECT_EQ(encode_agent({"10.0.0.5:7000"}), R"({"address":"10.0.0.5:7000"})");
  const Result<AgentValue> a = decode_agent(R"({"address":"[::1]:7000","pid":4})");
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  EXPECT_EQ(a->address, "[::1]:7000");
  const Result<AgentValue> none = decode_agent("{}");
  ASSERT_TRUE(none.is_ok());
  EXPECT_TRUE(none->address.empty());
  EXPECT_EQ(decode_agent("10.0.0.5:7000").status().code(), Code::kDataLoss);
  EXPECT_EQ(decode_agent(R"({"address":7000})").status().code(), Code::kDataLoss);
}

}  // namespace
}  // namespace snowid::etcd
