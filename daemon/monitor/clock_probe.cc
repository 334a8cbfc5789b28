#include "clock_probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

namespace snowid::daemon {
namespace {

// SNOWID.CLOCK takes no argument: the same bytes every time.
constexpr std::string_view kClockRequest = "*1\r\n$12\r\nSNOWID.CLOCK\r\n";

// SNOWID.CLOCK's timestamps are in nanoseconds, read once each.
constexpr skew::ClockPrecision kPrecision{std::chrono::nanoseconds(1), std::chrono::nanoseconds(0)};

Status unavailable(std::string message) { return Status(Code::kUnavailable, std::move(message)); }

// "host:port" or "[v6]:port" into a socket address; false when malformed.
bool parse_address(const std::string& text, sockaddr_storage& out, socklen_t& len) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 >= text.size()) return false;
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  unsigned port = 0;
  for (const char c : port_text) {
    if (c < '0' || c > '9' || port > 65535) return false;
    port = port * 10 + static_cast<unsigned>(c - '0');
  }
  if (port == 0 || port > 65535) return false;
  std::memset(&out, 0, sizeof out);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    auto* a = reinterpret_cast<sockaddr_in6*>(&out);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<std::uint16_t>(port));
    len = sizeof *a;
    return ::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &a->sin6_addr) == 1;
  }
  auto* a = reinterpret_cast<sockaddr_in*>(&out);
  a->sin_family = AF_INET;
  a->sin_port = htons(static_cast<std::uint16_t>(port));
  len = sizeof *a;
  return ::inet_pton(AF_INET, host.c_str(), &a->sin_addr) == 1;
}

// Milliseconds left until `deadline` for poll(), at least 0.
int poll_ms(const Clock& clock, MonoTime deadline) {
  const Duration left = deadline - clock.mono_now();
  if (left <= Duration::zero()) return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

}  // namespace

ClockProbe::ClockProbe(const Clock& clock, std::string address, ClockProbeOptions options)
    : clock_(clock), address_(std::move(address)), options_(std::move(options)) {}

ClockProbe::~ClockProbe() { disconnect(); }

void ClockProbe::disconnect() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

Status ClockProbe::connect() {
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (!parse_address(address_, addr, len)) {
    return Status(Code::kInvalidArgument,
                  "probe address \"" + address_ + "\" is not host:port with a numeric host");
  }
  fd_ = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) return unavailable(std::string("socket: ") + std::strerror(errno));
  const int one = 1;
  (void)::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const MonoTime deadline = clock_.mono_now() + options_.timeout;
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    if (errno != EINPROGRESS) {
      const int e = errno;
      disconnect();
      return unavailable("connect to " + address_ + ": " + std::strerror(e));
    }
    pollfd p{fd_, POLLOUT, 0};
    int error = 0;
    socklen_t error_len = sizeof error;
    if (::poll(&p, 1, poll_ms(clock_, deadline)) != 1 ||
        ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &error_len) != 0 || error != 0) {
      disconnect();
      return unavailable("connect to " + address_ + ": " +
                         (error != 0 ? std::strerror(error) : "timed out"));
    }
  }
  if (options_.token.empty()) return Status::ok();
  const std::string auth = "*2\r\n$4\r\nAUTH\r\n$" + std::to_string(options_.token.size()) +
                           "\r\n" + options_.token + "\r\n";
  if (Status s = send_all(auth, deadline); !s.is_ok()) return s;
  // +OK, or an error line.
  while (buffer_.find("\r\n") == std::string::npos) {
    pollfd p{fd_, POLLIN, 0};
    char chunk[256];
    if (::poll(&p, 1, poll_ms(clock_, deadline)) != 1) {
      disconnect();
      return unavailable("AUTH to " + address_ + ": no answer in time");
    }
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) {
      disconnect();
      return unavailable("AUTH to " + address_ + ": connection closed");
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
  const std::string reply = buffer_.substr(0, buffer_.find("\r\n"));
  buffer_.erase(0, reply.size() + 2);
  if (reply != "+OK") {
    disconnect();
    return Status(Code::kFailedPrecondition, "AUTH to " + address_ + ": " + reply.substr(0, 200));
  }
  return Status::ok();
}

Status ClockProbe::send_all(std::string_view bytes, MonoTime deadline) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, poll_ms(clock_, deadline)) == 1) continue;
    }
    disconnect();
    return unavailable("send to " + address_ + " failed or timed out");
  }
  return Status::ok();
}

Status ClockProbe::read_reply(MonoTime deadline, ClockReply& out) {
  for (;;) {
    out = read_clock_reply(buffer_);
    if (out.outcome != ClockReply::Outcome::kIncomplete) break;
    if (buffer_.size() > kMaxClockReplyBytes) {
      out = ClockReply{};
      out.outcome = ClockReply::Outcome::kError;
      out.error = "a reply longer than " + std::to_string(kMaxClockReplyBytes) + " bytes";
      break;
    }
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, poll_ms(clock_, deadline)) != 1) {
      disconnect();
      return unavailable(address_ + " did not answer SNOWID.CLOCK in time");
    }
    char chunk[1024];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) {
      disconnect();
      return unavailable(address_ + " closed the connection");
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
  if (out.outcome == ClockReply::Outcome::kError) {
    disconnect();
    return Status(Code::kFailedPrecondition, address_ + ": " + out.error);
  }
  buffer_.erase(0, out.consumed);
  return Status::ok();
}

Result<skew::ProbeSample> ClockProbe::probe() {
  if (fd_ < 0) {
    if (Status s = connect(); !s.is_ok()) return s;
  }
  const MonoTime deadline = clock_.mono_now() + options_.timeout;
  skew::ProbeSample sample;
  // t0 as late as possible before the bytes leave, t3 as soon as they are in.
  sample.t0 = clock_.wall_now();
  if (Status s = send_all(kClockRequest, deadline); !s.is_ok()) return s;
  ClockReply reply;
  if (Status s = read_reply(deadline, reply); !s.is_ok()) return s;
  sample.t3 = clock_.wall_now();
  sample.t1 = reply.received;
  sample.t2 = reply.sent;
  return sample;
}

skew::Burst ClockProbe::burst() {
  std::vector<skew::ProbeSample> samples;
  samples.reserve(options_.probes);
  last_error_ = Status::ok();
  for (std::size_t i = 0; i < options_.probes; ++i) {
    if (i > 0) clock_.pause(options_.spacing);
    Result<skew::ProbeSample> s = probe();
    if (s.is_ok()) {
      samples.push_back(s.value());
    } else {
      last_error_ = s.status();
      // A peer that does not answer will not answer the next probe either.
      if (s.status().code() != Code::kFailedPrecondition) break;
    }
  }
  return skew::best_of_burst(samples, kPrecision, options_.rtt_cap);
}

}  // namespace snowid::daemon
