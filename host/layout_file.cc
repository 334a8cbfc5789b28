// Reads layout files (format in layout_file.h): checks each key of the JSON
// document and builds the layouts. Never throws; callers only see a Result.
#include "layout_file.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "durable_file.h"
#include "message_text.h"
#include "snowid/time.h"
#include "strict_json.h"

namespace snowid::host {
namespace {

using Json = nlohmann::json;

// Objects and arrays nest at most this deep; the format itself needs five.
constexpr std::size_t kMaxDepth = 16;
// Largest Unix millisecond count that still fits WallTime's nanoseconds.
constexpr std::int64_t kMaxUnixMs = INT64_MAX / 1'000'000;

Status invalid(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string at(const std::string& path) { return path.empty() ? std::string() : path + ": "; }

// Refuses keys outside `allowed`, naming the first such key.
Status check_keys(const Json& object, const std::string& path,
                  std::initializer_list<std::string_view> allowed) {
  for (const auto& item : object.items()) {
    bool known = false;
    for (std::string_view k : allowed) known = known || item.key() == k;
    if (!known) {
      std::string expected;
      for (std::string_view k : allowed)
        expected += (expected.empty() ? "" : ", ") + std::string(k);
      return invalid(at(path) + "unknown key " + quote_input(item.key()) + " (expected " +
                     expected + ")");
    }
  }
  return Status::ok();
}

const Json* find(const Json& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

Status wrong_type(const std::string& where, std::string_view expected, const Json& v) {
  return invalid(where + ": must be " + std::string(expected) + ", not " +
                 (v.is_number_float() ? std::string("a fractional number")
                                      : std::string("a ") + v.type_name()));
}

Status get_string(const Json& object, const std::string& path, std::string_view key,
                  std::optional<std::string>& out) {
  const Json* v = find(object, key);
  if (v == nullptr) return Status::ok();
  if (!v->is_string()) return wrong_type(join(path, key), "a string", *v);
  out = v->get<std::string>();
  return Status::ok();
}

Status get_int(const Json& object, const std::string& path, std::string_view key,
               std::optional<std::int64_t>& out) {
  const Json* v = find(object, key);
  if (v == nullptr) return Status::ok();
  if (!v->is_number_integer()) return wrong_type(join(path, key), "an integer", *v);
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > std::uint64_t{INT64_MAX}) {
    return invalid(join(path, key) + ": " + std::to_string(v->get<std::uint64_t>()) +
                   " is too large");
  }
  out = v->get<std::int64_t>();
  return Status::ok();
}

Status get_uint(const Json& object, const std::string& path, std::string_view key,
                std::optional<std::uint64_t>& out) {
  const Json* v = find(object, key);
  if (v == nullptr) return Status::ok();
  if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<std::int64_t>() < 0)) {
    return wrong_type(join(path, key), "a non-negative integer", *v);
  }
  out = v->get<std::uint64_t>();
  return Status::ok();
}

Status get_bool(const Json& object, const std::string& path, std::string_view key,
                std::optional<bool>& out) {
  const Json* v = find(object, key);
  if (v == nullptr) return Status::ok();
  if (!v->is_boolean()) return wrong_type(join(path, key), "true or false", *v);
  out = v->get<bool>();
  return Status::ok();
}

bool valid_layout_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// An instant given as an ISO string (`iso_key`), as Unix ms (`ms_key`), or
// both when they agree. Sub-millisecond instants are refused: layouts count
// whole milliseconds.
Status get_instant(const Json& object, const std::string& path, std::string_view ms_key,
                   std::string_view iso_key, std::optional<std::int64_t>& out_ms) {
  std::optional<std::int64_t> ms;
  std::optional<std::string> iso;
  if (Status s = get_int(object, path, ms_key, ms); !s.is_ok()) return s;
  if (Status s = get_string(object, path, iso_key, iso); !s.is_ok()) return s;
  if (ms && (*ms < 0 || *ms > kMaxUnixMs)) {
    return invalid(join(path, ms_key) + ": " + std::to_string(*ms) +
                   " is outside 1970-01-01..2262-04-11");
  }
  if (iso) {
    // parse_iso8601 keeps dates in 1970..2261, but an offset can still move
    // the instant before 1970.
    Result<WallTime> t = parse_iso8601(*iso);
    if (!t.is_ok()) return invalid(join(path, iso_key) + ": " + t.status().message());
    const std::int64_t iso_ms = unix_ms(t.value());
    if (wall_from_unix_ms(iso_ms) != t.value()) {
      return invalid(join(path, iso_key) + ": must be a whole millisecond");
    }
    if (iso_ms < 0) return invalid(join(path, iso_key) + ": is before 1970-01-01");
    if (ms && *ms != iso_ms) {
      return invalid(join(path, iso_key) + " and " + std::string(ms_key) + " disagree (" +
                     std::to_string(iso_ms) + " vs " + std::to_string(*ms) + " ms)");
    }
    ms = iso_ms;
  }
  if (!ms) {
    return invalid(at(path) + std::string(ms_key) + " or " + std::string(iso_key) + " is required");
  }
  out_ms = ms;
  return Status::ok();
}

Status check_derived(const std::string& where, std::uint64_t given, std::uint64_t computed) {
  if (given == computed) return Status::ok();
  return invalid(where + ": is " + std::to_string(given) + " but the layout gives " +
                 std::to_string(computed) + " (derived keys may be left out)");
}

// The optional derived keys `snowid layout --json` writes.
Status check_derived_keys(const Json& object, const std::string& path, const Layout& layout) {
  std::optional<std::uint64_t> bits, eol_ms;
  if (Status s = get_uint(object, path, "bits", bits); !s.is_ok()) return s;
  if (bits) {
    if (Status s = check_derived(join(path, "bits"), *bits, std::uint64_t(layout.total_width()));
        !s.is_ok()) {
      return s;
    }
  }
  if (Status s = get_uint(object, path, "end_of_life_unix_ms", eol_ms); !s.is_ok()) return s;
  const auto eol = static_cast<std::uint64_t>(layout.end_of_life_unix_ms());
  if (eol_ms) {
    if (Status s = check_derived(join(path, "end_of_life_unix_ms"), *eol_ms, eol); !s.is_ok()) {
      return s;
    }
  }
  std::optional<std::string> eol_iso;
  if (Status s = get_string(object, path, "end_of_life", eol_iso); !s.is_ok()) return s;
  if (eol_iso) {
    Result<WallTime> t = parse_iso8601(*eol_iso);
    if (!t.is_ok()) return invalid(join(path, "end_of_life") + ": " + t.status().message());
    if (unix_ms(t.value()) != layout.end_of_life_unix_ms() ||
        wall_from_unix_ms(unix_ms(t.value())) != t.value()) {
      return invalid(join(path, "end_of_life") + ": is " + quote_input(*eol_iso) +
                     " but the layout gives " +
                     format_iso8601(wall_from_unix_ms(layout.end_of_life_unix_ms())) +
                     " (derived keys may be left out)");
    }
  }
  if (const Json* cap = find(object, "capacity")) {
    const std::string cpath = join(path, "capacity");
    if (!cap->is_object()) return wrong_type(cpath, "an object", *cap);
    if (Status s = check_keys(*cap, cpath,
                              {"regions", "workers_per_region", "ids_per_worker_per_unit",
                               "ids_per_worker_per_second"});
        !s.is_ok()) {
      return s;
    }
    const std::pair<std::string_view, std::optional<std::uint64_t>> computed[] = {
        {"regions", layout.regions()},
        {"workers_per_region", layout.workers_per_region()},
        {"ids_per_worker_per_unit", layout.sequence_capacity()},
        {"ids_per_worker_per_second", ids_per_worker_per_second(layout)},
    };
    for (const auto& [key, value] : computed) {
      std::optional<std::uint64_t> given;
      if (Status s = get_uint(*cap, cpath, key, given); !s.is_ok()) return s;
      if (!given) continue;
      if (!value) return invalid(join(cpath, key) + ": the layout's value does not fit 64 bits");
      if (Status s = check_derived(join(cpath, key), *given, *value); !s.is_ok()) return s;
    }
  }
  if (const Json* years = find(object, "years_remaining"); years && !years->is_number()) {
    return wrong_type(join(path, "years_remaining"), "a number", *years);
  }
  if (const Json* warnings = find(object, "warnings")) {
    const std::string wpath = join(path, "warnings");
    if (!warnings->is_array()) return wrong_type(wpath, "an array of strings", *warnings);
    for (const Json& w : *warnings) {
      if (!w.is_string()) return wrong_type(wpath, "an array of strings", w);
    }
  }
  return Status::ok();
}

Result<FieldSpec> parse_field(const Json& j, const std::string& path,
                              std::optional<std::int64_t>& shift) {
  if (!j.is_object()) return wrong_type(path, "an object", j);
  if (Status s = check_keys(j, path, {"name", "role", "width", "shift"}); !s.is_ok()) return s;
  std::optional<std::string> name, role;
  std::optional<std::int64_t> width;
  if (Status s = get_string(j, path, "name", name); !s.is_ok()) return s;
  if (Status s = get_string(j, path, "role", role); !s.is_ok()) return s;
  if (Status s = get_int(j, path, "width", width); !s.is_ok()) return s;
  if (Status s = get_int(j, path, "shift", shift); !s.is_ok()) return s;
  if (!name) return invalid(at(path) + "name is required");
  if (!role) return invalid(at(path) + "role is required");
  if (!width) return invalid(at(path) + "width is required");
  Result<FieldRole> r = parse_role(*role);
  if (!r.is_ok()) return invalid(join(path, "role") + ": " + r.status().message());
  // Checked before narrowing to int.
  if (*width < 1 || *width > 64) {
    return invalid(join(path, "width") + ": must be 1 to 64 bits, not " + std::to_string(*width));
  }
  return FieldSpec{*name, r.value(), static_cast<int>(*width)};
}

Result<Layout> parse_layout(const Json& j, const std::string& path) {
  if (!j.is_object()) return wrong_type(path.empty() ? "layout" : path, "an object", j);
  if (Status s = check_keys(
          j, path,
          {"name", "epoch_ms", "epoch", "unit_ms", "decode_only", "fields", "bits", "end_of_life",
           "end_of_life_unix_ms", "capacity", "years_remaining", "warnings"});
      !s.is_ok()) {
    return s;
  }
  LayoutSpec spec;
  std::optional<std::string> name;
  if (Status s = get_string(j, path, "name", name); !s.is_ok()) return s;
  if (name && !valid_layout_name(*name)) {
    return invalid(join(path, "name") + ": " + quote_input(*name) +
                   " must be 1-64 of [A-Za-z0-9_.-]");
  }
  spec.name = name.value_or("custom");
  std::optional<std::int64_t> epoch_ms, unit_ms;
  if (Status s = get_instant(j, path, "epoch_ms", "epoch", epoch_ms); !s.is_ok()) return s;
  spec.epoch_unix_ms = *epoch_ms;
  if (Status s = get_int(j, path, "unit_ms", unit_ms); !s.is_ok()) return s;
  spec.unit_ms = unit_ms.value_or(1);
  std::optional<bool> decode_only;
  if (Status s = get_bool(j, path, "decode_only", decode_only); !s.is_ok()) return s;
  spec.decode_only = decode_only.value_or(false);

  const Json* fields = find(j, "fields");
  const std::string fpath = join(path, "fields");
  if (fields == nullptr) return invalid(at(path) + "fields is required");
  if (!fields->is_array()) return wrong_type(fpath, "an array", *fields);
  if (fields->empty() || fields->size() > static_cast<std::size_t>(kMaxFields)) {
    return invalid(fpath + ": a layout has 1 to " + std::to_string(kMaxFields) + " fields, not " +
                   std::to_string(fields->size()));
  }
  std::vector<std::optional<std::int64_t>> shifts(fields->size());
  for (std::size_t i = 0; i < fields->size(); ++i) {
    Result<FieldSpec> f =
        parse_field((*fields)[i], fpath + "[" + std::to_string(i) + "]", shifts[i]);
    if (!f.is_ok()) return f.status();
    spec.fields.push_back(std::move(f).value());
  }

  Result<Layout> layout = Layout::create(std::move(spec));
  if (!layout.is_ok()) return invalid(at(path) + layout.status().message());
  for (std::size_t i = 0; i < shifts.size(); ++i) {
    const int computed = layout->fields()[i].shift;
    if (shifts[i] && *shifts[i] != computed) {
      return invalid(fpath + "[" + std::to_string(i) + "].shift: is " + std::to_string(*shifts[i]) +
                     " but the widths put the field at " + std::to_string(computed));
    }
  }
  if (Status s = check_derived_keys(j, path, layout.value()); !s.is_ok()) return s;
  return layout;
}

Result<LayoutEra> parse_era(const Json& j, const std::string& path) {
  if (!j.is_object()) return wrong_type(path, "an object", j);
  if (Status s = check_keys(j, path, {"cutover", "cutover_ms", "layout"}); !s.is_ok()) return s;
  std::optional<std::int64_t> cutover_ms;
  if (Status s = get_instant(j, path, "cutover_ms", "cutover", cutover_ms); !s.is_ok()) return s;
  const Json* layout_json = find(j, "layout");
  const std::string lpath = join(path, "layout");
  if (layout_json == nullptr) return invalid(at(path) + "layout is required");
  std::optional<Result<Layout>> layout;
  if (layout_json->is_string()) {
    layout.emplace(preset(layout_json->get<std::string>()));
    if (!layout->is_ok()) return invalid(lpath + ": " + layout->status().message());
  } else if (layout_json->is_object()) {
    layout.emplace(parse_layout(*layout_json, lpath));
    if (!layout->is_ok()) return layout->status();
  } else {
    return wrong_type(lpath, "a layout object or a preset name", *layout_json);
  }
  return LayoutEra{std::move(*layout).value(), wall_from_unix_ms(*cutover_ms)};
}

Result<LayoutFile> parse_document(const Json& doc) {
  if (!doc.is_object()) return wrong_type("the file", "a JSON object", doc);
  LayoutFile file;
  std::vector<LayoutEra> eras;
  if (const Json* history = find(doc, "history")) {
    file.is_history = true;
    if (doc.size() != 1) {
      return invalid("a file with \"history\" has no other top-level keys; " +
                     check_keys(doc, "", {"history"}).message());
    }
    if (!history->is_array()) return wrong_type("history", "an array of eras", *history);
    if (history->empty() || history->size() > kMaxEras) {
      return invalid("history: must have 1 to " + std::to_string(kMaxEras) + " eras, not " +
                     std::to_string(history->size()));
    }
    for (std::size_t i = 0; i < history->size(); ++i) {
      Result<LayoutEra> era = parse_era((*history)[i], "history[" + std::to_string(i) + "]");
      if (!era.is_ok()) return era.status();
      eras.push_back(std::move(era).value());
    }
  } else {
    Result<Layout> layout = parse_layout(doc, "");
    if (!layout.is_ok()) return layout.status();
    const WallTime epoch = layout->epoch();
    eras.push_back(LayoutEra{std::move(layout).value(), epoch});
  }
  Result<LayoutHistory> history = LayoutHistory::create(std::move(eras));
  if (!history.is_ok()) return invalid("history: " + history.status().message());
  file.history = std::move(history).value();
  return file;
}

Result<LayoutFile> parse_text(std::string_view json_text) {
  if (json_text.size() > kMaxLayoutFileBytes) {
    return invalid("is larger than " + std::to_string(kMaxLayoutFileBytes) + " bytes");
  }
  Result<Json> doc = parse_strict_json(json_text, kMaxDepth);
  if (!doc.is_ok()) return doc.status();
  try {
    return parse_document(doc.value());
  } catch (const std::bad_alloc&) {
    return Status(Code::kUnavailable, "out of memory while reading the layout file");
  } catch (const std::exception& e) {
    // Not expected: every access above is type-checked first.
    return invalid(std::string("unreadable layout file: ") + printable(e.what(), 160));
  }
}

}  // namespace

std::optional<std::uint64_t> ids_per_worker_per_second(const Layout& layout) {
  const std::uint64_t per_unit = layout.sequence_capacity();
  const auto units = static_cast<std::uint64_t>(1000 / layout.unit_ms());
  if (per_unit > UINT64_MAX / units) return std::nullopt;
  return per_unit * units;
}

Result<LayoutFile> parse_layout_file(std::string_view json_text) {
  // Messages quote parts of the input; keep them one line of plain ASCII.
  Result<LayoutFile> r = parse_text(json_text);
  if (r.is_ok()) return r;
  return Status(r.status().code(), printable(r.status().message(), 600));
}

Result<LayoutFile> read_layout_file(const std::string& path) {
  const std::string name = "layout file " + printable(path, 200);
  const internal::FileStart got = internal::read_file_start(path, kMaxLayoutFileBytes);
  if (!got.opened) {
    const Code code = got.error == ENOENT ? Code::kNotFound : Code::kUnavailable;
    return Status(code, "cannot open " + name + ": " + std::strerror(got.error));
  }
  if (got.error != 0) {
    const Code code = got.error == EISDIR ? Code::kInvalidArgument : Code::kUnavailable;
    return Status(code, "cannot read " + name + ": " + std::strerror(got.error));
  }
  // A longer file is refused by the parser, before parsing.
  Result<LayoutFile> file = parse_layout_file(got.text);
  if (!file.is_ok()) return Status(file.status().code(), name + ": " + file.status().message());
  return file;
}

}  // namespace snowid::host
