#include "clock_reply.h"

#include <gtest/gtest.h>

#include <string>

namespace snowid::daemon {
namespace {

using Outcome = ClockReply::Outcome;

// The reply as snowidd writes it over RESP2 (a flat array) by default.
const std::string kResp2 =
    "*12\r\n$10\r\nreceive_ns\r\n$19\r\n1796000000123456789\r\n$7\r\nsend_ns\r\n"
    "$19\r\n1796000000123460000\r\n$12\r\nbound_source\r\n$7\r\nunknown\r\n$8\r\nbound_ns\r\n"
    "$-1\r\n$11\r\nearliest_ns\r\n$-1\r\n$9\r\nlatest_ns\r\n$-1\r\n";

TEST(ClockReply, ReadsBothTimesOfARespTwoArray) {
  const ClockReply r = read_clock_reply(kResp2);
  ASSERT_EQ(r.outcome, Outcome::kClock) << r.error;
  EXPECT_EQ(r.consumed, kResp2.size());
  EXPECT_EQ(r.received.time_since_epoch().count(), 1796000000123456789);
  EXPECT_EQ(r.sent.time_since_epoch().count(), 1796000000123460000);
}

TEST(ClockReply, ReadsARespThreeMapWithIntegersAndNulls) {
  const std::string map =
      "%6\r\n+receive_ns\r\n:1796000000000000000\r\n+send_ns\r\n:1796000000000000500\r\n"
      "+bound_source\r\n+chrony\r\n+bound_ns\r\n:1200\r\n+earliest_ns\r\n_\r\n+latest_ns\r\n_\r\n";
  const ClockReply r = read_clock_reply(map + "+PONG\r\n");
  ASSERT_EQ(r.outcome, Outcome::kClock) << r.error;
  EXPECT_EQ(r.consumed, map.size()) << "the next reply is left alone";
  EXPECT_EQ((r.sent - r.received).count(), 500);
}

TEST(ClockReply, EveryPrefixIsIncomplete) {
  for (std::size_t n = 0; n < kResp2.size(); ++n) {
    EXPECT_EQ(read_clock_reply(kResp2.substr(0, n)).outcome, Outcome::kIncomplete) << n;
  }
}

TEST(ClockReply, AnErrorReplyIsAnErrorWithItsLine) {
  const ClockReply r = read_clock_reply("-NOAUTH Authentication required.\r\n");
  EXPECT_EQ(r.outcome, Outcome::kError);
  EXPECT_EQ(r.error, "NOAUTH Authentication required.");
}

TEST(ClockReply, MalformedRepliesAreRefused) {
  for (const std::string& bad : {
           std::string("$5\r\nhello\r\n"),                          // not an array
           std::string("*1\r\n$3\r\nabc\r\n"),                      // odd
           std::string("*2\r\n$10\r\nreceive_ns\r\n$2\r\n12\r\n"),  // send_ns missing
           std::string("*4\r\n$10\r\nreceive_ns\r\n$2\r\n-5\r\n$7\r\nsend_ns\r\n$1\r\n9\r\n"),
           std::string("*4\r\n$10\r\nreceive_ns\r\n$2\r\n20\r\n$7\r\nsend_ns\r\n$1\r\n9\r\n"),
           std::string("*4\r\n$7\r\nsend_ns\r\n$1\r\n9\r\n$7\r\nsend_ns\r\n$1\r\n9\r\n"),
           std::string("*4\r\n:1\r\n$1\r\n9\r\n$7\r\nsend_ns\r\n$1\r\n9\r\n"),  // integer key
           std::string("*2\r\n$10\r\nreceive_ns\r\n$20\r\n99999999999999999999\r\n"),
           std::string("*99\r\n"),                      // too many
           std::string("*2\r\n$3\r\nabcXY"),            // bulk without CRLF
           std::string(kMaxClockReplyBytes + 10, 'x'),  // no line at all
       }) {
    EXPECT_EQ(read_clock_reply(bad).outcome, Outcome::kError) << bad.substr(0, 60);
  }
}

}  // namespace
}  // namespace snowid::daemon
