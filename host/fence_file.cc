#include "fence_file.h"

#include <utility>

namespace snowid::common {

std::string fence_path(const std::string& dir, WorkerId worker) {
  return dir + "/fence-r" + std::to_string(worker.region) + "-h" + std::to_string(worker.host);
}

RecordingFenceStore::RecordingFenceStore(std::string path)
    : inner_(make_file_fence_store(std::move(path))) {}

Result<std::optional<WallTime>> RecordingFenceStore::load() {
  Result<std::optional<WallTime>> r = inner_->load();
  if (!r.is_ok()) last_failure_ = r.status();
  return r;
}

Status RecordingFenceStore::store(WallTime fence) {
  Status s = inner_->store(fence);
  if (!s.is_ok()) last_failure_ = s;
  return s;
}

}  // namespace snowid::common
