#include "durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "posix_file.h"

namespace snowid::internal {
namespace {

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string dir_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status fsync_dir(const std::string& dir) {
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return io_error(Code::kUnavailable, "cannot open directory", dir, errno);
  const int rc = ::fsync(dfd);
  const int err = errno;
  ::close(dfd);
  if (rc != 0) return io_error(Code::kUnavailable, "cannot fsync directory", dir, err);
  return Status::ok();
}

}  // namespace

int read_up_to(int fd, std::size_t max_bytes, std::string& text) {
  char buf[16384];
  while (text.size() <= max_bytes) {
    const std::size_t want = std::min(sizeof buf, max_bytes + 1 - text.size());
    const ssize_t n = ::read(fd, buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return 0;
}

FileStart read_file_start(const std::string& path, std::size_t max_bytes) {
  FileStart out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.error = errno;
    return out;
  }
  out.opened = true;
  out.error = read_up_to(fd, max_bytes, out.text);
  ::close(fd);
  return out;
}

Result<std::optional<std::string>> read_small_file(const std::string& path) {
  FileStart file = read_file_start(path, kMaxSmallFileBytes);
  if (!file.opened) {
    if (file.error == ENOENT) return std::optional<std::string>();
    return io_error(Code::kUnavailable, "cannot open", path, file.error);
  }
  if (file.error != 0) return io_error(Code::kUnavailable, "cannot read", path, file.error);
  // A longer file is never a valid record; parsing refuses it.
  return std::optional<std::string>(std::move(file.text));
}

Status write_file_durably(const std::string& path, std::string_view text, mode_t mode) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return io_error(Code::kUnavailable, "cannot create", tmp, errno);
  if (!write_all(fd, text) || ::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return io_error(Code::kUnavailable, "cannot write", tmp, err);
  }
  if (::close(fd) != 0) return io_error(Code::kUnavailable, "cannot close", tmp, errno);
  return rename_into_place(tmp, path);
}

Status rename_into_place(const std::string& tmp, const std::string& path) {
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return io_error(Code::kUnavailable, "cannot rename into", path, err);
  }
  return fsync_dir(dir_of(path));
}

}  // namespace snowid::internal
