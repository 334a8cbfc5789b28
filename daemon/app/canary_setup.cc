#include "canary_setup.h"

#include <utility>

#include "snowid/lease_rules.h"

namespace snowid::daemon {

#if SNOWID_DAEMON_CANARY

Result<CanarySetup> start_canary(const Settings& settings, const std::string& host,
                                 const std::string& holder, const Clock& clock, Logger& log) {
  // A monitor-only daemon issues nothing to sample.
  if (settings.canary.empty() || settings.monitor_only) return CanarySetup{};
  CanaryOptions options;
  options.conninfo = settings.canary;
  options.sample_every = settings.canary_sample;
  options.queue_capacity = settings.canary_queue;
  options.host = host;
  options.holder = holder;
  options.on_violation = [&log](const CanaryViolation& v) {
    const auto at = [](const CanarySample& s) {
      return s.stored_at ? format_iso8601(*s.stored_at) : std::string("unknown");
    };
    log.error("duplicate id",
              {{"id", v.id},
               {"first_worker", to_string(v.first.worker)},
               {"first_host", v.first.host.empty() ? std::string("unknown") : v.first.host},
               {"first_holder", v.first.holder.empty() ? std::string("unknown") : v.first.holder},
               {"first_stored_at", at(v.first)},
               {"second_worker", to_string(v.second.worker)},
               {"second_host", v.second.host},
               {"second_holder", v.second.holder}});
  };
  options.on_store_change = [&log](const Status& s) {
    if (s.is_ok()) {
      log.info("canary store reachable");
    } else {
      log.warn("canary store unreachable",
               {{"error", s.message()}, {"effect", "samples queue, then are dropped"}});
    }
  };
  Result<std::shared_ptr<PostgresCanary>> started = PostgresCanary::start(clock, options);
  if (!started.is_ok()) return started.status();
  std::shared_ptr<PostgresCanary> canary = std::move(started).value();
  CanarySetup setup;
  setup.observer = canary;
  setup.stats = [canary] { return canary->stats(); };
  setup.close = [canary](Duration timeout) { canary->close(timeout); };
  log.info("canary started",
           {{"sample", settings.canary_sample}, {"queue", settings.canary_queue}});
  return setup;
}

#else

Result<CanarySetup> start_canary(const Settings& settings, const std::string&, const std::string&,
                                 const Clock&, Logger&) {
  if (settings.canary.empty() || settings.monitor_only) return CanarySetup{};
  return Status(Code::kFailedPrecondition,
                "canary: this snowidd was built without PostgreSQL (SNOWID_BUILD_SEQUENCES)");
}

#endif

}  // namespace snowid::daemon
