// read_chrony_tracking against a real chronyd -x that tracks a second one on
// loopback (label: chrony): unsynchronised at first, then synchronised at
// stratum 9 with a bound made of its own terms. Right after the first
// updates the root dispersion can still be hundreds of milliseconds; it
// falls to microseconds within seconds. A chronyd that is not there is an
// error, not a bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "chrony_tracking.h"
#include "chronyd_test_support.h"

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

TEST(ChronyTrackingChronyd, AFollowerOfALoopbackReferenceGivesTheBoundOfItsTerms) {
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

  const ChronyTracking& r = t.value();
  const Result<Duration> bound = chrony_bound(r, system_clock().wall_now());
  ASSERT_TRUE(bound.is_ok()) << bound.status().message();
  const Duration terms = std::chrono::abs(r.system_offset) + r.root_dispersion + r.root_delay / 2;
  EXPECT_GE(bound.value(), terms);
  // The rest is 50 ppm of the update's age, which is at most 8 update
  // intervals (at least 2 s).
  const Duration oldest = std::max<Duration>(2s, r.update_interval * 8);
  EXPECT_LE(bound.value(), terms + oldest / 20000 + 1us);
  EXPECT_LT(r.root_delay, 1ms) << "loopback";
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
