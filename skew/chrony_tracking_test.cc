// parse_chrony_tracking on the shapes chronyc 4.3 prints (captured from a
// chronyd -x tracking a loopback reference, before and after it
// synchronised), malformed lines, and the bound they give.
#include "chrony_tracking.h"

#include <gtest/gtest.h>

#include <chrono>

namespace snowid::skew {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kSynced =
    "7F000001,127.0.0.1,9,1796235940.725392716,-0.000000953,-0.000000028,0.000000045,-0.005,"
    "-0.001,0.039,0.000004414,0.000001001,0.3,Normal\n";
constexpr std::string_view kUnsynced =
    "00000000,,0,0.000000000,0.000000000,0.000000000,0.000000000,0.000,0.000,0.000,1.000000000,"
    "1.000000000,0.0,Not synchronised\n";

const WallTime kRef = WallTime(1796235940s + 725392716ns);

TEST(ChronyTracking, ASynchronisedLineGivesEveryFieldExactly) {
  const Result<ChronyTracking> r = parse_chrony_tracking(kSynced);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const ChronyTracking& t = r.value();
  EXPECT_EQ(t.reference_id, "7F000001");
  EXPECT_EQ(t.reference_name, "127.0.0.1");
  EXPECT_EQ(t.stratum, 9);
  EXPECT_EQ(t.reference_time, kRef);
  EXPECT_EQ(t.system_offset, -953ns);
  EXPECT_EQ(t.last_offset, -28ns);
  EXPECT_EQ(t.rms_offset, 45ns);
  EXPECT_DOUBLE_EQ(t.frequency_ppm, -0.005);
  EXPECT_DOUBLE_EQ(t.skew_ppm, 0.039);
  EXPECT_EQ(t.root_delay, 4414ns);
  EXPECT_EQ(t.root_dispersion, 1001ns);
  EXPECT_EQ(t.update_interval, 300ms);
  EXPECT_EQ(t.leap_status, "Normal");
}

TEST(ChronyTracking, TheBoundIsOffsetPlusDispersionPlusHalfTheDelayGrownByTheDrift) {
  const ChronyTracking t = parse_chrony_tracking(kSynced).value();
  // 953 + 1001 + 2207 ns, and 50 ppm of 1 s.
  EXPECT_EQ(chrony_bound(t, kRef).value(), 4161ns);
  EXPECT_EQ(chrony_bound(t, kRef + 1s).value(), 4161ns + 50us);
  ChronyBoundOptions chrony_own;
  chrony_own.drift_ppm = 1;
  EXPECT_EQ(chrony_bound(t, kRef + 1s, chrony_own).value(), 4161ns + 1us);
}

TEST(ChronyTracking, AnUnsynchronisedOrStaleOrFutureUpdateGivesNoBound) {
  const ChronyTracking unsynced = parse_chrony_tracking(kUnsynced).value();
  EXPECT_EQ(unsynced.leap_status, "Not synchronised");
  EXPECT_EQ(chrony_bound(unsynced, kRef).status().code(), Code::kUnavailable);

  const ChronyTracking t = parse_chrony_tracking(kSynced).value();
  // 8 update intervals of 0.3 s are 2.4 s.
  EXPECT_TRUE(chrony_bound(t, kRef + 2400ms).is_ok());
  const Result<Duration> stale = chrony_bound(t, kRef + 2401ms);
  EXPECT_EQ(stale.status().code(), Code::kUnavailable);
  EXPECT_NE(stale.status().message().find("free running"), std::string::npos);
  EXPECT_EQ(chrony_bound(t, kRef - 2s).status().code(), Code::kUnavailable);
  EXPECT_TRUE(chrony_bound(t, kRef - 500ms).is_ok()) << "within a second: read skew";
}

TEST(ChronyTracking, ALeapSecondAnnouncedIsStillABound) {
  std::string line(kSynced);
  line.replace(line.find("Normal"), 6, "Insert second");
  const Result<ChronyTracking> r = parse_chrony_tracking(line);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_TRUE(chrony_bound(r.value(), kRef).is_ok());
}

TEST(ChronyTracking, MalformedLinesAreRefusedNamingWhatIsWrong) {
  const auto refused = [](std::string line, std::string_view says) {
    const Result<ChronyTracking> r = parse_chrony_tracking(line);
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << line;
    EXPECT_NE(r.status().message().find(says), std::string::npos) << r.status().message();
  };
  const std::string good(kSynced);
  refused("", "fields");
  refused("Reference ID    : 7F000001 (localhost)", "fields");
  refused(good.substr(0, good.rfind(',')), "13 fields");
  refused(good.substr(0, good.size() - 1) + ",extra", "15 fields");
  refused("XYZ" + good.substr(8), "reference id");
  // The good line with one field's text replaced.
  const auto with = [&](std::string_view from, std::string_view to) {
    std::string line = good;
    line.replace(line.find(from), from.size(), to);
    return line;
  };
  refused(with("0.000004414", "-0.00000441"), "root delay");
  refused(with("-0.005", "nan"), "frequency");
  refused(with(",9,", ",17,"), "stratum");
  refused(with("Normal", "Sometimes"), "leap status");
  refused(with("0.3,", "0.,"), "update interval");
  // Terms beyond 10^9 s: the age limit multiplies the interval, and the
  // bound adds the terms; neither may overflow.
  refused(with("0.3,", "3444444444,"), "update interval is beyond");
  refused(with("0.000004414", "1000000000.1"), "root delay is beyond");
  refused(with("-0.000000953", "-1000000001"), "system time is beyond");
}

TEST(ChronyTracking, TheLargestTermsStillGiveABoundWithoutOverflow) {
  std::string line(kSynced);
  const auto set = [&](std::string_view from, std::string_view to) {
    line.replace(line.find(from), from.size(), to);
  };
  set("-0.000000953", "-1000000000");
  set("0.000004414", "1000000000");
  set("0.3,", "1000000000,");
  const Result<ChronyTracking> t = parse_chrony_tracking(line);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  const Result<Duration> bound = chrony_bound(t.value(), t.value().reference_time);
  ASSERT_TRUE(bound.is_ok()) << bound.status().message();
  EXPECT_GE(bound.value(), std::chrono::seconds(1'500'000'000));
}

}  // namespace
}  // namespace snowid::skew
