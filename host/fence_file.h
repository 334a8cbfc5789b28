// The time fence kept per worker in the state directory, by `snowid next`
// and by snowidd alike: one name for both, so that each sees the other's.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mutex.h"
#include "snowid/fence.h"
#include "snowid/layout.h"

namespace snowid::host {

// "<dir>/fence-r<region>-h<host>": one file per worker, because a fence file
// must never be shared by two generators.
std::string fence_path(const std::string& dir, WorkerId worker);

// Forwards to make_file_fence_store(path) and remembers the last failure, so
// that a refusal can say why the fence could not be stored (the generator
// only reports kUnavailable). load() and store() are called by one generator
// at a time; last_failure() may be called from any thread meanwhile.
class RecordingFenceStore final : public FenceStore {
 public:
  explicit RecordingFenceStore(std::string path);
  Result<std::optional<WallTime>> load() override;
  Status store(WallTime fence) override;
  // The last failed load() or store(); OK if none failed.
  Status last_failure() const;

 private:
  void record(const Status& failure);

  std::unique_ptr<FenceStore> inner_;
  mutable internal::Mutex mu_;
  Status last_failure_ GUARDED_BY(mu_);
};

// The time fence of each worker id a process leases, in one state directory
// under fence_path()'s names: the one source of fence stores for snowidd and
// for `snowid next`. Remembers the stores it made, so that a refusal, or a
// failure to start or to close, can say why a fence could not be read or
// written. Thread-safe.
class FenceStores {
 public:
  explicit FenceStores(std::string state_dir);
  // A new store for `worker`'s fence file; the generator's fence_store_for.
  std::shared_ptr<FenceStore> store_for(WorkerId worker);
  // The last failure of any store made; OK if none failed. Meant for when
  // no generator uses the stores (before it is created or after close()):
  // while one does, a later failure may replace the answer.
  Status last_failure() const;
  // The last failure of the newest store made for `worker` (the one its
  // current generator writes to); OK if it has not failed, or if no store
  // was made for `worker`.
  Status last_failure_of(WorkerId worker) const;

 private:
  struct Made {
    WorkerId worker;
    std::shared_ptr<RecordingFenceStore> store;
  };

  std::string dir_;
  mutable internal::Mutex mu_;
  std::vector<Made> stores_ GUARDED_BY(mu_);
};

}  // namespace snowid::host
