#include "skew_setup.h"

#include <algorithm>
#include <utility>

#include "registry_setup.h"
#include "skew_settings.h"

#ifdef SNOWID_DAEMON_SKEW_MONITOR
#include "etcd_registry_internal.h"
#include "skew_monitor.h"
#include "skew_store.h"
#endif

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;

skew::SkewSettings thresholds(const Settings& s) {
  skew::SkewSettings t;
  t.alert = s.skew_alert;
  t.fence = s.skew_fence;
  // The derived thresholds keep their defaults where the rules allow, and
  // shrink with a tighter fence.
  t.suspect = std::clamp<Duration>(t.suspect, t.alert, t.fence);
  t.rtt_cap = std::min<Duration>(t.rtt_cap, t.fence / 2);
  t.fence_max_uncertainty = std::min<Duration>(t.fence_max_uncertainty, t.fence / 2);
  t.alert_max_uncertainty = std::min<Duration>(t.alert_max_uncertainty, t.alert);
  t.vote_max_age = std::min<Duration>(t.vote_max_age, s.lease_ttl);
  t.dry_run = s.skew_dry_run;
  return t;
}

}  // namespace

Status check_skew_settings(const Settings& settings) {
  const Status s = skew::validate(thresholds(settings), lease_timing(settings));
  if (s.is_ok()) return s;
  return Status(Code::kInvalidArgument, "skew_alert/skew_fence: " + s.message());
}

std::string host_name_of(const Settings& settings) {
  return settings.host_name.empty() ? host::this_host_name() : settings.host_name;
}

std::string holder_address(const Settings& settings, const BoundAddresses& bound) {
  if (settings.probe_address) return settings.probe_address->to_string();
  // A wildcard listener has no address a peer could dial.
  if (bound.tcp && bound.tcp->host != "0.0.0.0" && bound.tcp->host != "::") {
    return bound.tcp->to_string();
  }
  if (!bound.socket.empty()) return bound.socket;
  if (bound.http) return bound.http->to_string();
  return "";
}

#ifdef SNOWID_DAEMON_SKEW_MONITOR
namespace {

// The reference as a burst: the first SNTP server with a sample, its
// uncertainty (half its delay) grown by 50 ppm of the sample's age, since
// the server is polled every sntp_poll and the monitor rounds every second.
std::optional<skew::Burst> reference_burst(const ClockReadings& readings, const Clock& clock,
                                           Duration rtt_cap) {
  const ClockReadingsSnapshot s = readings.snapshot();
  for (const ServerReading& r : s.servers) {
    if (!r.ok) continue;
    const Duration age = std::max(Duration::zero(), clock.wall_now() - r.at);
    skew::Measurement m;
    m.delay = r.delay;
    m.at = r.at;
    m.offset = {r.offset, r.delay / 2 + 1us + age * 50 / 1000000};
    skew::Burst b;
    b.outcome =
        r.delay <= rtt_cap ? skew::BurstOutcome::kMeasured : skew::BurstOutcome::kUnmeasurable;
    b.best = m;
    b.samples = 1;
    return b;
  }
  return std::nullopt;
}

class Run final : public SkewMonitorRun {
 public:
  Run(std::unique_ptr<etcd::SkewStore> store, const Clock& clock, SkewHold& hold, Logger& log,
      SkewMonitorOptions options)
      : store_(std::move(store)), monitor_(clock, *store_, hold, log, std::move(options)) {
    monitor_.start();
  }
  ~Run() override { monitor_.stop(); }
  const SkewSnapshotSource& source() const override { return monitor_; }

 private:
  std::unique_ptr<etcd::SkewStore> store_;  // outlives the monitor
  SkewMonitor monitor_;
};

}  // namespace

Result<std::unique_ptr<SkewMonitorRun>> start_skew_monitor(
    const Settings& settings, const host::Environment& env, const Layout& layout,
    const Clock& clock, SkewHold& hold, const ClockReadings& readings,
    const std::string& probe_address, Logger& log) {
  const host::RegistryConfig config = registry_config(settings, env);
  if (!settings.skew_monitor || config.etcd_endpoints.empty()) {
    return std::unique_ptr<SkewMonitorRun>();
  }
  if (const Status s = check_skew_settings(settings); !s.is_ok()) return s;
  Result<etcd::GatewayOptions> gateway =
      etcd::gateway_options_for(host::etcd_options(config, layout));
  if (!gateway.is_ok()) return gateway.status();
  etcd::SkewStoreOptions so;
  so.gateway = std::move(gateway).value();
  if (!config.etcd_prefix.empty()) so.prefix = config.etcd_prefix;
  if (!config.etcd_cluster.empty()) so.cluster = config.etcd_cluster;
  so.region = settings.region;
  so.host = host_name_of(settings);
  so.lease_ttl = settings.lease_ttl;
  // Every monitor announces itself with an agent key: its peers count it
  // among the observers, and probe it at this address.
  if (probeable(probe_address)) so.agent_address = probe_address;
  so.clock = &clock;
  Result<std::unique_ptr<etcd::SkewStore>> store = etcd::SkewStore::open(std::move(so));
  if (!store.is_ok()) return store.status();

  SkewMonitorOptions mo;
  mo.self = host_name_of(settings);
  mo.region = settings.region;
  mo.monitor_only = settings.monitor_only;
  mo.settings = thresholds(settings);
  mo.probe.token = settings.http_token;
  const Duration rtt_cap = mo.settings.rtt_cap;
  mo.reference = [&readings, &clock, rtt_cap] { return reference_burst(readings, clock, rtt_cap); };
  if (!settings.sntp_servers.empty()) mo.reference_server = settings.sntp_servers[0].to_string();
  log.info("skew monitor", {{"host", mo.self},
                            {"alert", format_duration(mo.settings.alert)},
                            {"fence", format_duration(mo.settings.fence)},
                            {"dry_run", mo.settings.dry_run}});
  return std::unique_ptr<SkewMonitorRun>(
      std::make_unique<Run>(std::move(store).value(), clock, hold, log, std::move(mo)));
}
#else
Result<std::unique_ptr<SkewMonitorRun>> start_skew_monitor(const Settings&,
                                                           const host::Environment&, const Layout&,
                                                           const Clock&, SkewHold&,
                                                           const ClockReadings&, const std::string&,
                                                           Logger&) {
  return std::unique_ptr<SkewMonitorRun>();
}
#endif

}  // namespace snowid::daemon
