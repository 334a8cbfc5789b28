// vectors/sntp.json: the request's bytes, NTP timestamps both ways (the 2036
// era included) and replies with the offset and delay they give or the
// reason they are refused, derived from RFC 4330 and 5905 by
// vectors/sntp_cases.py.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "snowid/status.h"
#include "sntp_packet.h"

namespace snowid::skew {
namespace {

using nlohmann::json;

json load() {
  std::ifstream in(std::string(SNOWID_VECTORS_DIR) + "/sntp.json");
  EXPECT_TRUE(in.good()) << "vectors/sntp.json";
  return json::parse(in, nullptr, false);
}

std::vector<std::uint8_t> unhex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::string hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

NtpTimestamp timestamp_of(const std::string& text) {
  const std::vector<std::uint8_t> b = unhex(text);
  EXPECT_EQ(b.size(), 8u);
  const auto word = [&](std::size_t at) {
    return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) |
           (std::uint32_t{b[at + 2]} << 8) | b[at + 3];
  };
  return {word(0), word(4)};
}

WallTime wall_of(const json& v) { return WallTime(Duration(std::stoll(v.get<std::string>()))); }

std::string ns_text(WallTime t) { return std::to_string(t.time_since_epoch().count()); }

TEST(SntpVectors, TheRequestIsVersionFourModeThreeCarryingTheTransmit) {
  const json doc = load();
  ASSERT_FALSE(doc.is_discarded());
  const json& r = doc["request"];
  EXPECT_EQ(hex(sntp_request(timestamp_of(r["transmit"]))), r["bytes"].get<std::string>());
}

TEST(SntpVectors, TimestampsConvertBothWaysInTheEraNearestTheLocalClock) {
  const json doc = load();
  ASSERT_FALSE(doc["timestamps"].empty());
  for (const json& c : doc["timestamps"]) {
    SCOPED_TRACE(c.dump());
    const NtpTimestamp t = ntp_from_wall(wall_of(c["unix_ns"]));
    const std::uint8_t bytes[8] = {
        static_cast<std::uint8_t>(t.seconds >> 24),  static_cast<std::uint8_t>(t.seconds >> 16),
        static_cast<std::uint8_t>(t.seconds >> 8),   static_cast<std::uint8_t>(t.seconds),
        static_cast<std::uint8_t>(t.fraction >> 24), static_cast<std::uint8_t>(t.fraction >> 16),
        static_cast<std::uint8_t>(t.fraction >> 8),  static_cast<std::uint8_t>(t.fraction)};
    EXPECT_EQ(hex(bytes), c["ntp"].get<std::string>());
    EXPECT_EQ(ns_text(wall_from_ntp(timestamp_of(c["ntp"]), wall_of(c["near_unix_ns"]))),
              c["read_back_unix_ns"].get<std::string>());
  }
}

TEST(SntpVectors, RepliesGiveTheirOffsetAndDelayOrTheirRefusal) {
  const json doc = load();
  ASSERT_GE(doc["replies"].size(), 10u);
  for (const json& c : doc["replies"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const std::vector<std::uint8_t> reply = unhex(c["reply"]);
    const SntpResult r = check_sntp_reply(reply, timestamp_of(c["sent"]), wall_of(c["t1_unix_ns"]),
                                          wall_of(c["t4_unix_ns"]));
    const json& e = c["expect"];
    if (e.contains("failure")) {
      EXPECT_EQ(sntp_failure_name(r.failure), e["failure"].get<std::string>())
          << r.status.message();
      EXPECT_EQ(code_name(r.status.code()), e["code"].get<std::string>());
      EXPECT_EQ(r.kiss, e["kiss"].get<std::string>());
      EXPECT_EQ(r.stop(), e["code"] == "FAILED_PRECONDITION");
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.status.message();
    EXPECT_TRUE(r.status.is_ok());
    EXPECT_EQ(ns_text(r.sample.t2), e["t2_unix_ns"].get<std::string>());
    EXPECT_EQ(ns_text(r.sample.t3), e["t3_unix_ns"].get<std::string>());
    EXPECT_EQ(std::to_string(r.sample.offset.count()), e["offset_ns"].get<std::string>());
    EXPECT_EQ(std::to_string(r.sample.delay.count()), e["delay_ns"].get<std::string>());
  }
}

}  // namespace
}  // namespace snowid::skew
