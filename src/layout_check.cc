#include <string>

#include "snowid/layout.h"

namespace snowid {

Result<LayoutReport> check_layout(const Layout& layout, WallTime now) {
  const std::int64_t now_ms = unix_ms(now);
  if (layout.epoch_unix_ms() > now_ms) {
    return Status(Code::kInvalidArgument, "layout " + layout.name() + ": epoch " +
                                              format_iso8601(layout.epoch()) + " is in the future");
  }
  LayoutReport r;
  r.end_of_life_unix_ms = layout.end_of_life_unix_ms();
  r.regions = layout.regions();
  r.workers_per_region = layout.workers_per_region();
  r.ids_per_worker_per_unit = layout.sequence_capacity();
  constexpr double kMsPerYear = 365.2425 * 24 * 3600 * 1000;
  r.years_remaining = static_cast<double>(r.end_of_life_unix_ms - now_ms) / kMsPerYear;
  if (r.end_of_life_unix_ms <= now_ms) {
    return Status(Code::kOutOfRange, "layout " + layout.name() + " reached its end of life on " +
                                         format_iso8601(wall_from_unix_ms(r.end_of_life_unix_ms)));
  }
  if (r.years_remaining < kEndOfLifeWarningYears) {
    r.warnings.push_back("layout " + layout.name() +
                         " has fewer than 10 years left: its time field " + "runs out on " +
                         format_iso8601(wall_from_unix_ms(r.end_of_life_unix_ms)) +
                         "; plan a new layout era");
  }
  return r;
}

}  // namespace snowid
