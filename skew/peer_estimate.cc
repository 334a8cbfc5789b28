#include "peer_estimate.h"

namespace snowid::skew {

bool overlaps(const Reading& a, const Reading& b) noexcept {
  const Duration gap = a.value > b.value ? a.value - b.value : b.value - a.value;
  return gap <= a.uncertainty + b.uncertainty;
}

Duration PeerEstimate::aged_uncertainty(const Measurement& m, WallTime now) const {
  const Duration age = now > m.at ? now - m.at : Duration::zero();
  const auto growth =
      static_cast<Duration::rep>(static_cast<double>(age.count()) * max_drift_ppm_ / 1e6);
  return m.offset.uncertainty + Duration(growth);
}

std::optional<std::size_t> PeerEstimate::best_index(WallTime now) const {
  if (bursts_.empty()) return std::nullopt;
  std::size_t best = bursts_.size() - 1;
  for (std::size_t i = 0; i < bursts_.size(); ++i) {
    if (aged_uncertainty(bursts_[i], now) < aged_uncertainty(bursts_[best], now)) best = i;
  }
  return best;
}

std::optional<Reading> PeerEstimate::held_at(WallTime now) const {
  const std::optional<std::size_t> i = best_index(now);
  if (!i) return std::nullopt;
  return Reading{bursts_[*i].offset.value, aged_uncertainty(bursts_[*i], now)};
}

std::optional<Reading> PeerEstimate::held() const {
  if (bursts_.empty() || latest_ != BurstOutcome::kMeasured) return std::nullopt;
  return held_at(bursts_.back().at);
}

std::optional<Measurement> PeerEstimate::held_measurement() const {
  if (bursts_.empty() || latest_ != BurstOutcome::kMeasured) return std::nullopt;
  return bursts_[*best_index(bursts_.back().at)];
}

PeerEstimate::Update PeerEstimate::add(const Burst& burst) {
  latest_ = burst.outcome;
  if (burst.outcome != BurstOutcome::kMeasured) {
    // An unmeasurable path says nothing about the clock: hold nothing rather
    // than an estimate that can no longer be checked.
    bursts_.clear();
    return burst.outcome == BurstOutcome::kUnmeasurable ? Update::kUnmeasurable : Update::kEmpty;
  }
  const Measurement& m = *burst.best;
  const std::optional<Reading> before = bursts_.empty() ? std::nullopt : held_at(m.at);
  if (before && !overlaps(*before, m.offset)) {
    bursts_.clear();
    bursts_.push_back(m);
    ++steps_;
    return Update::kStep;
  }
  bursts_.push_back(m);
  while (bursts_.size() > kBursts) bursts_.pop_front();
  return Update::kHeld;
}

void PeerEstimate::drop() noexcept {
  bursts_.clear();
  latest_ = BurstOutcome::kEmpty;
}

}  // namespace snowid::skew
