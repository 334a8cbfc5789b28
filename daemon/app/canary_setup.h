// The uniqueness canary as snowidd runs it (docs/canary.md): started from
// the settings, hooked to the generator, its figures read by INFO and
// /metrics, each violation and each change of the database's reachability
// logged.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "log.h"
#include "settings.h"
#include "snowid/issue_observer.h"
#include "snowid/postgres_canary.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {

// Empty members: the canary is off.
struct CanarySetup {
  std::shared_ptr<IssueObserver> observer;  // for GeneratorOptions::observer
  std::function<CanaryStats()> stats;       // for IdService::set_canary_stats
  // Stores what is queued for at most the time given, then stops.
  std::function<void(Duration)> close;
};

// Starts the canary when `canary` is set, stamping each sample with
// `host` and `holder` (this process). The database may be down: the
// canary keeps trying. Off in a monitor-only daemon. kInvalidArgument for a connection string libpq
// cannot read, and kFailedPrecondition when snowidd was built without
// PostgreSQL: both exit 2.
Result<CanarySetup> start_canary(const Settings& settings, const std::string& host,
                                 const std::string& holder, const Clock& clock, Logger& log);

}  // namespace snowid::daemon
