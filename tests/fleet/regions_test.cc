// Regions that never coordinate (issue 15): two regions, each with an etcd
// cluster of its own (etcd/testing) and real snowidd daemons that are given
// their region's number and that cluster's endpoints only. Clients pull ids
// over the daemons' Unix sockets while a test freezes, resumes and kills one
// region's whole cluster. What is asserted:
//   - ids of both regions never collide, and each decodes to its daemon's
//     region and worker, even when both regions use the same host number;
//   - each region's etcd holds worker keys of its own region only;
//   - the other region never notices: not one refusal, its lease state held
//     throughout;
//   - the frozen (or killed) region's daemons issue no id later than
//     lease_stop past the moment their cluster stopped (docs/leases.md, "The
//     stop deadline"), and serve again by themselves once it resumes.
// Figures (ids per region, stop and recovery times, refusal windows) are
// printed as "[ measured ]" lines; only generous time bounds are asserted.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "snowid/layout.h"
#include "test_support.h"
#include "testing/etcd_cluster.h"

namespace snowid::fleet_test {
namespace {

using daemon_test::DaemonDir;
using daemon_test::DaemonProcess;
using daemon_test::host_of;
using daemon_test::ids_of;
using daemon_test::ProcessResult;
using daemon_test::region_of;
using daemon_test::RespConn;
using daemon_test::RespValue;
using daemon_test::run_process;
using etcd::testing::EtcdCluster;
using etcd::testing::EtcdClusterOptions;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Steady = std::chrono::steady_clock;

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

double ms_between(Steady::time_point from, Steady::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

std::int64_t wall_ms_now() { return unix_ms(system_clock().wall_now()); }

// The Unix millisecond of an id of the default layout.
std::int64_t unix_ms_of(std::uint64_t id) {
  return static_cast<std::int64_t>(id >> 22) + Layout::snowid_default().epoch_unix_ms();
}

std::string worker_text(std::uint32_t region, std::uint32_t host) {
  return std::to_string(region) + "/" + std::to_string(host);
}

// `key:value` lines of an INFO reply.
std::map<std::string, std::string> info_fields(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t colon = line.find(':');
    if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
    out[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return out;
}

// etcdctl: $SNOWID_ETCDCTL_BIN, else the one on PATH.
std::string etcdctl_path() {
  if (const char* bin = std::getenv("SNOWID_ETCDCTL_BIN"); bin != nullptr && *bin != '\0') {
    return bin;
  }
  return "etcdctl";
}

// The worker keys of the cluster at `endpoints`, read with etcdctl.
std::vector<std::string> worker_keys(const std::vector<std::string>& endpoints) {
  const ProcessResult r = run_process({etcdctl_path(), "--endpoints=" + join(endpoints), "get",
                                       "/snowid/default/workers/", "--prefix", "--keys-only"},
                                      {{"ETCDCTL_API", "3"}});
  EXPECT_EQ(r.exit_code, 0) << "etcdctl failed (SNOWID_ETCDCTL_BIN, scripts/install-deps): "
                            << r.err;
  std::vector<std::string> keys;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) keys.push_back(line);
  }
  return keys;
}

// One client of one daemon, on a thread of its own: `NEXTIDS batch` every
// `pause` and `INFO lease worker` every `info_every`, each answer stamped
// with the steady time it arrived. The daemon's ids come back in the order
// it issued them.
class Observer {
 public:
  struct Options {
    std::uint32_t batch = 20;
    Steady::duration pause = milliseconds(10);
    Steady::duration info_every = milliseconds(25);
    // Stop after this many NEXTIDS requests (0: only when told).
    std::size_t max_requests = 0;
  };
  struct Pull {
    Steady::time_point at;
    bool ok = false;
    std::string word;  // the error word of a refusal, NO_REPLY for none
  };
  struct Info {
    Steady::time_point at;
    std::string lease_state;
    std::uint32_t region = 0;
    std::uint32_t host = 0;
  };
  struct Record {
    std::vector<Pull> pulls;
    std::vector<Info> infos;
    std::vector<std::uint64_t> ids;
    // For each ok pull, in order: when it arrived and how many ids it brought.
    std::vector<std::pair<Steady::time_point, std::size_t>> id_batches;
  };

  Observer(std::string label, std::uint32_t region, std::string socket, Options options)
      : label_(std::move(label)), region_(region), socket_(std::move(socket)), options_(options) {}
  ~Observer() { stop(); }
  Observer(const Observer&) = delete;
  Observer& operator=(const Observer&) = delete;

  const std::string& label() const noexcept { return label_; }
  std::uint32_t region() const noexcept { return region_; }

  // Starts pulling at `at` (so that several observers start together).
  void start(Steady::time_point at) {
    thread_ = std::thread([this, at] { run(at); });
  }
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  // Waits (up to `timeout`) for the thread to finish by itself (max_requests).
  bool wait_done(Steady::duration timeout) {
    const Steady::time_point until = Steady::now() + timeout;
    while (!done_.load() && Steady::now() < until) std::this_thread::sleep_for(milliseconds(10));
    return done_.load();
  }
  Record record() const {
    std::lock_guard<std::mutex> lock(mu_);
    return record_;
  }

 private:
  void run(Steady::time_point at) {
    std::this_thread::sleep_until(at);
    std::optional<RespConn> conn = RespConn::connect_unix(socket_);
    const std::vector<std::string> nextids = {"NEXTIDS", std::to_string(options_.batch)};
    Steady::time_point next_info = Steady::now();
    std::size_t requests = 0;
    while (!stop_.load()) {
      if (options_.max_requests != 0 && requests >= options_.max_requests) break;
      if (!conn) {
        std::this_thread::sleep_for(milliseconds(50));
        conn = RespConn::connect_unix(socket_);
        if (!conn) {
          add_pull(Steady::now(), false, "NO_CONNECTION", {});
          continue;
        }
      }
      ++requests;
      const std::optional<RespValue> r = conn->command(nextids);
      const Steady::time_point now = Steady::now();
      if (!r) {
        add_pull(now, false, "NO_REPLY", {});
        conn.reset();
        continue;
      }
      if (const auto ids = ids_of(*r)) {
        add_pull(now, true, "", *ids);
      } else {
        add_pull(now, false, r->is_error() ? r->error_word() : "NOT_IDS", {});
      }
      if (now >= next_info) {
        next_info = now + options_.info_every;
        const std::optional<RespValue> info = conn->command({"INFO", "lease", "worker"});
        if (info && info->type == RespValue::Type::kBulk) {
          std::map<std::string, std::string> fields = info_fields(info->str);
          Info i;
          i.at = Steady::now();
          i.lease_state = fields.count("lease_state") ? fields.at("lease_state") : "?";
          i.region = static_cast<std::uint32_t>(std::atoi(fields["region"].c_str()));
          i.host = static_cast<std::uint32_t>(std::atoi(fields["host"].c_str()));
          std::lock_guard<std::mutex> lock(mu_);
          record_.infos.push_back(std::move(i));
        }
      }
      if (options_.pause > Steady::duration::zero()) std::this_thread::sleep_for(options_.pause);
    }
    done_.store(true);
  }

  void add_pull(Steady::time_point at, bool ok, std::string word,
                const std::vector<std::uint64_t>& ids) {
    std::lock_guard<std::mutex> lock(mu_);
    record_.pulls.push_back({at, ok, std::move(word)});
    if (ok) {
      record_.ids.insert(record_.ids.end(), ids.begin(), ids.end());
      record_.id_batches.emplace_back(at, ids.size());
    }
  }

  const std::string label_;
  const std::uint32_t region_;
  const std::string socket_;
  const Options options_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  Record record_;
};

// A stretch of refusals: from the first refused pull to the next pull that
// brought ids (or the end of the record).
struct RefusalWindow {
  Steady::time_point from;
  std::optional<Steady::time_point> to;
  std::string first_word;
  std::size_t refusals = 0;
};

std::vector<RefusalWindow> refusal_windows(const Observer::Record& r) {
  std::vector<RefusalWindow> out;
  bool open = false;
  for (const Observer::Pull& p : r.pulls) {
    if (!p.ok) {
      if (!open) out.push_back({p.at, std::nullopt, p.word, 0});
      open = true;
      ++out.back().refusals;
    } else if (open) {
      out.back().to = p.at;
      open = false;
    }
  }
  return out;
}

// The first pull at or after `t` that satisfies `ok_wanted`, if any.
std::optional<Steady::time_point> first_pull_after(const Observer::Record& r, Steady::time_point t,
                                                   bool ok_wanted) {
  for (const Observer::Pull& p : r.pulls) {
    if (p.at >= t && p.ok == ok_wanted) return p.at;
  }
  return std::nullopt;
}

// The largest Unix millisecond among the ids of pulls that arrived after `t`.
std::optional<std::int64_t> latest_id_ms_after(const Observer::Record& r, Steady::time_point t) {
  std::optional<std::int64_t> out;
  std::size_t at = 0;
  for (const auto& [arrived, count] : r.id_batches) {
    if (arrived >= t) {
      for (std::size_t i = at; i < at + count; ++i) {
        const std::int64_t ms = unix_ms_of(r.ids[i]);
        out = out ? std::max(*out, ms) : ms;
      }
    }
    at += count;
  }
  return out;
}

// A region: an etcd cluster of its own and snowidd daemons configured with
// its number and that cluster's endpoints only. Destroyed in reverse order:
// the daemons first, then their directories, then etcd.
struct Region {
  std::uint32_t number = 0;
  std::unique_ptr<EtcdCluster> etcd;
  std::vector<std::unique_ptr<DaemonDir>> dirs;
  std::vector<std::unique_ptr<DaemonProcess>> daemons;
  // The worker each daemon logged in its "ready" event.
  std::vector<std::uint32_t> ready_hosts;

  std::string label(std::size_t i) const {
    return "region " + std::to_string(number) + " daemon " + std::to_string(i);
  }
};

// Starts the cluster (`members` members) of region `number`.
void start_cluster(Region& region, std::uint32_t number, int members) {
  region.number = number;
  EtcdClusterOptions o;
  o.members = members;
  Result<std::unique_ptr<EtcdCluster>> c = EtcdCluster::start(o);
  ASSERT_TRUE(c.is_ok()) << "etcd for region " << number << ": " << c.status().to_string();
  region.etcd = std::move(c).value();
  // A new namespace: its first holders need not wait out a stop deadline.
  ASSERT_TRUE(region.etcd->initialize_namespace("default").is_ok());
}

// Starts one daemon per entry of `per_daemon` (its own extra arguments) in
// `region`, each with --region and the region's endpoints only, and waits
// until every one is ready.
void start_daemons(Region& region, const std::vector<std::vector<std::string>>& per_daemon) {
  for (const std::vector<std::string>& extra : per_daemon) {
    std::vector<std::string> args = {"--registry", "etcd",
                                     "--etcd",     join(region.etcd->endpoints()),
                                     "--region",   std::to_string(region.number)};
    args.insert(args.end(), extra.begin(), extra.end());
    region.dirs.push_back(std::make_unique<DaemonDir>());
    region.daemons.push_back(region.dirs.back()->start(args));
  }
  for (std::size_t i = 0; i < region.daemons.size(); ++i) {
    DaemonProcess& d = *region.daemons[i];
    ASSERT_TRUE(d.wait_ready(milliseconds(30000))) << region.label(i) << ": " << d.raw_text();
    const auto ready = d.wait_for("ready", milliseconds(1000));
    ASSERT_TRUE(ready.has_value());
    EXPECT_EQ(ready->value("region", 99u), region.number) << ready->dump();
    region.ready_hosts.push_back(ready->value("host", 999u));
  }
}

// Every worker key in each region's etcd belongs to that region.
void expect_keys_of_own_region_only(const Region& region) {
  const std::vector<std::string> keys = worker_keys(region.etcd->endpoints());
  EXPECT_FALSE(keys.empty()) << "no worker key in region " << region.number << "'s etcd";
  const std::string own = "/snowid/default/workers/" + std::to_string(region.number) + "/";
  for (const std::string& k : keys) {
    EXPECT_TRUE(k.starts_with(own)) << "region " << region.number << "'s etcd holds " << k;
  }
}

std::unique_ptr<Observer> observe(const Region& region, std::size_t i, Observer::Options o) {
  return std::make_unique<Observer>(region.label(i), region.number, region.dirs[i]->socket(), o);
}

// Every id of every observer is distinct, in increasing order per daemon,
// and of the observer's region; each daemon's ids carry one of the workers
// its INFO reported (or `ready_host` when INFO never answered).
void expect_unique_and_decoded(const std::vector<const Observer*>& observers,
                               const std::vector<std::uint32_t>& ready_hosts) {
  std::vector<std::uint64_t> all;
  for (std::size_t k = 0; k < observers.size(); ++k) {
    const Observer& o = *observers[k];
    const Observer::Record r = o.record();
    std::set<std::uint32_t> hosts = {ready_hosts[k]};
    for (const Observer::Info& i : r.infos) {
      EXPECT_EQ(i.region, o.region()) << o.label() << " reported another region in INFO";
      hosts.insert(i.host);
    }
    std::size_t wrong_region = 0, wrong_host = 0, out_of_order = 0;
    for (std::size_t i = 0; i < r.ids.size(); ++i) {
      if (region_of(r.ids[i]) != o.region()) ++wrong_region;
      if (!hosts.count(host_of(r.ids[i]))) ++wrong_host;
      if (i > 0 && r.ids[i] <= r.ids[i - 1]) ++out_of_order;
    }
    EXPECT_EQ(wrong_region, 0u) << o.label() << ": ids of another region";
    EXPECT_EQ(wrong_host, 0u) << o.label() << ": ids of a worker its INFO never reported";
    EXPECT_EQ(out_of_order, 0u) << o.label() << ": ids not increasing";
    all.insert(all.end(), r.ids.begin(), r.ids.end());
  }
  std::sort(all.begin(), all.end());
  const auto dup = std::adjacent_find(all.begin(), all.end());
  EXPECT_EQ(dup, all.end()) << "id " << (dup == all.end() ? 0 : *dup) << " was issued twice";
}

// Ids of both regions, pulled at once over the daemons' sockets, never
// collide and decode to their daemon's region and worker. One daemon of each
// region is pinned to the same host number, 7: only the region bits keep
// their ids apart, and nothing but the region's own etcd was asked.
TEST(Regions, IdsOfTwoRegionsPulledAtOnceNeverCollideAndDecodeToTheirDaemon) {
  Region one, two;
  ASSERT_NO_FATAL_FAILURE(start_cluster(one, 1, 1));
  ASSERT_NO_FATAL_FAILURE(start_cluster(two, 2, 1));
  ASSERT_NO_FATAL_FAILURE(start_daemons(one, {{"--host", "7"}, {}}));
  ASSERT_NO_FATAL_FAILURE(start_daemons(two, {{"--host", "7"}, {}}));
  EXPECT_EQ(one.ready_hosts[0], 7u);
  EXPECT_EQ(two.ready_hosts[0], 7u);
  expect_keys_of_own_region_only(one);
  expect_keys_of_own_region_only(two);

  // 500 requests of 1,000 ids from each daemon, all four clients at once.
  Observer::Options o;
  o.batch = 1000;
  o.pause = Steady::duration::zero();
  o.info_every = milliseconds(50);
  o.max_requests = 500;
  std::vector<std::unique_ptr<Observer>> observers;
  std::vector<std::uint32_t> ready_hosts;
  for (const Region* r : {&one, &two}) {
    for (std::size_t i = 0; i < r->daemons.size(); ++i) {
      observers.push_back(observe(*r, i, o));
      ready_hosts.push_back(r->ready_hosts[i]);
    }
  }
  const Steady::time_point go = Steady::now() + milliseconds(100);
  for (auto& obs : observers) obs->start(go);
  for (auto& obs : observers) ASSERT_TRUE(obs->wait_done(seconds(120))) << obs->label();

  std::vector<const Observer*> views;
  std::map<std::uint32_t, std::size_t> ids_per_region;
  std::map<std::uint32_t, std::set<std::int64_t>> ms_per_region;
  for (const auto& obs : observers) {
    views.push_back(obs.get());
    const Observer::Record r = obs->record();
    std::size_t refused = 0;
    for (const Observer::Pull& p : r.pulls) refused += p.ok ? 0 : 1;
    EXPECT_EQ(refused, 0u) << obs->label() << " refused while nothing was wrong";
    EXPECT_EQ(r.ids.size(), 500'000u) << obs->label();
    ids_per_region[obs->region()] += r.ids.size();
    for (const std::uint64_t id : r.ids) ms_per_region[obs->region()].insert(unix_ms_of(id));
  }
  expect_unique_and_decoded(views, ready_hosts);
  std::size_t shared_ms = 0;
  for (const std::int64_t ms : ms_per_region[1]) shared_ms += ms_per_region[2].count(ms);
  std::printf(
      "[ measured ] two regions, one etcd each: region 1 issued %zu ids (workers 1/%u, 1/%u), "
      "region 2 %zu ids (workers 2/%u, 2/%u); both regions issued in %zu of the same "
      "milliseconds; no id twice\n",
      ids_per_region[1], one.ready_hosts[0], one.ready_hosts[1], ids_per_region[2],
      two.ready_hosts[0], two.ready_hosts[1], shared_ms);
  std::fflush(stdout);
  // The clients ran at once: the regions issued in common milliseconds.
  EXPECT_GT(shared_ms, 0u);
}

// One region's whole cluster is frozen (SIGSTOP of every member) past the
// lease TTL, then resumed; later it is killed. Short lease timings, as the
// other etcd daemon tests use, keep it fast: TTL 3 s, renewals every 500 ms,
// stop 2 s after the last renewal that succeeded.
TEST(Regions, FrozenOrKilledClusterStopsItsRegionWithinTheDeadlineAndTheOtherNeverNotices) {
  constexpr std::int64_t kTtlMs = 3000, kRenewMs = 500, kStopMs = 2000;
  const std::vector<std::string> timing = {"--lease-ttl",   std::to_string(kTtlMs) + "ms",
                                           "--lease-renew", std::to_string(kRenewMs) + "ms",
                                           "--lease-stop",  std::to_string(kStopMs) + "ms"};
  Region calm, hurt;
  ASSERT_NO_FATAL_FAILURE(start_cluster(calm, 1, 3));
  ASSERT_NO_FATAL_FAILURE(start_cluster(hurt, 2, 3));
  ASSERT_NO_FATAL_FAILURE(start_daemons(calm, {timing, timing}));
  ASSERT_NO_FATAL_FAILURE(start_daemons(hurt, {timing, timing}));
  expect_keys_of_own_region_only(calm);
  expect_keys_of_own_region_only(hurt);

  // Every daemon: NEXTIDS 20 every 10 ms, INFO every 25 ms.
  std::vector<std::unique_ptr<Observer>> observers;
  std::vector<std::uint32_t> ready_hosts;
  for (const Region* r : {&calm, &hurt}) {
    for (std::size_t i = 0; i < r->daemons.size(); ++i) {
      observers.push_back(observe(*r, i, {}));
      ready_hosts.push_back(r->ready_hosts[i]);
    }
  }
  const Steady::time_point began = Steady::now();
  for (auto& obs : observers) obs->start(began);
  auto of_region = [&](std::uint32_t region) {
    std::vector<Observer*> out;
    for (auto& obs : observers) {
      if (obs->region() == region) out.push_back(obs.get());
    }
    return out;
  };
  // Waits (up to `timeout`) until every observer of the hurt region has a
  // pull with `ok_wanted` at or after `t`.
  auto wait_hurt = [&](Steady::time_point t, bool ok_wanted, Steady::duration timeout) {
    const Steady::time_point until = Steady::now() + timeout;
    for (;;) {
      bool all = true;
      for (Observer* o : of_region(hurt.number)) {
        all = all && first_pull_after(o->record(), t, ok_wanted).has_value();
      }
      if (all) return true;
      if (Steady::now() >= until) return false;
      std::this_thread::sleep_for(milliseconds(20));
    }
  };
  // A few renewals first. The faults come 250 ms off the renewals' 500 ms
  // rhythm (the daemons renew on a schedule that starts when they acquire),
  // so that the stop falls inside the documented window, not at its end.
  std::this_thread::sleep_for(milliseconds(2250));

  // Freeze: every member of region 2's cluster stopped, past the TTL.
  for (int m = 0; m < hurt.etcd->size(); ++m) ASSERT_TRUE(hurt.etcd->signal(m, SIGSTOP).is_ok());
  const Steady::time_point frozen = Steady::now();
  const std::int64_t frozen_wall_ms = wall_ms_now();
  EXPECT_TRUE(wait_hurt(frozen, false, milliseconds(kTtlMs + 5000)))
      << "region 2 kept issuing with its cluster frozen";
  std::this_thread::sleep_until(frozen + milliseconds(kTtlMs + 2000));
  for (int m = 0; m < hurt.etcd->size(); ++m) ASSERT_TRUE(hurt.etcd->signal(m, SIGCONT).is_ok());
  const Steady::time_point resumed = Steady::now();
  EXPECT_TRUE(wait_hurt(resumed, true, seconds(60)))
      << "region 2 did not serve again within 60 s of its cluster's return";
  std::this_thread::sleep_for(milliseconds(2250));

  // Kill: every member of region 2's cluster, for good.
  for (int m = 0; m < hurt.etcd->size(); ++m) ASSERT_TRUE(hurt.etcd->signal(m, SIGKILL).is_ok());
  const Steady::time_point killed = Steady::now();
  const std::int64_t killed_wall_ms = wall_ms_now();
  EXPECT_TRUE(wait_hurt(killed, false, milliseconds(kTtlMs + 5000)))
      << "region 2 kept issuing with its cluster killed";
  // Past the TTL: region 2's daemons have called their leases lost.
  std::this_thread::sleep_until(killed + milliseconds(kTtlMs + 2000));
  for (auto& obs : observers) obs->stop();
  const Steady::time_point ended = Steady::now();

  // The calm region never noticed: not one refusal, held throughout, one
  // worker per daemon.
  for (Observer* o : of_region(calm.number)) {
    const Observer::Record r = o->record();
    const std::vector<RefusalWindow> windows = refusal_windows(r);
    EXPECT_TRUE(windows.empty()) << o->label() << " refused " << windows.size() << " times, first "
                                 << windows.front().first_word << " "
                                 << ms_between(frozen, windows.front().from)
                                 << " ms after region 2's cluster froze";
    std::set<std::string> states;
    std::set<std::uint32_t> hosts;
    for (const Observer::Info& i : r.infos) {
      states.insert(i.lease_state);
      hosts.insert(i.host);
    }
    EXPECT_EQ(states, std::set<std::string>{"held"}) << o->label();
    EXPECT_EQ(hosts.size(), 1u) << o->label() << " changed worker";
    EXPECT_GT(r.infos.size(), 100u) << o->label() << ": too few INFO answers to tell";
    std::size_t during = 0;
    for (const auto& [at, count] : r.id_batches) during += at >= frozen ? count : 0;
    std::printf(
        "[ measured ] %s (worker %s): %zu ids in all, %zu of them after region 2's cluster "
        "froze; 0 refusals; lease state held in all %zu INFO answers\n",
        o->label().c_str(), worker_text(o->region(), *hosts.begin()).c_str(), r.ids.size(), during,
        r.infos.size());
  }

  // The hurt region: stopped within the deadline, each time; recovered by
  // itself after the freeze.
  for (Observer* o : of_region(hurt.number)) {
    const Observer::Record r = o->record();
    const auto freeze_stop = first_pull_after(r, frozen, false);
    const auto recovered = first_pull_after(r, resumed, true);
    const auto kill_stop = first_pull_after(r, killed, false);
    ASSERT_TRUE(freeze_stop && recovered && kill_stop) << o->label();
    // No id of a time past lease_stop after the cluster stopped (the ids'
    // own milliseconds: what a client could store), while it was frozen or
    // dead. 1 ms for the tick the deadline falls in.
    std::int64_t last_before_resume = INT64_MIN;
    std::size_t at = 0;
    for (const auto& [arrived, count] : r.id_batches) {
      if (arrived >= frozen && arrived < resumed) {
        for (std::size_t i = at; i < at + count; ++i) {
          last_before_resume = std::max(last_before_resume, unix_ms_of(r.ids[i]));
        }
      }
      at += count;
    }
    const auto killed_last = latest_id_ms_after(r, killed);
    EXPECT_LE(last_before_resume, frozen_wall_ms + kStopMs + 1)
        << o->label() << " issued an id past lease_stop with its cluster frozen";
    if (killed_last) {
      EXPECT_LE(*killed_last, killed_wall_ms + kStopMs + 1)
          << o->label() << " issued an id past lease_stop with its cluster dead";
    }
    EXPECT_NE(last_before_resume, INT64_MIN) << o->label() << ": no id after the freeze began";
    std::set<std::string> states;
    for (const Observer::Info& i : r.infos) {
      if (i.at >= killed + milliseconds(kTtlMs + 1000)) states.insert(i.lease_state);
    }
    EXPECT_FALSE(states.count("held")) << o->label() << " still held a lease with etcd dead";
    // Generous: the lease could expire at kTtlMs; the deadline is kStopMs.
    EXPECT_LT(ms_between(frozen, *freeze_stop), kTtlMs) << o->label();
    EXPECT_LT(ms_between(killed, *kill_stop), kTtlMs) << o->label();

    std::string windows_text;
    for (const RefusalWindow& w : refusal_windows(r)) {
      char buf[160];
      std::snprintf(
          buf, sizeof buf, "%s%.0f..%s ms (%zu refusals, %s)", windows_text.empty() ? "" : "; ",
          ms_between(began, w.from),
          w.to ? std::to_string(static_cast<long long>(ms_between(began, *w.to))).c_str() : "end",
          w.refusals, w.first_word.c_str());
      windows_text += buf;
    }
    std::set<std::uint32_t> hosts;
    for (const Observer::Info& i : r.infos) hosts.insert(i.host);
    std::string workers;
    for (const std::uint32_t h : hosts) {
      workers += (workers.empty() ? "" : ", ") + worker_text(hurt.number, h);
    }
    std::printf(
        "[ measured ] %s (workers %s): %zu ids. Frozen: first refusal %.0f ms after SIGSTOP, "
        "last id's time %lld ms after it (stop deadline: %lld to %lld ms after an outage "
        "begins, TTL %lld ms); served again %.0f ms after SIGCONT. Killed: first refusal %.0f ms "
        "after SIGKILL, last id's time %s ms after it. Refusal windows (ms since the start): "
        "%s\n",
        o->label().c_str(), workers.c_str(), r.ids.size(), ms_between(frozen, *freeze_stop),
        static_cast<long long>(last_before_resume - frozen_wall_ms),
        static_cast<long long>(kStopMs - kRenewMs), static_cast<long long>(kStopMs),
        static_cast<long long>(kTtlMs), ms_between(resumed, *recovered),
        ms_between(killed, *kill_stop),
        killed_last ? std::to_string(*killed_last - killed_wall_ms).c_str() : "(none)",
        windows_text.c_str());
  }
  std::printf(
      "[ measured ] run: %.1f s; region 2 frozen at %.0f ms, resumed at %.0f ms, killed "
      "at %.0f ms\n",
      ms_between(began, ended) / 1000, ms_between(began, frozen), ms_between(began, resumed),
      ms_between(began, killed));
  std::fflush(stdout);

  std::vector<const Observer*> views;
  for (const auto& obs : observers) views.push_back(obs.get());
  expect_unique_and_decoded(views, ready_hosts);
  // Nothing crashed: every daemon still runs, and the calm ones stop cleanly.
  for (auto& d : hurt.daemons) EXPECT_TRUE(d->alive());
  for (auto& d : calm.daemons) {
    d->signal(SIGTERM);
    EXPECT_EQ(d->wait_exit(seconds(30)), 0);
  }
}

}  // namespace
}  // namespace snowid::fleet_test
