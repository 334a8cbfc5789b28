#include "testing/sim_fleet.h"

#include <algorithm>
#include <utility>

#include "observers.h"
#include "quorum.h"

namespace snowid::skew::testing {
namespace {

using namespace std::chrono_literals;

// Arbitrary; far from any era boundary.
constexpr WallTime kStart = WallTime(std::chrono::seconds(1'800'000'000));
const ClockPrecision kPrecision{std::chrono::microseconds(1), Duration::zero()};
const std::string kReference = "(reference)";

}  // namespace

SimFleet::SimFleet(std::vector<SimHost> hosts, SimNetwork network,
                   std::optional<Duration> reference_offset, SkewSettings settings,
                   std::uint64_t seed)
    : hosts_(std::move(hosts)),
      network_(std::move(network)),
      reference_offset_(reference_offset),
      settings_(settings),
      rng_(seed),
      truth_(kStart),
      budget_(truth_, settings_) {
  for (const SimHost& h : hosts_) {
    if (!h.monitors) continue;
    monitors_.emplace(h.name, Observer(h.name, truth_, settings_));
  }
}

std::size_t SimFleet::live() const { return live_hosts().size(); }

std::vector<std::string> SimFleet::live_hosts() const {
  std::vector<std::string> out;
  for (const SimHost& h : hosts_) {
    if (!fenced(h.name)) out.push_back(h.name);
  }
  return out;
}

Duration SimFleet::offset_of(const std::string& host) const {
  for (const SimHost& h : hosts_) {
    if (h.name == host) return h.offset;
  }
  return Duration::zero();
}

void SimFleet::step(const std::string& host, Duration by) {
  for (SimHost& h : hosts_) {
    if (h.name == host) h.offset += by;
  }
}

void SimFleet::pause(const std::string& host, int rounds) { paused_[host] = rounds; }

bool SimFleet::running(const std::string& host) const {
  const auto p = paused_.find(host);
  return p == paused_.end() || p->second <= 0;
}

void SimFleet::advance(Duration d) { truth_.advance(d); }

WallTime SimFleet::read(Duration offset, WallTime truth) const {
  // Microsecond clocks, as Redis TIME reads them.
  return std::chrono::floor<std::chrono::microseconds>(truth + offset);
}

std::optional<Duration> SimFleet::one_way(const std::string& into) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  if (unit(rng_) < network_.loss) return std::nullopt;
  std::exponential_distribution<double> jitter(1.0 / static_cast<double>(network_.jitter.count()));
  Duration d(static_cast<Duration::rep>(jitter(rng_)));
  if (unit(rng_) < network_.spike_chance) {
    d += Duration(
        static_cast<Duration::rep>(unit(rng_) * static_cast<double>(network_.spike.count())));
  }
  const auto extra = network_.extra_into.find(into);
  if (extra != network_.extra_into.end()) d += extra->second;
  return d;
}

Burst SimFleet::burst(const std::string& from, Duration from_offset, const std::string& to,
                      Duration to_offset, WallTime start) {
  std::vector<ProbeSample> samples;
  for (int i = 0; i < kProbes; ++i) {
    const WallTime sent = start + i * kProbeGap;
    const std::optional<Duration> there = one_way(to);
    const std::optional<Duration> back = one_way(from);
    if (!there || !back || !running(to)) continue;
    const WallTime arrived = sent + network_.request + *there;
    const WallTime answered = arrived + network_.processing;
    const WallTime returned = answered + network_.answer + *back;
    samples.push_back({read(from_offset, sent), read(to_offset, arrived), read(to_offset, answered),
                       read(from_offset, returned)});
  }
  Burst b = best_of_burst(samples, kPrecision, settings_.rtt_cap);
  if (b.outcome == BurstOutcome::kMeasured) {
    burst_errors_.push_back(
        {b.best->offset.value - (to_offset - from_offset), b.best->offset.uncertainty});
  }
  return b;
}

void SimFleet::fence(const std::string& host) {
  fenced_.insert(host);
  // Its lease is gone, and with it the votes against it and the ones it cast.
  votes_.erase(host);
  for (auto& [target, voters] : votes_) voters.erase(host);
}

void SimFleet::run_round() {
  ++round_;
  const WallTime start = truth_.wall_now();
  const std::vector<std::string> hosts = live_hosts();
  std::vector<std::string> to_fence_self;
  for (const std::string& observer : hosts) {
    const auto mon = monitors_.find(observer);
    if (mon == monitors_.end() || !running(observer)) continue;
    Observer& m = mon->second;
    const Duration own = offset_of(observer);
    std::vector<PeerBurst> bursts;
    for (const std::string& peer : hosts) {
      if (peer != observer)
        bursts.push_back({peer, burst(observer, own, peer, offset_of(peer), start)});
    }
    std::optional<Burst> reference;
    if (reference_offset_) reference = burst(observer, own, kReference, *reference_offset_, start);
    const ObserverRound r = m.round(bursts, reference);
    const std::vector<Judgement>& judged = r.judgements;
    const Judgement& self = judged.front();
    for (const Judgement& j : judged) {
      if (j.outcome.action == Action::kVeto) ++vetoes_;
    }
    if (self.outcome.action == Action::kFence) {
      const FenceGrant grant = budget_.self_fence();
      if (grant == FenceGrant::kGranted) to_fence_self.push_back(observer);
      fences_.push_back(
          {observer, true, round_, truth_.wall_now(),
           explain(self, grant == FenceGrant::kDryRun ? "dry-run" : "self-fence", r.reference)});
      continue;
    }
    const bool lying = std::any_of(hosts_.begin(), hosts_.end(),
                                   [&](const SimHost& h) { return h.name == observer && h.lying; });
    for (std::size_t i = 1; i < judged.size(); ++i) {
      const Judgement& j = judged[i];
      std::optional<VoteRecord> vote =
          vote_against(j, self, r.reference, read(own, truth_.wall_now()), 1);
      if (lying) {
        // Claims to be healthy and finds every peer a second off.
        vote = VoteRecord{};
        vote->deviation = Reading{std::chrono::seconds(1), Duration::zero()};
        vote->measured_at = read(own, truth_.wall_now());
        vote->holder_revision = 1;
      }
      if (vote) {
        votes_[j.target][observer] = *vote;
      } else if (const auto against = votes_.find(j.target); against != votes_.end()) {
        // A voter takes its vote back once it no longer finds the target beyond.
        against->second.erase(observer);
      }
    }
  }
  for (const std::string& h : to_fence_self) fence(h);

  // The fencer: every live target's votes against its observers.
  const std::vector<std::string> still = live_hosts();
  for (const std::string& target : still) {
    const auto cast = votes_.find(target);
    if (cast == votes_.end()) continue;
    std::vector<CastVote> votes;
    for (const auto& [voter, record] : cast->second) votes.push_back({voter, record});
    // Observers are chosen among the hosts that run a monitor.
    std::vector<std::string> watching;
    for (const std::string& h : still) {
      if (monitors_.count(h) != 0) watching.push_back(h);
    }
    const std::vector<std::string> observers =
        observers_of(target, watching, settings_.max_observers);
    const QuorumResult q = count_votes(observers, votes, 1, truth_.wall_now(), settings_);
    if (!q.fence) continue;
    const FenceGrant grant = budget_.peer_fence(still.size());
    if (grant == FenceGrant::kCapped) continue;
    Explanation why = explain(target, q, grant);
    fences_.push_back({target, false, round_, truth_.wall_now(), std::move(why)});
    if (grant == FenceGrant::kGranted) fence(target);
  }
  for (auto& [host, rounds] : paused_) {
    if (rounds > 0) --rounds;
  }
  truth_.advance(std::chrono::seconds(1));
}

void SimFleet::run_rounds(int rounds) {
  for (int i = 0; i < rounds; ++i) run_round();
}

}  // namespace snowid::skew::testing
