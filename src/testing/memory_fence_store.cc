#include "snowid/testing/memory_fence_store.h"

namespace snowid::testing {

Result<std::optional<WallTime>> MemoryFenceStore::load() {
  std::lock_guard<std::mutex> lock(mu_);
  if (corrupt_) return Status(Code::kDataLoss, "fence store is corrupt (injected)");
  return fence_;
}

Status MemoryFenceStore::store(WallTime fence) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fail_stores_) return Status(Code::kUnavailable, "fence store is failing (injected)");
  fence_ = fence;
  ++stores_;
  return Status::ok();
}

void MemoryFenceStore::set_fail_stores(bool fail) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_stores_ = fail;
}

void MemoryFenceStore::set_corrupt(bool corrupt) {
  std::lock_guard<std::mutex> lock(mu_);
  corrupt_ = corrupt;
}

std::optional<WallTime> MemoryFenceStore::stored() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fence_;
}

std::uint64_t MemoryFenceStore::stores() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stores_;
}

}  // namespace snowid::testing
