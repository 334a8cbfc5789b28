#include "quorum.h"

#include <algorithm>
#include <set>

#include "evidence.h"

namespace snowid::skew {
namespace {

// Why a vote does not count, or empty.
std::string check(const CastVote& v, std::int64_t holder_revision, WallTime now,
                  const SkewSettings& s) {
  const VoteRecord& r = v.record;
  if (now - r.measured_at > s.vote_max_age) return "stale";
  if (r.measured_at - now > s.fence) return "from the future";
  if (r.holder_revision != holder_revision) return "for another holder revision";
  if (!(r.voter_state == State::kOk || r.voter_state == State::kAlert)) return "voter not healthy";
  if (r.deviation.uncertainty > s.fence_max_uncertainty) return "uncertainty over the fence limit";
  if (judge(r.deviation, s.fence) != Verdict::kBeyond) return "deviation not beyond the fence";
  return {};
}

}  // namespace

QuorumResult count_votes(const std::vector<std::string>& observers,
                         const std::vector<CastVote>& votes, std::int64_t holder_revision,
                         WallTime now, const SkewSettings& settings) {
  QuorumResult out;
  out.observers = observers.size();
  out.needed = observers.size() / 2 + 1;
  std::set<std::string> voted;
  for (const CastVote& v : votes) {
    if (std::find(observers.begin(), observers.end(), v.voter) == observers.end()) {
      out.refused.push_back({v.voter, "not an observer of the target"});
      continue;
    }
    if (!voted.insert(v.voter).second) {
      out.refused.push_back({v.voter, "voted twice"});
      continue;
    }
    std::string why = check(v, holder_revision, now, settings);
    if (!why.empty()) {
      out.refused.push_back({v.voter, std::move(why)});
      continue;
    }
    out.counted.push_back(v);
  }
  out.fence = !observers.empty() && out.counted.size() >= out.needed;
  return out;
}

}  // namespace snowid::skew
