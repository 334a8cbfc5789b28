#include "host_sharing.h"

#include <sys/stat.h>

#include <array>
#include <cstdlib>
#include <fstream>

namespace snowid::host {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The first line of the cgroup file at `path` that names one of `marks`, or
// empty.
template <std::size_t N>
std::string cgroup_naming(const std::string& path, const std::array<std::string_view, N>& marks) {
  std::ifstream in(path);
  for (std::string line; in && std::getline(in, line);) {
    for (std::string_view mark : marks) {
      if (line.find(mark) != std::string::npos) return line;
    }
  }
  return {};
}

}  // namespace

std::optional<std::string> process_env(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

HostSharing detect_host_sharing(const EnvLookup& env, const std::string& root) {
  using Kind = HostSharing::Kind;
  const auto value = [&](std::string_view name) {
    std::optional<std::string> v = env(name);
    return v && !v->empty() ? v : std::nullopt;
  };
  if (value("KUBERNETES_SERVICE_HOST")) {
    return {Kind::kOrchestrated, "KUBERNETES_SERVICE_HOST is set (a Kubernetes pod)"};
  }
  if (value("ECS_CONTAINER_METADATA_URI_V4") || value("ECS_CONTAINER_METADATA_URI")) {
    return {Kind::kOrchestrated, "ECS_CONTAINER_METADATA_URI is set (an Amazon ECS task)"};
  }
  if (value("NOMAD_ALLOC_ID")) {
    return {Kind::kOrchestrated, "NOMAD_ALLOC_ID is set (a Nomad allocation)"};
  }
  const std::string cgroup = root + "/proc/self/cgroup";
  static constexpr std::array<std::string_view, 1> kOrchestrators = {"kubepods"};
  if (const std::string line = cgroup_naming(cgroup, kOrchestrators); !line.empty()) {
    return {Kind::kOrchestrated, "/proc/self/cgroup names a Kubernetes pod (" + line + ")"};
  }
  if (const std::optional<std::string> c = value("container")) {
    return {Kind::kContainer, "the variable container=" + *c + " is set (a container)"};
  }
  for (const char* file : {"/.dockerenv", "/run/.containerenv"}) {
    if (exists(root + file)) return {Kind::kContainer, std::string(file) + " exists (a container)"};
  }
  static constexpr std::array<std::string_view, 5> kRuntimes = {"/docker", "containerd", "/libpod",
                                                                "crio-", "/lxc"};
  if (const std::string line = cgroup_naming(cgroup, kRuntimes); !line.empty()) {
    return {Kind::kContainer, "/proc/self/cgroup names a container runtime (" + line + ")"};
  }
  return {};
}

}  // namespace snowid::host
