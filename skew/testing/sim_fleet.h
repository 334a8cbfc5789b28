// A simulated region for the skew monitor's tests and figures: hosts with
// clocks that are off by set amounts, a network with per-direction delays,
// jitter, queueing spikes and loss, an optional reference, and on every host
// the monitor's whole pipeline (bursts, held estimates, the judge, votes)
// with one region-wide fencer. Time is simulated: a round is one second.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "explanation.h"
#include "fence_budget.h"
#include "observer.h"
#include "skew_settings.h"
#include "snowid/testing/simulated_clock.h"
#include "vote_record.h"

namespace snowid::skew::testing {

struct SimNetwork {
  // Base one-way delays of a request and of its answer.
  Duration request = std::chrono::microseconds(40);
  Duration answer = std::chrono::microseconds(40);
  // Mean of an exponential delay added to each message.
  Duration jitter = std::chrono::microseconds(10);
  // With this chance a message also waits a uniform [0, spike] (a saturated
  // CPU, a queue).
  double spike_chance = 0.0;
  Duration spike = std::chrono::milliseconds(5);
  // Chance that a message is lost.
  double loss = 0.0;
  // The peer's time between reading t1 and t2.
  Duration processing = std::chrono::microseconds(5);
  // Extra one-way delay on every message arriving at a host (an asymmetric path).
  std::map<std::string, Duration> extra_into;
};

struct SimHost {
  std::string name;
  Duration offset{};     // its clock minus true time
  bool monitors = true;  // runs a monitor (judges, votes, fences itself)
  bool lying = false;    // its monitor votes against every peer, whatever it measures
};

struct FenceEvent {
  std::string target;
  bool self = false;
  int round = 0;
  WallTime at{};  // true time of the decision
  Explanation why;
};

class SimFleet {
 public:
  static constexpr int kProbes = 8;
  static constexpr Duration kProbeGap = std::chrono::milliseconds(5);

  SimFleet(std::vector<SimHost> hosts, SimNetwork network, std::optional<Duration> reference_offset,
           SkewSettings settings, std::uint64_t seed);

  // One round at the current true time: every monitor measures every live
  // peer and the reference, judges, votes; then the fencer counts the votes.
  // Then true time moves on by one second.
  void run_round();
  void run_rounds(int rounds);

  // Steps a host's clock (true time does not move).
  void step(const std::string& host, Duration by);
  // Stops a host for the next `rounds` rounds (SIGSTOP, a frozen VM): it
  // neither answers probes nor runs its monitor, and its pause detector
  // notices when it runs again.
  void pause(const std::string& host, int rounds);
  // Moves true time on without a round (a step between two rounds).
  void advance(Duration d);

  bool fenced(const std::string& host) const { return fenced_.count(host) != 0; }
  const std::vector<FenceEvent>& fences() const { return fences_; }
  std::size_t live() const;
  std::uint64_t vetoes() const { return vetoes_; }
  std::uint64_t mass_skew_alarms() const { return budget_.mass_skew_alarms(); }
  std::uint64_t would_be_fences() const { return budget_.would_be_fences(); }
  WallTime now() const { return truth_.wall_now(); }
  // Every measured burst so far: its error (measured minus true offset) and
  // the uncertainty it claimed.
  struct BurstError {
    Duration error{};
    Duration uncertainty{};
  };
  const std::vector<BurstError>& burst_errors() const { return burst_errors_; }

 private:
  Burst burst(const std::string& from, Duration from_offset, const std::string& to,
              Duration to_offset, WallTime start);
  std::optional<Duration> one_way(const std::string& into);
  WallTime read(Duration offset, WallTime truth) const;
  Duration offset_of(const std::string& host) const;
  std::vector<std::string> live_hosts() const;
  void fence(const std::string& host);
  bool running(const std::string& host) const;

  std::vector<SimHost> hosts_;
  SimNetwork network_;
  std::optional<Duration> reference_offset_;
  SkewSettings settings_;
  std::mt19937_64 rng_;
  snowid::testing::SimulatedClock truth_;
  FenceBudget budget_;
  std::map<std::string, Observer> monitors_;
  // votes_[target][voter]
  std::map<std::string, std::map<std::string, VoteRecord>> votes_;
  std::set<std::string> fenced_;
  std::map<std::string, int> paused_;  // rounds left
  std::vector<FenceEvent> fences_;
  std::vector<BurstError> burst_errors_;
  std::uint64_t vetoes_ = 0;
  int round_ = 0;
};

}  // namespace snowid::skew::testing
