// Thin POSIX helpers shared by the file-based stores: errno as a Status, a
// descriptor that closes itself, the identity of an open file, and private
// state directories. Not part of the public API.
#pragma once

#include <string>
#include <utility>

#include "snowid/status.h"

namespace snowid::internal {

// "<what> <path>: <strerror(err)>" with `code`.
Status io_error(Code code, const std::string& what, const std::string& path, int err);

// Closes a descriptor (and with it any flock on it) when it goes away.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    reset();
    fd_ = std::exchange(o.fd_, -1);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset() noexcept;

 private:
  int fd_ = -1;
};

// True if `fd` is still the file at `path`: nobody removed or replaced it.
bool same_file(int fd, const std::string& path);

// Creates the directory `path` (mode 0700) unless it exists; kUnavailable if
// it cannot be created or is not a directory.
Status make_dir(const std::string& path);

// Like `mkdir -p`, each new directory with mode 0700.
Status make_dirs(const std::string& path);

}  // namespace snowid::internal
