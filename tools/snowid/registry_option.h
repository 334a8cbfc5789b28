// The worker-id registry options shared by `next` and `workers`: etcd when
// --etcd or SNOWID_ETCD_ENDPOINTS is set, otherwise the file registry in the
// state directory. Flags win over environment variables; empty variables
// count as unset.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "registry_open.h"
#include "snowid/layout.h"
#include "snowid/lease.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::cli {

struct RegistryFlags {
  std::string state_dir;
  std::string registry;  // auto, file or etcd
  std::string etcd;      // URL[,URL...]
  std::string etcd_prefix;
  std::string etcd_cluster;
  std::string etcd_ca;
  std::string etcd_cert;
  std::string etcd_key;
  std::string etcd_user;
  std::string etcd_password;
  CLI::Option* state_dir_option = nullptr;  // to tell "--state-dir ''" from no flag
  CLI::Option* etcd_option = nullptr;       // to tell "--etcd ''" from no flag
};

// Adds --state-dir and the etcd options, in an option group of `app`.
void add_registry_options(CLI::App& app, RegistryFlags& flags);

// The registry settings after the environment is applied.
struct RegistrySettings {
  host::RegistryChoice choice = host::RegistryChoice::kAuto;
  bool etcd = false;
  // The state directory (file registry, time fences); empty when not needed
  // and not found.
  std::string state_dir;
  std::string etcd_endpoints;  // as given; checked by open_registry
  std::string etcd_prefix, etcd_cluster, etcd_ca, etcd_cert, etcd_key, etcd_user, etcd_password;
  // $SNOWID_HOST_LOCK: the name prefix of the file registry's host-wide id
  // locks (empty: the default; "off": none). Separate deployments, or tests
  // running side by side, on one host give each their own.
  std::string host_lock;
  // $SNOWID_HOST_DIR: the file registry's host directory (empty: the
  // default, /var/tmp/<prefix>).
  std::string host_dir;
};

// Reads the environment. `need_state_dir`: fail if no state directory can be
// found (it holds the time fences even with etcd). kInvalidArgument for an
// empty --state-dir, an empty or blank --etcd or SNOWID_ETCD_ENDPOINTS (never
// read as "no etcd"), and a --registry or SNOWID_REGISTRY other than auto,
// file or etcd.
Result<RegistrySettings> resolve_registry(const RegistryFlags& flags, bool need_state_dir);

// The settings as the registry opener takes them: kInvalidArgument for a
// registry choice that contradicts the endpoints or bad endpoints.
Result<host::RegistryConfig> registry_config(const RegistrySettings& settings);

// Opens the registry for `layout`'s region and host widths. etcd that does
// not answer: kUnavailable naming the endpoints.
Result<std::unique_ptr<WorkerRegistry>> open_registry(const RegistrySettings& settings,
                                                      const Layout& layout, const Clock& clock);

// For a command that takes worker ids: checks the registry choice against
// this host (host::check_registry_choice).
Status check_registry_choice(const RegistrySettings& settings);

// The lease timing for the registry: the defaults, and no clock skew to allow
// for with the file registry (one host, one clock).
LeaseTiming lease_timing_for(const RegistrySettings& settings);

// Who this process is, as registries show it to operators.
using host::this_holder;

// --region if given (`given`), else $SNOWID_REGION, else nullopt. Refuses a
// value that is not a number, naming where it came from.
Result<std::optional<std::uint32_t>> region_setting(const std::string& flag, bool given);

}  // namespace snowid::cli
