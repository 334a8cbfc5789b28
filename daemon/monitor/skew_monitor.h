// The skew monitor of one host (docs/skew.md): once a period it reads the
// region's members from etcd, probes the clocks it observes, judges them and
// itself (skew::Observer), and acts:
//   - its own clock surely beyond the fence limit: it fences itself at once
//     (never capped), holds the host (SkewHold: no ids, no fresh worker id)
//     and records the fence in etcd; it lets go after three rounds in a row
//     within bounds;
//   - a peer's clock beyond the limit: it votes against it, under its store
//     lease, and withdraws the vote once it no longer finds it so;
//   - a peer with fresh votes from a strict majority of its observers: the
//     fence transaction, within the blast-radius cap (beyond it: the "mass
//     skew" alarm) or only counted in a dry run.
// Every decision is logged as one explanation line; every round leaves a
// snapshot for INFO, /v1/skew and /metrics.
//
// A host probes every peer of its region that has a probe address (the
// self-check needs the whole region), up to 16 bursts at once, and votes
// only on the targets it observes (skew::observers_of).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "clock_probe.h"
#include "fence_budget.h"
#include "log.h"
#include "mutex.h"
#include "observer.h"
#include "skew_hold.h"
#include "skew_settings.h"
#include "skew_snapshot.h"
#include "skew_store.h"
#include "snowid/time.h"

namespace snowid::daemon {

// An address a peer's monitor can dial: "host:port", not a socket path.
bool probeable(const std::string& address);

struct SkewMonitorOptions {
  std::string self;  // this host's name, as its holder values give it
  std::uint32_t region = 0;
  bool monitor_only = false;
  skew::SkewSettings settings;
  Duration period = std::chrono::seconds(1);
  // How peers are probed; rtt_cap is taken from `settings`.
  ClockProbeOptions probe;
  // The reference this round: a burst from the SNTP readings, or nullopt.
  std::function<std::optional<skew::Burst>()> reference;
  std::string reference_server;  // for the snapshot
  // Rounds in a row within bounds before a held host is let go.
  int release_after = 3;
};

class SkewMonitor final : public SkewSnapshotSource {
 public:
  // `clock` (the generator's), `store`, `hold` and `log` must outlive the
  // monitor.
  SkewMonitor(const Clock& clock, etcd::SkewStore& store, SkewHold& hold, Logger& log,
              SkewMonitorOptions options);
  ~SkewMonitor() override;
  SkewMonitor(const SkewMonitor&) = delete;
  SkewMonitor& operator=(const SkewMonitor&) = delete;

  // Starts the thread (once).
  void start();
  // Stops and joins it; the store's destructor withdraws the votes.
  void stop();

  // One round, on the caller's thread (the thread calls this each period).
  void round();

  std::shared_ptr<const SkewSnapshot> snapshot() const override;

 private:
  void run();
  // One burst to each target, several at once; in the targets' order.
  std::vector<skew::PeerBurst> probe_all(const std::vector<const etcd::FleetMember*>& targets);
  void act_on_self(const skew::ObserverRound& r, const etcd::FleetMember* self_member);
  // Casts and withdraws; the targets voted against this round.
  std::set<std::string> vote(const skew::ObserverRound& r,
                             const std::vector<etcd::FleetMember>& members,
                             const std::set<std::string>& observed);
  void fence_peers(const std::vector<etcd::FleetMember>& members,
                   const std::vector<std::string>& watching, const std::set<std::string>& voting);
  // Reads the fence records: counts the region's peer fences against the
  // cap (each once) and keeps the recent ones for the snapshot. False when
  // etcd did not answer or a record is unreadable: no peer fence then.
  bool read_fences();
  bool stopping() const;
  void publish(const skew::ObserverRound& r, const std::vector<etcd::FleetMember>& members,
               const std::vector<std::string>& watching);

  const Clock& clock_;
  etcd::SkewStore& store_;
  SkewHold& hold_;
  Logger& log_;
  const SkewMonitorOptions options_;
  skew::Observer observer_;
  skew::FenceBudget budget_;

  // Owned by the round (one thread).
  std::vector<etcd::FleetMember> members_;                     // as last read
  std::map<std::string, std::unique_ptr<ClockProbe>> probes_;  // by host
  std::set<std::string> ambiguous_;                            // addresses several hosts announce
  std::set<std::string> counted_fences_;                       // "target@at_ns" noted in budget_
  bool self_fence_recorded_ = true;
  std::string fences_error_;
  std::map<std::string, std::uint64_t> probe_failures_;  // by host
  std::set<std::string> voted_;                          // targets with our vote
  std::set<std::string> capped_;                         // mass-skew alarm raised
  int good_rounds_ = 0;
  std::uint64_t rounds_ = 0;
  std::uint64_t fences_total_ = 0;
  std::uint64_t vetoes_total_ = 0;
  std::vector<SkewFenceView> recent_fences_;
  std::deque<SkewSample> history_;
  std::string store_error_;

  mutable internal::Mutex mu_;
  std::shared_ptr<const SkewSnapshot> snapshot_ GUARDED_BY(mu_);
  internal::CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace snowid::daemon
