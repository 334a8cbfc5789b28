#include "evidence.h"

namespace snowid::skew {
namespace {

Duration magnitude(Duration d) noexcept { return d < Duration::zero() ? -d : d; }

}  // namespace

Duration lower_bound_of(const Reading& deviation) noexcept {
  return magnitude(deviation.value) - deviation.uncertainty;
}

Verdict judge(const Reading& deviation, Duration limit) noexcept {
  const Duration size = magnitude(deviation.value);
  if (lower_bound_of(deviation) > limit) return Verdict::kBeyond;
  if (size + deviation.uncertainty <= limit) return Verdict::kWithin;
  return Verdict::kUnclear;
}

void EvidenceHistory::add(std::optional<Reading> deviation) noexcept {
  bursts_[next_] = deviation;
  next_ = (next_ + 1) % kDepth;
  if (count_ < kDepth) ++count_;
}

std::optional<Reading> EvidenceHistory::newest(std::size_t i) const noexcept {
  if (i >= count_) return std::nullopt;
  return bursts_[(next_ + kDepth - 1 - i) % kDepth];
}

std::optional<Reading> EvidenceHistory::latest() const noexcept { return newest(0); }

Verdict EvidenceHistory::fence_verdict(const SkewSettings& s) const noexcept {
  std::size_t beyond = 0;
  for (std::size_t i = 0; i < kDepth; ++i) {
    const std::optional<Reading> r = newest(i);
    if (r && r->uncertainty <= s.fence_max_uncertainty && judge(*r, s.fence) == Verdict::kBeyond) {
      ++beyond;
    }
  }
  if (beyond >= 2) return Verdict::kBeyond;
  const std::optional<Reading> last = latest();
  if (last && judge(*last, s.fence) == Verdict::kWithin) return Verdict::kWithin;
  return Verdict::kUnclear;
}

bool EvidenceHistory::alert_streak(const SkewSettings& s) const noexcept {
  if (count_ < kDepth) return false;
  for (std::size_t i = 0; i < kDepth; ++i) {
    const std::optional<Reading> r = newest(i);
    if (!r || r->uncertainty > s.alert_max_uncertainty || magnitude(r->value) <= s.alert) {
      return false;
    }
  }
  return true;
}

}  // namespace snowid::skew
