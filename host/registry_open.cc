#include "registry_open.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "snowid/file_registry.h"
#ifdef SNOWID_COMMON_ETCD
#include "snowid/etcd_registry.h"
#endif

namespace snowid::host {

std::string_view registry_choice_name(RegistryChoice choice) noexcept {
  switch (choice) {
    case RegistryChoice::kFile:
      return "file";
    case RegistryChoice::kEtcd:
      return "etcd";
    case RegistryChoice::kAuto:
      break;
  }
  return "auto";
}

void read_host_lock_settings(RegistryConfig& config, const Environment& env) {
  config.host_lock = env.get("SNOWID_HOST_LOCK").value_or("");
  config.host_dir = env.get("SNOWID_HOST_DIR").value_or("");
}

Status check_registry_choice(const RegistryConfig& c, const HostSharing& sharing,
                             std::string& warning) {
  warning.clear();
  const bool etcd = !c.etcd_endpoints.empty();
  switch (c.choice) {
    case RegistryChoice::kEtcd:
      if (etcd) return Status::ok();
      return Status(Code::kInvalidArgument,
                    "the registry chosen is etcd, but no etcd endpoints are set (--etcd "
                    "URL[,URL...])");
    case RegistryChoice::kFile:
      if (!etcd) return Status::ok();
      return Status(Code::kInvalidArgument,
                    "the registry chosen is file, but etcd endpoints are set too: choose one");
    case RegistryChoice::kAuto:
      break;
  }
  if (etcd || sharing.kind == HostSharing::Kind::kAlone) return Status::ok();
  const std::string risk =
      "the file registry sees only this container's files and names, so another container on "
      "the same host with the file registry would take the same worker id and issue the same ids";
  if (sharing.kind == HostSharing::Kind::kOrchestrated) {
    return Status(Code::kInvalidArgument,
                  "no registry chosen, and " + sharing.evidence + ": " + risk +
                      ". Configure etcd for a fleet (--etcd URL[,URL...]), or choose the file "
                      "registry explicitly (--registry file, SNOWID_REGISTRY=file) if this "
                      "process really is alone with its worker ids on its host");
  }
  warning = sharing.evidence + ": " + risk +
            "; configure etcd, or choose the file registry explicitly (--registry file, "
            "SNOWID_REGISTRY=file) to say this container is alone";
  return Status::ok();
}

bool etcd_supported() noexcept {
#ifdef SNOWID_COMMON_ETCD
  return true;
#else
  return false;
#endif
}

EtcdOptions etcd_options(const RegistryConfig& c, const Layout& layout) {
  EtcdOptions o;
  o.endpoints = c.etcd_endpoints;
  if (!c.etcd_prefix.empty()) o.prefix = c.etcd_prefix;
  if (!c.etcd_cluster.empty()) o.cluster = c.etcd_cluster;
  o.layout = layout;
  if (c.quarantine) o.quarantine = *c.quarantine;
  o.ca_file = c.etcd_ca;
  o.cert_file = c.etcd_cert;
  o.key_file = c.etcd_key;
  o.user = c.etcd_user;
  o.password = c.etcd_password;
  return o;
}

namespace {

#ifdef SNOWID_COMMON_ETCD

// `status`, with an etcd that did not answer named.
Status with_etcd_reach(const RegistryConfig& c, Status status) {
  if (status.code() != Code::kUnavailable) return status;
  std::string endpoints;
  for (const std::string& e : c.etcd_endpoints) endpoints += (endpoints.empty() ? "" : ",") + e;
  return Status(Code::kUnavailable, "cannot reach etcd at " + endpoints + ": " + status.message());
}
template <typename T>
Result<T> with_etcd_reach(const RegistryConfig& c, Result<T> result) {
  if (result.is_ok()) return result;
  return with_etcd_reach(c, result.status());
}
#endif

Status no_store_record(const RegistryConfig& c) {
  if (c.etcd_endpoints.empty()) {
    return Status(Code::kFailedPrecondition,
                  "only etcd keeps a store record; the file registry needs none");
  }
  return Status(Code::kFailedPrecondition, "this build has no etcd support");
}

}  // namespace

Status initialize_etcd_namespace(const RegistryConfig& c, const Layout& layout,
                                 const Clock& clock) {
#ifdef SNOWID_COMMON_ETCD
  if (!c.etcd_endpoints.empty()) {
    return with_etcd_reach(c, snowid::initialize_etcd_namespace(clock, etcd_options(c, layout)));
  }
#else
  (void)layout;
  (void)clock;
#endif
  return no_store_record(c);
}

Result<WallTime> declare_etcd_data_lost(const RegistryConfig& c, const Layout& layout,
                                        const Clock& clock, Duration in_flight) {
#ifdef SNOWID_COMMON_ETCD
  if (!c.etcd_endpoints.empty()) {
    return with_etcd_reach(
        c, snowid::declare_etcd_data_lost(clock, etcd_options(c, layout), in_flight));
  }
#else
  (void)layout;
  (void)clock;
  (void)in_flight;
#endif
  return no_store_record(c);
}

Result<std::unique_ptr<WorkerRegistry>> open_registry(const RegistryConfig& c, const Layout& layout,
                                                      const Clock& clock) {
  if (c.etcd_endpoints.empty()) {
    if (Status made = make_dirs(c.state_dir); !made.is_ok()) return made;
    FileRegistryOptions o;
    o.dir = c.state_dir;
    o.layout = layout;
    if (c.quarantine) o.quarantine = *c.quarantine;
    if (!c.host_lock.empty()) o.host_lock_prefix = c.host_lock == "off" ? "" : c.host_lock;
    o.host_dir = c.host_dir;
    return make_file_registry(clock, std::move(o));
  }
#ifdef SNOWID_COMMON_ETCD
  return with_etcd_reach(c, make_etcd_registry(clock, etcd_options(c, layout)));
#else
  (void)layout;
  (void)clock;
  return Status(Code::kFailedPrecondition, "this build has no etcd support");
#endif
}

std::string this_host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') return name;
  return "localhost";
}

HolderInfo this_holder(WallTime started) {
  HolderInfo h;
  h.host = this_host_name();
  h.pid = ::getpid();
  h.started = started;
  return h;
}

Status make_dirs(const std::string& path) {
  if (path.empty()) return Status(Code::kInvalidArgument, "the state directory path is empty");
  // Each prefix that ends just before a '/', then the whole path.
  for (std::size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string prefix = path.substr(0, end);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      const int err = errno;
      return Status(Code::kUnavailable,
                    "cannot create directory " + prefix + ": " + std::strerror(err));
    }
    if (end == std::string::npos) break;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return Status(Code::kUnavailable, "cannot use directory " + path + ": " + std::strerror(err));
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status(Code::kFailedPrecondition, path + " is not a directory");
  }
  return Status::ok();
}

}  // namespace snowid::host
