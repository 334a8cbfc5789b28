// What `snowid layout` prints: a layout (or history) with what depends on the
// current time, as text for people or as JSON that reads back as a layout file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "layout_file.h"
#include "snowid/layout.h"
#include "snowid/time.h"

namespace snowid::cli {

// The parts of a description that depend on `now`.
struct LayoutOutlook {
  double years_remaining = 0;  // negative once the end of life has passed
  // From check_layout, plus its refusal when the end of life has passed.
  // Nothing for an era whose epoch is still ahead: it is a planned era.
  std::vector<std::string> warnings;
};
LayoutOutlook outlook_of(const Layout& layout, WallTime now);

// Several lines, each ending in "\n".
std::string describe_text(const host::LayoutFile& file, WallTime now);
// layout_file_to_json(file) with "years_remaining" and "warnings" added to
// each layout object.
nlohmann::ordered_json describe_json(const host::LayoutFile& file, WallTime now);

}  // namespace snowid::cli
