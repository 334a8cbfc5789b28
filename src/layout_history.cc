#include "snowid/layout_history.h"

#include <string>

namespace snowid {

Result<LayoutHistory> LayoutHistory::create(std::vector<LayoutEra> eras) {
  if (eras.empty())
    return Status(Code::kInvalidArgument, "a layout history needs at least one era");
  LayoutHistory h;
  for (std::size_t i = 0; i < eras.size(); ++i) {
    const LayoutEra& era = eras[i];
    const std::string where = "era " + std::to_string(i) + " (" + era.layout.name() + ")";
    Result<std::uint64_t> first = era.layout.min_id_at(era.cutover);
    if (!first.is_ok()) {
      return Status(Code::kInvalidArgument, where + ": cut-over " + format_iso8601(era.cutover) +
                                                " is outside the layout's lifetime (" +
                                                first.status().message() + ")");
    }
    if (i > 0) {
      const LayoutEra& prev = eras[i - 1];
      if (era.cutover <= prev.cutover) {
        return Status(Code::kInvalidArgument, where + ": cut-overs must strictly increase");
      }
      // The largest id the previous era could have issued before this cut-over.
      const WallTime last_instant = era.cutover - Duration(1);
      Result<std::uint64_t> prev_max = prev.layout.max_id_at(last_instant);
      const std::uint64_t prev_last = prev_max.is_ok() ? prev_max.value() : prev.layout.max_id();
      if (first.value() <= prev_last) {
        return Status(Code::kInvalidArgument,
                      where + ": its first id " + std::to_string(first.value()) +
                          " is not above the last id era " + std::to_string(i - 1) +
                          " could issue before " + format_iso8601(era.cutover) + " (" +
                          std::to_string(prev_last) +
                          "); ids of the two eras would overlap, so decode could not tell them "
                          "apart (give the new era an earlier epoch or more time bits)");
      }
    }
    h.first_ids_.push_back(first.value());
  }
  h.eras_ = std::move(eras);
  return h;
}

std::size_t LayoutHistory::era_of(std::uint64_t id) const noexcept {
  std::size_t era = 0;
  for (std::size_t i = 1; i < first_ids_.size(); ++i) {
    if (id >= first_ids_[i]) era = i;
  }
  return era;
}

std::optional<std::size_t> LayoutHistory::era_at(WallTime t) const noexcept {
  if (t < eras_.front().cutover) return std::nullopt;
  std::size_t i = 0;
  while (i + 1 < eras_.size() && eras_[i + 1].cutover <= t) ++i;
  return i;
}

Result<DecodedId> LayoutHistory::decode(std::uint64_t id) const {
  return eras_[era_of(id)].layout.decode(id);
}

}  // namespace snowid
