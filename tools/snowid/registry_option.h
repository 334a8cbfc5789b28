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

// The registry configuration from the flags and the environment.
// `need_state_dir`: fail if no state directory can be found (it holds the
// time fences even with etcd); otherwise the state directory is looked up
// only for the file registry, and left empty when not needed. kInvalidArgument
// for an empty --state-dir, an empty or blank --etcd or SNOWID_ETCD_ENDPOINTS
// (never read as "no etcd"), a --registry or SNOWID_REGISTRY other than auto,
// file or etcd, a registry choice that contradicts the endpoints, and bad
// endpoints; kFailedPrecondition for etcd in a build without it.
Result<host::RegistryConfig> resolve_registry(const RegistryFlags& flags, bool need_state_dir);

// For a command that takes worker ids: checks the registry choice against
// this host (host::check_registry_choice).
Status check_registry_choice(const host::RegistryConfig& config);

// The lease timing for the registry: the defaults, and no clock skew to allow
// for with the file registry (one host, one clock).
LeaseTiming lease_timing_for(const host::RegistryConfig& config);

// Who this process is, as registries show it to operators.
using host::this_holder;

// --region if given (`given`), else $SNOWID_REGION, else nullopt. Refuses a
// value that is not a number, naming where it came from.
Result<std::optional<std::uint32_t>> region_setting(const std::string& flag, bool given);

}  // namespace snowid::cli
