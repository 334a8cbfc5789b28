// The time fence kept per worker in the state directory, by `snowid next`
// and by snowidd alike: one name for both, so that each sees the other's.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "snowid/fence.h"
#include "snowid/layout.h"

namespace snowid::common {

// "<dir>/fence-r<region>-h<host>": one file per worker, because a fence file
// must never be shared by two generators.
std::string fence_path(const std::string& dir, WorkerId worker);

// Forwards to make_file_fence_store(path) and remembers the last failure, so
// that a refusal can say why the fence could not be stored (the generator
// only reports kUnavailable). Used by one generator at a time.
class RecordingFenceStore final : public FenceStore {
 public:
  explicit RecordingFenceStore(std::string path);
  Result<std::optional<WallTime>> load() override;
  Status store(WallTime fence) override;
  // The last failed load() or store(); OK if none failed.
  const Status& last_failure() const noexcept { return last_failure_; }

 private:
  std::unique_ptr<FenceStore> inner_;
  Status last_failure_;
};

}  // namespace snowid::common
