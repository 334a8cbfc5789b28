// sntp_query and sntp_burst against an SNTP server in this process, on
// loopback, whose replies each test writes: a clock ahead, a Kiss-o'-Death,
// the leap alarm, a forged origin, a negative delay, slow replies.
#include "sntp_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "sntp_test_server.h"

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;
using testing::Bytes;
using FakeServer = testing::FakeSntpServer;

WallTime now() { return system_clock().wall_now(); }

TEST(SntpClient, AServerAheadIsMeasuredWithinHalfTheDelay) {
  FakeServer server([](const Bytes& request, int) {
    const WallTime t = now() + 200ms;
    return std::vector<Bytes>{testing::sntp_reply(request, 0, 2, "LOCL", t, t + 10us)};
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
    return std::vector<Bytes>{testing::sntp_reply(request, 3, 0, "DENY", now(), now())};
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
    return std::vector<Bytes>{testing::sntp_reply(request, 3, 2, "LOCL", now(), now())};
  });
  const SntpResult r = sntp_query(system_clock(), server.address(), 1s);
  EXPECT_EQ(r.failure, SntpFailure::kUnsynchronised);
  EXPECT_TRUE(r.status.retryable());
}

TEST(SntpClient, AReplyWithAForgedOriginIsDroppedAndTheRealOneAccepted) {
  FakeServer server([](const Bytes& request, int) {
    Bytes forged = testing::sntp_reply(request, 0, 2, "LOCL", now() + 1h, now() + 1h);
    forged[31] ^= 1;
    return std::vector<Bytes>{forged, testing::sntp_reply(request, 0, 2, "LOCL", now(), now())};
  });
  const SntpResult r = sntp_query(system_clock(), server.address(), 1s);
  ASSERT_TRUE(r.ok()) << r.status.message();
  EXPECT_LT(std::chrono::abs(r.sample.offset), 1s) << "the forged hour was not taken";
}

TEST(SntpClient, OnlyForgedRepliesTimeOutAsABadOrigin) {
  FakeServer server([](const Bytes& request, int) {
    Bytes forged = testing::sntp_reply(request, 0, 2, "LOCL", now(), now());
    forged[24] ^= 0x80;
    return std::vector<Bytes>{forged};
  });
  const SntpResult r = sntp_query(system_clock(), server.address(), 100ms);
  EXPECT_EQ(r.failure, SntpFailure::kBadOrigin);
}

TEST(SntpClient, AServerIntervalLongerThanTheRoundTripIsANegativeDelay) {
  FakeServer server([](const Bytes& request, int) {
    return std::vector<Bytes>{testing::sntp_reply(request, 0, 2, "LOCL", now() - 1s, now() + 1s)};
  });
  const SntpResult r = sntp_query(system_clock(), server.address(), 1s);
  EXPECT_EQ(r.failure, SntpFailure::kNegativeDelay) << r.status.message();
}

TEST(SntpClient, TheBurstKeepsTheSampleOfLeastDelay) {
  // Every reply but the third waits 50 ms in the server before T2 is read,
  // so that wait is path delay; the third is answered at once.
  FakeServer server([](const Bytes& request, int index) {
    if (index != 2) std::this_thread::sleep_for(50ms);
    const WallTime t = now();
    return std::vector<Bytes>{testing::sntp_reply(request, 0, 2, "LOCL", t, t)};
  });
  const SntpResult r = sntp_burst(system_clock(), server.address(), {5, 1ms, 1s});
  ASSERT_TRUE(r.ok()) << r.status.message();
  EXPECT_EQ(server.requests(), 5);
  EXPECT_LT(r.sample.delay, 50ms) << "the quick one";
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
