#include "measurement.h"

namespace snowid::skew {

Result<Measurement> measure(const ProbeSample& s, const ClockPrecision& precision) {
  const Duration delay = (s.t3 - s.t0) - (s.t2 - s.t1);
  if (delay < Duration::zero()) {
    return Status(Code::kInvalidArgument,
                  "probe refused: negative delay (" + std::to_string(delay.count()) + " ns)");
  }
  Measurement m;
  m.delay = delay;
  m.offset.value = ((s.t1 - s.t0) + (s.t2 - s.t3)) / 2;
  m.offset.uncertainty = delay / 2 + precision.resolution + precision.read_cost;
  m.at = s.t3;
  return m;
}

Burst best_of_burst(std::span<const ProbeSample> samples, const ClockPrecision& precision,
                    Duration rtt_cap) {
  Burst burst;
  burst.samples = samples.size();
  for (const ProbeSample& sample : samples) {
    Result<Measurement> m = measure(sample, precision);
    if (!m.is_ok()) {
      ++burst.refused;
      continue;
    }
    if (!burst.best || m->delay < burst.best->delay) burst.best = m.value();
  }
  if (!burst.best) {
    burst.outcome = BurstOutcome::kEmpty;
  } else if (burst.best->delay > rtt_cap) {
    burst.outcome = BurstOutcome::kUnmeasurable;
  } else {
    burst.outcome = BurstOutcome::kMeasured;
  }
  return burst;
}

}  // namespace snowid::skew
