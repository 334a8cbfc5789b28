// Choosing the worker-id registry: a deployment mistake (an empty etcd
// setting, the file registry under a container orchestrator) stops the start
// with exit 2 before any worker id is taken.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "test_support.h"

namespace snowid::daemon_test {
namespace {

using std::chrono::seconds;

// Waits for the refused start: exit 2, a "start failed" line whose error
// contains `words`, and no worker id taken in the file registry.
void expect_refused(const DaemonDir& dir, DaemonProcess& d, const std::string& words) {
  EXPECT_EQ(d.wait_exit(seconds(30)), 2) << d.raw_text();
  const auto failed = d.wait_for("start failed", seconds(1));
  ASSERT_TRUE(failed.has_value()) << d.raw_text();
  EXPECT_NE(failed->value("error", "").find(words), std::string::npos) << failed->dump();
  EXPECT_FALSE(std::filesystem::exists(dir.state_dir() + "/workers")) << "a lease was taken";
}

TEST(RegistryChoice, TheFileRegistryIsRefusedInAKubernetesPodUnlessChosen) {
  DaemonDir dir;
  auto refused = dir.start({}, {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}});
  expect_refused(dir, *refused, "KUBERNETES_SERVICE_HOST is set");

  auto chosen = dir.start_ready({"--registry", "file"}, {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}});
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  const auto id = c->command({"NEXTID"});
  ASSERT_TRUE(id.has_value());
  EXPECT_TRUE(ids_of(*id).has_value()) << id->debug();
  chosen->signal(SIGTERM);
  EXPECT_EQ(chosen->wait_exit(seconds(30)), 0);
}

TEST(RegistryChoice, AnEmptyEtcdSettingStopsTheStartInsteadOfUsingTheFileRegistry) {
  for (const char* var : {"SNOWID_ETCD", "SNOWID_ETCD_ENDPOINTS"}) {
    for (const char* value : {"", "  "}) {
      DaemonDir dir;
      auto d = dir.start({}, {{var, value}});
      EXPECT_EQ(d->wait_exit(seconds(30)), 2) << var << "='" << value << "'";
      EXPECT_NE(d->raw_text().find("is empty"), std::string::npos) << d->raw_text();
      EXPECT_FALSE(std::filesystem::exists(dir.state_dir() + "/workers")) << "a lease was taken";
    }
  }
  DaemonDir dir;
  auto flag = dir.start({"--etcd", ""});
  EXPECT_EQ(flag->wait_exit(seconds(30)), 2);
  EXPECT_NE(flag->raw_text().find("is empty"), std::string::npos) << flag->raw_text();
}

TEST(RegistryChoice, ChoosingEtcdWithoutEndpointsIsRefused) {
  DaemonDir dir;
  auto d = dir.start({"--registry", "etcd"});
  expect_refused(dir, *d, "no etcd endpoints");
}

}  // namespace
}  // namespace snowid::daemon_test
