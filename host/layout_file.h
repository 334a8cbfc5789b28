// Layout files: a custom id layout, or a history of layouts, written as JSON.
//
// A file holds either one layout object or {"history": [era, ...]}.
//
// Layout object (keys not listed are refused; each key at most once):
//   "name"          string, 1-64 of [A-Za-z0-9_.-]; default "custom"
//   "epoch_ms"      integer, Unix milliseconds of tick 0  } at least one of the
//   "epoch"         string, ISO 8601 with a zone          } two; equal if both
//   "unit_ms"       integer, 1 or 10; default 1
//   "decode_only"   boolean; default false (true for foreign layouts)
//   "fields"        array of 1-8 field objects, most significant first:
//       "name"      string, 1-32 of [a-z0-9_], unique in the layout
//       "role"      "time", "region", "host", "sequence" or "other"
//       "width"     integer bits, 1-64
//       "shift"     optional integer; if present it must equal the field's
//                   computed position (so hand edits cannot silently disagree)
//   Derived keys that `snowid layout --json` writes, optional on input and
//   checked against the fields when present:
//   "bits", "end_of_life", "end_of_life_unix_ms", and "capacity" with
//   "regions", "workers_per_region", "ids_per_worker_per_unit",
//   "ids_per_worker_per_second".
//   Keys that depend on when they were written, type-checked and otherwise
//   ignored: "years_remaining" (number) and "warnings" (array of strings).
//
// Era object, in a history ordered by cut-over:
//   "cutover"       string, ISO 8601 with a zone      } at least one of the two;
//   "cutover_ms"    integer, Unix milliseconds        } equal if both
//   "layout"        a layout object, or the name of a preset ("snowid", ...)
// The eras must satisfy LayoutHistory::create: every id of a later era sorts
// above the ids of earlier ones, so decode picks the era from the id alone.
//
// A single layout is read as a history of one era whose cut-over is its epoch.
// Parsing never throws and never depends on the current time: every failure
// is kInvalidArgument naming the key path (for example
// `history[1].layout.fields[2].width`), except that read_layout_file reports a
// missing file as kNotFound and an unreadable one as kUnavailable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "snowid/layout_history.h"
#include "snowid/status.h"

namespace snowid::host {

// Larger files are refused before parsing.
inline constexpr std::size_t kMaxLayoutFileBytes = 1 << 20;
inline constexpr std::size_t kMaxEras = 64;

struct LayoutFile {
  LayoutHistory history;
  // True when the file used the {"history": [...]} form; a single layout is
  // written back as a single layout.
  bool is_history = false;
};

Result<LayoutFile> parse_layout_file(std::string_view json_text);
// Reads and parses `path`; messages start with the path.
Result<LayoutFile> read_layout_file(const std::string& path);

// Sequence capacity times ticks per second; nullopt when that overflows 64 bits.
std::optional<std::uint64_t> ids_per_worker_per_second(const Layout& layout);

// The layout object for `layout`: the input keys plus the checked derived keys
// (never "years_remaining" or "warnings"). Parsing it gives the same layout.
nlohmann::ordered_json layout_to_json(const Layout& layout);
// The whole file: one layout object, or {"history": [...]}.
nlohmann::ordered_json layout_file_to_json(const LayoutFile& file);

}  // namespace snowid::host
