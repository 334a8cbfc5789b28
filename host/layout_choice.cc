#include "layout_choice.h"

#include <utility>
#include <vector>

#include "layout_file.h"

namespace snowid::host {
namespace {

Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

Result<LayoutInEffect> layout_from_file(const std::string& path, WallTime now) {
  Result<LayoutFile> file = read_layout_file(path);
  if (!file.is_ok()) return Status(file.status().code(), "layout: " + file.status().message());
  const std::optional<std::size_t> era = file->history.era_at(now);
  if (!era) {
    return invalid("layout: " + path + " starts in the future (its first cut-over is " +
                   format_iso8601(file->history.eras().front().cutover) +
                   "); no id of it can be made yet");
  }
  const LayoutEra& current = file->history.eras()[*era];
  return LayoutInEffect{current.layout, current.cutover};
}

}  // namespace

bool names_layout_file(std::string_view value) noexcept {
  return value.find('/') != std::string_view::npos || value.ends_with(".json");
}

Result<LayoutInEffect> layout_in_effect(const std::string& name_or_path, WallTime now) {
  LayoutInEffect out;
  if (names_layout_file(name_or_path)) {
    Result<LayoutInEffect> file = layout_from_file(name_or_path, now);
    if (!file.is_ok()) return file.status();
    out = std::move(file).value();
  } else {
    Result<Layout> named = preset(name_or_path);
    if (!named.is_ok()) {
      std::string names;
      for (std::string_view n : preset_names())
        names += (names.empty() ? "" : ", ") + std::string(n);
      return invalid("layout: unknown preset \"" + name_or_path + "\" (presets: " + names +
                     "; a layout file's name contains '/' or ends with .json)");
    }
    out.layout = std::move(named).value();
  }
  if (!out.layout.can_generate()) {
    return invalid("layout: " + out.layout.name() +
                   " is decode-only; a generator needs a layout it can generate with");
  }
  return out;
}

}  // namespace snowid::host
