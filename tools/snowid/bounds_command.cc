// `snowid bounds`: the id range of a time range, e.g. for a partition's CHECK.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "diagnostics.h"
#include "layout_option.h"

namespace snowid::cli {
namespace {

struct BoundsOptions {
  std::string from;
  std::string to;
  std::string layout;
  bool json = false;
  bool sql = false;
  std::string column = "id";
};

bool valid_column(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool on_tick_boundary(const Layout& layout, WallTime t) {
  return layout.time_of_ticks(layout.ticks_at(t)) == t;
}

int run_bounds(const BoundsOptions& opt) {
  Result<WallTime> from = parse_iso8601(opt.from);
  if (!from.is_ok())
    return report(Status(Code::kInvalidArgument, "--from: " + from.status().message()));
  Result<WallTime> to = parse_iso8601(opt.to);
  if (!to.is_ok()) return report(Status(Code::kInvalidArgument, "--to: " + to.status().message()));
  if (from.value() >= to.value()) {
    return report(Status(Code::kInvalidArgument, "--from " + format_iso8601(from.value()) +
                                                     " must be before --to " +
                                                     format_iso8601(to.value())));
  }
  if (!valid_column(opt.column)) {
    return report(Status(Code::kInvalidArgument,
                         "--column must be a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*)"));
  }
  Result<host::LayoutFile> file = resolve_layout(opt.layout, system_clock().wall_now());
  if (!file.is_ok()) return report(file.status());
  const auto& eras = file->history.eras();

  // [from, to): the first id at `from`, the last id before `to`.
  const WallTime last = to.value() - Duration(1);
  Result<std::size_t> first_era = era_at(file->history, from.value());
  if (!first_era.is_ok()) return report(first_era.status());
  Result<std::size_t> last_era = era_at(file->history, last);
  if (!last_era.is_ok()) return report(last_era.status());
  const Layout& first_layout = eras[first_era.value()].layout;
  const Layout& last_layout = eras[last_era.value()].layout;
  Result<std::uint64_t> min = first_layout.min_id_at(from.value());
  if (!min.is_ok()) return report(Status(Code::kOutOfRange, "--from: " + min.status().message()));
  Result<std::uint64_t> max = last_layout.max_id_at(last);
  if (!max.is_ok()) return report(Status(Code::kOutOfRange, "--to: " + max.status().message()));

  // Ids of a tick that straddles a bound fall in both neighbouring ranges.
  if (!on_tick_boundary(first_layout, from.value())) {
    print_warning("--from is inside a " + std::to_string(first_layout.unit_ms()) +
                  " ms tick; the range starts at the tick's start");
  }
  if (!on_tick_boundary(last_layout, to.value())) {
    print_warning("--to is inside a " + std::to_string(last_layout.unit_ms()) +
                  " ms tick; the range ends at the tick's end");
  }
  const std::string min_text = std::to_string(min.value());
  const std::string max_text = std::to_string(max.value());
  std::string out;
  if (opt.json) {
    nlohmann::ordered_json j;
    j["from"] = format_iso8601(from.value());
    j["to"] = format_iso8601(to.value());
    j["min"] = min_text;
    j["max"] = max_text;
    out = j.dump();
  } else if (opt.sql) {
    if (max.value() > std::uint64_t{INT64_MAX}) {
      print_warning("the bounds exceed a signed 64-bit (bigint) column");
    }
    out =
        "CHECK (" + opt.column + " >= " + min_text + " AND " + opt.column + " <= " + max_text + ")";
  } else {
    out = "min=" + min_text + " max=" + max_text;
  }
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk
                                  : report(Status(Code::kUnavailable, "cannot write the bounds"));
}

}  // namespace

Command add_bounds_command(CLI::App& root) {
  auto opt = std::make_shared<BoundsOptions>();
  CLI::App* app = root.add_subcommand(
      "bounds", "Smallest and largest id of a time range [from, to), e.g. for a partition");
  app->add_option("--from", opt->from, "Start of the range (included), ISO 8601")
      ->type_name("ISO")
      ->required();
  app->add_option("--to", opt->to, "End of the range (excluded), ISO 8601")
      ->type_name("ISO")
      ->required();
  add_layout_option(*app, opt->layout);
  CLI::Option* json = app->add_flag("--json", opt->json, "A JSON object with the ids as strings");
  CLI::Option* sql = app->add_flag("--sql", opt->sql, "A CHECK constraint for the range");
  json->excludes(sql);
  app->add_option("--column", opt->column, "Column name for --sql")
      ->type_name("NAME")
      ->capture_default_str();
  return {app, [opt](const Operands&) { return run_bounds(*opt); }};
}

}  // namespace snowid::cli
