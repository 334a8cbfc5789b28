#include "host_sharing.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "registry_open.h"

namespace snowid::host {
namespace {

using Kind = HostSharing::Kind;

// A root directory of the test's own, with files that a host or a container
// would have.
class FakeRoot {
 public:
  FakeRoot() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "snowid-host-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) != nullptr ? tmpl : "";
    std::filesystem::create_directories(path_ + "/proc/self");
    std::filesystem::create_directories(path_ + "/run");
    write("/proc/self/cgroup", "0::/\n");
  }
  ~FakeRoot() { std::filesystem::remove_all(path_); }
  void write(const std::string& file, const std::string& text) const {
    std::ofstream(path_ + file) << text;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    const auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(HostSharing, APlainHostIsAlone) {
  FakeRoot root;
  const HostSharing s = detect_host_sharing(env_of({{"HOME", "/root"}}), root.path());
  EXPECT_EQ(s.kind, Kind::kAlone);
  EXPECT_TRUE(s.evidence.empty());
}

TEST(HostSharing, OrchestratorVariablesMeanReplicasBesideIt) {
  FakeRoot root;
  for (const char* var : {"KUBERNETES_SERVICE_HOST", "ECS_CONTAINER_METADATA_URI_V4",
                          "ECS_CONTAINER_METADATA_URI", "NOMAD_ALLOC_ID"}) {
    const HostSharing s = detect_host_sharing(env_of({{var, "10.0.0.1"}}), root.path());
    EXPECT_EQ(s.kind, Kind::kOrchestrated) << var;
    EXPECT_NE(s.evidence.find(var == std::string("ECS_CONTAINER_METADATA_URI_V4")
                                  ? "ECS_CONTAINER_METADATA_URI"
                                  : var),
              std::string::npos)
        << s.evidence;
  }
  EXPECT_EQ(detect_host_sharing(env_of({{"KUBERNETES_SERVICE_HOST", ""}}), root.path()).kind,
            Kind::kAlone)
      << "an empty variable is unset";
}

TEST(HostSharing, AKubepodsCgroupIsAPodEvenWithoutItsVariables) {
  FakeRoot root;
  root.write("/proc/self/cgroup",
             "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-x\n");
  const HostSharing s = detect_host_sharing(env_of({}), root.path());
  EXPECT_EQ(s.kind, Kind::kOrchestrated);
  EXPECT_NE(s.evidence.find("kubepods"), std::string::npos) << s.evidence;
}

TEST(HostSharing, ContainerRuntimesSignsMeanOthersMayRunBesideIt) {
  {
    FakeRoot root;
    EXPECT_EQ(detect_host_sharing(env_of({{"container", "podman"}}), root.path()).kind,
              Kind::kContainer);
  }
  for (const char* file : {"/.dockerenv", "/run/.containerenv"}) {
    FakeRoot root;
    root.write(file, "");
    const HostSharing s = detect_host_sharing(env_of({}), root.path());
    EXPECT_EQ(s.kind, Kind::kContainer) << file;
    EXPECT_NE(s.evidence.find(file), std::string::npos) << s.evidence;
  }
  {
    FakeRoot root;
    root.write("/proc/self/cgroup", "12:memory:/docker/0123abcd\n");
    EXPECT_EQ(detect_host_sharing(env_of({}), root.path()).kind, Kind::kContainer);
  }
}

TEST(RegistryChoice, AutoRefusesTheFileRegistryUnderAnOrchestrator) {
  RegistryConfig c;
  std::string warning;
  const Status s =
      check_registry_choice(c, {Kind::kOrchestrated, "KUBERNETES_SERVICE_HOST is set"}, warning);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("KUBERNETES_SERVICE_HOST is set"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--registry file"), std::string::npos) << s.message();
  EXPECT_TRUE(warning.empty());

  c.choice = RegistryChoice::kFile;
  EXPECT_TRUE(check_registry_choice(c, {Kind::kOrchestrated, "x"}, warning).is_ok())
      << "chosen explicitly";
  c.choice = RegistryChoice::kAuto;
  c.etcd_endpoints = {"http://10.0.0.1:2379"};
  EXPECT_TRUE(check_registry_choice(c, {Kind::kOrchestrated, "x"}, warning).is_ok()) << "etcd";
}

TEST(RegistryChoice, AutoWarnsInALoneContainerAndSaysNothingOnAPlainHost) {
  RegistryConfig c;
  std::string warning = "stale";
  EXPECT_TRUE(check_registry_choice(c, {}, warning).is_ok());
  EXPECT_TRUE(warning.empty());
  EXPECT_TRUE(check_registry_choice(c, {Kind::kContainer, "/.dockerenv exists"}, warning).is_ok());
  EXPECT_NE(warning.find("/.dockerenv exists"), std::string::npos) << warning;
  c.choice = RegistryChoice::kFile;
  EXPECT_TRUE(check_registry_choice(c, {Kind::kContainer, "/.dockerenv exists"}, warning).is_ok());
  EXPECT_TRUE(warning.empty()) << "chosen explicitly: nothing to warn about";
}

TEST(RegistryChoice, AChoiceThatContradictsTheEndpointsIsRefused) {
  RegistryConfig c;
  std::string warning;
  c.choice = RegistryChoice::kEtcd;
  EXPECT_EQ(check_registry_choice(c, {}, warning).code(), Code::kInvalidArgument);
  c.etcd_endpoints = {"http://127.0.0.1:2379"};
  EXPECT_TRUE(check_registry_choice(c, {}, warning).is_ok());
  c.choice = RegistryChoice::kFile;
  EXPECT_EQ(check_registry_choice(c, {}, warning).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace snowid::host
