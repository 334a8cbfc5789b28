// sntp_query and sntp_burst against an SNTP server in this process, on
// loopback, whose replies each test writes: a clock ahead, a Kiss-o'-Death,
// the leap alarm, a forged origin, a negative delay, slow replies.
#include "sntp_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<std::uint8_t>;

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

// A server reply: LI, stratum, reference id, the request's transmit as the
// origin, and T2, T3.
Bytes reply(const Bytes& request, int leap, int stratum, const char* refid, WallTime t2,
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

WallTime now() { return system_clock().wall_now(); }

// Answers each datagram with what `answer` returns (none, one or several).
class FakeServer {
 public:
  using Answer = std::function<std::vector<Bytes>(const Bytes& request, int index)>;
  explicit FakeServer(Answer answer) : answer_(std::move(answer)) {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t n = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  SntpServer address() const { return {"127.0.0.1", port_}; }
  int requests() const { return requests_.load(); }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      Bytes request(512);
      sockaddr_in from{};
      socklen_t n = sizeof from;
      const ssize_t got = ::recvfrom(fd_, request.data(), request.size(), 0,
                                     reinterpret_cast<sockaddr*>(&from), &n);
      if (got < 48) continue;
      request.resize(static_cast<std::size_t>(got));
      for (const Bytes& out : answer_(request, requests_++)) {
        ::sendto(fd_, out.data(), out.size(), 0, reinterpret_cast<sockaddr*>(&from), n);
      }
    }
  }

  Answer answer_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

TEST(SntpClient, AServerAheadIsMeasuredWithinHalfTheDelay) {
  FakeServer server([](const Bytes& request, int) {
    const WallTime t = now() + 200ms;
    return std::vector<Bytes>{reply(request, 0, 2, "LOCL", t, t + 10us)};
  });
  const SntpResult r = sntp_burst(system_clock(), server.address(), {4, 1ms, 1s});
  ASSERT_TRUE(r.ok()) << r.status.message();
  EXPECT_EQ(server.requests(), 4);
  EXPECT_GE(r.sample.delay, Duration::zero());
  // θ ± δ/2 holds the truth, but for the time this fake takes between
  // reading T3 and sending (building the packet): 50 us is plenty.
  EXPECT_LE(std::chrono::abs(r.sample.offset - 200ms), r.sample.delay / 2 + 50us)
      << r.sample.offset.count() << " ns, delay " << r.sample.delay.count();
  EXPECT_EQ(r.sample.stratum, 2);
}

TEST(SntpClient, KissOfDeathDenyEndsTheBurstAtOnceAndSaysStop) {
  FakeServer server([](const Bytes& request, int) {
    return std::vector<Bytes>{reply(request, 3, 0, "DENY", now(), now())};
  });
  const SntpResult r = sntp_burst(system_clock(), server.address(), {8, 1ms, 1s});
  EXPECT_EQ(r.failure, SntpFailure::kKissOfDeath);
  EXPECT_EQ(r.kiss, "DENY");
  EXPECT_TRUE(r.stop());
  EXPECT_EQ(r.status.code(), Code::kFailedPrecondition);
  EXPECT_EQ(server.requests(), 1) << "no second request after DENY";
}

TEST(SntpClient, LeapAlarmIsAnUnsynchronisedServerWorthRetryingLater) {
  FakeServer server([](const Bytes& request, int) {
    return std::vector<Bytes>{reply(request, 3, 2, "LOCL", now(), now())};
  });
  const SntpResult r = sntp_query(system_clock(), server.address(), 1s);
  EXPECT_EQ(r.failure, SntpFailure::kUnsynchronised);
  EXPECT_TRUE(r.status.retryable());
}

TEST(SntpClient, AReplyWithAForgedOriginIsDroppedAndTheRealOneAccepted) {
  FakeServer server([](const Bytes& request, int) {
    Bytes forged = reply(request, 0, 2, "LOCL", now() + 1h, now() + 1h);
    forged[31] ^= 1;
    return std::vector<Bytes>{forged, reply(request, 0, 2, "LOCL", now(), now())};
  });
  const SntpResult r = sntp_query(system_clock(), server.address(), 1s);
  ASSERT_TRUE(r.ok()) << r.status.message();
  EXPECT_LT(std::chrono::abs(r.sample.offset), 1s) << "the forged hour was not taken";
}

TEST(SntpClient, OnlyForgedRepliesTimeOutAsABadOrigin) {
  FakeServer server([](const Bytes& request, int) {
    Bytes forged = reply(request, 0, 2, "LOCL", now(), now());
    forged[24] ^= 0x80;
    return std::vector<Bytes>{forged};
  });
  const SntpResult r = sntp_query(system_clock(), server.address(), 100ms);
  EXPECT_EQ(r.failure, SntpFailure::kBadOrigin);
}

TEST(SntpClient, AServerIntervalLongerThanTheRoundTripIsANegativeDelay) {
  FakeServer server([](const Bytes& request, int) {
    return std::vector<Bytes>{reply(request, 0, 2, "LOCL", now() - 1s, now() + 1s)};
  });
  const SntpResult r = sntp_query(system_clock(), server.address(), 1s);
  EXPECT_EQ(r.failure, SntpFailure::kNegativeDelay) << r.status.message();
}

TEST(SntpClient, TheBurstKeepsTheSampleOfLeastDelay) {
  // Every reply but the third waits 30 ms in the server before T2 is read,
  // so that wait is path delay; the third is answered at once.
  FakeServer server([](const Bytes& request, int index) {
    if (index != 2) std::this_thread::sleep_for(30ms);
    const WallTime t = now();
    return std::vector<Bytes>{reply(request, 0, 2, "LOCL", t, t)};
  });
  const SntpResult r = sntp_burst(system_clock(), server.address(), {5, 1ms, 1s});
  ASSERT_TRUE(r.ok()) << r.status.message();
  EXPECT_EQ(server.requests(), 5);
  EXPECT_LT(r.sample.delay, 30ms) << "the quick one";
}

TEST(SntpClient, SilenceIsATimeoutAndAnUnknownNameANetworkFailure) {
  FakeServer server([](const Bytes&, int) { return std::vector<Bytes>{}; });
  const SntpResult quiet = sntp_query(system_clock(), server.address(), 50ms);
  EXPECT_EQ(quiet.failure, SntpFailure::kTimeout);
  EXPECT_EQ(quiet.status.code(), Code::kUnavailable);
  const SntpResult nowhere = sntp_query(system_clock(), {"no-such-host.invalid", 123}, 50ms);
  EXPECT_EQ(nowhere.failure, SntpFailure::kNetwork);
}

}  // namespace
}  // namespace snowid::skew
