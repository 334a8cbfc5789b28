// The state the monitor shows for each clock (docs/skew.md, "States").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "evidence.h"

namespace snowid::skew {

// Values are stable: they appear in metrics, logs and vote records.
enum class State : std::uint8_t {
  kOk = 0,
  kAlert = 1,         // off by more than the alert threshold
  kSuspect = 2,       // surely past the suspect threshold, fence evidence not (yet) acted on,
                      // evidence vetoed, or this host was just paused
  kFenced = 3,        // its lease was revoked for skew
  kUnmeasurable = 4,  // no usable reading: the path is too slow or lost, not the clock wrong
};

// "ok", "alert", "suspect", "fenced", "unmeasurable".
std::string_view state_name(State state) noexcept;
std::optional<State> state_from_name(std::string_view name) noexcept;

struct StateFlags {
  bool fenced = false;
  bool paused = false;  // this host's own monitor was paused and has not re-measured
  bool vetoed = false;  // peers and reference disagree about it
};

// The state of a clock from its deviation history. The order of the checks:
// fenced, paused, unmeasurable, suspect, alert, ok.
State classify(const EvidenceHistory& history, const SkewSettings& settings,
               const StateFlags& flags) noexcept;

}  // namespace snowid::skew
