// The scale run (issue 15): a whole layout's worth of lease holders on one
// etcd cluster. A benchmark, not a test: it prints figures (a progress line
// every few seconds, then a table), and exits 1 only when the run did not
// show what the library promises: a holder that never got an id, a renewal
// that failed or a lease lost in the steady window or after the compaction,
// a holder past the blocks not refused with RESOURCE_EXHAUSTED naming its
// region, a close that failed. docs/reliability.md has the figures.
//
// Each holder is a real snowid::LeasedGenerator on a real etcd registry of
// its own (snowid::etcd), as one daemon or service per host would have, on
// threads of this process. The run:
//   1. starts a 3-member etcd on loopback (etcd/testing), or uses the one in
//      SNOWID_BENCH_ETCD_ENDPOINTS under a namespace of its own;
//   2. cold-starts each region in turn: all its holders acquire at once,
//      retrying after a failure as a supervisor restarts a daemon; the time
//      until the last one holds;
//   3. keeps every holder for a steady window and samples the renewal
//      latency the library reports (LeaseStats), etcd's CPU time
//      (/proc/<pid>/stat of each member) and its /metrics: database size,
//      watchers, puts, transactions, proposals;
//   4. asks for one holder more than the layout has: RESOURCE_EXHAUSTED;
//   5. compacts and defragments etcd (only the etcd it started), and checks
//      that every lease is still held a while later;
//   6. closes every holder, each releasing its id.
//
// Usage: snowid_lease_scale [--smoke] [--regions N] [--per-region N] [--steady-seconds S]
//   default  4 regions x 256 holders (the default layout), 60 s steady
//   --regions N, --per-region N: fewer holders (step 4 needs full blocks)
//   --smoke  4 regions x 4 holders of a layout with 2 host bits, 8 s steady:
//            every step above in about 20 s, for scripts/test
// The etcd binaries: $SNOWID_ETCD_BIN, else `etcd` on PATH (README).
// Exit status 0, 1 when a promise failed, 2 for bad usage.
#include <curl/curl.h>
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "snowid/etcd_registry.h"
#include "snowid/layout.h"
#include "snowid/lease.h"
#include "snowid/leased_generator.h"
#include "testing/etcd_cluster.h"

namespace snowid::bench {
namespace {

using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

double seconds_between(Steady::time_point from, Steady::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// ---------------------------------------------------------------------------
// The run's shape.

struct Config {
  bool smoke = false;
  Layout layout = Layout::snowid_default();
  std::uint32_t regions = 4;
  // Holders per region: the whole block unless --per-region says fewer.
  std::size_t per_region = 0;
  Duration steady = seconds(60);
  // How often a progress line is printed.
  Duration progress_every = seconds(5);
  // How long all holders of a region may take to acquire, retries included.
  Duration acquire_deadline = seconds(180);
  // How long every lease is watched after the compaction.
  Duration after_compaction = seconds(10);
};

// 41 time, 2 region, 2 host, 18 sequence bits: 4 holders fill a region.
Layout smoke_layout() {
  LayoutSpec spec;
  spec.name = "scale-smoke";
  spec.fields = {{"time", FieldRole::kTime, 41},
                 {"region", FieldRole::kRegion, 2},
                 {"host", FieldRole::kHost, 2},
                 {"sequence", FieldRole::kSequence, 18}};
  return Layout::create(std::move(spec)).value();
}

std::optional<Config> parse_args(int argc, char** argv) {
  Config c;
  std::optional<std::uint32_t> regions;
  std::optional<long> steady_s;
  std::optional<long> per_region;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto number = [&](long lo, long hi) -> std::optional<long> {
      if (i + 1 >= argc) return std::nullopt;
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < lo || v > hi) return std::nullopt;
      return v;
    };
    if (a == "--smoke") {
      c.smoke = true;
    } else if (a == "--regions") {
      const auto v = number(1, 4);
      if (!v) return std::nullopt;
      regions = static_cast<std::uint32_t>(*v);
    } else if (a == "--per-region") {
      per_region = number(1, 1 << 20);
      if (!per_region) return std::nullopt;
    } else if (a == "--steady-seconds") {
      steady_s = number(1, 3600);
      if (!steady_s) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (c.smoke) {
    c.layout = smoke_layout();
    c.steady = seconds(8);
    c.acquire_deadline = seconds(60);
    c.after_compaction = seconds(4);
    c.progress_every = seconds(2);
  }
  if (regions) c.regions = *regions;
  if (steady_s) c.steady = seconds(*steady_s);
  c.per_region = c.layout.workers_per_region();
  if (per_region) {
    if (static_cast<std::size_t>(*per_region) > c.per_region) return std::nullopt;
    c.per_region = static_cast<std::size_t>(*per_region);
  }
  return c;
}

// ---------------------------------------------------------------------------
// etcd from outside: its /metrics and a few gateway calls, and its members'
// CPU time.

std::size_t append_body(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// GET (empty `body`) or POST `body` to `url`: the body of a 200 answer.
std::optional<std::string> http_call(const std::string& url, const std::string& body,
                                     long timeout_ms) {
  CURL* h = curl_easy_init();
  if (h == nullptr) return std::nullopt;
  std::string out;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
  if (!body.empty()) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  const CURLcode rc = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(h);
  if (rc != CURLE_OK || status != 200) return std::nullopt;
  return out;
}

// Prometheus text as "name" or "name{labels}" -> value.
using Metrics = std::map<std::string, double>;

Metrics fetch_metrics(const std::string& endpoint) {
  Metrics m;
  const std::optional<std::string> text = http_call(endpoint + "/metrics", "", 10'000);
  if (!text) return m;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    m[line.substr(0, space)] = std::strtod(line.c_str() + space + 1, nullptr);
  }
  return m;
}

double value_of(const Metrics& m, const std::string& key) {
  const auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

// The sum of `name{...}` samples whose labels contain every one of `labels`.
double sum_of(const Metrics& m, const std::string& name, const std::vector<std::string>& labels) {
  double sum = 0;
  for (auto it = m.lower_bound(name); it != m.end() && it->first.starts_with(name); ++it) {
    const std::string& key = it->first;
    if (key.size() > name.size() && key[name.size()] != '{') continue;
    bool all = true;
    for (const std::string& l : labels) all = all && key.find(l) != std::string::npos;
    if (all) sum += it->second;
  }
  return sum;
}

// One reading of every member.
struct EtcdReading {
  Steady::time_point at;
  std::vector<Metrics> members;
  std::vector<double>
      cpu_s;             // from /proc when the members are ours, else process_cpu_seconds_total
  double own_cpu_s = 0;  // this process (the holders' side)
  int leader = -1;       // index of the member that reports etcd_server_is_leader 1
};

// utime + stime of `pid` in seconds, from /proc/<pid>/stat.
std::optional<double> cpu_seconds_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 2));
  std::vector<std::string> f;
  for (std::string s; fields >> s;) f.push_back(s);
  // After the command: state(3) ppid(4) ... utime(14) stime(15); f[0] is field 3.
  if (f.size() < 13) return std::nullopt;
  const double ticks = std::strtod(f[11].c_str(), nullptr) + std::strtod(f[12].c_str(), nullptr);
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// The etcd members this process started in `dir` (etcd/testing names their
// data directories <dir>/m<i>.etcd), by member index.
std::vector<pid_t> member_pids(const std::string& dir, int members) {
  std::vector<pid_t> out(static_cast<std::size_t>(members), -1);
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (const dirent* e = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    for (int i = 0; i < members; ++i) {
      if (cmdline.find("--data-dir=" + dir + "/m" + std::to_string(i) + ".etcd ") !=
          std::string::npos) {
        out[static_cast<std::size_t>(i)] = pid;
      }
    }
  }
  ::closedir(proc);
  return out;
}

class Etcd {
 public:
  // Starts a 3-member cluster, or takes SNOWID_BENCH_ETCD_ENDPOINTS.
  static std::optional<Etcd> open() {
    Etcd e;
    if (const char* env = std::getenv("SNOWID_BENCH_ETCD_ENDPOINTS"); env != nullptr && *env) {
      Result<std::vector<std::string>> eps = parse_etcd_endpoints(env);
      if (!eps.is_ok()) {
        std::fprintf(stderr, "SNOWID_BENCH_ETCD_ENDPOINTS: %s\n", eps.status().to_string().c_str());
        return std::nullopt;
      }
      e.endpoints_ = eps.value();
      e.namespace_ = "scale-" + std::to_string(::getpid()) + "-" +
                     std::to_string(unix_ms(system_clock().wall_now()));
    } else {
      etcd::testing::EtcdClusterOptions o;
      o.members = 3;
      Result<std::unique_ptr<etcd::testing::EtcdCluster>> c = etcd::testing::EtcdCluster::start(o);
      if (!c.is_ok()) {
        std::fprintf(stderr, "etcd did not start ($SNOWID_ETCD_BIN): %s\n",
                     c.status().to_string().c_str());
        return std::nullopt;
      }
      e.cluster_ = std::move(c).value();
      e.endpoints_ = e.cluster_->endpoints();
      e.namespace_ = "scale";
      e.pids_ = member_pids(e.cluster_->dir(), e.cluster_->size());
    }
    return e;
  }

  bool ours() const noexcept { return cluster_ != nullptr; }
  const std::vector<std::string>& endpoints() const noexcept { return endpoints_; }
  const std::string& name_space() const noexcept { return namespace_; }
  std::string version() const {
    if (cluster_) {
      Result<std::string> v = cluster_->version(0);
      if (v.is_ok()) return v.value();
    }
    // etcd_server_version{server_version="3.6.16"} 1
    const std::string prefix = "etcd_server_version{server_version=\"";
    for (const auto& [key, value] : fetch_metrics(endpoints_.front())) {
      if (key.starts_with(prefix)) {
        return key.substr(prefix.size(), key.find('"', prefix.size()) - prefix.size());
      }
    }
    return "?";
  }

  EtcdReading read() const {
    EtcdReading r;
    r.at = Steady::now();
    for (std::size_t i = 0; i < endpoints_.size(); ++i) {
      r.members.push_back(fetch_metrics(endpoints_[i]));
      std::optional<double> cpu;
      if (i < pids_.size() && pids_[i] > 0) cpu = cpu_seconds_of(pids_[i]);
      r.cpu_s.push_back(cpu ? *cpu : value_of(r.members.back(), "process_cpu_seconds_total"));
      if (value_of(r.members.back(), "etcd_server_is_leader") == 1) r.leader = static_cast<int>(i);
    }
    r.own_cpu_s = cpu_seconds_of(::getpid()).value_or(0);
    return r;
  }

  // Compacts the history up to the current revision and defragments every
  // member; false if any call failed. Only for the etcd this run started.
  bool compact_and_defragment() const {
    if (!ours()) return false;
    const EtcdReading r = read();
    const int leader = r.leader < 0 ? 0 : r.leader;
    const auto rev = static_cast<long long>(value_of(r.members[static_cast<std::size_t>(leader)],
                                                     "etcd_debugging_mvcc_current_revision"));
    bool ok = http_call(endpoints_[0] + "/v3/kv/compaction",
                        "{\"revision\":\"" + std::to_string(rev) + "\",\"physical\":true}", 60'000)
                  .has_value();
    for (const std::string& ep : endpoints_) {
      ok = http_call(ep + "/v3/maintenance/defragment", "{}", 60'000).has_value() && ok;
    }
    return ok;
  }

  EtcdOptions options(const Layout& layout) const {
    EtcdOptions o;
    o.endpoints = endpoints_;
    o.cluster = namespace_;
    o.layout = layout;
    return o;
  }

 private:
  Etcd() = default;
  std::unique_ptr<etcd::testing::EtcdCluster> cluster_;
  std::vector<std::string> endpoints_;
  std::string namespace_;
  std::vector<pid_t> pids_;
};

// What changed between two readings, for the table.
struct EtcdDelta {
  double seconds = 0;
  std::vector<double> cpu_s;  // per member
  double own_cpu_s = 0;
  // From the leader (every member applies the same writes).
  double puts = 0, txns = 0, ranges = 0, proposals = 0, lease_renewals = 0, put_bytes = 0;
  double wal_bytes = 0;  // summed over members
  double fsyncs = 0;     // summed over members
  // gRPC calls the gateway made, summed over members.
  std::map<std::string, double> grpc_started;
};

EtcdDelta delta(const EtcdReading& a, const EtcdReading& b) {
  EtcdDelta d;
  d.seconds = seconds_between(a.at, b.at);
  for (std::size_t i = 0; i < a.cpu_s.size() && i < b.cpu_s.size(); ++i) {
    d.cpu_s.push_back(b.cpu_s[i] - a.cpu_s[i]);
  }
  d.own_cpu_s = b.own_cpu_s - a.own_cpu_s;
  const int leader = b.leader >= 0 ? b.leader : 0;
  const auto li = static_cast<std::size_t>(leader);
  auto diff = [&](const std::string& key) {
    return value_of(b.members[li], key) - value_of(a.members[li], key);
  };
  d.puts = diff("etcd_mvcc_put_total");
  d.txns = diff("etcd_mvcc_txn_total");
  d.ranges = diff("etcd_mvcc_range_total");
  d.proposals = diff("etcd_server_proposals_committed_total");
  d.lease_renewals = diff("etcd_debugging_lease_renewed_total");
  d.put_bytes = diff("etcd_debugging_mvcc_total_put_size_in_bytes");
  for (std::size_t i = 0; i < b.members.size(); ++i) {
    d.wal_bytes += value_of(b.members[i], "etcd_disk_wal_write_bytes_total") -
                   value_of(a.members[i], "etcd_disk_wal_write_bytes_total");
    d.fsyncs += value_of(b.members[i], "etcd_disk_wal_fsync_duration_seconds_count") -
                value_of(a.members[i], "etcd_disk_wal_fsync_duration_seconds_count");
    for (const char* method :
         {"LeaseKeepAlive", "Txn", "Range", "Watch", "LeaseGrant", "LeaseRevoke"}) {
      const std::vector<std::string> labels = {std::string("grpc_method=\"") + method + "\"",
                                               "etcdserverpb"};
      d.grpc_started[method] += sum_of(b.members[i], "grpc_server_started_total", labels) -
                                sum_of(a.members[i], "grpc_server_started_total", labels);
    }
  }
  return d;
}

// The first three fields of /proc/loadavg: other work on the machine shows
// in every figure here.
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

double total(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v) s += x;
  return s;
}

double max_over_members(const EtcdReading& r, const std::string& key) {
  double m = 0;
  for (const Metrics& x : r.members) m = std::max(m, value_of(x, key));
  return m;
}

double sum_over_members(const EtcdReading& r, const std::string& key) {
  double s = 0;
  for (const Metrics& x : r.members) s += value_of(x, key);
  return s;
}

// ---------------------------------------------------------------------------
// The holders.

struct Holder {
  std::uint32_t region = 0;
  std::uint32_t index = 0;
  // Declared before the generator, which uses it: destroyed after it.
  std::unique_ptr<WorkerRegistry> registry;
  std::unique_ptr<LeasedGenerator> generator;
  double acquire_s = 0;  // from the start signal to holding
  int attempts = 0;
  std::map<std::string, int> failures;  // code name -> count
  std::string last_failure;
};

// What the holders' LeaseEvents told, counted: leases lost, and acquires
// that failed (a lost lease's replacement, or a holder past the block), by
// code. Thread-safe.
class EventCounts {
 public:
  void add(const LeaseEvent& e) {
    std::string key;
    if (e.kind == LeaseEvent::Kind::kLost) {
      key = "lost";
    } else if (e.kind == LeaseEvent::Kind::kAcquireFailed) {
      key = "failed acquires " + std::string(code_name(e.status.code()));
    } else {
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_[key];
  }
  std::map<std::string, std::uint64_t> snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::uint64_t> counts_;
};

EventCounts& event_counts() {
  static EventCounts counts;
  return counts;
}

// "N what, ..." of the counts that grew from `a` to `b`; "none" if none did.
std::string growth_text(const std::map<std::string, std::uint64_t>& a,
                        const std::map<std::string, std::uint64_t>& b) {
  std::string out;
  for (const auto& [key, n] : b) {
    const auto it = a.find(key);
    const std::uint64_t grew = n - (it == a.end() ? 0 : it->second);
    if (grew > 0) out += (out.empty() ? "" : ", ") + std::to_string(grew) + " " + key;
  }
  return out.empty() ? "none" : out;
}

LeasedGeneratorOptions holder_options(const Config& config, std::uint32_t region,
                                      std::uint32_t index) {
  LeasedGeneratorOptions o;
  o.on_event = [](const LeaseEvent& e) { event_counts().add(e); };
  o.generator.layout = config.layout;
  o.lease.region = region;
  o.lease.holder = HolderInfo{"scale-r" + std::to_string(region) + "-" + std::to_string(index),
                              ::getpid(), system_clock().wall_now(), ""};
  return o;
}

struct ColdStart {
  std::uint32_t region = 0;
  std::size_t holders = 0;
  std::size_t held = 0;
  double all_held_s = 0;
  double median_s = 0;
  int attempts = 0;
  std::map<std::string, int> failures;
  EtcdDelta etcd;
};

// Starts `n` holders of `region` at once: each makes its registry, then all
// acquire together, each retrying after a failure (100 to 300 ms later, as a
// supervisor restarts a daemon that could not start) until the deadline.
ColdStart cold_start(const Config& config, const Etcd& etcd, std::uint32_t region, std::size_t n,
                     std::vector<std::unique_ptr<Holder>>& out, std::mutex& out_mu) {
  ColdStart result;
  result.region = region;
  result.holders = n;
  std::vector<std::unique_ptr<Holder>> holders;
  for (std::size_t i = 0; i < n; ++i) {
    holders.push_back(std::make_unique<Holder>());
    holders.back()->region = region;
    holders.back()->index = static_cast<std::uint32_t>(i);
  }
  std::latch made(static_cast<std::ptrdiff_t>(n));
  std::promise<Steady::time_point> go;
  std::shared_future<Steady::time_point> started = go.get_future().share();
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      Holder& h = *holders[i];
      Result<std::unique_ptr<WorkerRegistry>> reg =
          make_etcd_registry(system_clock(), etcd.options(config.layout));
      made.count_down();
      const Steady::time_point t0 = started.get();
      if (!reg.is_ok()) {
        h.last_failure = reg.status().to_string();
        ++h.failures[std::string(code_name(reg.status().code()))];
        return;
      }
      h.registry = std::move(reg).value();
      std::mt19937 rng(static_cast<unsigned>(region * 1000 + i));
      const Steady::time_point deadline = t0 + config.acquire_deadline;
      while (Steady::now() < deadline) {
        ++h.attempts;
        Result<std::unique_ptr<LeasedGenerator>> g = LeasedGenerator::create(
            system_clock(), *h.registry, holder_options(config, region, h.index));
        if (g.is_ok()) {
          h.generator = std::move(g).value();
          h.acquire_s = seconds_between(t0, Steady::now());
          return;
        }
        ++h.failures[std::string(code_name(g.status().code()))];
        h.last_failure = g.status().to_string();
        std::this_thread::sleep_for(
            milliseconds(std::uniform_int_distribution<int>(100, 300)(rng)));
      }
    });
  }
  made.wait();
  const EtcdReading before = etcd.read();
  go.set_value(Steady::now());
  for (std::thread& t : threads) t.join();
  const EtcdReading after = etcd.read();
  result.etcd = delta(before, after);

  std::vector<double> times;
  for (const auto& h : holders) {
    result.attempts += h->attempts;
    for (const auto& [code, count] : h->failures) result.failures[code] += count;
    if (h->generator) {
      ++result.held;
      times.push_back(h->acquire_s);
    } else {
      std::fprintf(stderr, "holder %u of region %u never held: %s\n", h->index, region,
                   h->last_failure.c_str());
    }
  }
  std::sort(times.begin(), times.end());
  if (!times.empty()) {
    result.all_held_s = times.back();
    result.median_s = times[times.size() / 2];
  }
  std::lock_guard<std::mutex> lock(out_mu);
  for (auto& h : holders) {
    if (h->generator) out.push_back(std::move(h));
  }
  return result;
}

// Samples every holder's LeaseStats, lease state and re-acquisitions every
// 100 ms on a thread of its own. A renewal count that went up brings that
// renewal's latency (send to reply, as the keeper measured it). Figures are
// asked for by time range.
class Sampler {
 public:
  Sampler(std::vector<std::unique_ptr<Holder>>& holders, std::mutex& mu)
      : holders_(holders), mu_(mu) {}
  ~Sampler() { stop(); }

  void start() {
    thread_ = std::thread([this] { run(); });
  }
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  struct Figures {
    std::vector<double> latencies_ms;
    std::uint64_t failures = 0;         // renewals that failed
    std::uint64_t reacquisitions = 0;   // lost leases replaced by a fresh id
    std::size_t least_held = SIZE_MAX;  // fewest holders held in one sweep
    std::size_t holders = 0;            // in the last sweep
    std::size_t held = 0;               // in the last sweep
  };
  Figures between(Steady::time_point from, Steady::time_point to) const {
    Figures f;
    std::lock_guard<std::mutex> lock(fig_mu_);
    for (const auto& [at, ms] : latencies_) {
      if (at >= from && at < to) f.latencies_ms.push_back(ms);
    }
    for (const Sweep& w : sweeps_) {
      if (w.at < from || w.at >= to) continue;
      f.failures += w.failures;
      f.reacquisitions += w.reacquisitions;
      f.least_held = std::min(f.least_held, w.held);
      f.holders = w.holders;
      f.held = w.held;
    }
    return f;
  }

 private:
  struct Sweep {
    Steady::time_point at;
    std::size_t holders = 0;
    std::size_t held = 0;
    std::uint64_t failures = 0;
    std::uint64_t reacquisitions = 0;
  };
  struct Last {
    LeaseStats stats;
    std::uint64_t reacquisitions = 0;
  };

  // How much a counter grew; a counter that went down (a retired lease's
  // keeper no longer summed) counts from zero.
  static std::uint64_t growth(std::uint64_t now, std::uint64_t before) {
    return now >= before ? now - before : now;
  }

  void run() {
    std::map<const Holder*, Last> last;
    while (!stop_.load()) {
      const Steady::time_point next = Steady::now() + milliseconds(100);
      std::vector<const Holder*> hs;
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (const auto& h : holders_) hs.push_back(h.get());
      }
      std::vector<double> lat;
      Sweep w;
      w.holders = hs.size();
      for (const Holder* h : hs) {
        const LeaseStats s = h->generator->lease_stats();
        const std::uint64_t re = h->generator->reacquisitions();
        if (h->generator->lease_state() == LeaseState::kHeld) ++w.held;
        const auto it = last.find(h);
        if (it != last.end()) {
          if (growth(s.renewals, it->second.stats.renewals) > 0) {
            lat.push_back(
                std::chrono::duration<double, std::milli>(s.last_renewal_latency).count());
          }
          w.failures += growth(s.renewal_failures, it->second.stats.renewal_failures);
          w.reacquisitions += growth(re, it->second.reacquisitions);
        }
        last[h] = {s, re};
      }
      w.at = Steady::now();
      {
        std::lock_guard<std::mutex> lock(fig_mu_);
        for (const double ms : lat) latencies_.emplace_back(w.at, ms);
        sweeps_.push_back(w);
      }
      std::this_thread::sleep_until(next);
    }
  }

  std::vector<std::unique_ptr<Holder>>& holders_;
  std::mutex& mu_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex fig_mu_;
  std::vector<std::pair<Steady::time_point, double>> latencies_;
  std::vector<Sweep> sweeps_;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

std::string failures_text(const std::map<std::string, int>& f) {
  if (f.empty()) return "none";
  std::string out;
  for (const auto& [code, count] : f) {
    out += (out.empty() ? "" : ", ") + std::to_string(count) + " " + code;
  }
  return out;
}

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

std::string cpu_text(const EtcdDelta& d) {
  std::string out;
  for (std::size_t i = 0; i < d.cpu_s.size(); ++i) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%sm%zu %.2f s", out.empty() ? "" : ", ", i, d.cpu_s[i]);
    out += buf;
  }
  return out;
}

// Prints one line every `every` while the run goes on: holders held, the
// renewals of the interval, lost leases replaced, etcd's CPU and this
// process's, and etcd's lease grants (each acquire attempt is one).
class Progress {
 public:
  Progress(const Etcd& etcd, const Sampler& sampler, Steady::time_point began, Duration every)
      : etcd_(etcd), sampler_(sampler), began_(began), every_(every) {}
  ~Progress() { stop(); }
  void start() {
    thread_ = std::thread([this] { run(); });
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    EtcdReading prev = etcd_.read();
    std::map<std::string, std::uint64_t> prev_events = event_counts().snapshot();
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, every_, [this] { return stop_; })) {
      lock.unlock();
      const EtcdReading now = etcd_.read();
      EtcdDelta d = delta(prev, now);
      const Sampler::Figures f = sampler_.between(prev.at, now.at);
      const std::map<std::string, std::uint64_t> events = event_counts().snapshot();
      std::printf(
          "  t=%5.1f s  held %4zu of %4zu  renewals %5zu  p50 %7.1f ms  p99 %7.1f ms  "
          "failed %4" PRIu64 "  replaced %3" PRIu64
          "  etcd CPU %4.0f %%  holders' CPU %4.0f %%  lease grants/s %5.1f  events: %s\n",
          seconds_between(began_, now.at), f.held, f.holders, f.latencies_ms.size(),
          percentile(f.latencies_ms, 0.5), percentile(f.latencies_ms, 0.99), f.failures,
          f.reacquisitions, 100 * total(d.cpu_s) / d.seconds, 100 * d.own_cpu_s / d.seconds,
          d.grpc_started["LeaseGrant"] / d.seconds, growth_text(prev_events, events).c_str());
      std::fflush(stdout);
      prev_events = events;
      prev = now;
      lock.lock();
    }
  }

  const Etcd& etcd_;
  const Sampler& sampler_;
  const Steady::time_point began_;
  const Duration every_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

int run(const Config& config) {
  const std::size_t per_region = config.per_region;
  const std::size_t block = config.layout.workers_per_region();
  const std::size_t fleet = per_region * config.regions;
  const std::string began_at = format_iso8601(system_clock().wall_now());
  const std::string load_at_start = load_average();
  const Steady::time_point began = Steady::now();
  std::optional<Etcd> etcd = Etcd::open();
  if (!etcd) return 1;
  if (const Status s = initialize_etcd_namespace(system_clock(), etcd->options(config.layout));
      !s.is_ok()) {
    std::fprintf(stderr, "could not initialise the namespace: %s\n", s.to_string().c_str());
    return 1;
  }
  std::printf(
      "# lease scale run%s: %zu holders (%u regions x %zu, blocks of %zu), layout %s, "
      "default lease timing (TTL 10 s, renewals every 3 s, stop after 8 s), etcd %s (%zu "
      "members, %s), namespace /snowid/%s, on %u cores (load average %s), started %s\n",
      config.smoke ? " (smoke)" : "", fleet, config.regions, per_region, block,
      config.layout.name().c_str(), etcd->version().c_str(), etcd->endpoints().size(),
      etcd->ours() ? "started by this run on loopback" : "SNOWID_BENCH_ETCD_ENDPOINTS",
      etcd->name_space().c_str(), std::thread::hardware_concurrency(), load_at_start.c_str(),
      began_at.c_str());
  std::fflush(stdout);
  bool failed = false;

  std::mutex holders_mu;
  std::vector<std::unique_ptr<Holder>> holders;
  Sampler sampler(holders, holders_mu);
  sampler.start();
  Progress progress(*etcd, sampler, began, config.progress_every);
  progress.start();

  // 2. Cold starts, one region after the other.
  struct Phase {
    ColdStart start;
    Steady::time_point from, to;
  };
  std::vector<Phase> starts;
  for (std::uint32_t r = 0; r < config.regions; ++r) {
    Phase p;
    p.from = Steady::now();
    p.start = cold_start(config, *etcd, r, per_region, holders, holders_mu);
    p.to = Steady::now();
    starts.push_back(p);
    const ColdStart& c = p.start;
    std::printf(
        "cold start, region %u: %zu of %zu held after %.2f s (median %.2f s), %d "
        "attempts, failures: %s; etcd CPU %.2f s (%s), this process %.2f s\n",
        r, c.held, c.holders, c.all_held_s, c.median_s, c.attempts,
        failures_text(c.failures).c_str(), total(c.etcd.cpu_s), cpu_text(c.etcd).c_str(),
        c.etcd.own_cpu_s);
    std::fflush(stdout);
    if (c.held != c.holders) failed = true;
  }
  // Every holder issues, on a worker of its own, in its region.
  {
    std::set<std::pair<std::uint32_t, std::uint32_t>> workers;
    std::size_t bad = 0;
    for (const auto& h : holders) {
      const IdResult id = h->generator->next();
      const WorkerId w = h->generator->worker();
      workers.insert({w.region, w.host});
      if (!id.ok()) {
        ++bad;
        continue;
      }
      const Result<DecodedId> d = config.layout.decode(id.id);
      const auto ri = static_cast<std::size_t>(config.layout.index_of(FieldRole::kRegion));
      const auto hi = static_cast<std::size_t>(config.layout.index_of(FieldRole::kHost));
      if (!d.is_ok() || w.region != h->region || d->values[ri] != w.region ||
          d->values[hi] != w.host) {
        ++bad;
      }
    }
    std::printf(
        "%zu holders on %zu distinct workers; %zu could not issue an id of their own "
        "worker\n",
        holders.size(), workers.size(), bad);
    if (bad != 0 || workers.size() != holders.size()) failed = true;
  }

  // 3. The steady window.
  const EtcdReading steady_from = etcd->read();
  const std::map<std::string, std::uint64_t> events_from = event_counts().snapshot();
  std::this_thread::sleep_for(config.steady);
  const EtcdReading steady_to = etcd->read();
  const std::string steady_events = growth_text(events_from, event_counts().snapshot());
  const EtcdDelta steady = delta(steady_from, steady_to);
  const Sampler::Figures sf = sampler.between(steady_from.at, steady_to.at);
  if (sf.failures != 0 || sf.least_held != holders.size()) failed = true;

  // 4. One holder more than the blocks have, when they are full.
  std::string refusal = "not tried: the blocks are not full (--per-region)";
  if (per_region == block) {
    bool refused_right = false;
    Result<std::unique_ptr<WorkerRegistry>> reg =
        make_etcd_registry(system_clock(), etcd->options(config.layout));
    if (reg.is_ok()) {
      Result<std::unique_ptr<LeasedGenerator>> extra =
          LeasedGenerator::create(system_clock(), *reg.value(),
                                  holder_options(config, 0, static_cast<std::uint32_t>(fleet)));
      if (extra.is_ok()) {
        refusal = "granted worker " + std::to_string(extra.value()->worker().region) + "/" +
                  std::to_string(extra.value()->worker().host);
        (void)extra.value()->close();
      } else {
        refusal = extra.status().to_string();
        refused_right = extra.status().code() == Code::kResourceExhausted &&
                        extra.status().message().find("region 0") != std::string::npos;
      }
    } else {
      refusal = "no registry: " + reg.status().to_string();
    }
    std::printf("holder %zu (region 0): %s\n", fleet + 1, refusal.c_str());
    if (!refused_right) failed = true;
  }

  // 5. Compaction and defragmentation, then every lease watched a while.
  const Steady::time_point compacting = Steady::now();
  const bool compacted = etcd->compact_and_defragment();
  const double compaction_s = seconds_between(compacting, Steady::now());
  const EtcdReading after_compaction = etcd->read();
  std::this_thread::sleep_for(config.after_compaction);
  const Sampler::Figures af = sampler.between(compacting, Steady::now());
  progress.stop();
  sampler.stop();
  std::size_t held_at_end = 0;
  for (const auto& h : holders) held_at_end += h->generator->lease_state() == LeaseState::kHeld;
  if (held_at_end != holders.size() || af.failures != 0) failed = true;

  // 6. Every holder closes, releasing its id.
  const Steady::time_point closing = Steady::now();
  std::atomic<std::size_t> close_failures{0};
  {
    std::vector<std::thread> closers;
    const std::size_t threads = 16;
    for (std::size_t t = 0; t < threads; ++t) {
      closers.emplace_back([&, t] {
        for (std::size_t i = t; i < holders.size(); i += threads) {
          if (!holders[i]->generator->close().is_ok()) ++close_failures;
        }
      });
    }
    for (std::thread& t : closers) t.join();
  }
  const double close_s = seconds_between(closing, Steady::now());
  if (close_failures.load() != 0) failed = true;
  holders.clear();

  // The table.
  const double s = steady.seconds;
  const auto members = static_cast<double>(steady_to.members.size());
  std::printf("\n| Figure | Value |\n|---|---|\n");
  for (const Phase& p : starts) {
    const ColdStart& c = p.start;
    const Sampler::Figures f = sampler.between(p.from, p.to);
    std::printf(
        "| cold start, region %u: %zu holders at once | all held after %.2f s (median "
        "%.2f s); %d attempts, failures: %s; etcd CPU %.2f s (%s); renewals of the "
        "holders already up meanwhile: %zu, p50 %.1f ms, p99 %.1f ms |\n",
        c.region, c.holders, c.all_held_s, c.median_s, c.attempts,
        failures_text(c.failures).c_str(), total(c.etcd.cpu_s), cpu_text(c.etcd).c_str(),
        f.latencies_ms.size(), percentile(f.latencies_ms, 0.5), percentile(f.latencies_ms, 0.99));
  }
  std::printf("| steady window | %.1f s, %zu holders |\n", s, fleet);
  std::printf(
      "| renewal latency, steady: p50 / p99 / max (%zu renewals) | %.1f / %.1f / %.1f ms "
      "|\n",
      sf.latencies_ms.size(), percentile(sf.latencies_ms, 0.5), percentile(sf.latencies_ms, 0.99),
      percentile(sf.latencies_ms, 1.0));
  std::printf(
      "| renewals that failed, steady; leases replaced; fewest holders held in one sweep "
      "| %" PRIu64 "; %" PRIu64 "; %zu of %zu |\n",
      sf.failures, sf.reacquisitions, sf.least_held == SIZE_MAX ? 0 : sf.least_held, fleet);
  std::printf("| lease events, steady | %s |\n", steady_events.c_str());
  std::printf("| etcd CPU, steady (all members) | %.2f s in %.1f s = %.0f %% of one core (%s) |\n",
              total(steady.cpu_s), s, 100 * total(steady.cpu_s) / s, cpu_text(steady).c_str());
  std::printf("| this process's CPU, steady (the %zu holders) | %.2f s = %.0f %% of one core |\n",
              fleet, steady.own_cpu_s, 100 * steady.own_cpu_s / s);
  std::printf("| puts / transactions / ranges per second, steady | %.1f / %.1f / %.1f |\n",
              steady.puts / s, steady.txns / s, steady.ranges / s);
  std::printf("| raft proposals committed per second; lease renewals per second | %.1f; %.1f |\n",
              steady.proposals / s, steady.lease_renewals / s);
  std::printf(
      "| bytes put per second; WAL bytes per second per member; WAL fsyncs per second per "
      "member | %.0f; %.0f; %.1f |\n",
      steady.put_bytes / s, steady.wal_bytes / s / members, steady.fsyncs / s / members);
  std::printf("| gRPC calls per second, steady (gateway to etcd, all members) | ");
  bool first = true;
  for (const auto& [method, n] : steady.grpc_started) {
    std::printf("%s%s %.1f", first ? "" : ", ", method.c_str(), n / s);
    first = false;
  }
  std::printf(" |\n");
  std::printf(
      "| watchers (etcd_debugging_mvcc_watcher_total, all members) | %.0f at the start "
      "of the window, %.0f at its end (%.0f / %.0f watch streams) |\n",
      sum_over_members(steady_from, "etcd_debugging_mvcc_watcher_total"),
      sum_over_members(steady_to, "etcd_debugging_mvcc_watcher_total"),
      sum_over_members(steady_from, "etcd_debugging_mvcc_watch_stream_total"),
      sum_over_members(steady_to, "etcd_debugging_mvcc_watch_stream_total"));
  std::printf("| keys; revision | %.0f; %.0f |\n",
              max_over_members(steady_to, "etcd_debugging_mvcc_keys_total"),
              max_over_members(steady_to, "etcd_debugging_mvcc_current_revision"));
  std::printf(
      "| database size (largest member): after the cold starts / after the window | %s "
      "/ %s (in use %s / %s) |\n",
      mib(max_over_members(steady_from, "etcd_mvcc_db_total_size_in_bytes")).c_str(),
      mib(max_over_members(steady_to, "etcd_mvcc_db_total_size_in_bytes")).c_str(),
      mib(max_over_members(steady_from, "etcd_mvcc_db_total_size_in_use_in_bytes")).c_str(),
      mib(max_over_members(steady_to, "etcd_mvcc_db_total_size_in_use_in_bytes")).c_str());
  if (compacted) {
    std::printf(
        "| database size after compaction and defragmentation (%.1f s) | %s (in use %s) "
        "|\n",
        compaction_s,
        mib(max_over_members(after_compaction, "etcd_mvcc_db_total_size_in_bytes")).c_str(),
        mib(max_over_members(after_compaction, "etcd_mvcc_db_total_size_in_use_in_bytes")).c_str());
  } else {
    std::printf("| database size after compaction | not compacted (%s) |\n",
                etcd->ours() ? "a compaction call failed" : "not this run's etcd");
  }
  std::printf(
      "| leases held %.0f s after the compaction; renewals that failed meanwhile | %zu of "
      "%zu; %" PRIu64 " |\n",
      std::chrono::duration<double>(config.after_compaction).count(), held_at_end, fleet,
      af.failures);
  std::printf("| holder %zu | %s |\n", fleet + 1, refusal.c_str());
  std::printf("| close of all %zu holders (16 threads) | %.2f s, %zu failed |\n", fleet, close_s,
              close_failures.load());
  std::printf("| whole run; load average at its end | %.0f s; %s |\n",
              seconds_between(began, Steady::now()), load_average().c_str());
  std::printf("\n%s\n", failed ? "FAILED: see above" : "ok");
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace snowid::bench

int main(int argc, char** argv) {
  const std::optional<snowid::bench::Config> config = snowid::bench::parse_args(argc, argv);
  if (!config) {
    std::fprintf(stderr,
                 "usage: snowid_lease_scale [--smoke] [--regions N] [--per-region N] "
                 "[--steady-seconds S]\n"
                 "  an etcd of your own: SNOWID_BENCH_ETCD_ENDPOINTS=URL[,URL...]\n");
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  return snowid::bench::run(*config);
}
