// One host's monitor across rounds: the held estimate of each peer and of
// the reference, the pause detector and the judge, in the order the rules
// need them (docs/skew.md). The caller measures the bursts and acts on what
// comes back (fences itself, writes votes); this class does no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "judge.h"
#include "pause_detector.h"
#include "peer_estimate.h"
#include "skew_settings.h"
#include "snowid/time.h"

namespace snowid::skew {

struct PeerBurst {
  std::string host;
  Burst burst;
};

struct ObserverRound {
  // The observer itself first, then each peer in the order given.
  std::vector<Judgement> judgements;
  // The held reference reading used, if any (for votes and explanations).
  std::optional<Reading> reference;
  // A pause was detected before this round: everything older was dropped.
  bool paused = false;
};

// Not thread-safe: one monitor task owns it.
class Observer {
 public:
  // `clock` must outlive the observer; rounds are due every `period`.
  Observer(std::string self, const Clock& clock, SkewSettings settings,
           Duration period = std::chrono::seconds(1));

  // One round: ticks the pause detector (after a pause, drops every held
  // estimate before adding anything), adds this round's bursts (peers not in
  // `bursts` are forgotten; `reference` nullopt: no reference this round),
  // then judges.
  ObserverRound round(const std::vector<PeerBurst>& bursts, const std::optional<Burst>& reference);

  const std::string& self() const noexcept { return self_; }

 private:
  std::string self_;
  SkewSettings settings_;
  PauseDetector pauses_;
  std::map<std::string, PeerEstimate> peers_;
  PeerEstimate reference_;
  Judge judge_;
};

}  // namespace snowid::skew
