#include "vote_rule.h"

#include <gtest/gtest.h>

namespace snowid::skew {
namespace {

constexpr Verdict kIn = Verdict::kWithin;
constexpr Verdict kOut = Verdict::kBeyond;
constexpr Verdict kUnclear = Verdict::kUnclear;

Action act(std::optional<Verdict> peers, std::optional<Verdict> reference) {
  return apply_vote_rule({peers, reference}).action;
}

TEST(VoteRule, PeersAndReferenceVetoEachOtherWhenTheyDisagree) {
  EXPECT_EQ(act(kOut, kIn), Action::kVeto);
  EXPECT_EQ(act(kIn, kOut), Action::kVeto);
  EXPECT_EQ(apply_vote_rule({kOut, kIn}).reason, "peers vs reference");
}

TEST(VoteRule, AgreementOrAnUnclearOtherSideFences) {
  EXPECT_EQ(act(kOut, kOut), Action::kFence);
  EXPECT_EQ(act(kOut, kUnclear), Action::kFence);
  EXPECT_EQ(act(kUnclear, kOut), Action::kFence);
  EXPECT_EQ(act(kIn, kIn), Action::kNone);
  EXPECT_EQ(act(kUnclear, kUnclear), Action::kNone);
}

TEST(VoteRule, WithoutAReferencePeersDecide) {
  EXPECT_EQ(act(kOut, std::nullopt), Action::kFence);
  EXPECT_EQ(act(kUnclear, std::nullopt), Action::kNone);
  EXPECT_EQ(act(kIn, std::nullopt), Action::kNone);
}

TEST(VoteRule, WithFewerThanThreeClocksTheReferenceDecides) {
  EXPECT_EQ(act(std::nullopt, kOut), Action::kFence);
  EXPECT_EQ(act(std::nullopt, kIn), Action::kNone);
}

TEST(VoteRule, WithNeitherOnlyAlerts) {
  EXPECT_EQ(act(std::nullopt, std::nullopt), Action::kAlertOnly);
  EXPECT_EQ(action_name(Action::kAlertOnly), "alert-only");
}

}  // namespace
}  // namespace snowid::skew
