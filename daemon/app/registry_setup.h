// How snowidd gets its worker id, from Settings: the layout it generates
// with, the registry it leases from (the file registry in state_dir, or
// etcd), the lease timing and the per-worker time fences. The registry and
// the fence files are opened exactly as `snowid next` opens them
// (host/), so the tool and the daemon agree on the file names and on
// SNOWID_HOST_LOCK.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fence_file.h"
#include "layout_choice.h"
#include "registry_open.h"
#include "settings.h"
#include "snowid/fence.h"
#include "snowid/layout.h"
#include "snowid/lease.h"
#include "snowid/leased_generator.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {

// "file" or "etcd".
std::string_view registry_kind(const Settings& settings) noexcept;

// The registry settings: those of `settings`, and the host-wide lock prefix
// and host directory from SNOWID_HOST_LOCK and SNOWID_HOST_DIR in `env` (as
// the tool reads them).
host::RegistryConfig registry_config(const Settings& settings, const host::Environment& env);

// ttl, renew_every, stop_after and max_clock_skew from the settings.
LeaseTiming lease_timing(const Settings& settings);

// Everything LeasedGenerator::create() needs but the holder and the event
// hook, which the daemon fills in.
struct RegistrySetup {
  host::LayoutInEffect layout;
  std::string_view kind;  // registry_kind()
  std::unique_ptr<WorkerRegistry> registry;
  std::shared_ptr<host::FenceStores> fences;
  // A line for the log when the file registry runs by default in a
  // container (host::check_registry_choice); empty otherwise.
  std::string warning;
  // generator: layout, not_before, max_backward; lease: region, host,
  // timing; fence_store_for.
  LeasedGeneratorOptions options;
};

// Resolves the layout (host::layout_in_effect), checks the region and pinned host against it,
// creates state_dir (the fences live there whatever the registry) and opens the registry. `clock`
// must outlive the registry.
Result<RegistrySetup> setup_registry(const Settings& settings, const host::Environment& env,
                                     const Clock& clock);

}  // namespace snowid::daemon
