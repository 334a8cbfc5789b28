// The layout a generator issues with, named by a setting: a preset, or a
// layout file (layout_file.h) whose era in effect is used.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "layout_file.h"
#include "snowid/layout.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::host {

struct LayoutInEffect {
  Layout layout = Layout::snowid_default();
  // A layout file's era in effect: no id before its cut-over. nullopt for a
  // preset.
  std::optional<WallTime> not_before;
  // The next era's cut-over, when the file has one: no id of this era at or
  // after it (GeneratorOptions::not_after). nullopt: the layout's end of life.
  std::optional<WallTime> not_after;
};

// The layout history `name_or_path` names, by the one rule of every program
// (the snowid tool's --layout and snowidd's layout setting): a preset's name
// is that preset, one era from its epoch; anything else is a layout file's
// path (layout_file.h), read whatever its name. A name with neither '/' nor
// '.' that is no preset and no file is kNotFound, saying both and listing
// the presets; a path that cannot be read is the file reader's error.
Result<LayoutFile> layout_history_of(const std::string& name_or_path);

// The era of layout_history_of(name_or_path) in effect at `now`. Beyond its
// errors, kInvalidArgument for a decode-only layout or a history with no era
// in effect yet. Messages start "layout: ".
Result<LayoutInEffect> layout_in_effect(const std::string& name_or_path, WallTime now);

}  // namespace snowid::host
