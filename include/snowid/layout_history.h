// A list of layouts with cut-over instants, so that old ids keep decoding after
// the layout changes. Decode chooses the layout by the id's value alone, which
// works because validation proves the ranges do not overlap.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "snowid/layout.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid {

struct LayoutEra {
  Layout layout;
  // The instant from which this layout is used; ids of the previous era were
  // all generated before it. The first era's cut-over is its epoch or later.
  WallTime cutover;
};

class LayoutHistory {
 public:
  // Validates that cut-overs strictly increase, that each is at or after its
  // layout's epoch and inside its lifetime, and that every id a later era can
  // produce is greater than every id the earlier eras could have produced
  // before their successors' cut-overs.
  static Result<LayoutHistory> create(std::vector<LayoutEra> eras);

  const std::vector<LayoutEra>& eras() const noexcept { return eras_; }
  const LayoutEra& current() const noexcept { return eras_.back(); }
  // Index of the era that produced `id` (the last one whose first id is <= id).
  std::size_t era_of(std::uint64_t id) const noexcept;
  Result<DecodedId> decode(std::uint64_t id) const;
  // Index of the era in effect at `t` (the last whose cut-over is at or
  // before `t`); nullopt when `t` is before the first cut-over.
  std::optional<std::size_t> era_at(WallTime t) const noexcept;

 private:
  std::vector<LayoutEra> eras_;
  std::vector<std::uint64_t> first_ids_;  // smallest id of each era
};

}  // namespace snowid
