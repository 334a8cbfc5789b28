// One observer's judgement of every clock it measures, itself included, once
// per burst round: peer evidence, reference evidence, the vote rule and the
// state (docs/skew.md, "The vote rule"). Pure: the caller brings the held
// estimates; nothing here reads a clock or the network.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evidence.h"
#include "median_band.h"
#include "skew_settings.h"
#include "state.h"
#include "vote_record.h"
#include "vote_rule.h"

namespace snowid::skew {

struct PeerReading {
  std::string host;
  // The held offset of the peer (peer minus observer); nullopt: unmeasurable.
  std::optional<Reading> offset;
  // The delay of the burst it comes from, for votes and explanations.
  Duration delay{};
};

struct RoundInput {
  std::vector<PeerReading> peers;
  // The reference's offset from the observer (reference minus observer), as
  // the SNTP client measures it; nullopt: no reference.
  std::optional<Reading> reference;
  // This host was paused since the last round (PauseDetector) and the
  // caller dropped its estimates: the judge forgets its own history too, and
  // for this round the observer is suspect and fences nothing.
  bool paused = false;
};

struct Judgement {
  std::string target;
  bool self = false;
  // The target's offset from the observer (0 +- 0 for the observer itself),
  // and the delay it was measured with.
  std::optional<Reading> offset;
  Duration delay{};
  // Its distance from the median band (peer evidence) and from the
  // reference (reference evidence), this round.
  std::optional<Reading> peer_deviation;
  std::optional<Reading> reference_deviation;
  // Each kind only when this burst measured the target (peers: with at least
  // 3 clocks measured; reference: with a reference reading).
  Evidence evidence;
  RuleOutcome outcome;
  State state = State::kOk;
};

// Keeps three bursts of evidence per clock. Not thread-safe.
class Judge {
 public:
  Judge(std::string self, SkewSettings settings);

  // Judges the observer (first) and every peer in `input` (in input order).
  // Clocks no longer in `input` are forgotten.
  std::vector<Judgement> round(const RoundInput& input);

 private:
  struct Histories {
    EvidenceHistory peers;
    EvidenceHistory reference;
    EvidenceHistory raw;
  };
  Judgement judge_one(const std::string& target, bool self, std::optional<Reading> offset,
                      Duration delay, const std::optional<MedianBand>& band,
                      const std::optional<Reading>& reference, bool paused);

  std::string self_;
  SkewSettings settings_;
  std::map<std::string, Histories> histories_;
};

// A voter's own check: only a host whose own state is ok or alert may vote.
bool may_vote(State own_state) noexcept;

// The vote the observer writes against `target` (a peer's judgement), or
// nullopt when it must not vote: the judgement is not fence, or the voter
// does not pass its own check (`self` is the observer's judgement of itself,
// from the same round). `reference` is the round's reference reading,
// `measured_at` the observer's clock now, `holder_revision` the target's
// holder key revision as the observer saw it.
std::optional<VoteRecord> vote_against(const Judgement& target, const Judgement& self,
                                       const std::optional<Reading>& reference,
                                       WallTime measured_at, std::int64_t holder_revision);

}  // namespace snowid::skew
