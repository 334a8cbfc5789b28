// Writes layouts in the layout-file format (layout_file.h), so that what
// `snowid layout --json` prints can be read back as a layout file.
#include <string>

#include "layout_file.h"
#include "snowid/time.h"

namespace snowid::host {

nlohmann::ordered_json layout_to_json(const Layout& layout) {
  nlohmann::ordered_json j;
  j["name"] = layout.name();
  j["epoch_ms"] = layout.epoch_unix_ms();
  j["epoch"] = format_iso8601(layout.epoch());
  j["unit_ms"] = layout.unit_ms();
  j["decode_only"] = layout.decode_only();
  nlohmann::ordered_json fields = nlohmann::ordered_json::array();
  for (const FieldInfo& f : layout.fields()) {
    nlohmann::ordered_json field;
    field["name"] = f.name;
    field["role"] = std::string(role_name(f.role));
    field["width"] = f.width;
    field["shift"] = f.shift;
    fields.push_back(std::move(field));
  }
  j["fields"] = std::move(fields);
  j["bits"] = layout.total_width();
  nlohmann::ordered_json capacity;
  capacity["regions"] = layout.regions();
  capacity["workers_per_region"] = layout.workers_per_region();
  capacity["ids_per_worker_per_unit"] = layout.sequence_capacity();
  if (const auto per_second = ids_per_worker_per_second(layout)) {
    capacity["ids_per_worker_per_second"] = *per_second;
  }
  j["capacity"] = std::move(capacity);
  j["end_of_life"] = format_iso8601(wall_from_unix_ms(layout.end_of_life_unix_ms()));
  j["end_of_life_unix_ms"] = layout.end_of_life_unix_ms();
  return j;
}

nlohmann::ordered_json layout_file_to_json(const LayoutFile& file) {
  const auto& eras = file.history.eras();
  if (!file.is_history && eras.size() == 1) return layout_to_json(eras.front().layout);
  nlohmann::ordered_json history = nlohmann::ordered_json::array();
  for (const LayoutEra& era : eras) {
    nlohmann::ordered_json e;
    e["cutover"] = format_iso8601(era.cutover);
    e["cutover_ms"] = unix_ms(era.cutover);
    e["layout"] = layout_to_json(era.layout);
    history.push_back(std::move(e));
  }
  nlohmann::ordered_json j;
  j["history"] = std::move(history);
  return j;
}

}  // namespace snowid::host
