// The persisted time fence: an instant that no issued id's time has passed.
// A generator records a fence some window ahead before it issues beyond the
// current one, so a restart into an earlier clock is caught without an fsync
// per id.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid {

class FenceStore {
 public:
  virtual ~FenceStore() = default;
  // The stored fence, or nullopt when none was ever stored. kDataLoss when
  // what is stored cannot be read: starting anyway could reuse time.
  virtual Result<std::optional<WallTime>> load() = 0;
  // Durably replaces the fence. Only returns OK once it would survive a crash.
  virtual Status store(WallTime fence) = 0;
};

// A fence in one small text file. store() writes a temporary file beside it,
// fsyncs it, renames it over the old one and fsyncs the directory. Not for
// sharing between processes: each generator needs its own path. Thread-safe
// only as the generator uses it (one store() at a time).
std::unique_ptr<FenceStore> make_file_fence_store(std::string path);

}  // namespace snowid
