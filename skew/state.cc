#include "state.h"

#include <array>

namespace snowid::skew {
namespace {

constexpr std::array<std::string_view, 5> kNames = {"ok", "alert", "suspect", "fenced",
                                                    "unmeasurable"};

}  // namespace

std::string_view state_name(State state) noexcept {
  const auto i = static_cast<std::size_t>(state);
  return i < kNames.size() ? kNames[i] : std::string_view("unknown");
}

std::optional<State> state_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<State>(i);
  }
  return std::nullopt;
}

State classify(const EvidenceHistory& history, const SkewSettings& s,
               const StateFlags& flags) noexcept {
  if (flags.fenced) return State::kFenced;
  if (flags.paused) return State::kSuspect;
  const std::optional<Reading> last = history.latest();
  if (!last) return State::kUnmeasurable;
  if (flags.vetoed || judge(*last, s.suspect) == Verdict::kBeyond ||
      history.fence_verdict(s) == Verdict::kBeyond) {
    return State::kSuspect;
  }
  if (history.alert_streak(s) || judge(*last, s.alert) == Verdict::kBeyond) return State::kAlert;
  return State::kOk;
}

}  // namespace snowid::skew
