#include "layout_choice.h"

#include <sys/stat.h>

#include <utility>
#include <vector>

namespace snowid::host {
namespace {

Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

}  // namespace

Result<LayoutFile> layout_history_of(const std::string& name_or_path) {
  Result<Layout> named = preset(name_or_path);
  if (named.is_ok()) {
    Result<LayoutHistory> history =
        LayoutHistory::create({LayoutEra{named.value(), named->epoch()}});
    if (!history.is_ok()) return history.status();
    LayoutFile file;
    file.history = std::move(history).value();
    return file;
  }
  const bool looks_like_name =
      name_or_path.find('/') == std::string::npos && name_or_path.find('.') == std::string::npos;
  struct stat st {};
  if (looks_like_name && ::stat(name_or_path.c_str(), &st) != 0) {
    return Status(Code::kNotFound, named.status().message() + ", and no file of that name");
  }
  return read_layout_file(name_or_path);
}

Result<LayoutInEffect> layout_in_effect(const std::string& name_or_path, WallTime now) {
  Result<LayoutFile> file = layout_history_of(name_or_path);
  if (!file.is_ok()) return Status(file.status().code(), "layout: " + file.status().message());
  const LayoutHistory& history = file->history;
  const std::optional<std::size_t> era = history.era_at(now);
  if (!era) {
    return invalid("layout: " + name_or_path + " starts in the future (its first cut-over is " +
                   format_iso8601(history.eras().front().cutover) +
                   "); no id of it can be made yet");
  }
  LayoutInEffect out;
  const LayoutEra& current = history.eras()[*era];
  out.layout = current.layout;
  // A preset is its own single era: no cut-over to wait for.
  if (history.eras().size() > 1 || !preset(name_or_path).is_ok()) out.not_before = current.cutover;
  if (*era + 1 < history.eras().size()) out.not_after = history.eras()[*era + 1].cutover;
  if (!out.layout.can_generate()) {
    return invalid("layout: " + out.layout.name() +
                   " is decode-only; a generator needs a layout it can generate with");
  }
  return out;
}

}  // namespace snowid::host
