#include "explanation.h"

#include <gtest/gtest.h>

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

TEST(Explanation, LogLineNamesTargetVotersNumbersAndReference) {
  QuorumResult q;
  VoteRecord r;
  r.offset = {61'204us, 31us};
  r.delay = 52us;
  r.deviation = {61'190us, 30us};
  r.reference = Reading{10us, 400us};
  q.counted.push_back({"h1", r});
  r.reference.reset();
  q.counted.push_back({"h2", r});
  Explanation e;
  e.target = "h3";
  e.decision = "fence";
  e.reason = "peers and reference";
  e.deviation = Reading{61'204us, 31us};
  e.delay = 52us;
  e.voters = voters_of(q);
  EXPECT_EQ(to_log_line(e),
            "skew decision=fence target=h3 reason=\"peers and reference\" "
            "deviation=+61.204+-0.031ms delay=0.052ms reference=none "
            "voters=h1:+61.190+-0.030ms/0.052ms/ref=+0.010+-0.400ms,"
            "h2:+61.190+-0.030ms/0.052ms/ref=none");
}

TEST(Explanation, NegativeOffsetsKeepTheirSign) {
  Explanation e;
  e.target = "self";
  e.decision = "self-fence";
  e.reason = "reference";
  e.offset = Reading{-75ms, 1ms};
  e.reference = Reading{75ms, 1ms};
  EXPECT_EQ(to_log_line(e),
            "skew decision=self-fence target=self reason=\"reference\" offset=-75.000+-1.000ms "
            "reference=+75.000+-1.000ms");
}

TEST(Explanation, APeerFenceRestsOnItsWeakestVote) {
  QuorumResult q;
  q.observers = 3;
  VoteRecord r;
  r.deviation = {70ms, 1ms};
  r.delay = 90us;
  q.counted.push_back({"h1", r});
  r.deviation = {-58ms, 2ms};
  r.delay = 40us;
  q.counted.push_back({"h2", r});
  const Explanation e = explain("h3", q, FenceGrant::kGranted);
  EXPECT_EQ(e.decision, "fence");
  EXPECT_EQ(e.reason, "votes 2 of 3");
  EXPECT_EQ(e.deviation->value, -58ms);
  EXPECT_EQ(e.delay, 40us);
  EXPECT_EQ(e.voters.size(), 2u);
  EXPECT_EQ(explain("h3", q, FenceGrant::kDryRun).decision, "dry-run");
  const Explanation capped = explain("h3", q, FenceGrant::kCapped);
  EXPECT_EQ(capped.decision, "capped");
  EXPECT_NE(capped.reason.find("mass skew"), std::string::npos);
}

TEST(Explanation, AJudgementExplainsWithItsEvidence) {
  Judge judge("a", SkewSettings{});
  const RoundInput input{{{"b", Reading{-80ms, 30us}, 60us}, {"c", Reading{-80ms, 40us}, 70us}},
                         Reading{-80ms, 500us},
                         false};
  (void)judge.round(input);
  const std::vector<Judgement> j = judge.round(input);
  const Explanation self = explain(j[0], "self-fence", input.reference);
  EXPECT_EQ(self.reason, "peers and reference");
  EXPECT_EQ(self.deviation->value, j[0].peer_deviation->value);
  EXPECT_FALSE(self.delay.has_value());
  const Explanation peer = explain(j[1], "alert", input.reference);
  EXPECT_EQ(peer.delay, 60us);
  EXPECT_NE(to_log_line(self).find("reference=-80.000+-0.500ms"), std::string::npos)
      << to_log_line(self);
}

}  // namespace
}  // namespace snowid::skew
