#include "fence_file.h"

#include <utility>

namespace snowid::host {

std::string fence_path(const std::string& dir, WorkerId worker) {
  return dir + "/fence-r" + std::to_string(worker.region) + "-h" + std::to_string(worker.host);
}

RecordingFenceStore::RecordingFenceStore(std::string path)
    : inner_(make_file_fence_store(std::move(path))) {}

Result<std::optional<WallTime>> RecordingFenceStore::load() {
  Result<std::optional<WallTime>> r = inner_->load();
  if (!r.is_ok()) record(r.status());
  return r;
}

Status RecordingFenceStore::store(WallTime fence) {
  Status s = inner_->store(fence);
  if (!s.is_ok()) record(s);
  return s;
}

Status RecordingFenceStore::last_failure() const {
  internal::MutexLock lock(mu_);
  return last_failure_;
}

void RecordingFenceStore::record(const Status& failure) {
  internal::MutexLock lock(mu_);
  last_failure_ = failure;
}

FenceStores::FenceStores(std::string state_dir) : dir_(std::move(state_dir)) {}

std::shared_ptr<FenceStore> FenceStores::store_for(WorkerId worker) {
  auto store = std::make_shared<RecordingFenceStore>(fence_path(dir_, worker));
  internal::MutexLock lock(mu_);
  stores_.push_back({worker, store});
  return store;
}

Status FenceStores::last_failure() const {
  internal::MutexLock lock(mu_);
  for (auto it = stores_.rbegin(); it != stores_.rend(); ++it) {
    if (Status failure = it->store->last_failure(); !failure.is_ok()) return failure;
  }
  return Status::ok();
}

Status FenceStores::last_failure_of(WorkerId worker) const {
  internal::MutexLock lock(mu_);
  for (auto it = stores_.rbegin(); it != stores_.rend(); ++it) {
    if (it->worker == worker) {
      return it->store->last_failure();
    }
  }
  return Status::ok();
}

}  // namespace snowid::host
