// Whether the votes against a peer fence it: fresh votes from a strict
// majority of its observers, each passing its own check (docs/skew.md, "The
// vote rule"). Pure: the fencer reads the votes and the time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "skew_settings.h"
#include "vote_record.h"

namespace snowid::skew {

struct CastVote {
  std::string voter;  // from the key
  VoteRecord record;
};

struct Refusal {
  std::string voter;
  std::string why;
};

struct QuorumResult {
  bool fence = false;
  std::size_t observers = 0;
  std::size_t needed = 0;  // observers / 2 + 1
  std::vector<CastVote> counted;
  std::vector<Refusal> refused;
};

// Counts the votes of `observers` (the target's, from observers_of) that
// pass every check: cast by an observer, once; younger than vote_max_age by
// `now` (and not more than `settings.fence` in the future: the voter's clock
// may be that far ahead and still count); about the holder revision
// `holder_revision`; from a voter in state ok or alert; with a deviation
// whose uncertainty is at most fence_max_uncertainty and which is surely
// beyond `settings.fence`. Fences when counted > observers / 2; never with
// no observers.
QuorumResult count_votes(const std::vector<std::string>& observers,
                         const std::vector<CastVote>& votes, std::int64_t holder_revision,
                         WallTime now, const SkewSettings& settings);

}  // namespace snowid::skew
