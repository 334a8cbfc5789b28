#include "observer.h"

#include <set>
#include <utility>

namespace snowid::skew {

Observer::Observer(std::string self, const Clock& clock, SkewSettings settings, Duration period)
    : self_(std::move(self)),
      settings_(settings),
      pauses_(clock, period),
      reference_(settings.max_drift_ppm),
      judge_(self_, settings) {}

ObserverRound Observer::round(const std::vector<PeerBurst>& bursts,
                              const std::optional<Burst>& reference) {
  ObserverRound out;
  out.paused = pauses_.tick().has_value();
  if (out.paused) {
    // Nothing measured before the pause relates this clock to any other now.
    for (auto& [host, estimate] : peers_) estimate.drop();
    reference_.drop();
  }
  std::set<std::string> seen;
  RoundInput input;
  input.paused = out.paused;
  for (const PeerBurst& b : bursts) {
    if (b.host == self_ || !seen.insert(b.host).second) continue;
    PeerEstimate& estimate = peers_.try_emplace(b.host, settings_.max_drift_ppm).first->second;
    (void)estimate.add(b.burst);
    const std::optional<Measurement> held = estimate.held_measurement();
    input.peers.push_back({b.host, estimate.held(), held ? held->delay : Duration::zero()});
  }
  for (auto it = peers_.begin(); it != peers_.end();) {
    it = seen.count(it->first) != 0 ? std::next(it) : peers_.erase(it);
  }
  if (reference) {
    (void)reference_.add(*reference);
    input.reference = reference_.held();
  } else {
    reference_.drop();
  }
  out.reference = input.reference;
  out.judgements = judge_.round(input);
  return out;
}

}  // namespace snowid::skew
