// The --layout option that every subcommand takes: a preset name or the path
// of a layout file (format in layout_file.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>

#include "layout_file.h"
#include "snowid/layout_history.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::cli {

// Adds --layout to `app`; `value` keeps its default ("snowid") if not given.
CLI::Option* add_layout_option(CLI::App& app, std::string& value);

// A preset if `name_or_path` names one, otherwise the layout file at that
// path. Refuses a layout whose (first era's) epoch is after `now`: no id of
// it can exist yet, so the layout is certainly misconfigured.
Result<host::LayoutFile> resolve_layout(const std::string& name_or_path, WallTime now);

// Index of the era in effect at `t`: the last whose cut-over is at or before
// `t`. kOutOfRange when `t` is before the first cut-over.
Result<std::size_t> era_at(const LayoutHistory& history, WallTime t);

}  // namespace snowid::cli
