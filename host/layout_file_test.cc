// Unit tests of the layout-file reader and writer.
#include "layout_file.h"

#include <gtest/gtest.h>

#include <string>

#include "snowid/layout.h"

namespace snowid::host {
namespace {

constexpr const char* kCustom = R"({
  "name": "custom", "epoch_ms": 1767225600000, "unit_ms": 1, "decode_only": false,
  "fields": [{"name": "time", "role": "time", "width": 41},
             {"name": "region", "role": "region", "width": 2},
             {"name": "host", "role": "host", "width": 8},
             {"name": "sequence", "role": "sequence", "width": 12}]})";

std::string error_of(std::string_view text) {
  Result<LayoutFile> r = parse_layout_file(text);
  EXPECT_FALSE(r.is_ok()) << text;
  if (r.is_ok()) return "";
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().to_string();
  return r.status().message();
}

TEST(LayoutFile, ReadsASingleLayoutAsAHistoryOfOneEraFromItsEpoch) {
  Result<LayoutFile> r = parse_layout_file(kCustom);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FALSE(r->is_history);
  ASSERT_EQ(r->history.eras().size(), 1u);
  const LayoutEra& era = r->history.eras()[0];
  EXPECT_EQ(era.cutover, era.layout.epoch());
  EXPECT_EQ(era.layout.name(), "custom");
  EXPECT_TRUE(era.layout.can_generate());
  EXPECT_EQ(era.layout.shift_of(FieldRole::kHost), 12);
}

TEST(LayoutFile, DefaultsNameUnitAndDecodeOnly) {
  Result<LayoutFile> r = parse_layout_file(
      R"({"epoch": "2015-01-01T00:00:00Z",
          "fields": [{"name": "t", "role": "time", "width": 42},
                     {"name": "rest", "role": "other", "width": 22}], "decode_only": true})");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Layout& l = r->history.eras()[0].layout;
  EXPECT_EQ(l.name(), "custom");
  EXPECT_EQ(l.unit_ms(), 1);
  EXPECT_EQ(l.epoch_unix_ms(), 1420070400000);
  EXPECT_FALSE(l.can_generate());
}

TEST(LayoutFile, WrittenJsonReadsBackToTheSameLayoutForEveryPreset) {
  for (std::string_view name : preset_names()) {
    Result<Layout> p = preset(name);
    ASSERT_TRUE(p.is_ok());
    const std::string text = layout_to_json(p.value()).dump();
    Result<LayoutFile> back = parse_layout_file(text);
    ASSERT_TRUE(back.is_ok()) << name << ": " << back.status().to_string();
    EXPECT_EQ(layout_file_to_json(back.value()).dump(), text) << name;
  }
}

TEST(LayoutFile, HistoryEraMayNameAPreset) {
  Result<LayoutFile> r = parse_layout_file(
      R"({"history": [{"cutover": "2026-02-01T00:00:00Z", "layout": "snowid"}]})");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(r->is_history);
  EXPECT_EQ(r->history.eras()[0].layout.name(), "snowid");
  EXPECT_EQ(unix_ms(r->history.eras()[0].cutover), 1769904000000);
}

TEST(LayoutFile, ErrorsNameTheKeyPath) {
  EXPECT_NE(error_of(R"({"history": [{"cutover": "2026-01-01T00:00:00Z", "layout": {
              "epoch_ms": 1767225600000,
              "fields": [{"name": "time", "role": "time", "width": 41},
                         {"name": "x", "role": "host", "width": 0}]}}]})")
                .find("history[0].layout.fields[1].width: must be 1 to 64 bits, not 0"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"history": [{"layout": "snowid"}]})")
                .find("history[0]: cutover_ms or cutover is required"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"history": [], "name": "x"})").find("no other top-level keys"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"history": []})").find("1 to 64 eras"), std::string::npos);
  EXPECT_NE(error_of(R"({"epoch_ms": -1, "fields": []})").find("epoch_ms: -1 is outside"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"epoch_ms": 18446744073709551615, "fields": []})").find("too large"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"epoch": "2026-01-01T00:00:00.0001Z", "fields": []})").find("whole millisecond"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"epoch_ms": 0, "decode_only": 1, "fields": []})")
                .find("decode_only: must be true or false, not a number"),
            std::string::npos);
}

TEST(LayoutFile, DerivedKeysMustMatchWhenPresent) {
  nlohmann::ordered_json j = layout_to_json(Layout::snowid_default());
  j["capacity"]["regions"] = 8;
  EXPECT_NE(error_of(j.dump()).find("capacity.regions: is 8 but the layout gives 4"),
            std::string::npos);
  j = layout_to_json(Layout::snowid_default());
  j["end_of_life"] = "2095-01-01T00:00:00Z";
  EXPECT_NE(error_of(j.dump()).find("end_of_life: is"), std::string::npos);
  j = layout_to_json(Layout::snowid_default());
  j["warnings"] = {1};
  EXPECT_NE(error_of(j.dump()).find("warnings: must be an array of strings"), std::string::npos);
}

TEST(LayoutFile, RefusesDeepNestingAndRepeatedKeysWithoutCrashing) {
  EXPECT_NE(error_of(std::string(100000, '[') + std::string(100000, ']')).find("nested deeper"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"fields": [{"name": "a", "name": "b"}]})").find("appears twice"),
            std::string::npos);
}

TEST(LayoutFile, RefusesOversizedInputBeforeParsing) {
  const std::string big(kMaxLayoutFileBytes + 1, ' ');
  EXPECT_NE(error_of(big).find("larger than"), std::string::npos);
}

TEST(LayoutFile, InvalidUtf8AndControlCharactersStayOutOfMessages) {
  const std::string msg = error_of("{\"name\": \"\xff\xfe\x01\"}");
  for (char c : msg) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << static_cast<int>(c);
}

TEST(LayoutFile, MissingFileIsNotFound) {
  Result<LayoutFile> r = read_layout_file("/nonexistent/dir/layout.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/dir/layout.json"), std::string::npos);
}

}  // namespace
}  // namespace snowid::host
