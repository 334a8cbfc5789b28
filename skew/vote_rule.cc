#include "vote_rule.h"

namespace snowid::skew {

std::string_view action_name(Action action) noexcept {
  switch (action) {
    case Action::kNone:
      return "none";
    case Action::kAlertOnly:
      return "alert-only";
    case Action::kFence:
      return "fence";
    case Action::kVeto:
      return "veto";
  }
  return "unknown";
}

RuleOutcome apply_vote_rule(const Evidence& e) noexcept {
  if (!e.peers && !e.reference) return {Action::kAlertOnly, "no evidence"};
  if (e.peers && e.reference) {
    const bool peers_out = *e.peers == Verdict::kBeyond;
    const bool reference_out = *e.reference == Verdict::kBeyond;
    if ((peers_out && *e.reference == Verdict::kWithin) ||
        (reference_out && *e.peers == Verdict::kWithin)) {
      return {Action::kVeto, "peers vs reference"};
    }
    if (peers_out && reference_out) return {Action::kFence, "peers and reference"};
    if (peers_out) return {Action::kFence, "peers"};
    if (reference_out) return {Action::kFence, "reference"};
    return {Action::kNone, "within"};
  }
  if (e.peers) {
    if (*e.peers == Verdict::kBeyond) return {Action::kFence, "peers"};
    return {Action::kNone, "within"};
  }
  if (*e.reference == Verdict::kBeyond) return {Action::kFence, "reference"};
  return {Action::kNone, "within"};
}

}  // namespace snowid::skew
