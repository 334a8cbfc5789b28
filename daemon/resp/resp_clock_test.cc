// The clock probes over RESP, on the generator's simulated clock: TIME as
// Redis answers it, and SNOWID.CLOCK with the host's bound.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "host_bound.h"
#include "resp_session.h"
#include "resp_test_support.h"
#include "service_test_support.h"
#include "snowid/time.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using test_support::as_map;
using test_support::cmd;
using test_support::read_one;
using test_support::Reply;
using test_support::talk;
using test_support::TestService;

std::int64_t ns_of(WallTime t) { return t.time_since_epoch().count(); }

class RespClockTest : public ::testing::Test {
 protected:
  RespSession session() { return RespSession(*svc.service, {}); }
  TestService svc;
};

TEST_F(RespClockTest, TimeIsTwoBulkStringsOfSecondsAndMicrosecondsOfTheGeneratorsClock) {
  svc.clock.set_wall(WallTime(1780272000s + 123456789ns));
  RespSession s = session();
  const Reply r = read_one(talk(s, cmd({"TIME"})));
  ASSERT_EQ(r.type, '*') << r.text;
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].type, '$');
  EXPECT_EQ(r.items[0].text, "1780272000");
  EXPECT_EQ(r.items[1].type, '$');
  EXPECT_EQ(r.items[1].text, "123456") << "microseconds, floored";

  svc.clock.step_wall(30ms);
  const Reply stepped = read_one(talk(s, cmd({"time"})));
  ASSERT_EQ(stepped.items.size(), 2u);
  EXPECT_EQ(stepped.items[0].text, "1780272000");
  EXPECT_EQ(stepped.items[1].text, "153456") << "a step of the generator's clock shows at once";
}

TEST_F(RespClockTest, TimeWithArgumentsIsAnArityError) {
  RespSession s = session();
  const Reply r = read_one(talk(s, cmd({"TIME", "now"})));
  ASSERT_EQ(r.type, '-');
  EXPECT_EQ(r.text, "ERR wrong number of arguments for 'time' command");
}

TEST_F(RespClockTest, ClockWithoutABoundSaysUnknownAndNullsTheInterval) {
  svc.clock.set_wall(WallTime(1780272000s + 5ns));
  RespSession s = session();
  const Reply r = read_one(talk(s, cmd({"SNOWID.CLOCK"})));
  ASSERT_EQ(r.type, '*') << r.text;
  auto m = as_map(r);
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m["receive_ns"].type, '$') << "nanoseconds pass 2^53: a string, as ids are";
  EXPECT_EQ(m["receive_ns"].text, "1780272000000000005");
  EXPECT_EQ(m["send_ns"].text, "1780272000000000005");
  EXPECT_EQ(m["bound_source"].text, "unknown");
  EXPECT_TRUE(m["bound_ns"].null);
  EXPECT_TRUE(m["earliest_ns"].null);
  EXPECT_TRUE(m["latest_ns"].null);
}

TEST_F(RespClockTest, ClockWithAChronyBoundGrowsItByTheDriftAllowanceWithItsAge) {
  svc.clock.set_wall(WallTime(1780272000s));
  svc.service->host_bound().set(
      {BoundSource::kChrony, 1ms, svc.clock.mono_now(), 50.0, std::chrono::seconds(10)});
  svc.clock.advance(2s);
  RespSession s = session();
  ASSERT_EQ(read_one(talk(s, cmd({"HELLO", "3"}))).type, '%');
  auto m = as_map(read_one(talk(s, cmd({"snowid.clock"}))));
  EXPECT_EQ(m["bound_source"].text, "chrony");
  ASSERT_EQ(m["bound_ns"].type, ':');
  EXPECT_EQ(m["bound_ns"].number, 1'000'000 + 100'000) << "1 ms + 50 ppm of 2 s";
  const std::int64_t send = ns_of(WallTime(1780272002s));
  EXPECT_EQ(m["send_ns"].text, std::to_string(send));
  EXPECT_EQ(m["earliest_ns"].text, std::to_string(send - 1'100'000));
  EXPECT_EQ(m["latest_ns"].text, std::to_string(send + 1'100'000));

  svc.clock.advance(9s);
  auto stale = as_map(read_one(talk(s, cmd({"SNOWID.CLOCK"}))));
  EXPECT_EQ(stale.at("bound_source").text, "unknown") << "11 s old: past its max age";
  EXPECT_TRUE(stale.at("bound_ns").null);
}

TEST_F(RespClockTest, ClockTimesAreIntegersAfterIdFormatInteger) {
  RespSession s = session();
  ASSERT_EQ(read_one(talk(s, cmd({"IDFORMAT", "INTEGER"}))).text, "OK");
  auto m = as_map(read_one(talk(s, cmd({"SNOWID.CLOCK"}))));
  EXPECT_EQ(m["receive_ns"].type, ':');
  EXPECT_EQ(m["receive_ns"].number, ns_of(svc.clock.wall_now()));
}

}  // namespace
}  // namespace snowid::daemon
