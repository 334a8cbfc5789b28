#include "judge.h"

#include <gtest/gtest.h>

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

const Reading kGood{50us, 30us};
const Reading kAhead{80ms, 30us};

std::vector<Judgement> rounds(Judge& judge, const RoundInput& input, int n) {
  std::vector<Judgement> out;
  for (int i = 0; i < n; ++i) out = judge.round(input);
  return out;
}

TEST(Judge, OneWrongPeerOfThreeIsVotedAgainstAfterTwoBursts) {
  Judge judge("a", SkewSettings{});
  RoundInput input{{{"b", kGood}, {"c", kAhead}}, std::nullopt, false};
  std::vector<Judgement> j = judge.round(input);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_TRUE(j[0].self);
  EXPECT_EQ(j[2].outcome.action, Action::kNone);  // one burst is not enough
  EXPECT_EQ(j[2].state, State::kSuspect);
  j = judge.round(input);
  EXPECT_EQ(j[2].outcome.action, Action::kFence);
  EXPECT_EQ(j[2].outcome.reason, "peers");
  EXPECT_EQ(j[0].outcome.action, Action::kNone);
  EXPECT_EQ(j[0].state, State::kOk);
  EXPECT_EQ(j[1].outcome.action, Action::kNone);
}

TEST(Judge, AnObserverWhoseClockIsWrongFencesItself) {
  Judge judge("a", SkewSettings{});
  // Both peers are 80 ms behind a: a is the odd one out.
  const RoundInput input{
      {{"b", Reading{-80ms, 30us}}, {"c", Reading{-80ms, 40us}}}, std::nullopt, false};
  const std::vector<Judgement> j = rounds(judge, input, 2);
  EXPECT_EQ(j[0].outcome.action, Action::kFence);
  EXPECT_EQ(j[1].outcome.action, Action::kNone);
  EXPECT_EQ(j[2].outcome.action, Action::kNone);
}

TEST(Judge, AWrongMajorityIsVetoedByAGoodReference) {
  Judge judge("a", SkewSettings{});
  // a is right (reference at 0), b and c are 80 ms ahead.
  const RoundInput input{{{"b", kAhead}, {"c", kAhead}}, Reading{0us, 200us}, false};
  const std::vector<Judgement> j = rounds(judge, input, 3);
  EXPECT_EQ(j[0].outcome.action, Action::kVeto);
  EXPECT_EQ(j[0].state, State::kSuspect);
  EXPECT_EQ(j[1].outcome.action, Action::kVeto);
  EXPECT_EQ(j[2].outcome.action, Action::kVeto);
}

TEST(Judge, WithTwoClocksTheReferenceDecides) {
  Judge judge("a", SkewSettings{});
  const RoundInput input{{{"b", kAhead}}, Reading{10us, 200us}, false};
  const std::vector<Judgement> j = rounds(judge, input, 2);
  EXPECT_FALSE(j[1].evidence.peers.has_value());
  EXPECT_EQ(j[1].outcome.action, Action::kFence);
  EXPECT_EQ(j[1].outcome.reason, "reference");
  EXPECT_EQ(j[0].outcome.action, Action::kNone);
}

TEST(Judge, WithTwoClocksAndNoReferenceNobodyIsFenced) {
  Judge judge("a", SkewSettings{});
  const RoundInput input{{{"b", kAhead}}, std::nullopt, false};
  const std::vector<Judgement> j = rounds(judge, input, 3);
  EXPECT_EQ(j[0].outcome.action, Action::kAlertOnly);
  EXPECT_EQ(j[1].outcome.action, Action::kAlertOnly);
  EXPECT_EQ(j[1].state, State::kSuspect);  // shown, never acted on
}

TEST(Judge, AfterAPauseItIsSuspectAndVotesNothing) {
  Judge judge("a", SkewSettings{});
  RoundInput input{{{"b", kGood}, {"c", kAhead}}, std::nullopt, false};
  (void)judge.round(input);
  input.paused = true;
  const std::vector<Judgement> j = judge.round(input);
  EXPECT_EQ(j[0].state, State::kSuspect);
  EXPECT_FALSE(may_vote(j[0].state));
  EXPECT_NE(j[2].outcome.action, Action::kFence);
}

TEST(Judge, BurstsFromBeforeAPauseDoNotCount) {
  Judge judge("a", SkewSettings{});
  RoundInput input{{{"b", kGood}, {"c", kGood}, {"d", kAhead}}, std::nullopt, false};
  (void)judge.round(input);
  input.paused = true;
  (void)judge.round(input);
  input.paused = false;
  input.peers[2].offset = kGood;
  // Beyond before the pause and just after it, within now: 2 of the last 3
  // bursts, but one of them from before the pause.
  const std::vector<Judgement> j = judge.round(input);
  EXPECT_EQ(j[3].outcome.action, Action::kNone);
  EXPECT_EQ(j[0].state, State::kOk);
}

TEST(Judge, AnUnmeasurablePeerIsNotSkewed) {
  Judge judge("a", SkewSettings{});
  const RoundInput input{{{"b", kGood}, {"c", kGood}, {"d", std::nullopt}}, std::nullopt, false};
  const std::vector<Judgement> j = rounds(judge, input, 3);
  EXPECT_EQ(j[3].state, State::kUnmeasurable);
  EXPECT_EQ(j[3].outcome.action, Action::kAlertOnly);  // no evidence either way
  EXPECT_EQ(j[1].state, State::kOk);
}

TEST(Judge, APeerThatTurnsUnmeasurableIsNotFencedOnOldBursts) {
  Judge judge("a", SkewSettings{});
  RoundInput input{{{"b", kGood}, {"c", kGood}, {"d", kAhead}}, std::nullopt, false};
  std::vector<Judgement> j = rounds(judge, input, 2);
  ASSERT_EQ(j[3].outcome.action, Action::kFence);
  input.peers[2].offset.reset();
  j = judge.round(input);
  EXPECT_EQ(j[3].outcome.action, Action::kAlertOnly);
  EXPECT_EQ(j[3].state, State::kUnmeasurable);
}

TEST(Judge, AVoteCarriesTheMeasurementTheDeviationAndTheVotersState) {
  Judge judge("a", SkewSettings{});
  const RoundInput input{
      {{"b", kGood, 60us}, {"c", kGood, 70us}, {"d", kAhead, 80us}}, Reading{5us, 300us}, false};
  const std::vector<Judgement> j = rounds(judge, input, 2);
  const WallTime at = WallTime(std::chrono::seconds(1'800'000'000));
  const std::optional<VoteRecord> v = vote_against(j[3], j[0], input.reference, at, 42);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->basis, VoteBasis::kBoth);
  EXPECT_EQ(v->offset.value, kAhead.value);
  EXPECT_EQ(v->delay, 80us);
  EXPECT_EQ(v->deviation.value, j[3].peer_deviation->value);
  EXPECT_EQ(v->reference->value, 5us);
  EXPECT_EQ(v->measured_at, at);
  EXPECT_EQ(v->holder_revision, 42);
  EXPECT_EQ(v->voter_state, State::kOk);
  // No vote for a clock within the fence, none against oneself.
  EXPECT_FALSE(vote_against(j[1], j[0], input.reference, at, 42).has_value());
  EXPECT_FALSE(vote_against(j[0], j[0], input.reference, at, 42).has_value());
}

TEST(Judge, ASuspectVoterDoesNotVote) {
  Judge judge("a", SkewSettings{});
  RoundInput input{{{"b", kGood}, {"c", kGood}, {"d", kAhead}}, std::nullopt, false};
  std::vector<Judgement> j = rounds(judge, input, 2);
  Judgement self = j[0];
  self.state = State::kSuspect;
  EXPECT_FALSE(vote_against(j[3], self, std::nullopt, WallTime{}, 1).has_value());
  ASSERT_TRUE(vote_against(j[3], j[0], std::nullopt, WallTime{}, 1).has_value());
  EXPECT_EQ(vote_against(j[3], j[0], std::nullopt, WallTime{}, 1)->basis, VoteBasis::kPeers);
}

}  // namespace
}  // namespace snowid::skew
