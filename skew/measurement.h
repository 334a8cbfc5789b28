// One clock reading of a peer, and the best of a burst (docs/skew.md,
// "Measuring"). Offsets are always the remote clock minus the local one, as
// NTP's are: positive when the peer is ahead.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::skew {

// A value and how far the truth may be from it: [value - uncertainty,
// value + uncertainty]. uncertainty >= 0.
struct Reading {
  Duration value{};
  Duration uncertainty{};
};

// One probe's four timestamps: t0 (sent) and t3 (answer received) on the
// observer's clock, t1 (request received) and t2 (answer sent) on the peer's.
struct ProbeSample {
  WallTime t0{};
  WallTime t1{};
  WallTime t2{};
  WallTime t3{};
};

// How precise the timestamps are: the coarser resolution of the two clocks
// (1 us for Redis TIME, 1 ns for SNOWID.CLOCK) and the cost of one read.
struct ClockPrecision {
  Duration resolution = std::chrono::microseconds(1);
  Duration read_cost{};
};

struct Measurement {
  // offset = ((t1 - t0) + (t2 - t3)) / 2, uncertainty = delay / 2 +
  // resolution + read cost: whatever the split of the delay between the two
  // directions, the true offset lies within it.
  Reading offset;
  // delay = (t3 - t0) - (t2 - t1): the round trip minus the peer's own time.
  Duration delay{};
  // t3: when the observer had the answer, on its own clock.
  WallTime at{};
};

// kInvalidArgument for a negative delay (a clock stepped during the probe, or
// a faked timestamp): such a sample says nothing about the offset.
Result<Measurement> measure(const ProbeSample& sample, const ClockPrecision& precision);

enum class BurstOutcome : std::uint8_t {
  kMeasured,      // the lowest-delay sample is within the RTT cap
  kUnmeasurable,  // every usable sample is over the cap: the path, not the clock
  kEmpty,         // no usable sample: all lost or refused
};

struct Burst {
  BurstOutcome outcome = BurstOutcome::kEmpty;
  // The lowest-delay usable sample (also when unmeasurable, for display).
  std::optional<Measurement> best;
  std::size_t samples = 0;  // how many were given
  std::size_t refused = 0;  // of which had a negative delay
};

// Keeps the lowest-delay sample of a burst; the lowest delay bounds the error
// best, and queueing only ever adds delay.
Burst best_of_burst(std::span<const ProbeSample> samples, const ClockPrecision& precision,
                    Duration rtt_cap);

}  // namespace snowid::skew
