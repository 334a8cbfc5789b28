// ClockReference against SNTP servers in this process: a good one is
// measured and shown in the readings; one that answers DENY is asked once
// and never again; a chronyc that is not there leaves the bound unknown and
// counts the failure.
#include "clock_reference.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "service_test_support.h"
#include "sntp_test_server.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using skew::testing::Bytes;
using skew::testing::FakeSntpServer;
using skew::testing::sntp_reply;
using test_support::eventually;

WallTime now() { return system_clock().wall_now(); }

TEST(ClockReference, AGoodServerIsMeasuredAndADenyingOneIsNotAskedAgain) {
  FakeSntpServer good([](const Bytes& request, int) {
    const WallTime t = now() + 40ms;
    return std::vector<Bytes>{sntp_reply(request, 0, 3, "LOCL", t, t)};
  });
  FakeSntpServer deny([](const Bytes& request, int) {
    return std::vector<Bytes>{sntp_reply(request, 3, 0, "DENY", now(), now())};
  });
  HostBound bound;
  ClockReadings readings;
  ClockReferenceOptions o;
  o.servers = {{"127.0.0.1", good.port()}, {"127.0.0.1", deny.port()}};
  o.poll = 1s;
  ClockReference reference(system_clock(), bound, readings, o);
  ASSERT_TRUE(reference.enabled());
  reference.start();
  ASSERT_TRUE(eventually([&] { return readings.snapshot().servers[0].bursts >= 2; }));
  reference.stop();

  const ClockReadingsSnapshot s = readings.snapshot();
  ASSERT_EQ(s.servers.size(), 2u);
  const ServerReading& g = s.servers[0];
  EXPECT_EQ(g.server, "127.0.0.1:" + std::to_string(good.port()));
  EXPECT_TRUE(g.ok);
  EXPECT_EQ(g.stratum, 3);
  EXPECT_LE(std::chrono::abs(g.offset - 40ms), g.delay / 2 + 100us) << g.offset.count();
  const ServerReading& d = s.servers[1];
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.failure, "kiss_of_death");
  EXPECT_TRUE(d.stopped);
  EXPECT_EQ(d.bursts, 1u);
  EXPECT_EQ(deny.requests(), 1) << "DENY: not asked again";
  EXPECT_FALSE(s.chrony_enabled);
  EXPECT_FALSE(bound.at(system_clock().mono_now()).known());
}

TEST(ClockReference, AChronycThatFailsLeavesTheBoundUnknownAndCountsIt) {
  HostBound bound;
  bound.set({BoundSource::kChrony, 1ms, system_clock().mono_now(), 50.0, 10s});
  ClockReadings readings;
  ClockReferenceOptions o;
  o.chronyc = "/nonexistent/chronyc";
  ClockReference reference(system_clock(), bound, readings, o);
  reference.start();
  ASSERT_TRUE(eventually([&] { return readings.snapshot().chrony_failures >= 1; }));
  reference.stop();
  const ClockReadingsSnapshot s = readings.snapshot();
  EXPECT_TRUE(s.chrony_enabled);
  EXPECT_FALSE(s.chrony_ok);
  EXPECT_NE(s.chrony_error, "");
  EXPECT_FALSE(bound.at(system_clock().mono_now()).known()) << "a failed read clears the bound";
}

TEST(ClockReference, WithNothingConfiguredItIsOffAndStartsNoThread) {
  HostBound bound;
  ClockReadings readings;
  ClockReference reference(system_clock(), bound, readings, {});
  EXPECT_FALSE(reference.enabled());
  reference.start();
  reference.stop();
  EXPECT_TRUE(readings.snapshot().servers.empty());
}

}  // namespace
}  // namespace snowid::daemon
