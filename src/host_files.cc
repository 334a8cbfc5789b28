#include "host_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "durable_file.h"

namespace snowid::internal {
namespace {

bool write_all_at(int fd, std::string_view data) {
  off_t at = 0;
  while (!data.empty()) {
    const ssize_t n = ::pwrite(fd, data.data(), data.size(), at);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
    at += n;
  }
  return true;
}

}  // namespace

Status prepare_host_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) == 0) {
    // Created: only now may the mode widen, past the umask.
    if (::chmod(dir.c_str(), kHostDirMode) != 0) {
      return io_error(Code::kUnavailable, "cannot set the mode of host directory", dir, errno);
    }
  } else if (errno != EEXIST) {
    return io_error(Code::kUnavailable, "cannot create host directory", dir, errno);
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    return io_error(Code::kUnavailable, "cannot use host directory", dir, errno);
  }
  if (S_ISLNK(st.st_mode)) {
    return Status(Code::kUnavailable, "host directory " + dir + " is a symlink");
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status(Code::kUnavailable, "host directory " + dir + " is not a directory");
  }
  const bool sticky = (st.st_mode & S_ISVTX) != 0;
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !sticky) {
    return Status(Code::kUnavailable, "host directory " + dir +
                                          " is writable by others without the sticky bit, so "
                                          "anyone could remove a held lock");
  }
  if (st.st_uid != 0 && st.st_uid != ::geteuid() && !sticky) {
    return Status(Code::kUnavailable, "host directory " + dir + " belongs to user " +
                                          std::to_string(st.st_uid) + " and is not sticky");
  }
  return Status::ok();
}

Result<Fd> open_host_lock_file(const std::string& path) {
  for (;;) {
    Fd fd(::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() >= 0) return fd;
    if (errno == EACCES) {
      fd = Fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      if (fd.get() >= 0) return fd;
    }
    if (errno != ENOENT) return io_error(Code::kUnavailable, "cannot open", path, errno);
    // O_EXCL: opening another user's existing file with O_CREAT in a sticky
    // directory is refused where fs.protected_regular is on.
    fd =
        Fd(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kHostFileMode));
    if (fd.get() >= 0) {
      if (::fchmod(fd.get(), kHostFileMode) != 0) {
        return io_error(Code::kUnavailable, "cannot set the mode of", path, errno);
      }
      return fd;
    }
    if (errno != EEXIST) return io_error(Code::kUnavailable, "cannot create", path, errno);
    // Created by someone else meanwhile: open theirs.
  }
}

Result<std::optional<std::string>> read_host_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return io_error(Code::kUnavailable, "cannot open", path, errno);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return io_error(Code::kUnavailable, "cannot stat", path, errno);
  if (!S_ISREG(st.st_mode)) return Status(Code::kUnavailable, path + " is not a regular file");
  std::string text;
  // A longer file is never a valid record; parsing refuses it.
  if (const int err = read_up_to(fd.get(), kMaxSmallFileBytes, text); err != 0) {
    return io_error(Code::kUnavailable, "cannot read", path, err);
  }
  return std::optional<std::string>(std::move(text));
}

Status write_host_mark(const std::string& path, std::string_view text) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() >= 0) {
    if (!write_all_at(fd.get(), text) ||
        ::ftruncate(fd.get(), static_cast<off_t>(text.size())) != 0 || ::fsync(fd.get()) != 0) {
      return io_error(Code::kUnavailable, "cannot write", path, errno);
    }
    return Status::ok();
  }
  if (errno != ENOENT) return io_error(Code::kUnavailable, "cannot open", path, errno);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  ::unlink(tmp.c_str());  // left by a crashed process of the same id
  fd = Fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kHostFileMode));
  if (fd.get() < 0) return io_error(Code::kUnavailable, "cannot create", tmp, errno);
  if (::fchmod(fd.get(), kHostFileMode) != 0 || !write_all_at(fd.get(), text) ||
      ::fsync(fd.get()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return io_error(Code::kUnavailable, "cannot write", tmp, err);
  }
  fd.reset();
  return rename_into_place(tmp, path);
}

}  // namespace snowid::internal
