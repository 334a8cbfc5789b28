// How far a clock is from where it should be, burst after burst, and what
// that says against the fence limit (docs/skew.md, "Thresholds").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "measurement.h"
#include "skew_settings.h"

namespace snowid::skew {

enum class Verdict : std::uint8_t {
  kWithin,   // surely within the limit: |value| + uncertainty <= limit
  kBeyond,   // surely beyond it: |value| - uncertainty > limit
  kUnclear,  // the interval straddles the limit, or there is no reading
};

// |value| - uncertainty: how far off the reading surely is (negative when
// the interval holds 0).
Duration lower_bound_of(const Reading& deviation) noexcept;

// Where `deviation` lies against `limit`. A wide interval never counts as
// beyond: ambiguity is resolved towards not fencing.
Verdict judge(const Reading& deviation, Duration limit) noexcept;

// The deviations of one clock in the last three bursts (nullopt: that burst
// did not measure it), newest last. Not thread-safe.
class EvidenceHistory {
 public:
  static constexpr std::size_t kDepth = 3;

  void add(std::optional<Reading> deviation) noexcept;

  // kBeyond when 2 of the last 3 bursts put the clock surely beyond the fence
  // with uncertainty at most fence_max_uncertainty; kWithin when the latest
  // burst puts it surely within the fence; else kUnclear.
  Verdict fence_verdict(const SkewSettings& settings) const noexcept;
  // The latest burst's deviation.
  std::optional<Reading> latest() const noexcept;
  // |value| over `alert` in each of the last 3 bursts, each with uncertainty
  // at most alert_max_uncertainty.
  bool alert_streak(const SkewSettings& settings) const noexcept;

 private:
  std::array<std::optional<Reading>, kDepth> bursts_{};  // newest at [count_ - 1]
  std::size_t count_ = 0;
  std::size_t next_ = 0;
  // The i-th newest (0: latest), if there was one.
  std::optional<Reading> newest(std::size_t i) const noexcept;
};

}  // namespace snowid::skew
