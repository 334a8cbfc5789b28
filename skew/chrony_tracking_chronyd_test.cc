// read_chrony_tracking against a real chronyd -x that tracks a second one on
// loopback (label: chrony): unsynchronised at first, then synchronised at
// stratum 9 with a bound of a few microseconds. A chronyd that is not
// there is an error, not a bound.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "chrony_tracking.h"
#include "chronyd_test_support.h"

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

TEST(ChronyTrackingChronyd, AFollowerOfALoopbackReferenceGivesABoundOfMicroseconds) {
  const std::uint16_t port = testing::free_udp_port();
  const auto reference = testing::Chronyd::reference(port);
  ASSERT_EQ(reference->error(), "");
  const auto follower = testing::Chronyd::follower(port);
  ASSERT_EQ(follower->error(), "");

  // iburst at a 250 ms poll: synchronised within a few seconds.
  Result<ChronyTracking> t = Status(Code::kUnavailable, "not read");
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < give_up) {
    t = read_chrony_tracking(testing::chronyc_path(), follower->command_socket());
    if (t.is_ok() && t.value().leap_status == "Normal") break;
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_TRUE(t.is_ok()) << t.status().message() << "\n" << follower->log();
  ASSERT_EQ(t.value().leap_status, "Normal") << follower->log();
  EXPECT_EQ(t.value().stratum, 9) << "one above the reference's local stratum 8";
  EXPECT_EQ(t.value().reference_name, "127.0.0.1");

  const Result<Duration> bound = chrony_bound(t.value(), system_clock().wall_now());
  ASSERT_TRUE(bound.is_ok()) << bound.status().message();
  EXPECT_GT(bound.value(), Duration::zero());
  EXPECT_LT(bound.value(), 1ms) << "loopback: root delay and dispersion of microseconds";
  std::printf(
      "chronyd following a loopback reference: bound %lld ns (root delay %lld ns, "
      "dispersion %lld ns, system offset %lld ns)\n",
      static_cast<long long>(bound.value().count()),
      static_cast<long long>(t.value().root_delay.count()),
      static_cast<long long>(t.value().root_dispersion.count()),
      static_cast<long long>(t.value().system_offset.count()));
}

TEST(ChronyTrackingChronyd, NoChronydAnsweringIsUnavailable) {
  const Result<ChronyTracking> t =
      read_chrony_tracking(testing::chronyc_path(), "/nonexistent/chronyd.sock", 2s);
  EXPECT_EQ(t.status().code(), Code::kUnavailable) << t.status().message();
}

}  // namespace
}  // namespace snowid::skew
