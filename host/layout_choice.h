// The layout a generator issues with, named by a setting: a preset, or a
// layout file (layout_file.h) whose era in effect is used.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "snowid/layout.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::host {

struct LayoutInEffect {
  Layout layout = Layout::snowid_default();
  // A layout file's era in effect: no id before its cut-over. nullopt for a
  // preset.
  std::optional<WallTime> not_before;
};

// True if `value` names a layout file rather than a preset: it contains '/'
// or ends with ".json".
bool names_layout_file(std::string_view value) noexcept;

// `name_or_path` as names_layout_file() tells: the era of the file in effect
// at `now`, or the preset. kInvalidArgument for an unknown preset (the
// message lists them), a decode-only layout or a file with no era in effect
// yet; the file reader's error for a bad file. Messages start "layout: ".
Result<LayoutInEffect> layout_in_effect(const std::string& name_or_path, WallTime now);

}  // namespace snowid::host
