#include "judge.h"

#include <set>
#include <utility>

#include "median_band.h"

namespace snowid::skew {

bool may_vote(State own_state) noexcept {
  return own_state == State::kOk || own_state == State::kAlert;
}

Judge::Judge(std::string self, SkewSettings settings)
    : self_(std::move(self)), settings_(settings) {}

std::optional<VoteRecord> vote_against(const Judgement& target, const Judgement& self,
                                       const std::optional<Reading>& reference,
                                       WallTime measured_at, std::int64_t holder_revision) {
  if (target.self || target.outcome.action != Action::kFence || !may_vote(self.state)) {
    return std::nullopt;
  }
  const bool peers = target.evidence.peers == Verdict::kBeyond;
  const bool by_reference = target.evidence.reference == Verdict::kBeyond;
  VoteRecord vote;
  vote.basis = peers && by_reference ? VoteBasis::kBoth
               : peers               ? VoteBasis::kPeers
                                     : VoteBasis::kReference;
  // A fence judgement always has the deviation it rests on.
  const std::optional<Reading>& deviation =
      peers ? target.peer_deviation : target.reference_deviation;
  if (!deviation || !target.offset) return std::nullopt;
  vote.offset = *target.offset;
  vote.delay = target.delay;
  vote.measured_at = measured_at;
  vote.reference = reference;
  vote.deviation = *deviation;
  vote.voter_state = self.state;
  vote.holder_revision = holder_revision;
  return vote;
}

Judgement Judge::judge_one(const std::string& target, bool self, std::optional<Reading> offset,
                           Duration delay, const std::optional<MedianBand>& band,
                           const std::optional<Reading>& reference, bool paused) {
  Histories& h = histories_[target];
  Judgement j;
  j.target = target;
  j.self = self;
  j.offset = offset;
  j.delay = delay;
  if (offset && band) j.peer_deviation = deviation_from(*offset, *band);
  if (offset && reference) {
    // target - reference = (target - observer) - (reference - observer).
    j.reference_deviation =
        Reading{offset->value - reference->value, offset->uncertainty + reference->uncertainty};
  }
  h.peers.add(j.peer_deviation);
  h.reference.add(j.reference_deviation);
  h.raw.add(offset);
  // Evidence needs this burst's reading: a clock not measured now is never
  // fenced on older bursts alone.
  if (j.peer_deviation) j.evidence.peers = h.peers.fence_verdict(settings_);
  if (j.reference_deviation) j.evidence.reference = h.reference.fence_verdict(settings_);
  j.outcome = apply_vote_rule(j.evidence);
  // After a pause nothing this host measured can be trusted yet.
  if (paused && j.outcome.action == Action::kFence) j.outcome = {Action::kNone, "paused"};
  const EvidenceHistory& shown = band ? h.peers : reference ? h.reference : h.raw;
  StateFlags flags;
  flags.vetoed = j.outcome.action == Action::kVeto;
  flags.paused = paused && self;
  j.state = classify(shown, settings_, flags);
  return j;
}

std::vector<Judgement> Judge::round(const RoundInput& input) {
  std::vector<Reading> clocks{Reading{}};
  std::set<std::string> seen{self_};
  for (const PeerReading& p : input.peers) {
    seen.insert(p.host);
    if (p.offset) clocks.push_back(*p.offset);
  }
  for (auto it = histories_.begin(); it != histories_.end();) {
    it = seen.count(it->first) != 0 ? std::next(it) : histories_.erase(it);
  }
  // Bursts from before a pause relate clocks as they were then.
  if (input.paused) histories_.clear();
  const std::optional<MedianBand> band = median_band(clocks);
  std::vector<Judgement> out;
  out.reserve(input.peers.size() + 1);
  out.push_back(
      judge_one(self_, true, Reading{}, Duration::zero(), band, input.reference, input.paused));
  for (const PeerReading& p : input.peers) {
    out.push_back(judge_one(p.host, false, p.offset, p.delay, band, input.reference, input.paused));
  }
  return out;
}

}  // namespace snowid::skew
