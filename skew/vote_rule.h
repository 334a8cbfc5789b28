// The rule that combines peer evidence and reference evidence about one
// clock (docs/skew.md, "The vote rule").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "evidence.h"

namespace snowid::skew {

// What each kind of evidence says against the fence; nullopt: that kind is
// not available (fewer than 3 clocks measured; no reference).
struct Evidence {
  std::optional<Verdict> peers;
  std::optional<Verdict> reference;
};

enum class Action : std::uint8_t {
  kNone,       // nothing to do beyond the state
  kAlertOnly,  // no evidence that could fence: the clock may only alert
  kFence,      // fence it (itself at once; a peer by a vote)
  kVeto,       // the two kinds disagree: no fence, and the "peers vs reference" alarm
};

// "none", "alert-only", "fence", "veto".
std::string_view action_name(Action action) noexcept;

struct RuleOutcome {
  Action action = Action::kNone;
  // Why, for the explanation: "peers and reference", "peers", "reference",
  // "peers vs reference", "no evidence", "within".
  std::string_view reason;
};

// Acts on the evidence there is unless the other kind contradicts it:
// - both kinds: one says beyond and the other within: veto; one says beyond
//   and the other is unclear or agrees: fence;
// - peers only (no reference): peers decide;
// - reference only (fewer than 3 clocks): the reference decides;
// - neither: alert only.
RuleOutcome apply_vote_rule(const Evidence& evidence) noexcept;

}  // namespace snowid::skew
