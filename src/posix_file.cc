#include "posix_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace snowid::internal {

Status io_error(Code code, const std::string& what, const std::string& path, int err) {
  return Status(code, what + " " + path + ": " + std::strerror(err));
}

void Fd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool same_file(int fd, const std::string& path) {
  struct stat a {
  }, b{};
  if (::fstat(fd, &a) != 0 || ::stat(path.c_str(), &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

Status make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return io_error(Code::kUnavailable, "cannot create directory", path, errno);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return io_error(Code::kUnavailable, "cannot use directory", path, errno);
  }
  if (!S_ISDIR(st.st_mode)) return Status(Code::kUnavailable, path + " is not a directory");
  return Status::ok();
}

Status make_dirs(const std::string& path) {
  for (std::size_t end = path.find('/', 1); end != std::string::npos;
       end = path.find('/', end + 1)) {
    const std::string prefix = path.substr(0, end);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return io_error(Code::kUnavailable, "cannot create directory", prefix, errno);
    }
  }
  return make_dir(path);
}

}  // namespace snowid::internal
