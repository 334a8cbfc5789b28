// Public ids in the real daemon: the keyring file refused at start when it is
// invalid or readable by others, and re-read on SIGHUP, where an invalid new
// file keeps the keyring in use. The keyring is made by `snowid public-id`.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "http_client.h"
#include "resp_client.h"
#include "test_support.h"

namespace snowid::daemon_test {
namespace {

using std::chrono::seconds;

class PublicIdDaemon : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kSnowidCli[0] != '\0') << "the snowid tool was not built (SNOWID_BUILD_TOOLS)";
  }
  // `snowid public-id ARGS...` on this test's keyring.
  void keys(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kSnowidCli, "public-id"};
    argv.insert(argv.end(), args.begin(), args.end());
    const ProcessResult r = run_process(argv, {{"SNOWID_PUBLIC_ID_KEYS", keys_}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::vector<std::string> keys_args() const { return {"--public-id-keys", keys_}; }

  DaemonDir dir_;
  std::string keys_ = dir_.file("public-id.keys");
};

// Starts the daemon on `path` and expects exit 2 with a "start failed" of
// `code` whose error names the setting and the file.
void expect_refused_at_start(const DaemonDir& dir, const std::string& path,
                             const std::string& code) {
  auto d = dir.start({"--public-id-keys", path});
  EXPECT_EQ(d->wait_exit(seconds(30)), 2);
  const auto failed = d->wait_for("start failed", seconds(1));
  ASSERT_TRUE(failed.has_value()) << d->raw_text();
  EXPECT_EQ(failed->value("code", ""), code) << failed->dump();
  const std::string error = failed->value("error", "");
  EXPECT_TRUE(error.starts_with("public_id_keys: " + path + ": ")) << error;
}

TEST_F(PublicIdDaemon, AKeyringThatOthersCanReadIsRefusedAtStartWithExitTwo) {
  keys({"keygen", "--not-before", "2026-01-01T00:00:00Z", "--name", "a"});
  ASSERT_EQ(::chmod(keys_.c_str(), 0644), 0);
  expect_refused_at_start(dir_, keys_, "FAILED_PRECONDITION");
  ASSERT_EQ(::chmod(keys_.c_str(), 0640), 0);
  expect_refused_at_start(dir_, keys_, "FAILED_PRECONDITION");
}

TEST_F(PublicIdDaemon, AnInvalidOrMissingKeyringIsRefusedAtStartWithExitTwo) {
  write_file_atomically(keys_, "snowid-public-id-keys 1\npolicy by_time\n");
  ASSERT_EQ(::chmod(keys_.c_str(), 0600), 0);
  expect_refused_at_start(dir_, keys_, "INVALID_ARGUMENT");
  expect_refused_at_start(dir_, dir_.file("no-such-file"), "NOT_FOUND");
}

TEST_F(PublicIdDaemon, SighupReadsTheKeyringAgainAndAnInvalidFileKeepsTheOneInUse) {
  keys({"keygen", "--not-before", "2026-01-01T00:00:00Z", "--name", "a"});
  auto d = dir_.start_ready(keys_args());
  const auto loaded = d->wait_for("public id keys", seconds(1));
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->value("state", ""), "loaded");
  const std::string a = loaded->value("primary_fingerprint", "");
  ASSERT_EQ(a.size(), 8u) << loaded->dump();

  // Add B, promote it: the file changes, the setting does not.
  keys({"keygen", "--not-before", "2026-06-01T00:00:00Z", "--name", "b"});
  keys({"promote", "1"});
  std::size_t from = d->line_count();
  d->signal(SIGHUP);
  const auto reloaded = d->wait_for("public id keys", seconds(10), from);
  ASSERT_TRUE(reloaded.has_value()) << d->raw_text();
  EXPECT_EQ(reloaded->value("state", ""), "reloaded");
  const std::string b = reloaded->value("primary_fingerprint", "");
  EXPECT_EQ(reloaded->value("primary_slot", -1), 1);
  EXPECT_NE(b, a);
  EXPECT_EQ(reloaded->value("slots", ""), "0:active:" + a + " 1:primary:" + b);

  // Broken, then readable by others: both keep B's keyring.
  const std::string good = [&] {
    std::ifstream in(keys_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  write_file_atomically(keys_, "snowid-public-id-keys 1\n1 primary 2026-01-01 b nothex\n");
  ASSERT_EQ(::chmod(keys_.c_str(), 0600), 0);
  from = d->line_count();
  d->signal(SIGHUP);
  auto failed = d->wait_for("public id keys reload failed", seconds(10), from);
  ASSERT_TRUE(failed.has_value()) << d->raw_text();
  EXPECT_EQ(failed->value("code", ""), "INVALID_ARGUMENT");
  EXPECT_EQ(failed->value("kept", ""), "0:active:" + a + " 1:primary:" + b);
  // Never a key byte in the log: no part of the file's keys appears.
  const std::string logged = d->raw_text();
  const std::regex key("[0-9a-f]{64}");
  int seen = 0;
  for (auto it = std::sregex_iterator(good.begin(), good.end(), key); it != std::sregex_iterator();
       ++it, ++seen) {
    EXPECT_EQ(logged.find(it->str().substr(0, 16)), std::string::npos);
  }
  EXPECT_EQ(seen, 2) << "the keyring's two keys";

  write_file_atomically(keys_, good);
  ASSERT_EQ(::chmod(keys_.c_str(), 0644), 0);
  from = d->line_count();
  d->signal(SIGHUP);
  failed = d->wait_for("public id keys reload failed", seconds(10), from);
  ASSERT_TRUE(failed.has_value()) << d->raw_text();
  EXPECT_EQ(failed->value("code", ""), "FAILED_PRECONDITION");
  EXPECT_TRUE(d->alive());

  // INFO and /metrics: one reload, two refused, B's keyring in use.
  const auto metrics = http_get(d->http_port(), "/metrics");
  ASSERT_TRUE(metrics.has_value());
  const std::string& m = metrics->body;
  EXPECT_EQ(metric_value(m, "snowid_public_id_keys_loaded"), 1.0) << m;
  EXPECT_EQ(metric_value(m, "snowid_public_id_keyring_reloads_total"), 1.0);
  EXPECT_EQ(metric_value(m, "snowid_public_id_keyring_reload_failures_total"), 2.0);
  EXPECT_EQ(metric_value(m, "snowid_public_id_keyring_slots{state=\"primary\"}"), 1.0);
  EXPECT_EQ(metric_value(m, "snowid_public_id_keyring_slots{state=\"active\"}"), 1.0);
  EXPECT_EQ(metric_value(m, "snowid_public_id_primary_info{slot=\"1\",fingerprint=\"" + b + "\"}"),
            1.0);
  auto c = RespConn::connect_unix(dir_.socket());
  ASSERT_TRUE(c.has_value());
  const auto info = c->command({"INFO", "publicids"});
  ASSERT_TRUE(info.has_value());
  EXPECT_NE(info->str.find("public_id_primary_fingerprint:" + b + "\r\n"), std::string::npos)
      << info->str;
  EXPECT_NE(info->str.find("public_id_keyring_reload_failures:2\r\n"), std::string::npos)
      << info->str;
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(30)), 0);
}

}  // namespace
}  // namespace snowid::daemon_test
