#include "skew_monitor.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <utility>

#include "explanation.h"
#include "observers.h"
#include "quorum.h"

namespace snowid::daemon {
namespace {

// How often the fence records are read (for the cap and the snapshot), in
// rounds: they change rarely, and every monitor of the region reads them.
constexpr std::uint64_t kFencesEvery = 5;
constexpr std::size_t kRecentFences = 10;
// Bursts in flight at once (see probe_all).
constexpr std::size_t kProbeThreads = 16;

const etcd::FleetMember* find_member(const std::vector<etcd::FleetMember>& members,
                                     const std::string& host) {
  for (const etcd::FleetMember& m : members) {
    if (m.host == host) return &m;
  }
  return nullptr;
}

bool contains(const std::vector<std::string>& hosts, const std::string& host) {
  return std::find(hosts.begin(), hosts.end(), host) != hosts.end();
}

// Positive evidence that this host's clock is within bounds: the peers' band
// (3 or more clocks) or the reference says so, and neither says beyond. A
// round with neither (a peer gone, the reference silent) proves nothing.
bool surely_within(const skew::Judgement& self) {
  const skew::Evidence& e = self.evidence;
  const bool within = e.peers == skew::Verdict::kWithin || e.reference == skew::Verdict::kWithin;
  const bool beyond = e.peers == skew::Verdict::kBeyond || e.reference == skew::Verdict::kBeyond;
  return within && !beyond && (self.state == skew::State::kOk || self.state == skew::State::kAlert);
}

}  // namespace

bool probeable(const std::string& address) {
  return !address.empty() && address.front() != '/' && address.find(':') != std::string::npos;
}

SkewMonitor::SkewMonitor(const Clock& clock, etcd::SkewStore& store, SkewHold& hold, Logger& log,
                         SkewMonitorOptions options)
    : clock_(clock),
      store_(store),
      hold_(hold),
      log_(log),
      options_(std::move(options)),
      observer_(options_.self, clock, options_.settings, options_.period),
      budget_(clock, options_.settings) {}

SkewMonitor::~SkewMonitor() { stop(); }

void SkewMonitor::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void SkewMonitor::stop() {
  {
    internal::MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SkewMonitor::run() {
  for (;;) {
    // Rounds start a period apart however long one took (a slow peer costs
    // a burst of timeouts), so that the pause detector sees the true rhythm.
    const auto next = std::chrono::steady_clock::now() + options_.period;
    round();
    internal::MutexLock lock(mu_);
    while (!stopping_ && cv_.wait_until(mu_, next) != std::cv_status::timeout) {
    }
    if (stopping_) return;
  }
}

std::shared_ptr<const SkewSnapshot> SkewMonitor::snapshot() const {
  internal::MutexLock lock(mu_);
  return snapshot_;
}

std::vector<skew::PeerBurst> SkewMonitor::probe_all(
    const std::vector<const etcd::FleetMember*>& targets) {
  std::vector<ClockProbe*> probes;
  for (const etcd::FleetMember* m : targets) {
    std::unique_ptr<ClockProbe>& p = probes_[m->host];
    if (p && p->address() != m->address) p.reset();  // the host moved
    if (!p) {
      ClockProbeOptions o = options_.probe;
      o.rtt_cap = options_.settings.rtt_cap;
      p = std::make_unique<ClockProbe>(clock_, m->address, o);
    }
    probes.push_back(p.get());
  }
  // A burst is about 40 ms of spaced probes, mostly waiting: a region's
  // worth of peers in turn would not fit in a round, so up to
  // kProbeThreads bursts run at once, each probe used by one thread.
  std::vector<skew::Burst> got(targets.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next.fetch_add(1); i < probes.size(); i = next.fetch_add(1)) {
      got[i] = probes[i]->burst();
    }
  };
  const std::size_t threads = std::min(kProbeThreads, probes.size());
  std::vector<std::thread> pool;
  try {
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  } catch (const std::system_error&) {
    // No more threads now: the ones started, and this one, share the work.
  }
  work();
  for (std::thread& t : pool) t.join();
  std::vector<skew::PeerBurst> out;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (got[i].outcome == skew::BurstOutcome::kEmpty) ++probe_failures_[targets[i]->host];
    out.push_back({targets[i]->host, got[i]});
  }
  return out;
}

void SkewMonitor::round() {
  ++rounds_;
  Result<std::vector<etcd::FleetMember>> got = store_.members();
  const bool store_ok = got.is_ok();
  if (!store_ok) {
    // The last members read are probed and this host judged as usual, so a
    // clock step during an etcd outage still holds this host; nobody is
    // voted on or fenced until etcd answers again.
    if (store_error_ != got.status().message()) {
      store_error_ = got.status().message();
      log_.warn("skew monitor cannot read the members",
                {{"code", code_name(got.status().code())}, {"error", store_error_}});
    }
  } else {
    if (!store_error_.empty()) {
      log_.info("skew monitor reads the members again");
      store_error_.clear();
    }
    members_ = std::move(got).value();
  }
  const std::vector<etcd::FleetMember>& members = members_;

  // The monitors of the region: the hosts with an agent key (every running
  // monitor puts one). Only they observe and vote. This host is one even
  // while held, when its worker ids are gone.
  std::vector<std::string> watching;
  for (const etcd::FleetMember& m : members) {
    if (m.agent) watching.push_back(m.host);
  }
  std::vector<std::string> with_self = watching;
  if (!contains(with_self, options_.self)) with_self.push_back(options_.self);

  // Every in-region peer with a probe address is measured (docs/skew.md,
  // "Observers"): the observers limit who votes on a host, not what a
  // monitor measures, or a wrong minority could be a majority of the subset
  // a good host sees. An address that several hosts announce (a loopback
  // listener copied across machines) reaches nobody in particular: it is
  // not probed.
  std::map<std::string, int> announced;
  for (const etcd::FleetMember& m : members) {
    if (probeable(m.address)) ++announced[m.address];
  }
  std::set<std::string> observed;
  std::vector<const etcd::FleetMember*> targets;
  std::set<std::string> hosts;
  for (const etcd::FleetMember& m : members) {
    if (m.host == options_.self || !probeable(m.address)) continue;
    if (announced[m.address] > 1) {
      if (ambiguous_.insert(m.address).second) {
        log_.warn("skew monitor cannot probe a shared address",
                  {{"address", m.address},
                   {"why", "several hosts announce it: set probe_address on each"}});
      }
      continue;
    }
    if (contains(skew::observers_of(m.host, with_self, options_.settings.max_observers),
                 options_.self)) {
      observed.insert(m.host);
    }
    hosts.insert(m.host);
    targets.push_back(&m);
  }
  for (auto it = probes_.begin(); it != probes_.end();) {
    it = hosts.count(it->first) != 0 ? std::next(it) : probes_.erase(it);
  }
  if (stopping()) return;
  const std::vector<skew::PeerBurst> bursts = probe_all(targets);

  const std::optional<skew::Burst> reference =
      options_.reference ? options_.reference() : std::nullopt;
  const skew::ObserverRound r = observer_.round(bursts, reference);
  for (const skew::Judgement& j : r.judgements) {
    if (j.outcome.action == skew::Action::kVeto) ++vetoes_total_;
  }
  if (stopping()) return;
  act_on_self(r, find_member(members, options_.self));
  if (store_ok) {
    const std::set<std::string> voting = vote(r, members, observed);
    fence_peers(members, watching, voting);
  }
  publish(r, members, watching);
}

bool SkewMonitor::stopping() const {
  internal::MutexLock lock(mu_);
  return stopping_;
}

void SkewMonitor::act_on_self(const skew::ObserverRound& r, const etcd::FleetMember* self_member) {
  const skew::Judgement& self = r.judgements.front();
  if (!hold_.held()) {
    if (self.outcome.action != skew::Action::kFence) return;
    const skew::FenceGrant grant = budget_.self_fence();
    const std::string line = skew::to_log_line(skew::explain(
        self, grant == skew::FenceGrant::kDryRun ? "dry-run" : "self-fence", r.reference));
    if (grant != skew::FenceGrant::kGranted) {
      log_.warn("skew dry run", {{"explanation", line}});
      return;
    }
    ++fences_total_;
    // Held first: from here on no id is issued and no fresh worker id taken,
    // even if etcd cannot be told.
    hold_.hold(line);
    self_fence_recorded_ = false;
    good_rounds_ = 0;
    log_.error("skew self-fence", {{"explanation", line}});
  } else if (surely_within(self)) {
    // Released only on positive evidence, three rounds running.
    if (++good_rounds_ >= options_.release_after) {
      hold_.release();
      good_rounds_ = 0;
      log_.info("skew hold released",
                {{"rounds_within", options_.release_after},
                 {"explanation", skew::to_log_line(skew::explain(self, "release", r.reference))}});
      return;
    }
  } else {
    good_rounds_ = 0;
  }
  // Recorded in etcd until it is, retried every round: a daemon's holder
  // keys once; for a monitor-only agent, also each fresh holder its host's
  // in-process libraries take while it holds (nothing holds them back).
  if (self_member == nullptr || self_member->workers.empty()) {
    self_fence_recorded_ = true;
    return;
  }
  if (self_fence_recorded_ && !options_.monitor_only) return;
  const Result<etcd::FenceOutcome> f = store_.fence(*self_member, {}, {}, hold_.reason());
  if (!f.is_ok()) {
    log_.warn("skew self-fence not recorded, retried next round",
              {{"code", code_name(f.status().code())}, {"error", f.status().message()}});
    return;
  }
  if (f.value() == etcd::FenceOutcome::kFenced && self_fence_recorded_) {
    log_.warn("skew self-fence of a fresh holder",
              {{"host", options_.self}, {"workers", self_member->workers.size()}});
  }
  if (f.value() != etcd::FenceOutcome::kChanged) self_fence_recorded_ = true;
}

std::set<std::string> SkewMonitor::vote(const skew::ObserverRound& r,
                                        const std::vector<etcd::FleetMember>& members,
                                        const std::set<std::string>& observed) {
  const skew::Judgement& me = r.judgements.front();
  std::set<std::string> still;
  for (std::size_t i = 1; i < r.judgements.size(); ++i) {
    const skew::Judgement& j = r.judgements[i];
    const etcd::FleetMember* m = find_member(members, j.target);
    if (m == nullptr || observed.count(j.target) == 0) continue;
    // A held host votes on nobody: its own clock is the one in doubt.
    const std::optional<skew::VoteRecord> v =
        hold_.held()
            ? std::nullopt
            : skew::vote_against(j, me, r.reference, clock_.wall_now(), m->holder_revision());
    if (!v) continue;
    // Cast every round: a vote counts only while fresh (vote_max_age).
    const Status cast = store_.cast_vote(j.target, *v);
    if (!cast.is_ok()) {
      log_.warn(
          "skew vote not cast",
          {{"target", j.target}, {"code", code_name(cast.code())}, {"error", cast.message()}});
      continue;
    }
    still.insert(j.target);
    if (voted_.insert(j.target).second) {
      log_.warn("skew vote",
                {{"explanation", skew::to_log_line(skew::explain(j, "vote", r.reference))}});
    }
  }
  for (auto it = voted_.begin(); it != voted_.end();) {
    if (still.count(*it) != 0) {
      ++it;
      continue;
    }
    const Status withdrawn = store_.withdraw_vote(*it);
    log_.info("skew vote withdrawn", {{"target", *it}, {"code", code_name(withdrawn.code())}});
    // Kept when etcd did not answer: tried again next round (the vote
    // expires by itself meanwhile).
    it = withdrawn.is_ok() ? voted_.erase(it) : std::next(it);
  }
  return still;
}

bool SkewMonitor::read_fences() {
  Result<std::vector<etcd::FenceRecord>> got = store_.fences();
  if (!got.is_ok()) {
    if (fences_error_ != got.status().message()) {
      fences_error_ = got.status().message();
      log_.warn("skew monitor cannot read the fences: no peer fence until it can",
                {{"code", code_name(got.status().code())}, {"error", fences_error_}});
    }
    return false;
  }
  fences_error_.clear();
  std::vector<etcd::FenceRecord> records = std::move(got).value();
  for (const etcd::FenceRecord& f : records) {
    // Every peer fence of the region counts against the cap once, whoever
    // made it (this monitor before a restart included); self-fences never.
    if (f.votes.empty()) continue;
    const std::string key = f.target + "@" + std::to_string(f.at.time_since_epoch().count());
    if (counted_fences_.insert(key).second) budget_.note_fence(f.at);
  }
  if (records.size() > kRecentFences) records.resize(kRecentFences);
  recent_fences_.clear();
  for (etcd::FenceRecord& f : records) {
    SkewFenceView v{.target = std::move(f.target),
                    .fencer = std::move(f.fencer),
                    .at = f.at,
                    .workers = std::move(f.workers),
                    .reason = std::move(f.reason)};
    for (const skew::CastVote& c : f.votes) v.voters.push_back(c.voter);
    recent_fences_.push_back(std::move(v));
  }
  return true;
}

void SkewMonitor::fence_peers(const std::vector<etcd::FleetMember>& members,
                              const std::vector<std::string>& watching,
                              const std::set<std::string>& voting) {
  // Only targets this host votes against this round: every voter tries, and
  // the fence transaction's compares let exactly one of them through. The
  // cap counts the fences made, from their records, never an attempt.
  if (voting.empty()) {
    if (rounds_ % kFencesEvery == 1) (void)read_fences();
    return;
  }
  if (!read_fences()) return;
  for (const std::string& target : voting) {
    const etcd::FleetMember* m = find_member(members, target);
    if (m == nullptr || m->workers.empty()) continue;
    const Result<etcd::SkewStore::Votes> votes = store_.votes(target);
    if (!votes.is_ok()) continue;
    const std::vector<std::string> observers =
        skew::observers_of(target, watching, options_.settings.max_observers);
    const skew::QuorumResult q = skew::count_votes(observers, votes->votes, m->holder_revision(),
                                                   clock_.wall_now(), options_.settings);
    if (!q.fence) continue;
    const skew::FenceGrant grant = budget_.room(members.size());
    const std::string line = skew::to_log_line(skew::explain(target, q, grant));
    if (grant == skew::FenceGrant::kCapped) {
      if (capped_.insert(target).second) log_.error("skew mass skew", {{"explanation", line}});
      continue;
    }
    if (grant == skew::FenceGrant::kDryRun) {
      log_.warn("skew dry run", {{"explanation", line}});
      continue;
    }
    std::vector<std::string> counted;
    for (const skew::CastVote& v : q.counted) counted.push_back(v.voter);
    const Result<etcd::FenceOutcome> f = store_.fence(*m, votes.value(), counted, line);
    if (!f.is_ok()) {
      log_.warn("skew fence failed", {{"target", target},
                                      {"code", code_name(f.status().code())},
                                      {"error", f.status().message()}});
    } else if (f.value() == etcd::FenceOutcome::kFenced) {
      ++fences_total_;
      log_.error("skew fence", {{"explanation", line}});
      // Counted from its record before any other target is considered.
      if (!read_fences()) return;
    }
  }
}

void SkewMonitor::publish(const skew::ObserverRound& r,
                          const std::vector<etcd::FleetMember>& members,
                          const std::vector<std::string>& watching) {
  auto snap = std::make_shared<SkewSnapshot>();
  snap->at = clock_.wall_now();
  snap->self = options_.self;
  snap->region = options_.region;
  snap->self_state = r.judgements.front().state;
  snap->held = hold_.held();
  snap->hold_reason = hold_.reason();
  snap->dry_run = options_.settings.dry_run;
  snap->monitor_only = options_.monitor_only;
  snap->reference = r.reference;
  snap->reference_server = options_.reference_server;
  std::set<std::string> listed;
  for (const skew::Judgement& j : r.judgements) {
    SkewPeerView v;
    v.host = j.target;
    v.self = j.self;
    v.offset = j.offset;
    if (!j.self && j.offset) v.rtt = j.delay;
    v.deviation = j.peer_deviation;
    v.state = j.state;
    if (const etcd::FleetMember* m = find_member(members, j.target)) {
      v.address = m->address;
      v.monitor = m->agent;
      for (const etcd::HeldWorker& w : m->workers) v.workers.push_back(w.worker);
    }
    v.observers = skew::observers_of(j.target, watching, options_.settings.max_observers).size();
    if (voted_.count(j.target) != 0) v.votes_against.push_back(options_.self);
    v.probe_failures = probe_failures_[j.target];
    listed.insert(j.target);
    snap->peers.push_back(std::move(v));
  }
  // Members this host does not observe (or cannot probe) are listed,
  // unmeasured; so are fenced hosts that hold no id now.
  snap->fences = recent_fences_;
  for (const SkewFenceView& f : recent_fences_) {
    if (listed.count(f.target) != 0 || find_member(members, f.target) != nullptr) continue;
    if (snap->at - f.at > options_.settings.fence_window) continue;
    SkewPeerView v;
    v.host = f.target;
    v.state = skew::State::kFenced;
    listed.insert(f.target);
    snap->peers.push_back(std::move(v));
  }
  for (const etcd::FleetMember& m : members) {
    if (listed.count(m.host) != 0) continue;
    SkewPeerView v;
    v.host = m.host;
    v.address = m.address;
    v.monitor = m.agent;
    for (const etcd::HeldWorker& w : m.workers) v.workers.push_back(w.worker);
    v.observers = skew::observers_of(m.host, watching, options_.settings.max_observers).size();
    snap->peers.push_back(std::move(v));
  }
  SkewSample sample{.at = snap->at, .offsets = {}};
  for (const SkewPeerView& v : snap->peers) {
    if (v.offset) sample.offsets.emplace_back(v.host, v.offset->value);
  }
  history_.push_back(std::move(sample));
  while (!history_.empty() && snap->at - history_.front().at > kSkewHistory) history_.pop_front();
  snap->history.assign(history_.begin(), history_.end());
  snap->rounds = rounds_;
  std::sort(snap->peers.begin(), snap->peers.end(),
            [](const SkewPeerView& a, const SkewPeerView& b) { return a.host < b.host; });
  snap->fences_total = fences_total_;
  snap->vetoes_total = vetoes_total_;
  snap->would_fence_total = budget_.would_be_fences();
  snap->mass_skew_total = budget_.mass_skew_alarms();
  internal::MutexLock lock(mu_);
  snapshot_ = std::move(snap);
}

}  // namespace snowid::daemon
