// Whether this process can know that it is alone on its host with its worker
// ids. The file registry coordinates through files and names that every
// process of one host sees; a container has files of its own, so two pods or
// containers on one host, each with the file registry, would both take worker
// 0/0 and issue the same ids. Under a container orchestrator, which starts
// replicas of a pod side by side as a matter of course, the registry must
// therefore be chosen explicitly; in a lone container the daemon and the tool
// warn (see docs/leases.md, "Choosing the registry").
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace snowid::host {

// Reads an environment variable: nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// The process's own environment.
std::optional<std::string> process_env(std::string_view name);

struct HostSharing {
  enum class Kind {
    kAlone,         // no sign of a container: a plain host
    kContainer,     // a container runtime's sign: others may run beside it
    kOrchestrated,  // a container orchestrator's sign: replicas do run beside it
  };
  Kind kind = Kind::kAlone;
  // The evidence, one phrase: "KUBERNETES_SERVICE_HOST is set (a Kubernetes
  // pod)". Empty for kAlone.
  std::string evidence;
};

// What this host looks like from inside the process. Orchestrated: the
// variables KUBERNETES_SERVICE_HOST, ECS_CONTAINER_METADATA_URI(_V4) or
// NOMAD_ALLOC_ID, or a /proc/self/cgroup path naming kubepods. Container:
// the variable `container` (podman, systemd-nspawn, LXC), the files
// /.dockerenv or /run/.containerenv, or a cgroup path naming docker,
// containerd, libpod, crio or lxc. A variable set to the empty string counts
// as unset. `root` prefixes the file paths (tests point it at a directory of
// their own).
HostSharing detect_host_sharing(const EnvLookup& env, const std::string& root = "");

}  // namespace snowid::host
