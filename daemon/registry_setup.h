// How snowidd gets its worker id, from Settings: the layout it generates
// with, the registry it leases from (the file registry in state_dir, or
// etcd), the lease timing and the per-worker time fences. The registry and
// the fence files are opened exactly as `snowid next` opens them
// (tools/common), so the tool and the daemon agree on the file names and on
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
#include "registry_open.h"
#include "settings.h"
#include "snowid/fence.h"
#include "snowid/layout.h"
#include "snowid/lease.h"
#include "snowid/leased_generator.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {

// The layout snowidd generates with.
struct DaemonLayout {
  Layout layout = Layout::snowid_default();
  // A layout file's era in effect: no id before its cut-over. nullopt for a
  // preset.
  std::optional<WallTime> not_before;
};

// `name_or_path` is a layout file if it contains '/' or ends with ".json"
// (the format of `snowid layout --json`; the era in effect at `now` is used),
// otherwise a preset name (snowid::preset). kInvalidArgument naming the
// layout setting for an unknown preset, a decode-only layout or a file with
// no era in effect yet; the file reader's error for a bad file;
// kFailedPrecondition for a file in a build without the reader
// (SNOWID_BUILD_TOOLS=OFF).
Result<DaemonLayout> resolve_layout(const std::string& name_or_path, WallTime now);

// "file" or "etcd".
std::string_view registry_kind(const Settings& settings) noexcept;

// The registry settings: those of `settings`, and the host-wide lock prefix
// and host directory from SNOWID_HOST_LOCK and SNOWID_HOST_DIR in `env` (as
// the tool reads them).
common::RegistryConfig registry_config(const Settings& settings, const Environment& env);

// ttl, renew_every, stop_after and max_clock_skew from the settings.
LeaseTiming lease_timing(const Settings& settings);

// The time fence of each worker id, in state_dir under the tool's file names
// (fence_file.h). Remembers the stores it made, so that a failure to start or
// to close can say why a fence could not be read or written. Thread-safe.
class FenceStores {
 public:
  explicit FenceStores(std::string state_dir);
  std::shared_ptr<FenceStore> store_for(WorkerId worker);
  // The last failure of any store made; OK if none failed. Call only while
  // no generator uses the stores (before it is created or after close()).
  Status last_failure() const;

 private:
  std::string dir_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<common::RecordingFenceStore>> stores_;
};

// Everything LeasedGenerator::create() needs but the holder and the event
// hook, which the daemon fills in.
struct RegistrySetup {
  DaemonLayout layout;
  std::string_view kind;  // registry_kind()
  std::unique_ptr<WorkerRegistry> registry;
  std::shared_ptr<FenceStores> fences;
  // A line for the log when the file registry runs by default in a
  // container (common::check_registry_choice); empty otherwise.
  std::string warning;
  // generator: layout, not_before, max_backward; lease: region, host,
  // timing; fence_store_for.
  LeasedGeneratorOptions options;
};

// Resolves the layout, checks the region and pinned host against it, creates
// state_dir (the fences live there whatever the registry) and opens the
// registry. `clock` must outlive the registry.
Result<RegistrySetup> setup_registry(const Settings& settings, const Environment& env,
                                     const Clock& clock);

}  // namespace snowid::daemon
