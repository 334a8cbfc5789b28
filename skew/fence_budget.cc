#include "fence_budget.h"

#include <algorithm>

namespace snowid::skew {

FenceBudget::FenceBudget(const Clock& clock, const SkewSettings& settings) noexcept
    : clock_(clock), window_(settings.fence_window), dry_run_(settings.dry_run) {}

std::size_t FenceBudget::limit_for(std::size_t fleet) noexcept {
  return std::max<std::size_t>(1, fleet / 5);
}

void FenceBudget::expire(WallTime now) {
  while (!fences_.empty() && now - fences_.front() >= window_) fences_.pop_front();
}

FenceGrant FenceBudget::peer_fence(std::size_t fleet) {
  const WallTime now = clock_.wall_now();
  expire(now);
  if (fences_.size() >= limit_for(fleet)) {
    ++mass_skew_;
    return FenceGrant::kCapped;
  }
  fences_.push_back(now);
  if (dry_run_) {
    ++would_be_;
    return FenceGrant::kDryRun;
  }
  return FenceGrant::kGranted;
}

FenceGrant FenceBudget::room(std::size_t fleet) {
  const WallTime now = clock_.wall_now();
  expire(now);
  if (fences_.size() >= limit_for(fleet)) {
    ++mass_skew_;
    return FenceGrant::kCapped;
  }
  if (dry_run_) {
    fences_.push_back(now);
    ++would_be_;
    return FenceGrant::kDryRun;
  }
  return FenceGrant::kGranted;
}

FenceGrant FenceBudget::self_fence() noexcept {
  if (dry_run_) {
    ++would_be_;
    return FenceGrant::kDryRun;
  }
  return FenceGrant::kGranted;
}

void FenceBudget::note_fence(WallTime at) {
  fences_.insert(std::upper_bound(fences_.begin(), fences_.end(), at), at);
  expire(clock_.wall_now());
}

}  // namespace snowid::skew
