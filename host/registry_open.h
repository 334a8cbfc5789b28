// Opening the worker-id registry from plain settings, for the `snowid` tool
// and for snowidd: etcd when endpoints are given, otherwise the file registry
// of this host in the state directory. Each program resolves its own flags,
// variables or configuration into a RegistryConfig; what happens from there
// on is the same for both.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "environment.h"
#include "host_sharing.h"
#include "snowid/etcd_registry.h"
#include "snowid/layout.h"
#include "snowid/lease.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::host {

// Which registry the settings chose. kAuto: etcd when endpoints are given,
// else the file registry, which is then refused under a container
// orchestrator (check_registry_choice()).
enum class RegistryChoice { kAuto, kFile, kEtcd };

// "auto", "file", "etcd".
std::string_view registry_choice_name(RegistryChoice choice) noexcept;

struct RegistryConfig {
  RegistryChoice choice = RegistryChoice::kAuto;
  // The state directory: the file registry lives here (and the time fences,
  // see fence_file.h). Created with make_dirs() when the file registry is
  // opened; not needed for etcd.
  std::string state_dir;
  // etcd member URLs, already split; empty: the file registry.
  std::vector<std::string> etcd_endpoints;
  // Empty: the registry's default (/snowid, default).
  std::string etcd_prefix;
  std::string etcd_cluster;
  std::string etcd_ca, etcd_cert, etcd_key, etcd_user, etcd_password;
  // How long a released id rests; nullopt: the registry's default.
  std::optional<Duration> quarantine;
  // The name prefix of the file registry's host-wide id locks, as
  // $SNOWID_HOST_LOCK gives it: empty for the default, "off" for none.
  std::string host_lock;
  // The file registry's host directory, as $SNOWID_HOST_DIR gives it: empty
  // for the default, /var/tmp/<prefix>.
  std::string host_dir;
};

// Fills `config`'s host-wide lock settings (host_lock, host_dir) from
// $SNOWID_HOST_LOCK and $SNOWID_HOST_DIR, as every program on a host must
// read them alike: two programs that disagreed would not see each other's
// locks.
void read_host_lock_settings(RegistryConfig& config, const Environment& env);

// Checks the registry choice of a process that is about to take a worker id
// against what it can see of its host (`sharing`, see host_sharing.h):
// kInvalidArgument (a configuration mistake) when kEtcd has no endpoints,
// kFile has some, or kAuto would use the file registry under a container
// orchestrator, where replicas on one host would take the same ids. The
// message says what to set. OK otherwise; `warning` then receives a line for
// the log when the file registry runs in a lone container by default.
Status check_registry_choice(const RegistryConfig& config, const HostSharing& sharing,
                             std::string& warning);

// The etcd options `config` opens the registry with, for `layout`; also
// for what shares the registry's etcd (the skew monitor's store).
EtcdOptions etcd_options(const RegistryConfig& config, const Layout& layout);

// True if this build can open an etcd registry.
bool etcd_supported() noexcept;

// Opens the registry for `layout`'s region and host widths. etcd that does
// not answer: kUnavailable naming the endpoints. etcd in a build without it:
// kFailedPrecondition. `clock` must outlive the registry.
Result<std::unique_ptr<WorkerRegistry>> open_registry(const RegistryConfig& config,
                                                      const Layout& layout, const Clock& clock);

// The store record of an etcd namespace (snowid/etcd_registry.h):
// `snowid workers init` and `snowid workers restored`. kFailedPrecondition
// for the file registry, which keeps no such record, or a build without etcd.
Status initialize_etcd_namespace(const RegistryConfig& config, const Layout& layout,
                                 const Clock& clock);
Result<WallTime> declare_etcd_data_lost(const RegistryConfig& config, const Layout& layout,
                                        const Clock& clock, Duration in_flight);

// The machine's host name ("localhost" when it has none).
std::string this_host_name();

// Who this process is, as registries show it to operators: the host name,
// the pid, `started`; no address.
HolderInfo this_holder(WallTime started);

// Creates `path` and any missing parents, like `mkdir -p`, each new one with
// mode 0700 (state of one user). OK if it already is a directory.
Status make_dirs(const std::string& path);

}  // namespace snowid::host
