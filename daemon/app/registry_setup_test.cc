#include "registry_setup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fence_file.h"
#include "snowid/leased_generator.h"
#include "temp_dir.h"
#include "test_layouts.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using snowid::test_support::TempDir;

Settings settings_in(const std::string& dir) {
  host::MapEnvironment env;
  env.variables["HOME"] = "/home/u";
  std::vector<const char*> argv = {"snowidd", "--state-dir", dir.c_str()};
  Result<Settings> s = load_settings(static_cast<int>(argv.size()), argv.data(), env);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return s.is_ok() ? s.value() : Settings{};
}

// Host-wide lock names of their own, so parallel tests do not meet, and the
// host directory in the test's directory `dir`, so that it goes with it.
host::MapEnvironment test_env(const TempDir& dir) {
  host::MapEnvironment env;
  env.variables["SNOWID_HOST_LOCK"] = "snowidd-registry-test-" + std::to_string(::getpid());
  env.variables["SNOWID_HOST_DIR"] = dir.path() + "/host";
  return env;
}

TEST(RegistrySetup, RegionAndHostAreCheckedAgainstALayoutFilesWidths) {
  TempDir dir{"snowidd-registry"};
  const std::string path = dir.path() + "/narrow.json";
  std::ofstream(path) << snowid::test_support::kNarrowLayoutJson;
  Settings s = settings_in(dir.path());
  s.layout = path;
  s.region = 2;
  Result<RegistrySetup> setup = setup_registry(s, test_env(dir), system_clock());
  ASSERT_FALSE(setup.is_ok());
  EXPECT_EQ(setup.status().message(), "region must be 0..1 (layout narrow), not 2");
  s.region = 1;
  s.host = 16;
  setup = setup_registry(s, test_env(dir), system_clock());
  ASSERT_FALSE(setup.is_ok());
  EXPECT_EQ(setup.status().message(), "host must be 0..15 (layout narrow), not 16");
}

TEST(RegistrySetup, LeaseTimingComesFromTheSettings) {
  Settings s;
  s.lease_ttl = 20s;
  s.lease_renew = 2s;
  s.lease_stop = 15s;
  s.max_clock_skew = 5ms;
  const LeaseTiming t = lease_timing(s);
  EXPECT_EQ(t.ttl, 20s);
  EXPECT_EQ(t.renew_every, 2s);
  EXPECT_EQ(t.stop_after, 15s);
  EXPECT_EQ(t.max_clock_skew, 5ms);
}

TEST(RegistrySetup, RegistryConfigFollowsSettingsAndHostLock) {
  Settings s;
  s.registry.state_dir = "/srv/snowid";
  s.registry.etcd_endpoints = {"http://a:2379", "http://b:2379"};
  s.registry.etcd_prefix = "/p";
  s.registry.quarantine = 3s;
  host::MapEnvironment env;
  env.variables["SNOWID_HOST_LOCK"] = "off";
  env.variables["SNOWID_HOST_DIR"] = "/srv/snowid-host";
  const host::RegistryConfig c = registry_config(s, env);
  EXPECT_EQ(c.state_dir, "/srv/snowid");
  EXPECT_EQ(c.etcd_endpoints, s.registry.etcd_endpoints);
  EXPECT_EQ(c.etcd_prefix, "/p");
  EXPECT_EQ(c.quarantine, std::optional<Duration>(3s));
  EXPECT_EQ(c.host_lock, "off");
  EXPECT_EQ(c.host_dir, "/srv/snowid-host");
  EXPECT_EQ(registry_kind(s), "etcd");
  s.registry.etcd_endpoints.clear();
  EXPECT_EQ(registry_kind(s), "file");
  EXPECT_EQ(registry_config(s, host::MapEnvironment()).host_lock, "");
  EXPECT_EQ(registry_config(s, host::MapEnvironment()).host_dir, "");
}

// The daemon and `snowid next` share the fence file of a worker: a daemon
// started on a worker id finds the fence the tool (or an earlier daemon) left.
TEST(RegistrySetup, FileRegistryLeasesAndFencesUnderTheToolsNames) {
  TempDir dir{"snowidd-registry"};
  Settings s = settings_in(dir.path() + "/state");
  s.region = 2;
  s.host = 7;
  Result<RegistrySetup> setup = setup_registry(s, test_env(dir), system_clock());
  ASSERT_TRUE(setup.is_ok()) << setup.status().message();
  EXPECT_EQ(setup->kind, "file");
  EXPECT_EQ(setup->options.lease.region, 2u);
  EXPECT_EQ(setup->options.lease.host, std::optional<std::uint32_t>(7));
  EXPECT_EQ(setup->options.generator.max_backward, s.max_backward);
  EXPECT_EQ(setup->options.lease.timing.ttl, s.lease_ttl);

  LeasedGeneratorOptions o = setup->options;
  o.lease.holder = host::this_holder(system_clock().wall_now());
  Result<std::unique_ptr<LeasedGenerator>> gen =
      LeasedGenerator::create(system_clock(), *setup->registry, o);
  ASSERT_TRUE(gen.is_ok()) << gen.status().to_string();
  EXPECT_EQ(gen.value()->worker(), (WorkerId{2, 7}));
  const IdResult id = gen.value()->next();
  ASSERT_TRUE(id.ok()) << code_name(id.code);
  ASSERT_TRUE(gen.value()->close().is_ok());
  EXPECT_TRUE(setup->fences->last_failure().is_ok());
  const std::string fence = host::fence_path(s.registry.state_dir, {2, 7});
  EXPECT_EQ(fence, s.registry.state_dir + "/fence-r2-h7");
  EXPECT_TRUE(std::filesystem::exists(fence));

  // Released: the same pinned id can be leased again once the clock is past
  // the last millisecond issued on it (the mark), which is at most a few
  // milliseconds away; before that it rests.
  Result<std::unique_ptr<LeasedGenerator>> again =
      LeasedGenerator::create(system_clock(), *setup->registry, o);
  const auto give_up = std::chrono::steady_clock::now() + 2s;
  while (!again.is_ok() && again.status().code() == Code::kResourceExhausted &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(1ms);
    again = LeasedGenerator::create(system_clock(), *setup->registry, o);
  }
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(again.value()->worker(), (WorkerId{2, 7}));
  const IdResult later = again.value()->next();
  ASSERT_TRUE(later.ok());
  EXPECT_GT(later.id, id.id);
  ASSERT_TRUE(again.value()->close().is_ok());
}

TEST(RegistrySetup, UnusableStateDirIsAnError) {
  TempDir dir{"snowidd-registry"};
  const std::string file = dir.path() + "/plain";
  std::ofstream(file) << "x";
  Settings s = settings_in(file);
  const Result<RegistrySetup> setup = setup_registry(s, test_env(dir), system_clock());
  ASSERT_FALSE(setup.is_ok());
  EXPECT_NE(setup.status().message().find(file), std::string::npos) << setup.status().message();
}

}  // namespace
}  // namespace snowid::daemon
