// The skew monitor as snowidd runs it (docs/skew.md): its thresholds from the
// settings, the name and probe address this host announces in its holder
// values, and the monitor itself on the registry's etcd.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "clock_readings.h"
#include "environment.h"
#include "log.h"
#include "server.h"
#include "settings.h"
#include "skew_hold.h"
#include "snowid/layout.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {

class SkewSnapshotSource;

// The monitor's thresholds from the settings, checked against the leases'
// timing (skew::validate): kInvalidArgument naming the rule broken.
Status check_skew_settings(const Settings& settings);

// This host's name: host_name, else the machine's host name.
std::string host_name_of(const Settings& settings);

// What the holder values (and the monitor's agent key) announce as this
// daemon's address: probe_address, else the TCP RESP listener as bound
// unless it is a wildcard (peers probe it there), else the socket's path,
// else the HTTP listener; only a host:port is probed.
std::string holder_address(const Settings& settings, const BoundAddresses& bound);

// A running monitor; stopping it (or destroying it) joins its thread and
// revokes its store's lease, which takes its votes along.
class SkewMonitorRun {
 public:
  virtual ~SkewMonitorRun() = default;
  virtual const SkewSnapshotSource& source() const = 0;
};

// Starts the monitor when etcd is the registry and skew_monitor is on;
// nullptr otherwise (also in a build without etcd). A monitor_only daemon's
// monitor announces `probe_address` in its agent key (a daemon that issues
// announces it in its holder values). kUnavailable when etcd does not
// answer; kInvalidArgument for settings it refuses. `clock`, `hold`,
// `readings` and `log` must outlive the result.
Result<std::unique_ptr<SkewMonitorRun>> start_skew_monitor(
    const Settings& settings, const host::Environment& env, const Layout& layout,
    const Clock& clock, SkewHold& hold, const ClockReadings& readings,
    const std::string& probe_address, Logger& log);

}  // namespace snowid::daemon
