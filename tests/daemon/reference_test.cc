// The clock reference of the real daemon: SNTP bursts to a chronyd -x
// serving on loopback, and the bound of a second chronyd -x that tracks the
// first, read through chronyc. Both reach /metrics and INFO, and the bound
// reaches SNOWID.CLOCK. chronyd shares this host's clock, so the offset is
// near zero.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "chrony_tracking.h"
#include "chronyd_test_support.h"
#include "http_client.h"
#include "test_support.h"

namespace snowid::daemon_test {
namespace {

using namespace std::chrono_literals;
using skew::testing::Chronyd;

TEST(Reference, SntpAndChronyReadingsReachMetricsInfoAndTheClockProbe) {
  const std::uint16_t port = skew::testing::free_udp_port();
  const auto reference = Chronyd::reference(port);
  ASSERT_EQ(reference->error(), "");
  const auto follower = Chronyd::follower(port);
  ASSERT_EQ(follower->error(), "");
  // Synchronised within a few seconds (iburst, 250 ms polls).
  bool synced = false;
  for (int i = 0; i < 100 && !synced; ++i) {
    const auto t =
        skew::read_chrony_tracking(skew::testing::chronyc_path(), follower->command_socket());
    synced = t.is_ok() && t.value().leap_status == "Normal";
    if (!synced) std::this_thread::sleep_for(200ms);
  }
  ASSERT_TRUE(synced) << follower->log();

  DaemonDir dir;
  const std::string server = "127.0.0.1:" + std::to_string(port);
  auto d = dir.start_ready({"--sntp-servers", server, "--sntp-poll", "1s", "--chronyc",
                            skew::testing::chronyc_path(), "--chrony-socket",
                            follower->command_socket()});
  const std::string offset_series =
      "snowid_skew_reference_offset_seconds{server=\"" + server + "\"}";
  std::string metrics;
  for (int i = 0; i < 100; ++i) {
    const auto r = http_get(d->http_port(), "/metrics");
    ASSERT_TRUE(r.has_value());
    metrics = r->body;
    if (metric_value(metrics, offset_series) &&
        metric_value(metrics, "snowid_skew_chrony_bound_seconds"))
      break;
    std::this_thread::sleep_for(100ms);
  }
  const auto offset = metric_value(metrics, offset_series);
  ASSERT_TRUE(offset.has_value()) << metrics;
  EXPECT_LT(std::abs(*offset), 0.001) << "the same clock, on loopback";
  const auto delay =
      metric_value(metrics, "snowid_skew_reference_delay_seconds{server=\"" + server + "\"}");
  ASSERT_TRUE(delay.has_value());
  EXPECT_GE(*delay, 0.0);
  EXPECT_EQ(metric_value(metrics, "snowid_skew_reference_up{server=\"" + server + "\"}"), 1.0);
  const auto bound = metric_value(metrics, "snowid_skew_chrony_bound_seconds");
  ASSERT_TRUE(bound.has_value()) << metrics;
  // Microseconds once settled; right after the first updates chrony's root
  // dispersion can still be most of a second (chrony caps it at 16 s).
  EXPECT_GT(*bound, 0.0);
  EXPECT_LT(*bound, 16.0);
  EXPECT_EQ(metric_value(metrics, "snowid_skew_chrony_up"), 1.0);

  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  const auto clock = c->command({"SNOWID.CLOCK"});
  ASSERT_TRUE(clock.has_value());
  ASSERT_NE(clock->field("bound_source"), nullptr) << clock->debug();
  EXPECT_EQ(clock->field("bound_source")->str, "chrony");
  ASSERT_EQ(clock->field("bound_ns")->type, RespValue::Type::kInteger) << clock->debug();
  EXPECT_GT(clock->field("bound_ns")->integer, 0);
  const auto send = wide_value(*clock->field("send_ns"));
  const auto earliest = wide_value(*clock->field("earliest_ns"));
  const auto latest = wide_value(*clock->field("latest_ns"));
  ASSERT_TRUE(send && earliest && latest) << clock->debug();
  EXPECT_EQ(*send - *earliest, clock->field("bound_ns")->integer);
  EXPECT_EQ(*latest - *send, clock->field("bound_ns")->integer);

  const auto info = c->command({"INFO", "clock"});
  ASSERT_TRUE(info.has_value());
  EXPECT_NE(info->str.find("clock_bound_source:chrony"), std::string::npos) << info->str;
  EXPECT_NE(info->str.find("chrony_ok:1"), std::string::npos) << info->str;
  EXPECT_NE(info->str.find("sntp0:server=" + server + ",ok=1,offset_ms="), std::string::npos)
      << info->str;
}

TEST(Reference, WithoutSettingsTheClockSectionSaysOffAndMetricsHaveNoSkewSeries) {
  DaemonDir dir;
  auto d = dir.start_ready();
  const auto r = http_get(d->http_port(), "/metrics");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body.find("snowid_skew_"), std::string::npos);
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  const auto info = c->command({"INFO", "clock"});
  ASSERT_TRUE(info.has_value());
  EXPECT_NE(info->str.find("clock_bound_source:unknown"), std::string::npos) << info->str;
  EXPECT_NE(info->str.find("chrony:off"), std::string::npos);
  EXPECT_NE(info->str.find("sntp_servers:0"), std::string::npos);
}

}  // namespace
}  // namespace snowid::daemon_test
