// snowidd: one leased worker id, served over the Redis protocol (a Unix
// socket, optionally TCP) and HTTP/JSON, and the named sequences of a ticket
// table. See docs/daemon.md.
//
// The process: resolve the settings (exit 2 if they are wrong), bind the
// listeners (a port in use is exit 2, before the registry or the ticket
// table is touched, so that no lease is taken and no worker id sits out a
// quarantine for a daemon that never served), open the ticket table, lease a
// worker id, serve, then wait for signals on the main thread.
// SIGTERM/SIGINT: stop accepting, finish what is in flight, release the lease
// (recording the fence), exit 0. SIGHUP: reload the runtime settings.
//
// The log events of the lifecycle ("starting", "lease acquired", "listening",
// "ready", "stopping", "lease released", "stopped", ...) are an interface:
// tests and operators' tools look for them by their "msg".
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ascii.h"
#include "canary_setup.h"
#include "clock_reference.h"
#include "http_handler.h"
#include "id_service.h"
#include "log.h"
#include "metrics.h"
#include "public_id_setup.h"
#include "registry_setup.h"
#include "sequence_service.h"
#include "sequence_setup.h"
#include "server.h"
#include "settings.h"
#include "skew_hold.h"
#include "skew_setup.h"
#include "snowid/leased_generator.h"
#include "snowid/sequence_buffer.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"

#ifndef SNOWID_VERSION
#define SNOWID_VERSION "unknown"
#endif

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
// How long a stop waits for connections to finish what they received.
constexpr Duration kDrainTimeout = 5s;
// How long a stop waits for the canary to store the samples it holds.
constexpr Duration kCanaryCloseTimeout = 2s;

// How often the main thread looks at the generator's health between signals.
constexpr long kWatchNanos = 200 * 1000 * 1000;

std::string usage() {
  std::string out =
      "usage: snowidd [--config FILE] [--SETTING VALUE]...\n"
      "       snowidd --help | --help-settings | --version\n"
      "\n"
      "Serves unique 64-bit ids from one leased worker id: the Redis protocol (RESP) on a\n"
      "Unix socket and optionally TCP, JSON over HTTP. With no configuration at all it runs on\n"
      "its defaults: the file registry in the state directory, the socket in the runtime\n"
      "directory, HTTP on 127.0.0.1:7390.\n"
      "\n"
      "Flags (--name VALUE or --name=VALUE; each setting is also SNOWID_<NAME> in the\n"
      "environment and <name> in the TOML file):\n"
      "  --config FILE              the TOML file (also SNOWID_CONFIG)\n";
  for (const SettingInfo& info : settings_table()) {
    std::string left =
        "  " + std::string(info.flag) + " " + upper_ascii(setting_type_name(info.type));
    // At least two spaces between a long flag and its text.
    left.resize(std::max<std::size_t>(left.size() + 2, 29), ' ');
    // The first sentence of the description.
    const std::size_t end = info.description.find(". ");
    out += left +
           std::string(info.description.substr(0, end == std::string_view::npos ? end : end + 1)) +
           "\n";
  }
  out +=
      "\n"
      "Precedence, highest first: flags, SNOWID_* environment variables, the TOML file, the\n"
      "embedded defaults. `snowidd --help-settings` lists every setting with its bounds,\n"
      "default and whether SIGHUP can change it.\n"
      "\n"
      "Signals: SIGTERM or SIGINT stops (in-flight requests are answered, the lease released);\n"
      "SIGHUP reloads the runtime settings (log_level, max_batch, public_id_unwrap) and\n"
      "re-reads the public_id_keys file.\n"
      "Exit status: 0 stopped cleanly, 1 start or release failed, 2 bad configuration (the\n"
      "settings, a layout, region or host that does not fit, a port in use).\n";
  return out;
}

// Everything the running daemon needs after start.
struct Running {
  Settings& settings;
  int argc;
  const char* const* argv;
  Logger& log;
  IdService& service;
  PublicIds& public_ids;
};

void reload(Running& r) {
  Result<Settings> fresh = load_settings(r.argc, r.argv, host::process_environment());
  if (!fresh.is_ok()) {
    r.log.error("reload failed",
                {{"code", code_name(fresh.status().code())}, {"error", fresh.status().message()}});
    return;
  }
  const RuntimeTargets targets{
      .set_log_level = [&r](LogLevel level) { r.log.set_level(level); },
      .set_max_batch = [&r](std::uint32_t n) { r.service.set_max_batch(n); },
      .set_public_id_keys =
          [&r](const std::string& path) { reload_public_ids(r.public_ids, path, r.log); },
      .set_public_id_unwrap =
          [&r](const std::string& word) { set_unwrap_callers(r.public_ids, word); },
  };
  const std::string keys_before = r.settings.public_id_keys;
  const std::string changed = apply_runtime(r.settings, fresh.value(), targets);
  // The keyring file is re-read on every SIGHUP, whether its path changed or
  // not: rotating keys changes the file, not the setting.
  if (r.settings.public_id_keys == keys_before && !keys_before.empty()) {
    reload_public_ids(r.public_ids, keys_before, r.log);
  }
  r.log.info("reloaded", {{"changed", changed},
                          {"log_level", log_level_name(r.settings.log_level)},
                          {"max_batch", r.settings.max_batch}});
  if (const std::string ignored = fixed_differences(r.settings, fresh.value()); !ignored.empty()) {
    r.log.warn("reload ignored",
               {{"settings", ignored}, {"reason", "not runtime settings: restart to apply"}});
  }
}

// The error text of a start or close failure; a fence that could not be
// read or written is named, as the generator reports only kUnavailable.
std::string failure_text(const Status& s, const host::FenceStores* fences) {
  std::string text = s.message();
  if (fences != nullptr && s.code() == Code::kUnavailable) {
    if (const Status f = fences->last_failure(); !f.is_ok())
      text += " (fence: " + f.message() + ")";
  }
  return text;
}

int run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--version") {
      std::printf("snowidd %s\n", SNOWID_VERSION);
      return 0;
    }
  }

  // Signals are taken by the main thread only: blocked here, before any
  // thread starts, so every thread inherits the mask. SIGPIPE is ignored: a
  // client that goes away shows up as a failed write.
  std::signal(SIGPIPE, SIG_IGN);
  // Each client is a descriptor: take the whole allowance the hard limit
  // gives (the server keeps 64 back for the lease and the fences).
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &files);
  }
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  sigdelset(&signals, SIGPIPE);

  const host::Environment& env = host::process_environment();
  Result<Settings> loaded = load_settings(argc, argv, env);
  if (!loaded.is_ok()) {
    std::fprintf(stderr, "snowidd: %s\n", loaded.status().message().c_str());
    return kExitUsage;
  }
  Settings settings = std::move(loaded).value();
  if (settings.action == Action::kHelp) {
    std::fputs(usage().c_str(), stdout);
    return 0;
  }
  if (settings.action == Action::kHelpSettings) {
    std::fputs(describe_settings().c_str(), stdout);
    return 0;
  }

  if (settings.skew_monitor && registry_kind(settings) == "etcd") {
    if (const Status skew = check_skew_settings(settings); !skew.is_ok()) {
      std::fprintf(stderr, "snowidd: %s\n", skew.message().c_str());
      return kExitUsage;
    }
  }

  const Clock& clock = system_clock();
  Logger log(STDERR_FILENO, clock, settings.log_level, settings.log_json);
  for (const std::string& w : settings.warnings) log.warn("setting warning", {{"warning", w}});
  log.info("starting", {{"version", SNOWID_VERSION},
                        {"pid", static_cast<std::int64_t>(::getpid())},
                        {"layout", settings.layout},
                        {"registry", registry_kind(settings)},
                        {"state_dir", settings.registry.state_dir}});

  // Bound first, served once the lease is held: until then clients that
  // connect wait in the listen backlog. Declared before everything the
  // server serves, which it must not outlive once serving: it is reset
  // explicitly before they go.
  ServerCounters counters;
  ServerOptions so;
  so.socket = settings.socket;
  so.socket_mode = settings.socket_mode;
  // The last-resort default, /tmp/snowid-<uid>/, is in a place where anyone
  // may create that directory first.
  so.private_socket_dir = settings.socket.rfind("/tmp/snowid-", 0) == 0;
  so.tcp = settings.tcp;
  so.http = settings.http;
  so.threads = settings.threads;
  so.token = settings.http_token;
  so.first_request_timeout = settings.first_request_timeout;
  so.sequence_threads = settings.sequence_threads;
  Result<std::unique_ptr<Server>> bound = Server::bind(std::move(so), counters, log);
  if (!bound.is_ok()) {
    log.error("start failed",
              {{"code", code_name(bound.status().code())}, {"error", bound.status().message()}});
    // A port in use, a socket path too long or held by a file the daemon did
    // not make: configuration mistakes that a restart cannot fix.
    const Code code = bound.status().code();
    return code == Code::kInvalidArgument || code == Code::kFailedPrecondition ? kExitUsage
                                                                               : kExitFailure;
  }
  std::unique_ptr<Server> server = std::move(bound).value();

  Result<RegistrySetup> setup = setup_registry(settings, env, clock);
  if (!setup.is_ok()) {
    log.error("start failed",
              {{"code", code_name(setup.status().code())}, {"error", setup.status().message()}});
    // A layout, region or host that does not fit, a state_dir that is not a
    // directory: configuration that a restart cannot fix. An unreachable
    // registry may come back.
    return setup.status().code() == Code::kUnavailable ? kExitFailure : kExitUsage;
  }
  if (!setup->warning.empty()) log.warn("setting warning", {{"warning", setup->warning}});

  // A keyring that is unreadable, invalid or readable by group or others is
  // a configuration mistake: refused before any lease is taken.
  PublicIds public_ids(setup->layout.layout, clock);
  if (const Status keys = load_public_ids(public_ids, settings.public_id_keys, false, log);
      !keys.is_ok()) {
    log.error("start failed",
              {{"code", code_name(keys.code())}, {"error", "public_id_keys: " + keys.message()}});
    return kExitUsage;
  }
  set_unwrap_callers(public_ids, settings.public_id_unwrap);

  SequenceServiceOptions sequence_options = sequence_service_options(settings);
  if (const Status valid = validate(sequence_options.buffer); !valid.is_ok()) {
    log.error("start failed", {{"code", code_name(valid.code())}, {"error", valid.message()}});
    return kExitUsage;
  }
  Result<std::unique_ptr<TicketStore>> store = open_sequences(settings, clock, log);
  if (!store.is_ok()) {
    log.error("start failed",
              {{"code", code_name(store.status().code())}, {"error", store.status().message()}});
    return store.status().code() == Code::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  // Outlives the serving server (reset before it goes): the buffers go after
  // the listeners have drained.
  SequenceService sequence_service(std::move(store).value(), clock, std::move(sequence_options));

  std::atomic<IdService*> service_for_events{nullptr};
  // Set by the skew monitor when it fences this host's clock: no ids, and no
  // fresh worker id after the fence, until the clock is back within bounds.
  SkewHold skew_hold;
  LeasedGeneratorOptions options = setup->options;
  options.lease.holder = host::this_holder(clock.wall_now());
  options.lease.holder.host = host_name_of(settings);
  options.lease.holder.address = holder_address(settings, server->addresses());
  options.may_acquire = [&skew_hold] { return skew_hold.status(); };
  // The canary sees every id the generators issue, and never holds them up.
  Result<CanarySetup> canary =
      start_canary(settings, options.lease.holder.host,
                   options.lease.holder.host + " pid " + std::to_string(options.lease.holder.pid) +
                       " started " + format_iso8601(options.lease.holder.started),
                   clock, log);
  if (!canary.is_ok()) {
    log.error("start failed",
              {{"code", code_name(canary.status().code())}, {"error", canary.status().message()}});
    return kExitUsage;
  }
  options.generator.observer = canary->observer;
  options.on_event = [&log, &service_for_events](const LeaseEvent& event) {
    const bool loss = event.kind == LeaseEvent::Kind::kLost;
    const bool bad =
        loss || !event.status.is_ok() || event.kind == LeaseEvent::Kind::kClockMovedBack;
    log.log(bad ? LogLevel::kWarn : LogLevel::kInfo, "lease event",
            {{"event", to_string(event)},
             {"code", code_name(event.status.code())},
             {"message", event.status.message()}});
    if (IdService* s = service_for_events.load(std::memory_order_acquire); loss && s != nullptr) {
      s->count_lease_loss();
    }
  };
  // A monitor-only daemon leases nothing: it measures clocks for a host whose
  // generators are in-process libraries.
  std::unique_ptr<LeasedGenerator> generator;
  if (!settings.monitor_only) {
    Result<std::unique_ptr<LeasedGenerator>> created =
        LeasedGenerator::create(clock, *setup->registry, std::move(options));
    if (!created.is_ok()) {
      log.error("start failed", {{"code", code_name(created.status().code())},
                                 {"error", failure_text(created.status(), setup->fences.get())}});
      return kExitFailure;
    }
    generator = std::move(created).value();
    const WorkerId worker = generator->worker();
    log.info("lease acquired", {{"region", worker.region}, {"host", worker.host}});
  }
  std::optional<IdService> service_slot;
  if (generator) {
    service_slot.emplace(*generator, clock, settings.max_batch);
  } else {
    service_slot.emplace(setup->layout.layout, clock);
  }
  IdService& service = *service_slot;
  service.set_public_id_stats(keyring_stats_reader(public_ids));
  if (canary->stats) service.set_canary_stats(canary->stats);
  service.set_skew_hold(&skew_hold);
  service_for_events.store(&service, std::memory_order_release);
  const HttpHandler handler(
      service,
      [&service, &counters, &sequence_service] {
        return render_metrics(service.snapshot(), counters, sequence_service.snapshot());
      },
      settings.http_token, &sequence_service, public_id_port(public_ids));

  // The reference (SNTP servers, chrony's bound) reads the generator's clock.
  ClockReferenceOptions reference_options;
  for (const Address& a : settings.sntp_servers)
    reference_options.servers.emplace_back(a.host, a.port);
  reference_options.poll = settings.sntp_poll;
  if (settings.chronyc != "off") reference_options.chronyc = settings.chronyc;
  reference_options.chrony_socket = settings.chrony_socket;
  ClockReference reference(clock, service.host_bound(), service.clock_readings(),
                           std::move(reference_options));
  reference.start();

  Result<std::unique_ptr<SkewMonitorRun>> skew_monitor = start_skew_monitor(
      settings, env, setup->layout.layout, clock, skew_hold, service.clock_readings(),
      holder_address(settings, server->addresses()), log);
  if (!skew_monitor.is_ok()) {
    log.error("start failed", {{"code", code_name(skew_monitor.status().code())},
                               {"error", "skew monitor: " + skew_monitor.status().message()}});
    // Nothing was issued yet: the worker id goes back without a quarantine.
    (void)service.close();
    return skew_monitor.status().code() == Code::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  if (skew_monitor.value()) service.set_skew_source(&skew_monitor.value()->source());

  server->serve(make_resp_sessions(service, &sequence_service, public_id_port(public_ids)),
                handler);
  if (service.issues()) {
    log.info("ready", {{"region", service.worker().region}, {"host", service.worker().host}});
  } else {
    log.info("ready", {{"monitor_only", true}, {"host_name", host_name_of(settings)}});
  }

  Running running{settings, argc, argv, log, service, public_ids};
  bool unhealthy_logged = false;
  int stop_signal = 0;
  while (stop_signal == 0) {
    const timespec watch{0, kWatchNanos};
    const int sig = ::sigtimedwait(&signals, nullptr, &watch);
    if (sig == SIGTERM || sig == SIGINT) {
      stop_signal = sig;
    } else if (sig == SIGHUP) {
      reload(running);
    }
    if (!unhealthy_logged) {
      if (const Status health = service.health(); !health.is_ok()) {
        // The generator has released its id and stays unhealthy; the daemon
        // keeps answering (refusals, /readyz 503) until it is told to stop.
        log.error("unhealthy", {{"code", code_name(health.code())}, {"error", health.message()}});
        unhealthy_logged = true;
      }
    }
  }

  log.info("stopping", {{"signal", stop_signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
  reference.stop();
  server->stop_accepting();
  if (!server->drain(kDrainTimeout)) {
    log.warn("drain timed out",
             {{"timeout_ms",
               static_cast<std::int64_t>(
                   std::chrono::duration_cast<std::chrono::milliseconds>(kDrainTimeout).count())}});
  }
  // No request reads the monitor's view any more. Its store's lease is
  // revoked: its votes go before the worker id is released.
  service.set_skew_source(nullptr);
  skew_monitor.value().reset();
  // The id held now: a lost lease may have been replaced by another.
  const WorkerId last = service.worker();
  const Status closed = service.close();
  if (closed.is_ok()) {
    if (service.issues())
      log.info("lease released", {{"region", last.region}, {"host", last.host}});
  } else {
    log.error("close failed", {{"code", code_name(closed.code())},
                               {"error", failure_text(closed, setup->fences.get())}});
  }
  server.reset();
  // What the buffers still hold is lost: gaps, never repeats.
  sequence_service.close();
  // Samples still queued get a moment to be checked.
  if (canary->close) canary->close(kCanaryCloseTimeout);
  log.info("stopped");
  return closed.is_ok() ? 0 : kExitFailure;
}

}  // namespace
}  // namespace snowid::daemon

int main(int argc, char** argv) { return snowid::daemon::run(argc, argv); }
