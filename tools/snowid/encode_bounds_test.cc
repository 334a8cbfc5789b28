// Black-box tests of `snowid encode` and `snowid bounds`.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace snowid::cli::testing {
namespace {

// Ticks of snowid's layout (1 ms since 2026-01-01T00:00:00Z) shifted into place.
constexpr std::uint64_t kEpochMs = 1767225600000;
constexpr std::uint64_t kMarch2026Ms = 1772323200000;  // 2026-03-01T00:00:00Z
constexpr std::uint64_t kApril2026Ms = 1775001600000;  // 2026-04-01T00:00:00Z
constexpr std::uint64_t kMay2026Ms = 1777593600000;    // 2026-05-01T00:00:00Z

std::uint64_t first_id_at(std::uint64_t unix_ms) { return (unix_ms - kEpochMs) << 22; }

std::string trimmed(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

TEST(Encode, ComposesTheIdFromTimeWorkerAndSequence) {
  const CliResult r = run_cli({"encode", "--time", "2026-03-01T00:00:00.007Z", "--region", "2",
                               "--host", "9", "--seq", "42"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::uint64_t expected = first_id_at(kMarch2026Ms + 7) | (2u << 20) | (9u << 12) | 42u;
  EXPECT_EQ(r.out, std::to_string(expected) + "\n");
}

TEST(Encode, DecodeGivesBackWhatWasEncoded) {
  for (const std::string layout : {"snowid", "twitter"}) {
    const CliResult e = run_cli({"encode", "--layout", layout, "--time", "2026-02-14T09:08:07.654Z",
                                 "--region", "3", "--host", "31", "--seq", "4095"});
    ASSERT_EQ(e.exit_code, 0) << layout << ": " << e.err;
    const CliResult d = run_cli({"decode", "--json", "--layout", layout, trimmed(e.out)});
    ASSERT_EQ(d.exit_code, 0) << layout << ": " << d.err;
    const auto j = nlohmann::json::parse(d.out);
    EXPECT_EQ(j["id"], trimmed(e.out));
    EXPECT_EQ(j["time"], "2026-02-14T09:08:07.654Z") << layout;
    EXPECT_EQ(j["layout"], layout);
    const auto& f = j["fields"];
    const std::string region = layout == "twitter" ? "datacenter" : "region";
    const std::string host = layout == "twitter" ? "worker" : "host";
    EXPECT_EQ(f[region], 3) << layout;
    EXPECT_EQ(f[host], 31) << layout;
    EXPECT_EQ(f["sequence"], 4095) << layout;
  }
}

TEST(Encode, AcceptsAZoneOffset) {
  const CliResult utc = run_cli({"encode", "--time", "2026-03-01T00:00:00Z", "--host", "1"});
  const CliResult offset =
      run_cli({"encode", "--time", "2026-03-01T02:00:00+02:00", "--host", "1"});
  ASSERT_EQ(utc.exit_code, 0) << utc.err;
  EXPECT_EQ(offset.out, utc.out);
}

TEST(Encode, OutOfRangeOrMalformedValuesAreRefusedWithOneLine) {
  const std::vector<std::vector<std::string>> cases = {
      {"--time", "2026-03-01T00:00:00Z", "--host", "256"},
      {"--time", "2026-03-01T00:00:00Z", "--region", "4", "--host", "1"},
      {"--time", "2026-03-01T00:00:00Z", "--host", "1", "--seq", "4096"},
      {"--time", "2026-03-01T00:00:00Z", "--host", "1", "--seq", "-1"},
      {"--time", "2026-03-01T00:00:00Z", "--host", "one"},
      {"--time", "2025-12-31T23:59:59.999Z", "--host", "1"},  // before the epoch
      {"--time", "2100-01-01T00:00:00Z", "--host", "1"},      // past the end of life
      {"--time", "2026-03-01T00:00:00", "--host", "1"},       // no zone
      {"--time", "yesterday", "--host", "1"},
      {"--time", "2026-02-30T00:00:00Z", "--host", "1"},
      {"--time", "2026-03-01T00:00:00Z", "--host", "1", "--layout", "discord"},  // no roles
      {"--time", "2026-03-01T00:00:00Z", "--host", "1", "--layout", "nosuchpreset"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"encode"};
    args.insert(args.end(), c.begin(), c.end());
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(c) << " " << r.err;
    EXPECT_EQ(r.out, "") << ::testing::PrintToString(c);
    EXPECT_TRUE(is_one_line_error(r.err)) << ::testing::PrintToString(c) << " " << r.err;
  }
}

TEST(Bounds, AMonthSpansItsFirstTickToTheLastIdBeforeTheNextMonth) {
  const CliResult r =
      run_cli({"bounds", "--from", "2026-03-01T00:00:00Z", "--to", "2026-04-01T00:00:00Z"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::uint64_t min = first_id_at(kMarch2026Ms);
  const std::uint64_t max = first_id_at(kApril2026Ms) - 1;
  EXPECT_EQ(r.out, "min=" + std::to_string(min) + " max=" + std::to_string(max) + "\n");
}

TEST(Bounds, AgreesWithTheExtremeIdsEncodeProduces) {
  const CliResult bounds = run_cli(
      {"bounds", "--json", "--from", "2026-03-01T00:00:00Z", "--to", "2026-04-01T00:00:00Z"});
  const CliResult lowest =
      run_cli({"encode", "--time", "2026-03-01T00:00:00Z", "--region", "0", "--host", "0"});
  const CliResult highest = run_cli({"encode", "--time", "2026-03-31T23:59:59.999Z", "--region",
                                     "3", "--host", "255", "--seq", "4095"});
  ASSERT_EQ(bounds.exit_code, 0) << bounds.err;
  const auto j = nlohmann::json::parse(bounds.out);
  EXPECT_TRUE(j["min"].is_string());
  EXPECT_TRUE(j["max"].is_string());
  EXPECT_EQ(j["min"], trimmed(lowest.out));
  EXPECT_EQ(j["max"], trimmed(highest.out));
  EXPECT_EQ(j["from"], "2026-03-01T00:00:00.000Z");
  EXPECT_EQ(j["to"], "2026-04-01T00:00:00.000Z");
}

TEST(Bounds, ConsecutiveMonthsNeitherOverlapNorLeaveAGap) {
  const CliResult march = run_cli(
      {"bounds", "--json", "--from", "2026-03-01T00:00:00Z", "--to", "2026-04-01T00:00:00Z"});
  const CliResult april = run_cli(
      {"bounds", "--json", "--from", "2026-04-01T00:00:00Z", "--to", "2026-05-01T00:00:00Z"});
  ASSERT_EQ(march.exit_code, 0);
  ASSERT_EQ(april.exit_code, 0);
  const std::uint64_t march_max =
      std::stoull(nlohmann::json::parse(march.out)["max"].get<std::string>());
  const std::uint64_t april_min =
      std::stoull(nlohmann::json::parse(april.out)["min"].get<std::string>());
  const std::uint64_t april_max =
      std::stoull(nlohmann::json::parse(april.out)["max"].get<std::string>());
  EXPECT_EQ(march_max + 1, april_min);
  EXPECT_EQ(april_max, first_id_at(kMay2026Ms) - 1);
}

TEST(Bounds, SqlPrintsACheckConstraint) {
  const CliResult r = run_cli({"bounds", "--sql", "--column", "order_id", "--from",
                               "2026-03-01T00:00:00Z", "--to", "2026-04-01T00:00:00Z"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "CHECK (order_id >= " + std::to_string(first_id_at(kMarch2026Ms)) +
                       " AND order_id <= " + std::to_string(first_id_at(kApril2026Ms) - 1) + ")\n");
}

TEST(Bounds, WarnsWhenABoundIsInsideATick) {
  const CliResult r = run_cli({"bounds", "--layout", "sonyflake", "--from", "2026-03-01T00:00:00Z",
                               "--to", "2026-03-01T00:00:00.005Z"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: --to is inside a 10 ms tick"), std::string::npos) << r.err;
}

TEST(Bounds, BadRangesAreRefusedWithOneLine) {
  const std::vector<std::vector<std::string>> cases = {
      {"--from", "2026-04-01T00:00:00Z", "--to", "2026-03-01T00:00:00Z"},
      {"--from", "2026-04-01T00:00:00Z", "--to", "2026-04-01T00:00:00Z"},
      {"--from", "2025-01-01T00:00:00Z", "--to", "2026-03-01T00:00:00Z"},  // before the epoch
      {"--from", "2026-03-01T00:00:00Z", "--to", "2200-01-01T00:00:00Z"},  // past end of life
      {"--from", "march", "--to", "2026-04-01T00:00:00Z"},
      {"--from", "2026-03-01T00:00:00Z", "--to", "2026-04-01T00:00:00Z", "--sql", "--column",
       "id; DROP TABLE t"},
      {"--from", "2026-03-01T00:00:00Z", "--to", "2026-04-01T00:00:00Z", "--sql", "--json"},
      {"--from", "2026-03-01T00:00:00Z"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"bounds"};
    args.insert(args.end(), c.begin(), c.end());
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(c) << " " << r.err;
    EXPECT_EQ(r.out, "") << ::testing::PrintToString(c);
    EXPECT_TRUE(is_one_line_error(r.err)) << ::testing::PrintToString(c) << " " << r.err;
  }
}

}  // namespace
}  // namespace snowid::cli::testing
