// Black-box tests of `snowid layout` and of layout files given to --layout.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "snowid/time.h"

namespace snowid::cli::testing {
namespace {

// A generating layout with the given fields and epoch.
std::string layout_json(const std::string& fields,
                        const std::string& epoch = "2026-01-01T00:00:00Z",
                        bool decode_only = false) {
  return R"({"name": "custom", "epoch": ")" + epoch + R"(", "decode_only": )" +
         (decode_only ? "true" : "false") + R"(, "fields": [)" + fields + "]}";
}

constexpr const char* kGoodFields =
    R"({"name": "time", "role": "time", "width": 41},
       {"name": "region", "role": "region", "width": 2},
       {"name": "host", "role": "host", "width": 8},
       {"name": "sequence", "role": "sequence", "width": 12})";

nlohmann::json without_outlook(nlohmann::json j) {
  j.erase("years_remaining");
  j.erase("warnings");
  return j;
}

TEST(Layout, TextDescribesFieldsCapacityAndEndOfLife) {
  const CliResult r = run_cli({"layout"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("layout snowid (generates ids)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2026-01-01T00:00:00.000Z"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("time        time      41 bits  shift 22"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sequence    sequence  12 bits  shift 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 regions x 256 workers per region, 4096 ids per worker per ms"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("end of life  2095-09-07T15:47:35.552Z"), std::string::npos) << r.out;
}

TEST(Layout, JsonHasTheFormatAndTheDerivedFacts) {
  const CliResult r = run_cli({"layout", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "snowid");
  EXPECT_EQ(j["epoch_ms"], 1767225600000);
  EXPECT_EQ(j["unit_ms"], 1);
  EXPECT_EQ(j["decode_only"], false);
  ASSERT_EQ(j["fields"].size(), 4u);
  EXPECT_EQ(j["fields"][0]["name"], "time");
  EXPECT_EQ(j["fields"][0]["role"], "time");
  EXPECT_EQ(j["fields"][0]["width"], 41);
  EXPECT_EQ(j["fields"][0]["shift"], 22);
  EXPECT_EQ(j["fields"][2]["role"], "host");
  EXPECT_EQ(j["fields"][2]["shift"], 12);
  EXPECT_EQ(j["capacity"]["regions"], 4);
  EXPECT_EQ(j["capacity"]["workers_per_region"], 256);
  EXPECT_EQ(j["capacity"]["ids_per_worker_per_unit"], 4096);
  EXPECT_EQ(j["capacity"]["ids_per_worker_per_second"], 4096000);
  EXPECT_EQ(j["end_of_life"], "2095-09-07T15:47:35.552Z");
  EXPECT_EQ(j["end_of_life_unix_ms"], 1767225600000 + (std::int64_t{1} << 41));
  EXPECT_GT(j["years_remaining"].get<double>(), 60);
  EXPECT_TRUE(j["warnings"].is_array());
  EXPECT_TRUE(j["warnings"].empty());
}

TEST(Layout, JsonReadsBackAsTheSameLayoutForEveryPreset) {
  TempDir dir;
  for (const std::string preset : {"snowid", "twitter", "discord", "instagram", "sonyflake"}) {
    const CliResult described = run_cli({"layout", "--json", "--layout", preset});
    ASSERT_EQ(described.exit_code, 0) << preset << ": " << described.err;
    const std::string file = dir.write(preset + ".json", described.out);
    const CliResult again = run_cli({"layout", "--json", "--layout", file});
    ASSERT_EQ(again.exit_code, 0) << preset << ": " << again.err;
    EXPECT_EQ(without_outlook(nlohmann::json::parse(again.out)),
              without_outlook(nlohmann::json::parse(described.out)))
        << preset;
    // And the file decodes like the preset.
    const CliResult by_preset = run_cli({"decode", "--layout", preset, "123456789012345678"});
    const CliResult by_file = run_cli({"decode", "--layout", file, "123456789012345678"});
    EXPECT_EQ(by_file.exit_code, 0) << by_file.err;
    EXPECT_EQ(by_file.out, by_preset.out) << preset;
  }
}

TEST(Layout, HistoryJsonReadsBackAsTheSameHistory) {
  TempDir dir;
  const std::string file = dir.write("history.json", R"({"history": [
    {"cutover": "2026-01-01T00:00:00Z", "layout": "snowid"},
    {"cutover": "2090-01-01T00:00:00Z", "layout": {
      "name": "later", "epoch": "2026-01-01T00:00:00Z",
      "fields": [{"name": "time", "role": "time", "width": 41},
                 {"name": "host", "role": "host", "width": 10},
                 {"name": "sequence", "role": "sequence", "width": 12}]}}]})");
  const CliResult described = run_cli({"layout", "--json", "--layout", file});
  ASSERT_EQ(described.exit_code, 0) << described.err;
  const auto j = nlohmann::json::parse(described.out);
  ASSERT_EQ(j["history"].size(), 2u);
  EXPECT_EQ(j["history"][1]["cutover"], "2090-01-01T00:00:00.000Z");
  EXPECT_EQ(j["history"][1]["layout"]["name"], "later");
  const std::string copy = dir.write("copy.json", described.out);
  const CliResult again = run_cli({"layout", "--json", "--layout", copy});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, described.out);

  const CliResult text = run_cli({"layout", "--layout", file});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("era 0 from 2026-01-01T00:00:00.000Z (in effect)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("era 1 from 2090-01-01T00:00:00.000Z (planned)"), std::string::npos)
      << text.out;
}

TEST(Layout, WarnsButSucceedsWhenFewerThanTenYearsRemain) {
  TempDir dir;
  // 2^38 ms is about 8.7 years from an epoch a day ago.
  const std::string epoch = format_iso8601(system_clock().wall_now() - std::chrono::hours(24));
  const std::string file =
      dir.write("short.json", layout_json(R"({"name": "time", "role": "time", "width": 38},
                                   {"name": "sequence", "role": "sequence", "width": 12})",
                                          epoch, true));
  const CliResult text = run_cli({"layout", "--layout", file});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(is_one_line_error(text.err)) << text.err;
  EXPECT_NE(text.err.find("snowid: warning: "), std::string::npos) << text.err;
  EXPECT_NE(text.err.find("fewer than 10 years"), std::string::npos) << text.err;

  const CliResult json = run_cli({"layout", "--json", "--layout", file});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_LT(j["years_remaining"].get<double>(), 10);
}

struct BadLayout {
  std::string what;
  std::string json;
  std::string reason;  // must appear in the error
};

TEST(Layout, ImpossibleLayoutFilesAreRefusedWithTheReason) {
  const std::vector<BadLayout> cases = {
      {"62 bits for a generating layout",
       layout_json(R"({"name": "time", "role": "time", "width": 40},
                      {"name": "region", "role": "region", "width": 2},
                      {"name": "host", "role": "host", "width": 8},
                      {"name": "sequence", "role": "sequence", "width": 12})"),
       "exactly 63 bits; this one uses 62"},
      {"epoch in the future", layout_json(kGoodFields, "2099-01-01T00:00:00Z"), "is in the future"},
      {"unknown role", layout_json(R"({"name": "time", "role": "time", "width": 41},
                      {"name": "shard", "role": "shard", "width": 22})"),
       "fields[1].role: unknown field role \"shard\""},
      {"unknown key", R"({"name": "x", "epoch_ms": 0, "colour": "red", "fields": []})",
       "unknown key \"colour\""},
      {"wrong type", layout_json(R"({"name": "time", "role": "time", "width": "41"})"),
       "fields[0].width: must be an integer, not a string"},
      {"fractional width", layout_json(R"({"name": "time", "role": "time", "width": 41.5})"),
       "fields[0].width: must be an integer, not a fractional number"},
      {"missing fields", R"({"name": "x", "epoch_ms": 0})", "fields is required"},
      {"missing epoch", R"({"name": "x", "fields": []})", "epoch_ms or epoch is required"},
      {"epoch forms disagree", R"({"epoch_ms": 1, "epoch": "2026-01-01T00:00:00Z", "fields": []})",
       "disagree"},
      {"repeated key", R"({"epoch_ms": 0, "epoch_ms": 1, "fields": []})",
       "key \"epoch_ms\" appears twice"},
      {"shift that disagrees",
       layout_json(R"({"name": "time", "role": "time", "width": 41, "shift": 0},
                      {"name": "region", "role": "region", "width": 2},
                      {"name": "host", "role": "host", "width": 8},
                      {"name": "sequence", "role": "sequence", "width": 12})"),
       "fields[0].shift: is 0 but the widths put the field at 22"},
      {"width beyond int", layout_json(R"({"name": "time", "role": "time", "width": 4294967337})"),
       "fields[0].width: must be 1 to 64 bits"},
      {"not JSON", "{\"name\": ", "not valid JSON"},
      {"not an object", "[1, 2, 3]", "must be a JSON object"},
      {"bad name", R"({"name": "two words", "epoch_ms": 0, "fields": []})",
       "name: \"two words\" must be"},
      {"overlapping eras", R"({"history": [
         {"cutover": "2020-01-01T00:00:00Z", "layout": "twitter"},
         {"cutover": "2026-06-01T00:00:00Z", "layout": "snowid"}]})",
       "would overlap"},
      {"unknown preset in history",
       R"({"history": [{"cutover": "2026-01-01T00:00:00Z", "layout": "snowflake"}]})",
       "history[0].layout: no layout preset named \"snowflake\""},
  };
  TempDir dir;
  for (const BadLayout& c : cases) {
    const std::string file = dir.write("bad.json", c.json);
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"layout", "--layout", file}, {"decode", "--layout", file, "1"}}) {
      const std::string& command = args.front();
      const CliResult r = run_cli(args);
      EXPECT_EQ(r.exit_code, 2) << c.what << " (" << command << "): " << r.err;
      EXPECT_EQ(r.out, "") << c.what;
      EXPECT_TRUE(is_one_line_error(r.err)) << c.what << ": " << r.err;
      EXPECT_NE(r.err.find(c.reason), std::string::npos) << c.what << ": " << r.err;
    }
  }
}

TEST(Layout, MissingLayoutFileOrPresetIsBadInput) {
  const CliResult preset = run_cli({"layout", "--layout", "snowflak"});
  EXPECT_EQ(preset.exit_code, 2);
  EXPECT_TRUE(is_one_line_error(preset.err)) << preset.err;
  EXPECT_NE(preset.err.find("no layout preset named \"snowflak\""), std::string::npos)
      << preset.err;
  const CliResult file = run_cli({"layout", "--layout", "/nonexistent/layout.json"});
  EXPECT_EQ(file.exit_code, 2);
  EXPECT_TRUE(is_one_line_error(file.err)) << file.err;
  EXPECT_NE(file.err.find("/nonexistent/layout.json"), std::string::npos) << file.err;
}

TEST(Layout, CustomGeneratingLayoutFileWorksForNextAndDecode) {
  TempDir dir;
  const std::string file =
      dir.write("custom.json", layout_json(kGoodFields, "2026-06-01T00:00:00Z"));
  const CliResult next =
      run_cli({"next", "-n", "2", "--host", "4", "--layout", file, "--state-dir", dir.path()});
  ASSERT_EQ(next.exit_code, 0) << next.err;
  const CliResult decoded = run_cli({"decode", "--layout", file}, next.out);
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  const std::vector<std::string> lines = lines_of(decoded.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find(" layout=custom field_time="), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find(" region=0 host=4 "), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace snowid::cli::testing
