// Shared by the server's tests: a blocking client socket on a Unix socket
// or loopback TCP, with a receive timeout.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <string_view>

namespace snowid::daemon::test_support {

// A blocking client socket with a receive timeout, so a test fails rather
// than hangs when a reply does not come.
class Client {
 public:
  static Client unix_socket(const std::string& path) {
    Client c(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    c.connected_ = ::connect(c.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    return c;
  }
  static Client tcp(std::uint16_t port) {
    Client c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c.connected_ = ::connect(c.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    return c;
  }
  Client(Client&& other) noexcept : fd_(other.fd_), connected_(other.connected_) { other.fd_ = -1; }
  Client(const Client&) = delete;
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }

  bool connected() const { return connected_; }
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  // Reads until `done(received)` holds, the peer closes or the timeout.
  template <typename Done>
  std::string read_until(Done done) {
    std::string got;
    char buf[65536];
    while (!done(got)) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
    }
    return got;
  }
  std::string read_lines(std::size_t lines) {
    return read_until([lines](const std::string& s) { return count(s, "\r\n") >= lines; });
  }
  std::string read_to_end() {
    return read_until([](const std::string&) { return false; });
  }
  // True if bytes are waiting to be read now; nothing is read.
  bool readable_now() const {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
  }
  // True if the peer closed (recv returns 0) within the timeout.
  bool closed_by_peer() {
    char c;
    return ::recv(fd_, &c, 1, 0) == 0;
  }
  void close_now() {
    ::close(fd_);
    fd_ = -1;
  }

  static std::size_t count(const std::string& s, std::string_view what) {
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  }

 private:
  explicit Client(int fd) : fd_(fd) {
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  int fd_;
  bool connected_ = false;
};

}  // namespace snowid::daemon::test_support
