#include "socket_path.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace snowid::daemon {
namespace {

// Creates `dir` and its missing parents with mode 0755.
Status make_socket_dir(const std::string& dir) {
  if (dir.empty()) return Status::ok();
  for (std::size_t end = dir.find('/', 1);; end = dir.find('/', end + 1)) {
    const std::string prefix = dir.substr(0, end);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      const int err = errno;
      return Status(Code::kUnavailable,
                    "unix listener: cannot create directory " + prefix + ": " + errno_text(err));
    }
    if (end == std::string::npos) break;
  }
  return Status::ok();
}

// ServerOptions::private_socket_dir.
Status check_private_dir(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    const int err = errno;
    return Status(Code::kUnavailable,
                  "unix listener: cannot check " + dir + ": " + errno_text(err));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) {
    return Status(Code::kFailedPrecondition,
                  "unix listener: " + dir +
                      " must be a directory owned by this user and writable by no one else "
                      "(another user could replace the socket in it); remove it, or set "
                      "--socket elsewhere");
  }
  return Status::ok();
}

// The stale-socket policy of server.h, before binding `path`.
Status clear_socket_path(const std::string& path, Logger& log) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::ok();
    const int err = errno;
    return Status(Code::kUnavailable,
                  "unix listener: cannot check " + path + ": " + errno_text(err));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Status(Code::kFailedPrecondition,
                  "unix listener: " + path +
                      " exists and is not a socket; snowidd removes only stale sockets");
  }
  // Non-blocking: a listener with a full backlog answers EAGAIN at once.
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    const int err = errno;
    return Status(Code::kUnavailable, "unix listener: socket(): " + errno_text(err));
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int err = rc == 0 ? 0 : errno;
  ::close(fd);
  // EAGAIN: a listener whose backlog is full; it is serving.
  if (rc == 0 || err == EAGAIN) {
    return Status(Code::kUnavailable, "another snowidd is serving " + path);
  }
  if (err != ECONNREFUSED) {
    return Status(Code::kUnavailable,
                  "unix listener: cannot tell whether " + path + " is in use: " + errno_text(err));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    const int e = errno;
    return Status(Code::kUnavailable,
                  "unix listener: cannot remove the stale socket " + path + ": " + errno_text(e));
  }
  log.info("removed stale socket", {{"address", path}});
  return Status::ok();
}

}  // namespace

std::string errno_text(int err) { return std::strerror(err); }

Status prepare_socket_path(const std::string& path, bool private_dir, Logger& log) {
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return Status(Code::kInvalidArgument, "unix listener: the socket path " + path + " is " +
                                              std::to_string(path.size()) + " bytes; at most " +
                                              std::to_string(sizeof(sockaddr_un{}.sun_path) - 1));
  }
  const std::size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    if (Status s = make_socket_dir(path.substr(0, slash)); !s.is_ok()) return s;
    if (private_dir) {
      if (Status s = check_private_dir(path.substr(0, slash)); !s.is_ok()) return s;
    }
  }
  return clear_socket_path(path, log);
}

void SocketFile::made(const std::string& path) {
  path_ = path;
  made_ = true;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
}

void SocketFile::remove() {
  if (!made_) return;
  made_ = false;
  struct stat st {};
  // Another daemon may have replaced a file we lost track of; only ours goes.
  if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_) {
    ::unlink(path_.c_str());
  }
}

}  // namespace snowid::daemon
