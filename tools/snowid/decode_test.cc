// Black-box tests of `snowid decode`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace snowid::cli::testing {
namespace {

// Published Discord ids (snowflakes) and what they mean.
constexpr const char* kDiscordA = "175928847299117063";
constexpr const char* kDiscordB = "90339695967350784";
constexpr const char* kDiscordC = "937847820382261308";

TEST(Decode, DiscordIdsDecodeToTheirPublishedTimesAndFields) {
  const CliResult r = run_cli({"decode", "--layout", "discord", kDiscordA, kDiscordB, kDiscordC});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "id=175928847299117063 time=2016-04-30T11:18:25.796Z layout=discord "
            "timestamp=41944705796 worker=1 process=0 increment=7");
  EXPECT_EQ(lines[1],
            "id=90339695967350784 time=2015-09-07T06:57:41.949Z layout=discord "
            "timestamp=21538661949 worker=0 process=3 increment=0");
  EXPECT_EQ(lines[2],
            "id=937847820382261308 time=2022-01-31T23:12:24.749Z layout=discord "
            "timestamp=223600344749 worker=1 process=5 increment=60");
}

TEST(Decode, JsonGivesTheIdAsAStringAndFieldsAsNumbers) {
  const CliResult r =
      run_cli({"decode", "--layout", "discord", "--json", kDiscordA, kDiscordB, kDiscordC});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u);
  const auto a = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(a["id"], kDiscordA);
  EXPECT_TRUE(a["id"].is_string());
  EXPECT_EQ(a["time"], "2016-04-30T11:18:25.796Z");
  EXPECT_EQ(a["unix_ms"], 1462015105796);
  EXPECT_EQ(a["layout"], "discord");
  EXPECT_EQ(a["fields"]["timestamp"], 41944705796);
  EXPECT_EQ(a["fields"]["worker"], 1);
  EXPECT_EQ(a["fields"]["process"], 0);
  EXPECT_EQ(a["fields"]["increment"], 7);

  const auto b = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(b["unix_ms"], 1441609061949);
  EXPECT_EQ(b["fields"]["worker"], 0);
  EXPECT_EQ(b["fields"]["process"], 3);
  EXPECT_EQ(b["fields"]["increment"], 0);

  const auto c = nlohmann::json::parse(lines[2]);
  EXPECT_EQ(c["time"], "2022-01-31T23:12:24.749Z");
  EXPECT_EQ(c["fields"]["worker"], 1);
  EXPECT_EQ(c["fields"]["process"], 5);
  EXPECT_EQ(c["fields"]["increment"], 60);
}

TEST(Decode, ReadsIdsFromStdinWhenNoneAreGiven) {
  const CliResult r = run_cli({"decode", "--layout", "discord"},
                              std::string(kDiscordA) + "\n" + kDiscordB + "\r\n" + kDiscordC);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u);  // CRLF and a last line without "\n" are fine
  EXPECT_EQ(lines[1].rfind("id=90339695967350784 ", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("id=937847820382261308 ", 0), 0u) << lines[2];
}

TEST(Decode, SnowidFieldNamedTimeIsKeptApartFromTheTimeKey) {
  // 2026-01-01T00:00:01.000Z, region 1, host 2, sequence 3.
  const std::string id = std::to_string((std::uint64_t{1000} << 22) | (1u << 20) | (2u << 12) | 3u);
  const CliResult r = run_cli({"decode", id});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "id=" + id +
                       " time=2026-01-01T00:00:01.000Z layout=snowid field_time=1000 region=1 "
                       "host=2 sequence=3\n");
}

// Every class of malformed argument is refused with one line naming it.
TEST(Decode, MalformedArgumentsAreRefusedWithOneLineNamingThem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"abc", "abc"},
      {"-5", "-5"},
      {"9223372036854775808", "9223372036854775808"},    // 2^63: beyond a 63-bit layout
      {"18446744073709551616", "18446744073709551616"},  // 2^64
      {"", "empty"},
      {" 123", " 123"},
      {"123 ", "123 "},
      {"123x", "123x"},
      {"0x10", "0x10"},
      {"+5", "+5"},
      {"1e5", "1e5"},
      {"123456789012345678901234567890", "1234567890"},
  };
  for (const auto& [input, named] : cases) {
    const CliResult r = run_cli({"decode", "--", input});
    EXPECT_EQ(r.exit_code, 2) << "input \"" << input << "\"";
    EXPECT_EQ(r.out, "") << "input \"" << input << "\"";
    EXPECT_TRUE(is_one_line_error(r.err)) << "input \"" << input << "\": " << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << "input \"" << input << "\": " << r.err;
  }
}

TEST(Decode, NegativeIdWithoutDoubleDashIsStillAnIdError) {
  const CliResult r = run_cli({"decode", "-5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
  EXPECT_NE(r.err.find("negative"), std::string::npos) << r.err;
}

TEST(Decode, GoodArgumentsAreDecodedEvenWhenOthersAreBad) {
  const CliResult r = run_cli({"decode", "--layout", "discord", "x1", kDiscordA});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.out.find(kDiscordA), std::string::npos);
  EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
}

TEST(Decode, BadStdinLinesAreReportedByLineNumberAndGoodLinesStillDecoded) {
  const std::string input = std::string(kDiscordA) + "\n" +  // 1 good
                            "\n" +                           // 2 empty
                            "123x\n" +                       // 3 junk after digits
                            " 123\n" +                       // 4 leading space
                            "-1\n" +                         // 5 negative
                            "18446744073709551616\n" +       // 6 beyond 64 bits
                            "abc\r\n" +                      // 7 letters, CRLF
                            kDiscordB + "\r\n" +             // 8 good, CRLF
                            "12\r3\n" +                      // 9 inner CR
                            kDiscordC;                       // 10 good, no final newline
  const CliResult r = run_cli({"decode", "--layout", "discord"}, input);
  EXPECT_EQ(r.exit_code, 2);
  const std::vector<std::string> out = lines_of(r.out);
  ASSERT_EQ(out.size(), 3u) << r.out;
  EXPECT_EQ(out[0].rfind(std::string("id=") + kDiscordA + " ", 0), 0u);
  EXPECT_EQ(out[1].rfind(std::string("id=") + kDiscordB + " ", 0), 0u);
  EXPECT_EQ(out[2].rfind(std::string("id=") + kDiscordC + " ", 0), 0u);
  const std::vector<std::string> err = lines_of(r.err);
  ASSERT_EQ(err.size(), 7u) << r.err;
  const int bad_lines[] = {2, 3, 4, 5, 6, 7, 9};
  for (std::size_t i = 0; i < err.size(); ++i) {
    EXPECT_EQ(err[i].rfind("snowid: line " + std::to_string(bad_lines[i]) + ": ", 0), 0u) << err[i];
  }
}

TEST(Decode, IdBeyondA63BitLayoutIsRefusedOnStdinToo) {
  const CliResult r = run_cli({"decode"}, "9223372036854775807\n9223372036854775808\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
  EXPECT_NE(r.err.find("line 2: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("does not fit layout snowid"), std::string::npos) << r.err;
}

TEST(Decode, BinaryGarbageAndHugeLinesNeverCrashAndKeepErrorsOnOneLineEach) {
  std::string input = std::string("\0\xff\x01\x7f\x1b[2J", 8) + "\n";
  input += std::string(100'000, '7') + "\n";  // far longer than any id
  input += std::string(3000, '\0') + "\n";
  input += "42\n";
  const CliResult r = run_cli({"decode"}, input);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  const std::vector<std::string> err = lines_of(r.err);
  ASSERT_EQ(err.size(), 3u) << r.err;
  for (const std::string& line : err) {
    EXPECT_EQ(line.rfind("snowid: line ", 0), 0u) << line;
    for (char c : line) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << static_cast<int>(c);
  }
}

TEST(Decode, EmptyStdinDecodesNothingAndSucceeds) {
  const CliResult r = run_cli({"decode"}, "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(Decode, HistoryPicksTheEraByTheIdsValue) {
  TempDir dir;
  // Era 1 moves a bit from region to host; its ids all sort above era 0's.
  const std::string file = dir.write("history.json", R"({"history": [
    {"cutover_ms": 1767225600000, "layout": "snowid"},
    {"cutover": "2026-06-01T00:00:00Z", "layout": {
      "name": "wide_hosts", "epoch_ms": 1767225600000,
      "fields": [{"name": "time", "role": "time", "width": 41},
                 {"name": "region", "role": "region", "width": 1},
                 {"name": "host", "role": "host", "width": 9},
                 {"name": "sequence", "role": "sequence", "width": 12}]}}]})");
  const CliResult old_id = run_cli({"encode", "--time", "2026-03-01T00:00:00Z", "--region", "3",
                                    "--host", "5", "--layout", file});
  const CliResult new_id = run_cli({"encode", "--time", "2026-07-01T00:00:00Z", "--region", "1",
                                    "--host", "500", "--layout", file});
  ASSERT_EQ(old_id.exit_code, 0) << old_id.err;
  ASSERT_EQ(new_id.exit_code, 0) << new_id.err;
  const CliResult r = run_cli({"decode", "--layout", file}, old_id.out + new_id.out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("time=2026-03-01T00:00:00.000Z layout=snowid "), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find(" region=3 host=5 sequence=0"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("time=2026-07-01T00:00:00.000Z layout=wide_hosts "), std::string::npos)
      << lines[1];
  EXPECT_NE(lines[1].find(" region=1 host=500 sequence=0"), std::string::npos) << lines[1];
}

}  // namespace
}  // namespace snowid::cli::testing
