#include "quorum.h"

#include <gtest/gtest.h>

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

constexpr WallTime kNow = WallTime(std::chrono::seconds(1'800'000'000));

CastVote vote(std::string voter, Duration age = 1s) {
  VoteRecord r;
  r.offset = {70ms, 30us};
  r.delay = 60us;
  r.measured_at = kNow - age;
  r.deviation = {70ms, 40us};
  r.holder_revision = 9;
  return {std::move(voter), r};
}

const std::vector<std::string> kObservers = {"a", "b", "c", "d"};

TEST(Quorum, AStrictMajorityOfObserversFences) {
  const SkewSettings s;
  EXPECT_FALSE(count_votes(kObservers, {vote("a"), vote("b")}, 9, kNow, s).fence);  // 2 of 4
  const QuorumResult q = count_votes(kObservers, {vote("a"), vote("b"), vote("c")}, 9, kNow, s);
  EXPECT_TRUE(q.fence);
  EXPECT_EQ(q.needed, 3u);
  EXPECT_EQ(q.counted.size(), 3u);
}

TEST(Quorum, OneObserverOfTwoIsNotAMajorityButOneOfOneIs) {
  const SkewSettings s;
  EXPECT_FALSE(count_votes({"a", "b"}, {vote("a")}, 9, kNow, s).fence);
  EXPECT_TRUE(count_votes({"a"}, {vote("a")}, 9, kNow, s).fence);
  EXPECT_FALSE(count_votes({}, {vote("a")}, 9, kNow, s).fence);
}

TEST(Quorum, OnlyVotesThatPassTheirChecksCount) {
  const SkewSettings s;
  std::vector<CastVote> votes = {vote("a"), vote("b"), vote("a")};
  votes.push_back(vote("x"));       // not an observer
  votes.push_back(vote("c", 6s));   // stale
  votes.push_back(vote("d", -1s));  // from the future
  const QuorumResult q = count_votes(kObservers, votes, 9, kNow, s);
  EXPECT_FALSE(q.fence);
  EXPECT_EQ(q.counted.size(), 2u);
  ASSERT_EQ(q.refused.size(), 4u);
  EXPECT_EQ(q.refused[0].why, "voted twice");
  EXPECT_EQ(q.refused[1].why, "not an observer of the target");
  EXPECT_EQ(q.refused[2].why, "stale");
  EXPECT_EQ(q.refused[3].why, "from the future");
}

TEST(Quorum, VotesForAnotherHolderOrWithoutEvidenceDoNotCount) {
  const SkewSettings s;
  CastVote other = vote("c");
  other.record.holder_revision = 8;
  CastVote vague = vote("d");
  vague.record.deviation = {70ms, 6ms};
  CastVote near = vote("b");
  near.record.deviation = {52ms, 3ms};
  CastVote sick = vote("a");
  sick.record.voter_state = State::kSuspect;
  const QuorumResult q = count_votes(kObservers, {other, vague, near, sick}, 9, kNow, s);
  EXPECT_TRUE(q.counted.empty());
  ASSERT_EQ(q.refused.size(), 4u);
  EXPECT_EQ(q.refused[0].why, "for another holder revision");
  EXPECT_EQ(q.refused[1].why, "uncertainty over the fence limit");
  EXPECT_EQ(q.refused[2].why, "deviation not beyond the fence");
  EXPECT_EQ(q.refused[3].why, "voter not healthy");
}

}  // namespace
}  // namespace snowid::skew
