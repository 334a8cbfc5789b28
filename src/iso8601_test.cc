#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include "snowid/time.h"

namespace snowid {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

constexpr std::int64_t k2026Ms = 1767225600000;  // 2026-01-01T00:00:00Z
const WallTime k2026 = wall_from_unix_ms(k2026Ms);
// The last millisecond that 64-bit nanoseconds since 1970 can hold.
constexpr std::int64_t kLastRepresentableMs = 9223372036854;

WallTime parse_ok(std::string_view text) {
  Result<WallTime> r = parse_iso8601(text);
  EXPECT_TRUE(r.is_ok()) << text << ": " << r.status().to_string();
  return r.is_ok() ? r.value() : WallTime{};
}

// Expects a refusal with kInvalidArgument whose message names the reason.
void expect_refused(std::string_view text, std::string_view reason) {
  Result<WallTime> r = parse_iso8601(text);
  ASSERT_FALSE(r.is_ok()) << "accepted \"" << text << "\" as " << format_iso8601(r.value());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << text;
  EXPECT_FALSE(r.status().retryable());
  EXPECT_NE(r.status().message().find(reason), std::string::npos)
      << "input \"" << text << "\": message \"" << r.status().message() << "\" lacks \"" << reason
      << "\"";
}

// ---- format_iso8601 ----

TEST(Iso8601Format, UnixEpoch) {
  EXPECT_EQ(format_iso8601(WallTime{}), "1970-01-01T00:00:00.000Z");
}

TEST(Iso8601Format, DefaultEpoch) { EXPECT_EQ(format_iso8601(k2026), "2026-01-01T00:00:00.000Z"); }

TEST(Iso8601Format, PrintsMilliseconds) {
  EXPECT_EQ(format_iso8601(wall_from_unix_ms(1462015105796)), "2016-04-30T11:18:25.796Z");
  EXPECT_EQ(format_iso8601(k2026 + milliseconds(7)), "2026-01-01T00:00:00.007Z");
  EXPECT_EQ(format_iso8601(k2026 + hours(13) + minutes(5) + seconds(9) + milliseconds(40)),
            "2026-01-01T13:05:09.040Z");
}

TEST(Iso8601Format, FloorsSubMillisecondParts) {
  EXPECT_EQ(format_iso8601(k2026 + nanoseconds(999'999)), "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(format_iso8601(k2026 + milliseconds(1) + nanoseconds(999'999)),
            "2026-01-01T00:00:00.001Z");
  EXPECT_EQ(format_iso8601(k2026 + microseconds(123'999)), "2026-01-01T00:00:00.123Z");
}

TEST(Iso8601Format, FloorsTowardThePastBeforeTheUnixEpoch) {
  EXPECT_EQ(format_iso8601(WallTime{} - nanoseconds(1)), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(format_iso8601(WallTime{} - milliseconds(1)), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(format_iso8601(WallTime{} - milliseconds(1) - nanoseconds(1)),
            "1969-12-31T23:59:59.998Z");
}

TEST(Iso8601Format, LeapDay) {
  EXPECT_EQ(format_iso8601(wall_from_unix_ms(1709208000000)), "2024-02-29T12:00:00.000Z");
}

TEST(Iso8601Format, FarDates) {
  EXPECT_EQ(format_iso8601(wall_from_unix_ms(3966248855552)), "2095-09-07T15:47:35.552Z");
  EXPECT_EQ(format_iso8601(wall_from_unix_ms(9214646399999)), "2261-12-31T23:59:59.999Z");
  EXPECT_EQ(format_iso8601(wall_from_unix_ms(kLastRepresentableMs)), "2262-04-11T23:47:16.854Z");
}

// ---- parse_iso8601: accepted forms ----

TEST(Iso8601Parse, DateOnlyIsMidnightUtc) {
  EXPECT_EQ(parse_ok("2026-01-01"), k2026);
  EXPECT_EQ(parse_ok("1970-01-01"), WallTime{});
}

TEST(Iso8601Parse, HoursAndMinutes) {
  EXPECT_EQ(parse_ok("2026-01-01T00:00Z"), k2026);
  EXPECT_EQ(parse_ok("2026-01-01T12:34Z"), k2026 + hours(12) + minutes(34));
  EXPECT_EQ(parse_ok("2026-01-01T23:59Z"), k2026 + hours(23) + minutes(59));
}

TEST(Iso8601Parse, Seconds) {
  EXPECT_EQ(parse_ok("2026-01-01T12:34:56Z"), k2026 + hours(12) + minutes(34) + seconds(56));
  EXPECT_EQ(parse_ok("2026-01-01T00:00:59Z"), k2026 + seconds(59));
}

TEST(Iso8601Parse, FractionsOfOneToNineDigits) {
  const WallTime base = k2026 + seconds(5);
  EXPECT_EQ(parse_ok("2026-01-01T00:00:05.1Z"), base + milliseconds(100));
  EXPECT_EQ(parse_ok("2026-01-01T00:00:05.12Z"), base + milliseconds(120));
  EXPECT_EQ(parse_ok("2026-01-01T00:00:05.123Z"), base + milliseconds(123));
  EXPECT_EQ(parse_ok("2026-01-01T00:00:05.1234Z"), base + microseconds(123'400));
  EXPECT_EQ(parse_ok("2026-01-01T00:00:05.12345Z"), base + microseconds(123'450));
  EXPECT_EQ(parse_ok("2026-01-01T00:00:05.123456Z"), base + microseconds(123'456));
  EXPECT_EQ(parse_ok("2026-01-01T00:00:05.1234567Z"), base + nanoseconds(123'456'700));
  EXPECT_EQ(parse_ok("2026-01-01T00:00:05.12345678Z"), base + nanoseconds(123'456'780));
  EXPECT_EQ(parse_ok("2026-01-01T00:00:05.123456789Z"), base + nanoseconds(123'456'789));
  EXPECT_EQ(parse_ok("2026-01-01T00:00:05.000000001Z"), base + nanoseconds(1));
  EXPECT_EQ(parse_ok("2026-01-01T00:00:05.999999999Z"), base + nanoseconds(999'999'999));
  EXPECT_EQ(parse_ok("2026-01-01T00:00:05.0Z"), base);
}

TEST(Iso8601Parse, LowerCaseTAndZ) {
  EXPECT_EQ(parse_ok("2026-01-01t00:00:00z"), k2026);
  EXPECT_EQ(parse_ok("2026-01-01t01:02:03.004Z"),
            k2026 + hours(1) + minutes(2) + seconds(3) + milliseconds(4));
  EXPECT_EQ(parse_ok("2026-01-01T01:02z"), k2026 + hours(1) + minutes(2));
}

TEST(Iso8601Parse, PositiveOffsetIsAheadOfUtc) {
  // 02:00 local at +02:00 is midnight UTC.
  EXPECT_EQ(parse_ok("2026-01-01T02:00:00+02:00"), k2026);
  EXPECT_EQ(parse_ok("2026-01-01T05:30+05:30"), k2026);
  EXPECT_EQ(parse_ok("2026-01-01T00:00:00.250+00:01"), k2026 - minutes(1) + milliseconds(250));
}

TEST(Iso8601Parse, NegativeOffsetIsBehindUtc) {
  // 19:00 on New Year's Eve at -05:00 is midnight UTC.
  EXPECT_EQ(parse_ok("2025-12-31T19:00:00-05:00"), k2026);
  EXPECT_EQ(parse_ok("2025-12-31T14:15-09:45"), k2026);
}

TEST(Iso8601Parse, ZeroOffsetsEqualZ) {
  EXPECT_EQ(parse_ok("2026-01-01T08:09:10+00:00"), k2026 + hours(8) + minutes(9) + seconds(10));
  EXPECT_EQ(parse_ok("2026-01-01T08:09:10-00:00"), k2026 + hours(8) + minutes(9) + seconds(10));
}

TEST(Iso8601Parse, LargestOffsets) {
  EXPECT_EQ(parse_ok("2026-01-01T00:00+23:59"), k2026 - hours(23) - minutes(59));
  EXPECT_EQ(parse_ok("2026-01-01T00:00-23:59"), k2026 + hours(23) + minutes(59));
}

TEST(Iso8601Parse, LeapDays) {
  EXPECT_EQ(parse_ok("2024-02-29T12:00:00Z"), wall_from_unix_ms(1709208000000));
  EXPECT_EQ(parse_ok("2024-03-01"), wall_from_unix_ms(1709208000000) + hours(12));
  // 2000 is divisible by 400, so it is a leap year.
  EXPECT_EQ(parse_ok("2000-03-01") - parse_ok("2000-02-28"), hours(48));
}

TEST(Iso8601Parse, YearRangeEdges) {
  EXPECT_EQ(parse_ok("1970-01-01T00:00:00Z"), WallTime{});
  EXPECT_EQ(parse_ok("2261-12-31T23:59:59.999Z"), wall_from_unix_ms(9214646399999));
  EXPECT_EQ(parse_ok("2261-12-31T23:59:59.999999999Z"),
            wall_from_unix_ms(9214646399999) + nanoseconds(999'999));
}

// ---- parse_iso8601: refusals ----

TEST(Iso8601Parse, RefusesEmptyText) { expect_refused("", "YYYY-MM-DD"); }

TEST(Iso8601Parse, RefusesDateTimeWithoutZone) {
  expect_refused("2026-01-01T00:00:00", "zone is required");
  expect_refused("2026-01-01T00:00", "zone is required");
  expect_refused("2026-01-01T00:00:00.123", "zone is required");
}

TEST(Iso8601Parse, RefusesTextBeforeTheDate) {
  expect_refused(" 2026-01-01T00:00:00Z", "YYYY-MM-DD");
  expect_refused("x2026-01-01T00:00:00Z", "YYYY-MM-DD");
  expect_refused("+2026-01-01T00:00:00Z", "YYYY-MM-DD");
}

TEST(Iso8601Parse, RefusesTextAfterTheZone) {
  expect_refused("2026-01-01T00:00:00Zjunk", "after the zone");
  expect_refused("2026-01-01T00:00:00Z ", "after the zone");
  expect_refused("2026-01-01T00:00:00+02:00Z", "after the zone");
  expect_refused("2026-01-01T00:00:00+02:000", "after the zone");
}

TEST(Iso8601Parse, RefusesTextAfterADateOnly) {
  expect_refused("2026-01-01 ", "'T'");
  expect_refused("2026-01-01Z", "'T'");
  expect_refused("2026-01-01 00:00:00Z", "'T'");
}

TEST(Iso8601Parse, RefusesTenFractionDigits) {
  expect_refused("2026-01-01T00:00:00.1234567891Z", "more than 9 fraction digits");
}

TEST(Iso8601Parse, RefusesAnEmptyFraction) {
  expect_refused("2026-01-01T00:00:00.Z", "fraction needs digits");
}

TEST(Iso8601Parse, RefusesAFractionWithoutSeconds) {
  Result<WallTime> r = parse_iso8601("2026-01-01T10:00.5Z");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

TEST(Iso8601Parse, RefusesDaysThatDoNotExist) {
  expect_refused("2025-02-29", "no such date");
  expect_refused("2025-02-30T00:00:00Z", "no such date");
  expect_refused("2024-02-30", "no such date");
  expect_refused("2025-04-31", "no such date");
  expect_refused("2025-13-01", "no such date");
  expect_refused("2025-00-10", "no such date");
  expect_refused("2025-01-00", "no such date");
  expect_refused("2025-01-32", "no such date");
  // 2100 is divisible by 100 but not by 400: not a leap year.
  expect_refused("2100-02-29", "no such date");
}

TEST(Iso8601Parse, AcceptsTheLeapDayOnlyInLeapYears) {
  EXPECT_TRUE(parse_iso8601("2024-02-29").is_ok());
  EXPECT_FALSE(parse_iso8601("2025-02-29").is_ok());
}

TEST(Iso8601Parse, RefusesHour24) {
  expect_refused("2026-01-01T24:00:00Z", "hour or minute out of range");
  expect_refused("2026-01-01T24:00Z", "hour or minute out of range");
}

TEST(Iso8601Parse, RefusesMinute60) {
  expect_refused("2026-01-01T00:60:00Z", "hour or minute out of range");
}

TEST(Iso8601Parse, RefusesSecond60) {
  expect_refused("2026-12-31T23:59:60Z", "leap seconds are not representable");
}

TEST(Iso8601Parse, RefusesYearsOutsideTheRepresentableRange) {
  expect_refused("1969-12-31T23:59:59Z", "between 1970 and 2261");
  expect_refused("1969-12-31", "between 1970 and 2261");
  expect_refused("2262-01-01T00:00:00Z", "between 1970 and 2261");
  expect_refused("0000-01-01", "between 1970 and 2261");
  expect_refused("9999-12-31", "between 1970 and 2261");
}

TEST(Iso8601Parse, RefusesMalformedDates) {
  expect_refused("2026-1-01", "YYYY-MM-DD");
  expect_refused("2026/01/01", "YYYY-MM-DD");
  expect_refused("26-01-01", "YYYY-MM-DD");
  expect_refused("2026-01-1", "YYYY-MM-DD");
  expect_refused("2026", "YYYY-MM-DD");
  expect_refused("20260101", "YYYY-MM-DD");
}

TEST(Iso8601Parse, RefusesMalformedTimes) {
  expect_refused("2026-01-01T", "HH:MM");
  expect_refused("2026-01-01T1:00Z", "HH:MM");
  expect_refused("2026-01-01T10Z", "HH:MM");
  expect_refused("2026-01-01T10:0Z", "HH:MM");
  expect_refused("2026-01-01T1000Z", "HH:MM");
  expect_refused("2026-01-01T10:00:5Z", "seconds must be two digits");
  expect_refused("2026-01-01T10:00:Z", "seconds must be two digits");
}

TEST(Iso8601Parse, RefusesMalformedOffsets) {
  expect_refused("2026-01-01T00:00:00+0200", "+HH:MM or -HH:MM");
  expect_refused("2026-01-01T00:00:00+02", "+HH:MM or -HH:MM");
  expect_refused("2026-01-01T00:00:00+2:00", "+HH:MM or -HH:MM");
  expect_refused("2026-01-01T00:00:00+", "+HH:MM or -HH:MM");
  expect_refused("2026-01-01T00:00:00+24:00", "offset out of range");
  expect_refused("2026-01-01T00:00:00-02:60", "offset out of range");
  expect_refused("2026-01-01T00:00:00UTC", "zone is required");
}

TEST(Iso8601Parse, MessageQuotesTheInputAndGivesAnExample) {
  Result<WallTime> r = parse_iso8601("2026-02-30");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("\"2026-02-30\""), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("2026-01-01T00:00:00.000Z"), std::string::npos)
      << r.status().message();
}

TEST(Iso8601Parse, MessageShortensLongInput) {
  const std::string text = "2026-01-01T00:00:00Z" + std::string(500, 'x');
  Result<WallTime> r = parse_iso8601(text);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_LT(r.status().message().size(), 200u);
}

// ---- round trips ----

TEST(Iso8601RoundTrip, FormatOfParseGivesTheCanonicalTextBack) {
  for (std::string_view text : {
           "1970-01-01T00:00:00.000Z",
           "2026-01-01T00:00:00.000Z",
           "2016-04-30T11:18:25.796Z",
           "2024-02-29T23:59:59.999Z",
           "2095-09-07T15:47:35.552Z",
           "2261-12-31T23:59:59.999Z",
       }) {
    EXPECT_EQ(format_iso8601(parse_ok(text)), text);
  }
}

TEST(Iso8601RoundTrip, OtherFormsFormatToTheirCanonicalUtcText) {
  EXPECT_EQ(format_iso8601(parse_ok("2026-01-01")), "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(format_iso8601(parse_ok("2026-03-04t05:06z")), "2026-03-04T05:06:00.000Z");
  EXPECT_EQ(format_iso8601(parse_ok("2026-03-04T05:06:07.0089Z")), "2026-03-04T05:06:07.008Z");
  EXPECT_EQ(format_iso8601(parse_ok("2026-03-01T01:00:00+02:00")), "2026-02-28T23:00:00.000Z");
  EXPECT_EQ(format_iso8601(parse_ok("2024-02-28T20:00:00-04:30")), "2024-02-29T00:30:00.000Z");
}

TEST(Iso8601RoundTrip, ParseOfFormatGivesTheMillisecondBack) {
  std::mt19937_64 rng(20260101);
  std::uniform_int_distribution<std::int64_t> ms_dist(0, 9214646399999);
  std::uniform_int_distribution<std::int64_t> sub_ms(0, 999'999);
  for (int i = 0; i < 20000; ++i) {
    const std::int64_t ms = ms_dist(rng);
    const WallTime t = wall_from_unix_ms(ms) + nanoseconds(sub_ms(rng));
    const std::string text = format_iso8601(t);
    Result<WallTime> back = parse_iso8601(text);
    ASSERT_TRUE(back.is_ok()) << text << ": " << back.status().to_string();
    ASSERT_EQ(back.value(), wall_from_unix_ms(ms)) << text;
  }
}

}  // namespace
}  // namespace snowid
