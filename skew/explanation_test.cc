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

}  // namespace
}  // namespace snowid::skew
