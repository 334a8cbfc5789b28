#include "id_format.h"

#include <nlohmann/json.hpp>

#include "snowid/time.h"

namespace snowid::cli {
namespace {

bool is_fixed_key(const std::string& name) {
  return name == "id" || name == "time" || name == "unix_ms" || name == "layout";
}

}  // namespace

std::string decoded_text(const Layout& layout, const DecodedId& d) {
  std::string out =
      "id=" + std::to_string(d.id) + " time=" + format_iso8601(d.time) + " layout=" + layout.name();
  const auto fields = layout.fields();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    out += ' ';
    if (is_fixed_key(fields[i].name)) out += "field_";
    out += fields[i].name + "=" + std::to_string(d.values[i]);
  }
  return out;
}

std::string decoded_json(const Layout& layout, const DecodedId& d) {
  nlohmann::ordered_json j;
  j["id"] = std::to_string(d.id);
  j["time"] = format_iso8601(d.time);
  j["unix_ms"] = unix_ms(d.time);
  j["layout"] = layout.name();
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
  const auto infos = layout.fields();
  for (std::size_t i = 0; i < infos.size(); ++i) fields[infos[i].name] = d.values[i];
  j["fields"] = std::move(fields);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace snowid::cli
