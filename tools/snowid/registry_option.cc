#include "registry_option.h"

#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "number_text.h"
#include "state_dir.h"
#ifdef SNOWID_CLI_ETCD
#include "snowid/etcd_registry.h"
#endif

namespace snowid::cli {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// The flag if given (not empty), else the variable.
std::string flag_or_env(const std::string& flag, const char* name) {
  return flag.empty() ? env(name) : flag;
}

}  // namespace

void add_registry_options(CLI::App& app, RegistryFlags& f) {
  f.state_dir_option =
      app.add_option("--state-dir", f.state_dir,
                     "Where the time fences and the file registry are kept (default "
                     "$SNOWID_STATE_DIR, else $XDG_STATE_HOME/snowid, else "
                     "~/.local/state/snowid)")
          ->type_name("DIR");
  CLI::Option_group* g = app.add_option_group(
      "Worker-id registry",
      "etcd for a fleet; without --etcd or SNOWID_ETCD_ENDPOINTS, the file registry of this "
      "host in the state directory, whose ids are also locked host-wide under the name prefix "
      "$SNOWID_HOST_LOCK (default snowid-worker; off: no host-wide lock), in the host directory "
      "$SNOWID_HOST_DIR (default /var/tmp/<prefix>)");
  g->add_option("--registry", f.registry,
                "auto (the default: etcd when --etcd is set, else the file registry, which is "
                "refused under a container orchestrator), file or etcd (env SNOWID_REGISTRY)")
      ->type_name("KIND");
  f.etcd_option = g->add_option("--etcd", f.etcd, "etcd client URLs (env SNOWID_ETCD_ENDPOINTS)")
                      ->type_name("URL[,URL...]");
  g->add_option("--etcd-prefix", f.etcd_prefix,
                "Key prefix (env SNOWID_ETCD_PREFIX, default /snowid)")
      ->type_name("PREFIX");
  g->add_option("--etcd-cluster", f.etcd_cluster,
                "Cluster name under the prefix (env SNOWID_ETCD_CLUSTER, default default)")
      ->type_name("NAME");
  g->add_option("--etcd-ca", f.etcd_ca, "CA bundle for TLS (env SNOWID_ETCD_CA)")
      ->type_name("FILE");
  g->add_option("--etcd-cert", f.etcd_cert, "Client certificate (env SNOWID_ETCD_CERT)")
      ->type_name("FILE");
  g->add_option("--etcd-key", f.etcd_key, "Client key (env SNOWID_ETCD_KEY)")->type_name("FILE");
  g->add_option("--etcd-user", f.etcd_user, "etcd user (env SNOWID_ETCD_USER)")->type_name("USER");
  g->add_option("--etcd-password", f.etcd_password,
                "etcd password (prefer env SNOWID_ETCD_PASSWORD: flags show in ps)")
      ->type_name("PASSWORD");
}

Result<host::RegistryConfig> resolve_registry(const RegistryFlags& f, bool need_state_dir) {
  // An empty --state-dir is most likely an unset shell variable; falling back
  // to the default directory would silently use different fences and ids.
  if (f.state_dir_option != nullptr && f.state_dir_option->count() > 0 && f.state_dir.empty()) {
    return Status(Code::kInvalidArgument, "--state-dir is empty");
  }
  host::RegistryConfig c;
  const std::string choice = flag_or_env(f.registry, "SNOWID_REGISTRY");
  const char* choice_from = f.registry.empty() ? "SNOWID_REGISTRY" : "--registry";
  if (choice == "file") {
    c.choice = host::RegistryChoice::kFile;
  } else if (choice == "etcd") {
    c.choice = host::RegistryChoice::kEtcd;
  } else if (choice != "auto" && !(choice.empty() && std::getenv("SNOWID_REGISTRY") == nullptr)) {
    return Status(Code::kInvalidArgument,
                  std::string(choice_from) + " must be auto, file or etcd, not \"" + choice + "\"");
  }
  const bool etcd_flag = f.etcd_option != nullptr && f.etcd_option->count() > 0;
  const std::string endpoints = etcd_flag ? f.etcd : env("SNOWID_ETCD_ENDPOINTS");
  // An empty value is most often a variable a deployment meant to fill: the
  // file registry in its place would give every pod the same worker id.
  if ((etcd_flag || std::getenv("SNOWID_ETCD_ENDPOINTS") != nullptr) &&
      endpoints.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Status(Code::kInvalidArgument,
                  std::string(etcd_flag ? "--etcd" : "SNOWID_ETCD_ENDPOINTS") +
                      " is empty; give etcd member URLs (URL[,URL...]), or leave it unset for "
                      "the file registry");
  }
  const bool etcd = !endpoints.empty();
  if (!etcd || need_state_dir) {
    Result<std::string> dir = host::find_state_dir(f.state_dir, host::process_environment(),
                                                   host::StateDirFallback::kNone);
    if (!dir.is_ok()) return dir.status();
    c.state_dir = dir.value();
  }
  // A choice that contradicts the endpoints is refused for every command;
  // the host itself matters only to one that takes ids (check_registry_choice).
  // The check reads only whether endpoints are given; they are parsed after.
  if (etcd) c.etcd_endpoints = {endpoints};
  std::string warning;
  if (Status st = host::check_registry_choice(c, {}, warning); !st.is_ok()) return st;
  host::read_host_lock_settings(c, host::process_environment());
  if (!etcd) return c;
#ifdef SNOWID_CLI_ETCD
  Result<std::vector<std::string>> parsed = parse_etcd_endpoints(endpoints);
  if (!parsed.is_ok()) return parsed.status();
  c.etcd_endpoints = std::move(parsed).value();
  c.etcd_prefix = flag_or_env(f.etcd_prefix, "SNOWID_ETCD_PREFIX");
  c.etcd_cluster = flag_or_env(f.etcd_cluster, "SNOWID_ETCD_CLUSTER");
  c.etcd_ca = flag_or_env(f.etcd_ca, "SNOWID_ETCD_CA");
  c.etcd_cert = flag_or_env(f.etcd_cert, "SNOWID_ETCD_CERT");
  c.etcd_key = flag_or_env(f.etcd_key, "SNOWID_ETCD_KEY");
  c.etcd_user = flag_or_env(f.etcd_user, "SNOWID_ETCD_USER");
  c.etcd_password = flag_or_env(f.etcd_password, "SNOWID_ETCD_PASSWORD");
  return c;
#else
  return Status(Code::kFailedPrecondition,
                "this snowid was built without etcd support; unset --etcd and "
                "SNOWID_ETCD_ENDPOINTS to use the file registry");
#endif
}

Status check_registry_choice(const host::RegistryConfig& c) {
  // The warning for a lone container is the daemon's to log; the tool, run
  // by hand in a development container, keeps its standard error for errors.
  std::string warning;
  return host::check_registry_choice(c, host::detect_host_sharing(host::process_env), warning);
}

LeaseTiming lease_timing_for(const host::RegistryConfig& c) {
  LeaseTiming t;
  if (c.etcd_endpoints.empty()) t.max_clock_skew = Duration::zero();
  return t;
}

Result<std::optional<std::uint32_t>> region_setting(const std::string& flag, bool given) {
  std::string text = flag;
  const char* what = "--region";
  if (!given) {
    text = env("SNOWID_REGION");
    what = "SNOWID_REGION";
    if (text.empty()) return std::optional<std::uint32_t>();
  }
  Result<std::uint64_t> r = parse_number(text, what, 0, UINT32_MAX);
  if (!r.is_ok()) return r.status();
  return std::optional<std::uint32_t>(static_cast<std::uint32_t>(r.value()));
}

}  // namespace snowid::cli
