#include "layout_option.h"

#include "layout_choice.h"
#include "snowid/layout.h"

namespace snowid::cli {

CLI::Option* add_layout_option(CLI::App& app, std::string& value) {
  value = "snowid";
  return app
      .add_option("--layout", value,
                  "Preset (snowid, twitter, discord, instagram, sonyflake) or layout file")
      ->type_name("NAME|FILE")
      ->capture_default_str();
}

Result<host::LayoutFile> resolve_layout(const std::string& name_or_path, WallTime now) {
  Result<host::LayoutFile> read = host::layout_history_of(name_or_path);
  if (!read.is_ok()) return read.status();
  const host::LayoutFile& file = read.value();
  const Layout& first = file.history.eras().front().layout;
  if (first.epoch_unix_ms() > unix_ms(now)) {
    return Status(Code::kInvalidArgument, "layout " + first.name() + ": epoch " +
                                              format_iso8601(first.epoch()) +
                                              " is in the future, so no id of it can exist yet");
  }
  return read;
}

Result<std::size_t> era_at(const LayoutHistory& history, WallTime t) {
  if (std::optional<std::size_t> era = history.era_at(t)) return *era;
  const LayoutEra& first = history.eras().front();
  return Status(Code::kOutOfRange, format_iso8601(t) + " is before layout " + first.layout.name() +
                                       " took effect (" + format_iso8601(first.cutover) + ")");
}

}  // namespace snowid::cli
