#include "layout_choice.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>

#include "snowid/time.h"
#include "temp_dir.h"
#include "test_layouts.h"

namespace snowid::host {
namespace {

using snowid::test_support::TempDir;

TEST(LayoutInEffect, APresetIsUsedAsItIsWithNoCutover) {
  Result<LayoutInEffect> l = layout_in_effect("snowid", system_clock().wall_now());
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_EQ(l->layout.name(), "snowid");
  EXPECT_FALSE(l->not_before.has_value());
}

TEST(LayoutInEffect, AnUnknownPresetThatIsNoFileIsRefusedWithTheListOfPresets) {
  Result<LayoutInEffect> unknown = layout_in_effect("snowfake", system_clock().wall_now());
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().code(), Code::kNotFound);
  EXPECT_EQ(unknown.status().message().rfind("layout: no layout preset named \"snowfake\"", 0), 0u)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("snowid"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("no file of that name"), std::string::npos);
}

TEST(LayoutInEffect, ADecodeOnlyPresetIsRefused) {
  Result<LayoutInEffect> foreign = layout_in_effect("twitter", system_clock().wall_now());
  ASSERT_FALSE(foreign.is_ok());
  EXPECT_EQ(foreign.status().code(), Code::kInvalidArgument);
  EXPECT_NE(foreign.status().message().find("decode-only"), std::string::npos);
}

TEST(LayoutInEffect, ALayoutFileGivesItsEraInEffectFromItsCutover) {
  TempDir dir{"snowid-layout-choice"};
  const std::string path = dir.path() + "/narrow.json";
  std::ofstream(path) << snowid::test_support::kNarrowLayoutJson;
  Result<LayoutInEffect> l = layout_in_effect(path, system_clock().wall_now());
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_EQ(l->layout.name(), "narrow");
  EXPECT_EQ(l->layout.workers_per_region(), 16u);
  ASSERT_TRUE(l->not_before.has_value());
  EXPECT_EQ(*l->not_before, l->layout.epoch());

  Result<LayoutInEffect> early = layout_in_effect(path, l->layout.epoch() - std::chrono::hours(1));
  ASSERT_FALSE(early.is_ok()) << "no era is in effect before the first cut-over";
  EXPECT_EQ(early.status().code(), Code::kInvalidArgument);
  EXPECT_NE(early.status().message().find("starts in the future"), std::string::npos);
}

// An era with a later one ends at that one's cut-over; the last era does not.
TEST(LayoutInEffect, AnEraEndsAtTheNextCutover) {
  TempDir dir{"snowid-layout-choice"};
  const std::string path = dir.path() + "/history.json";
  std::ofstream(path) << R"({"history": [
      {"cutover": "2026-01-01T00:00:00Z", "layout": "snowid"},
      {"cutover": "2030-01-01T00:00:00Z", "layout": "snowid"}]})";
  const WallTime cutover = wall_from_unix_ms(1893456000000);  // 2030-01-01
  Result<LayoutInEffect> first = layout_in_effect(path, cutover - std::chrono::hours(1));
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  ASSERT_TRUE(first->not_after.has_value());
  EXPECT_EQ(*first->not_after, cutover);
  Result<LayoutInEffect> second = layout_in_effect(path, cutover);
  ASSERT_TRUE(second.is_ok()) << second.status().message();
  EXPECT_EQ(second->not_before, cutover);
  EXPECT_FALSE(second->not_after.has_value());
  EXPECT_FALSE(layout_in_effect("snowid", cutover)->not_after.has_value());
}

TEST(LayoutInEffect, AMissingLayoutFileIsNotFoundAndSaysWhichSetting) {
  TempDir dir{"snowid-layout-choice"};
  const Result<LayoutInEffect> missing =
      layout_in_effect(dir.path() + "/none.json", system_clock().wall_now());
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_EQ(missing.status().message().rfind("layout: ", 0), 0u) << missing.status().message();
}

// The snowid tool and snowidd read --layout by one rule (layout_history_of).
TEST(LayoutInEffect, APresetNameWinsAndAnyOtherNameIsAFile) {
  TempDir dir{"snowid-layout-choice"};
  const std::string bare = dir.path() + "/narrow";
  std::ofstream(bare) << snowid::test_support::kNarrowLayoutJson;
  // A file whose name has no ".json": read as the file it is.
  Result<LayoutFile> file = layout_history_of(bare);
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  EXPECT_EQ(file->history.eras().front().layout.name(), "narrow");
  // A preset's name is the preset, one era from its epoch.
  Result<LayoutFile> named = layout_history_of("snowid");
  ASSERT_TRUE(named.is_ok()) << named.status().message();
  ASSERT_EQ(named->history.eras().size(), 1u);
  EXPECT_EQ(named->history.eras().front().layout.name(), "snowid");
  EXPECT_EQ(named->history.eras().front().cutover, named->history.eras().front().layout.epoch());
  const Result<LayoutFile> missing = layout_history_of(dir.path() + "/nothing");
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace snowid::host
