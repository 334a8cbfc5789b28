// Runtime settings: SIGHUP re-reads the configuration file and applies what
// may change while running; the rest waits for a restart.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "http_client.h"
#include "test_support.h"

namespace snowid::daemon_test {
namespace {

using std::chrono::seconds;

::testing::AssertionResult batch_allowed(RespConn& c, int n) {
  const auto r = c.command({"NEXTIDS", std::to_string(n)});
  if (!r) return ::testing::AssertionFailure() << "no reply";
  const auto ids = ids_of(*r);
  if (!ids || ids->size() != static_cast<std::size_t>(n)) {
    return ::testing::AssertionFailure() << "NEXTIDS " << n << ": " << r->debug();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult batch_refused(RespConn& c, int n) {
  const auto r = c.command({"NEXTIDS", std::to_string(n)});
  if (!r) return ::testing::AssertionFailure() << "no reply";
  if (r->error_word() != "ERR") {
    return ::testing::AssertionFailure() << "NEXTIDS " << n << ": " << r->debug();
  }
  return ::testing::AssertionSuccess();
}

TEST(Reload, SighupAppliesANewMaxBatchFromTheConfigurationFile) {
  DaemonDir dir;
  const std::string config = dir.file("snowidd.toml");
  write_file_atomically(config, "max_batch = 10\n");
  auto d = dir.start_ready({"--config", config});
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(batch_allowed(*c, 10));
  EXPECT_TRUE(batch_refused(*c, 11));

  // socket_mode is fixed at start: a new value is reported, not applied.
  write_file_atomically(config, "max_batch = 20\nsocket_mode = \"0600\"\n");
  const std::size_t from = d->line_count();
  d->signal(SIGHUP);
  const auto reloaded = d->wait_for("reloaded", seconds(10), from);
  ASSERT_TRUE(reloaded.has_value());
  EXPECT_NE(reloaded->value("changed", "").find("max_batch"), std::string::npos)
      << reloaded->dump();
  const auto ignored = d->wait_for("reload ignored", seconds(1), from);
  ASSERT_TRUE(ignored.has_value());
  EXPECT_NE(ignored->value("settings", "").find("socket_mode"), std::string::npos)
      << ignored->dump();

  EXPECT_TRUE(batch_allowed(*c, 20));
  EXPECT_TRUE(batch_refused(*c, 21));
  const auto http = http_get(d->http_port(), "/v1/ids?count=20");
  ASSERT_TRUE(http.has_value());
  EXPECT_EQ(http->status, 200) << http->body;
  const auto metrics = http_get(d->http_port(), "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_EQ(metric_value(metrics->body, "snowid_max_batch").value_or(-1), 20) << metrics->body;

  // A broken file on reload keeps the running settings.
  write_file_atomically(config, "max_batch = \"many\"\n");
  const std::size_t from_broken = d->line_count();
  d->signal(SIGHUP);
  ASSERT_TRUE(d->wait_for("reload failed", seconds(10), from_broken).has_value());
  EXPECT_TRUE(batch_allowed(*c, 20));
  EXPECT_TRUE(d->alive());
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(30)), 0);
}

}  // namespace
}  // namespace snowid::daemon_test
