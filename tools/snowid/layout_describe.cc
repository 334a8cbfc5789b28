#include "layout_describe.h"

#include <cmath>
#include <cstdio>

namespace snowid::cli {
namespace {

constexpr double kMsPerYear = 365.2425 * 24 * 3600 * 1000;

std::string padded(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string one_decimal(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string unit_text(const Layout& layout) {
  return layout.unit_ms() == 1 ? "ms" : std::to_string(layout.unit_ms()) + " ms";
}

void describe_layout(const Layout& layout, WallTime now, const std::string& indent,
                     std::string& out) {
  out += indent + "layout " + layout.name() +
         (layout.can_generate() ? " (generates ids)" : " (decode only)") + "\n";
  out += indent + "epoch        " + format_iso8601(layout.epoch()) + " (" +
         std::to_string(layout.epoch_unix_ms()) + " ms)\n";
  out += indent + "unit         " + std::to_string(layout.unit_ms()) + " ms\n";
  out += indent + "fields       most significant first, " + std::to_string(layout.total_width()) +
         " bits" + (layout.total_width() < 64 ? ", sign bit 0" : "") + "\n";
  for (const FieldInfo& f : layout.fields()) {
    out += indent + "  " + padded(f.name, 12) + padded(std::string(role_name(f.role)), 10) +
           padded(std::to_string(f.width) + " bits", 9) + "shift " + std::to_string(f.shift) + "\n";
  }
  const auto per_second = host::ids_per_worker_per_second(layout);
  out += indent + "capacity     " + std::to_string(layout.regions()) + " regions x " +
         std::to_string(layout.workers_per_region()) + " workers per region, " +
         std::to_string(layout.sequence_capacity()) + " ids per worker per " + unit_text(layout) +
         (per_second ? " (" + std::to_string(*per_second) + " per second)" : "") + "\n";
  const LayoutOutlook outlook = outlook_of(layout, now);
  out += indent + "end of life  " +
         format_iso8601(wall_from_unix_ms(layout.end_of_life_unix_ms())) + " (" +
         (outlook.years_remaining >= 0 ? one_decimal(outlook.years_remaining) + " years from now"
                                       : one_decimal(-outlook.years_remaining) + " years ago") +
         ")\n";
}

}  // namespace

LayoutOutlook outlook_of(const Layout& layout, WallTime now) {
  LayoutOutlook o;
  o.years_remaining = static_cast<double>(layout.end_of_life_unix_ms() - unix_ms(now)) / kMsPerYear;
  if (layout.epoch_unix_ms() > unix_ms(now)) return o;
  Result<LayoutReport> report = check_layout(layout, now);
  if (report.is_ok()) {
    o.warnings = report->warnings;
  } else {
    o.warnings.push_back(report.status().message());
  }
  return o;
}

std::string describe_text(const host::LayoutFile& file, WallTime now) {
  std::string out;
  const auto& eras = file.history.eras();
  if (!file.is_history && eras.size() == 1) {
    describe_layout(eras.front().layout, now, "", out);
    return out;
  }
  for (std::size_t i = 0; i < eras.size(); ++i) {
    const bool in_effect =
        eras[i].cutover <= now && (i + 1 == eras.size() || now < eras[i + 1].cutover);
    out += "era " + std::to_string(i) + " from " + format_iso8601(eras[i].cutover) +
           (in_effect               ? " (in effect)"
            : eras[i].cutover > now ? " (planned)"
                                    : "") +
           "\n";
    describe_layout(eras[i].layout, now, "  ", out);
  }
  return out;
}

nlohmann::ordered_json describe_json(const host::LayoutFile& file, WallTime now) {
  nlohmann::ordered_json j = host::layout_file_to_json(file);
  const auto add_outlook = [&](nlohmann::ordered_json& layout_json, const Layout& layout) {
    const LayoutOutlook o = outlook_of(layout, now);
    layout_json["years_remaining"] = std::round(o.years_remaining * 100) / 100;
    layout_json["warnings"] = o.warnings;
  };
  const auto& eras = file.history.eras();
  if (j.contains("history")) {
    for (std::size_t i = 0; i < eras.size(); ++i)
      add_outlook(j["history"][i]["layout"], eras[i].layout);
  } else {
    add_outlook(j, eras.front().layout);
  }
  return j;
}

}  // namespace snowid::cli
