// An exclusive lock per worker and state directory. Two `snowid next` runs for
// the same worker would share one time fence and could issue the same ids, so
// the second waits for the first.
#pragma once

#include <string>

#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::cli {

class WorkerLock {
 public:
  // Locks `path` (created if missing), waiting up to `wait` for another holder
  // to finish. kUnavailable if it cannot be opened or is still held.
  static Result<WorkerLock> acquire(const std::string& path, Duration wait);

  WorkerLock(WorkerLock&& other) noexcept;
  WorkerLock& operator=(WorkerLock&&) = delete;
  WorkerLock(const WorkerLock&) = delete;
  WorkerLock& operator=(const WorkerLock&) = delete;
  // Releases the lock.
  ~WorkerLock();

 private:
  explicit WorkerLock(int fd) noexcept : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace snowid::cli
