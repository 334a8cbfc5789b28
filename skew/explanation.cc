#include "explanation.h"

#include <cstdio>
#include <utility>

namespace snowid::skew {
namespace {

std::string ms(Duration d, bool sign) {
  char buf[48];
  const double v = static_cast<double>(d.count()) / 1e6;
  std::snprintf(buf, sizeof buf, sign ? "%+.3f" : "%.3f", v);
  return buf;
}

std::string reading(const Reading& r) {
  return ms(r.value, true) + "+-" + ms(r.uncertainty, false) + "ms";
}

}  // namespace

std::vector<VoterEntry> voters_of(const QuorumResult& quorum) {
  std::vector<VoterEntry> out;
  for (const CastVote& v : quorum.counted) {
    out.push_back(
        {v.voter, v.record.offset, v.record.delay, v.record.deviation, v.record.reference});
  }
  return out;
}

Explanation explain(const Judgement& j, std::string decision,
                    const std::optional<Reading>& reference) {
  Explanation e;
  e.target = j.target;
  e.decision = std::move(decision);
  e.reason = std::string(j.outcome.reason);
  e.offset = j.offset;
  e.deviation = j.evidence.peers ? j.peer_deviation : j.reference_deviation;
  if (!j.self) e.delay = j.delay;
  e.reference = reference;
  return e;
}

Explanation explain(const std::string& target, const QuorumResult& quorum, FenceGrant grant) {
  Explanation e;
  e.target = target;
  e.decision = grant == FenceGrant::kGranted  ? "fence"
               : grant == FenceGrant::kDryRun ? "dry-run"
                                              : "capped";
  e.reason =
      "votes " + std::to_string(quorum.counted.size()) + " of " + std::to_string(quorum.observers);
  if (grant == FenceGrant::kCapped) e.reason += ", over the blast-radius cap (mass skew)";
  e.voters = voters_of(quorum);
  if (!quorum.counted.empty()) {
    // The deviation of the vote that says least: the fence rests on all of them.
    const CastVote* least = &quorum.counted.front();
    for (const CastVote& v : quorum.counted) {
      if (lower_bound_of(v.record.deviation) < lower_bound_of(least->record.deviation)) least = &v;
    }
    e.deviation = least->record.deviation;
    e.delay = least->record.delay;
  }
  return e;
}

std::string to_log_line(const Explanation& e) {
  std::string line =
      "skew decision=" + e.decision + " target=" + e.target + " reason=\"" + e.reason + "\"";
  if (e.offset) line += " offset=" + reading(*e.offset);
  if (e.deviation) line += " deviation=" + reading(*e.deviation);
  if (e.delay) line += " delay=" + ms(*e.delay, false) + "ms";
  line += " reference=" + (e.reference ? reading(*e.reference) : std::string("none"));
  if (!e.voters.empty()) {
    line += " voters=";
    for (std::size_t i = 0; i < e.voters.size(); ++i) {
      const VoterEntry& v = e.voters[i];
      if (i > 0) line += ",";
      line += v.voter + ":" + reading(v.deviation) + "/" + ms(v.delay, false) + "ms";
      line += "/ref=" + (v.reference ? reading(*v.reference) : std::string("none"));
    }
  }
  return line;
}

}  // namespace snowid::skew
