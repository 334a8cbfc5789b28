// Why a clock was alerted on, fenced or spared, as data that a log line, a
// metric label or a status page can show (docs/skew.md, "Explanations").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fence_budget.h"
#include "judge.h"
#include "measurement.h"
#include "quorum.h"
#include "vote_rule.h"

namespace snowid::skew {

struct VoterEntry {
  std::string voter;
  Reading offset;  // target minus voter
  Duration delay{};
  Reading deviation;
  std::optional<Reading> reference;  // reference minus voter
};

struct Explanation {
  std::string target;
  std::string decision;              // "self-fence", "fence", "veto", "capped", "dry-run", "alert"
  std::string reason;                // the vote rule's reason, or the cap's
  std::optional<Reading> offset;     // as the deciding host measured it
  std::optional<Reading> deviation;  // the deviation the decision rests on
  std::optional<Duration> delay;
  std::optional<Reading> reference;  // the deciding host's reference reading
  std::vector<VoterEntry> voters;
};

// The voters of a quorum, for the explanation of a peer fence.
std::vector<VoterEntry> voters_of(const QuorumResult& quorum);

// A judgement's explanation (an alert, a veto, a self-fence): `decision` as
// in Explanation, the rest from the judgement and the round's reference
// reading. The deviation is the peer one when there is peer evidence, else
// the reference one.
Explanation explain(const Judgement& judgement, std::string decision,
                    const std::optional<Reading>& reference);

// A peer fence's explanation from the quorum that decided it (which counted
// at least one vote): "fence", "dry-run" or "capped" by the cap's grant.
Explanation explain(const std::string& target, const QuorumResult& quorum, FenceGrant grant);

// One line: key=value pairs, times in ms with microseconds, for example
// skew decision=fence target=h3 reason="peers and reference" deviation=+61.204+-0.031ms
// delay=0.052ms reference=+0.010+-0.400ms voters=h1:+61.190+-0.030ms/0.050ms,...
std::string to_log_line(const Explanation& explanation);

}  // namespace snowid::skew
