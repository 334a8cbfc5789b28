#include "worker_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace snowid::cli {

Result<WorkerLock> WorkerLock::acquire(const std::string& path, Duration wait) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    return Status(Code::kUnavailable, "cannot open lock file " + path + ": " + std::strerror(err));
  }
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return WorkerLock(fd);
    const int err = errno;
    if (err != EWOULDBLOCK && err != EINTR) {
      ::close(fd);
      return Status(Code::kUnavailable, "cannot lock " + path + ": " + std::strerror(err));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
      return Status(Code::kUnavailable,
                    "another snowid process still holds " + path + " for this worker");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

WorkerLock::WorkerLock(WorkerLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

WorkerLock::~WorkerLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the only descriptor releases the flock
}

}  // namespace snowid::cli
