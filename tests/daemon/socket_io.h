// The socket plumbing of the black-box clients (resp_client.h,
// http_client.h): an owned descriptor, connecting to the daemon, writing a
// whole request, and reading with a deadline.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

namespace snowid::daemon_test {

// A file descriptor that closes itself; -1 when it holds none.
class Fd {
 public:
  Fd() noexcept = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  // Closes the descriptor, if any.
  void reset() noexcept;

 private:
  int fd_ = -1;
};

// A stream socket connected to 127.0.0.1:`port` with TCP_NODELAY set, or
// to the Unix socket at `path`; an empty Fd if that fails.
Fd connect_tcp_loopback(int port);
Fd connect_unix_socket(const std::string& path);

// Writes all of `bytes` to the socket (without SIGPIPE); false on an error,
// e.g. after the peer closed.
bool send_all(int fd, std::string_view bytes);

// Waits until `until` for `fd` to be readable, then appends what one read
// gives to `buf`: true. False on timeout, and at the end of the stream or on
// a read error (ECONNRESET), which also set `eof`.
bool receive_some(int fd, std::string& buf, std::chrono::steady_clock::time_point until, bool& eof);

}  // namespace snowid::daemon_test
