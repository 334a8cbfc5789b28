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

TEST(LayoutInEffect, AnUnknownPresetIsRefusedWithTheListOfPresets) {
  Result<LayoutInEffect> unknown = layout_in_effect("snowfake", system_clock().wall_now());
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().code(), Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("unknown preset \"snowfake\""), std::string::npos);
  EXPECT_NE(unknown.status().message().find("snowid"), std::string::npos);
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

TEST(LayoutInEffect, AMissingLayoutFileIsNotFoundAndSaysWhichSetting) {
  TempDir dir{"snowid-layout-choice"};
  const Result<LayoutInEffect> missing =
      layout_in_effect(dir.path() + "/none.json", system_clock().wall_now());
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_EQ(missing.status().message().rfind("layout: ", 0), 0u) << missing.status().message();
}

TEST(LayoutInEffect, ANameIsAFileWhenItHasASlashOrEndsInJson) {
  EXPECT_TRUE(names_layout_file("./snowid"));
  EXPECT_TRUE(names_layout_file("layout.json"));
  EXPECT_FALSE(names_layout_file("snowid"));
  EXPECT_FALSE(names_layout_file("snowid.v2"));
}

}  // namespace
}  // namespace snowid::host
