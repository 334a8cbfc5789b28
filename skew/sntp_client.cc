#include "sntp_client.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <thread>

namespace snowid::skew {
namespace {

class Socket {
 public:
  explicit Socket(int fd) noexcept : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

// A connected UDP socket to the server (so the kernel drops datagrams from
// any other address), or -1 with `error` set.
int connect_udp(const SntpServer& server, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(server.port);
  if (const int rc = ::getaddrinfo(server.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    error = "cannot resolve " + server.host + ": " + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      error = std::string("connect: ") + std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0 && error.empty()) error = "no address for " + server.host;
  return fd;
}

// A transmit value nobody can predict, so that a forged reply cannot echo it.
NtpTimestamp nonce() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  const std::uint64_t v = random() | 1;  // never zero
  return {static_cast<std::uint32_t>(v >> 32), static_cast<std::uint32_t>(v)};
}

}  // namespace

SntpResult sntp_query(const Clock& clock, const SntpServer& server, Duration timeout) {
  std::string error;
  const Socket socket(connect_udp(server, error));
  if (socket.get() < 0) return sntp_failed(SntpFailure::kNetwork, error);
  const NtpTimestamp sent = nonce();
  const auto request = sntp_request(sent);
  const MonoTime deadline = clock.mono_now() + timeout;
  const WallTime t1 = clock.wall_now();
  if (::send(socket.get(), request.data(), request.size(), 0) !=
      static_cast<ssize_t>(request.size())) {
    return sntp_failed(SntpFailure::kNetwork, std::string("send: ") + std::strerror(errno));
  }
  SntpResult last =
      sntp_failed(SntpFailure::kTimeout, "no reply from " + server.host + " in " +
                                             std::to_string(timeout.count() / 1000000) + " ms");
  for (;;) {
    const Duration left = deadline - clock.mono_now();
    if (left <= Duration::zero()) return last;
    pollfd p{socket.get(), POLLIN, 0};
    const int ms = static_cast<int>(
        std::max<std::int64_t>(1, std::chrono::ceil<std::chrono::milliseconds>(left).count()));
    const int ready = ::poll(&p, 1, ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return sntp_failed(SntpFailure::kNetwork, std::strerror(errno));
    if (ready == 0) continue;
    std::uint8_t buffer[1024];
    const ssize_t n = ::recv(socket.get(), buffer, sizeof buffer, 0);
    const WallTime t4 = clock.wall_now();
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      // ECONNREFUSED: nothing listens on the port.
      return sntp_failed(SntpFailure::kNetwork, std::string("recv: ") + std::strerror(errno));
    }
    SntpResult r = check_sntp_reply(
        std::span<const std::uint8_t>(buffer, static_cast<std::size_t>(n)), sent, t1, t4);
    // Not an answer to this request: keep waiting for the real one.
    if (r.failure == SntpFailure::kBadOrigin) {
      last = std::move(r);
      continue;
    }
    return r;
  }
}

SntpResult sntp_burst(const Clock& clock, const SntpServer& server,
                      const SntpBurstOptions& options) {
  const int probes = std::clamp(options.probes, 1, 64);
  SntpResult best;
  bool have = false;
  SntpResult last;
  for (int i = 0; i < probes; ++i) {
    if (i > 0 && options.spacing > Duration::zero()) std::this_thread::sleep_for(options.spacing);
    SntpResult r = sntp_query(clock, server, options.timeout);
    if (r.failure == SntpFailure::kKissOfDeath) return r;
    if (r.ok()) {
      if (!have || r.sample.delay < best.sample.delay) best = std::move(r);
      have = true;
    } else {
      last = std::move(r);
    }
  }
  return have ? best : last;
}

}  // namespace snowid::skew
