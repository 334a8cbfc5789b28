// The SNTP client against a real chronyd serving NTP on loopback (label:
// chrony). chronyd shares this host's clock, so the true offset is zero;
// a clock of our own 2.5 s ahead is measured as 2.5 s behind the reference.
// The reference is never faked by libfaketime (under 1 s it reports half
// the offset and a negative delay: it keeps the kernel's receive times).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "chronyd_test_support.h"
#include "snowid/testing/shifted_clock.h"
#include "sntp_client.h"

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

class SntpChronydTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::free_udp_port();
    chronyd_ = testing::Chronyd::reference(port_);
    ASSERT_EQ(chronyd_->error(), "");
    // Serving once it answers.
    for (int i = 0; i < 50; ++i) {
      if (sntp_query(system_clock(), server(), 100ms).ok()) return;
      std::this_thread::sleep_for(50ms);
    }
    FAIL() << "chronyd never answered on port " << port_ << ": " << chronyd_->log();
  }
  SntpServer server() const { return {"127.0.0.1", port_}; }

  std::uint16_t port_ = 0;
  std::unique_ptr<testing::Chronyd> chronyd_;
};

TEST_F(SntpChronydTest, TheSameClockIsMeasuredAtZeroWithinHalfTheDelay) {
  const SntpResult r = sntp_burst(system_clock(), server(), {8, 2ms, 500ms});
  ASSERT_TRUE(r.ok()) << r.status.message();
  EXPECT_EQ(r.sample.stratum, 8);
  EXPECT_NE(r.sample.leap, LeapIndicator::kAlarm);
  EXPECT_GE(r.sample.delay, Duration::zero());
  EXPECT_LE(std::chrono::abs(r.sample.offset), r.sample.delay / 2 + 20us)
      << "offset " << r.sample.offset.count() << " ns, delay " << r.sample.delay.count();
  std::printf("chronyd on loopback: min-delay of 8: offset %lld ns, delay %lld ns\n",
              static_cast<long long>(r.sample.offset.count()),
              static_cast<long long>(r.sample.delay.count()));
}

TEST_F(SntpChronydTest, AClockAheadOfTheReferenceIsMeasuredBehindByAsMuch) {
  const snowid::testing::ShiftedClock ahead(2500ms);
  const SntpResult r = sntp_burst(ahead, server(), {8, 2ms, 500ms});
  ASSERT_TRUE(r.ok()) << r.status.message();
  EXPECT_LE(std::chrono::abs(r.sample.offset + 2500ms), r.sample.delay / 2 + 20us)
      << "offset " << r.sample.offset.count() << " ns";
}

}  // namespace
}  // namespace snowid::skew
