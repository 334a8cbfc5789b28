// Figures for docs/skew.md, over the simulated region (skew/testing): the
// estimator's error per burst on an idle and on a saturated network, and the
// time from a clock step beyond the fence to the fence, in simulated time.
// Prints a table; checks nothing.
//   snowid_skew_figures [trials]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "testing/sim_fleet.h"

namespace {

using namespace std::chrono_literals;
using snowid::Duration;
using snowid::skew::SkewSettings;
using snowid::skew::testing::SimFleet;
using snowid::skew::testing::SimHost;
using snowid::skew::testing::SimNetwork;

double percentile_us(std::vector<Duration> v, double p) {
  if (v.empty()) return 0.0;
  for (Duration& d : v) d = d < Duration::zero() ? -d : d;
  std::sort(v.begin(), v.end());
  const std::size_t i =
      std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())));
  return static_cast<double>(v[i].count()) / 1e3;
}

std::vector<SimHost> fleet(int n) {
  std::vector<SimHost> hosts;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> off(-1000, 1000);
  for (int i = 0; i < n; ++i) {
    hosts.push_back({"h" + std::to_string(i), std::chrono::microseconds(off(rng))});
  }
  return hosts;
}

SimNetwork idle() {
  SimNetwork net;
  net.request = 30us;
  net.answer = 30us;
  net.jitter = 15us;
  return net;
}

// A saturated host: a share of the messages queue behind busy threads for up
// to 6 ms, as single samples on loopback did in the design's measurements.
SimNetwork saturated(double share) {
  SimNetwork net = idle();
  net.jitter = 40us;
  net.spike_chance = share;
  net.spike = 6ms;
  net.loss = 0.02;
  return net;
}

void error_figures(const char* label, const SimNetwork& net, int rounds) {
  SimFleet f(fleet(5), net, 0us, SkewSettings{}, 1);
  f.run_rounds(rounds);
  std::vector<Duration> errors;
  std::vector<Duration> uncertainties;
  std::size_t outside = 0;
  for (const auto& b : f.burst_errors()) {
    errors.push_back(b.error);
    uncertainties.push_back(b.uncertainty);
    if ((b.error < Duration::zero() ? -b.error : b.error) > b.uncertainty) ++outside;
  }
  std::printf(
      "%-40s bursts %5zu  |error| p50 %7.1f us  p99 %7.1f us  max %7.1f us"
      "  u p99 %7.1f us  |error| > u: %zu\n",
      label, errors.size(), percentile_us(errors, 0.50), percentile_us(errors, 0.99),
      percentile_us(errors, 1.0), percentile_us(uncertainties, 0.99), outside);
}

void detection_figures(const char* label, const SimNetwork& net, Duration step, int trials) {
  std::vector<Duration> times;
  int missed = 0;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> phase(0, 999'999'999);
  for (int t = 0; t < trials; ++t) {
    SimFleet f(fleet(5), net, 0us, SkewSettings{}, static_cast<std::uint64_t>(t) + 100);
    f.run_rounds(3);
    // The step lands at a random point between two rounds.
    const Duration at(phase(rng));
    f.advance(at);
    f.step("h3", step);
    const snowid::WallTime stepped = f.now();
    f.advance(1s - at);
    bool done = false;
    for (int r = 0; r < 20 && !done; ++r) {
      f.run_round();
      for (const auto& ev : f.fences()) {
        if (ev.target == "h3") {
          // The decision comes after the round's bursts (8 probes 5 ms apart).
          times.push_back(ev.at + SimFleet::kProbes * SimFleet::kProbeGap - stepped);
          done = true;
          break;
        }
      }
    }
    if (!done) ++missed;
  }
  std::printf("%-40s trials %5d  fenced after p50 %5.3f s  p99 %5.3f s  max %5.3f s  missed %d\n",
              label, trials, percentile_us(times, 0.50) / 1e6, percentile_us(times, 0.99) / 1e6,
              percentile_us(times, 1.0) / 1e6, missed);
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::atoi(argv[1]) : 500;
  std::printf("5 hosts, 8 probes per burst 5 ms apart, one burst per peer per second\n");
  error_figures("estimator error, idle", idle(), 200);
  error_figures("estimator error, 20% of messages queued", saturated(0.2), 200);
  error_figures("estimator error, 60% of messages queued", saturated(0.6), 200);
  detection_figures("step +60 ms, idle", idle(), 60ms, trials);
  detection_figures("step +60 ms, 20% queued", saturated(0.2), 60ms, trials);
  detection_figures("step -300 ms, 60% queued", saturated(0.6), -300ms, trials);
  return 0;
}
