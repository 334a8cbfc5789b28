#include "sntp_test_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <utility>

namespace snowid::skew::testing {
namespace {

void put32(Bytes& p, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[at + i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}
void put_ts(Bytes& p, std::size_t at, NtpTimestamp t) {
  put32(p, at, t.seconds);
  put32(p, at + 4, t.fraction);
}
NtpTimestamp transmit_of(const Bytes& request) {
  const auto word = [&](std::size_t at) {
    return (std::uint32_t{request[at]} << 24) | (std::uint32_t{request[at + 1]} << 16) |
           (std::uint32_t{request[at + 2]} << 8) | request[at + 3];
  };
  return {word(40), word(44)};
}

}  // namespace

Bytes sntp_reply(const Bytes& request, int leap, int stratum, const char* refid, WallTime t2,
                 WallTime t3) {
  Bytes p(kNtpPacketBytes, 0);
  p[0] = static_cast<std::uint8_t>((leap << 6) | (4 << 3) | 4);
  p[1] = static_cast<std::uint8_t>(stratum);
  std::memcpy(&p[12], refid, 4);
  put_ts(p, 24, transmit_of(request));
  put_ts(p, 32, ntp_from_wall(t2));
  put_ts(p, 40, ntp_from_wall(t3));
  return p;
}

FakeSntpServer::FakeSntpServer(Answer answer) : answer_(std::move(answer)) {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    socklen_t n = sizeof a;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n) == 0) port_ = ntohs(a.sin_port);
  }
  thread_ = std::thread([this] { serve(); });
}

FakeSntpServer::~FakeSntpServer() {
  stop_ = true;
  thread_.join();
  ::close(fd_);
}

void FakeSntpServer::serve() {
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    Bytes request(512);
    sockaddr_in from{};
    socklen_t n = sizeof from;
    const ssize_t got =
        ::recvfrom(fd_, request.data(), request.size(), 0, reinterpret_cast<sockaddr*>(&from), &n);
    if (got < 48) continue;
    request.resize(static_cast<std::size_t>(got));
    for (const Bytes& out : answer_(request, requests_++)) {
      ::sendto(fd_, out.data(), out.size(), 0, reinterpret_cast<sockaddr*>(&from), n);
    }
  }
}

}  // namespace snowid::skew::testing
