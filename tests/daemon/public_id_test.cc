// Public ids in the real daemon: the keyring file refused at start when it is
// invalid or readable by others, and re-read on SIGHUP, where an invalid new
// file keeps the keyring in use; WRAP, UNWRAP and the issuing forms through a
// rotation; who may unwrap. The keyring is made by `snowid public-id`.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "http_client.h"
#include "resp_client.h"
#include "snowid/time.h"
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
  // `snowid public-id ARGS...`'s one line of output.
  std::string key_line(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kSnowidCli, "public-id"};
    argv.insert(argv.end(), args.begin(), args.end());
    const ProcessResult r = run_process(argv, {{"SNOWID_PUBLIC_ID_KEYS", keys_}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out.substr(0, r.out.find('\n'));
  }
  // Sends SIGHUP and waits for the keyring's reload.
  void reload(DaemonProcess& d) {
    const std::size_t from = d.line_count();
    d.signal(SIGHUP);
    const auto reloaded = d.wait_for("public id keys", seconds(10), from);
    ASSERT_TRUE(reloaded.has_value()) << d.raw_text();
    ASSERT_EQ(reloaded->value("state", ""), "reloaded") << reloaded->dump();
  }

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

// One RESP command that must succeed.
RespValue ok(RespConn& c, const std::vector<std::string>& args) {
  std::optional<RespValue> r = c.command(args);
  EXPECT_TRUE(r.has_value()) << args[0];
  if (!r) return {};
  EXPECT_FALSE(r->is_error()) << args[0] << ": " << r->debug();
  return *r;
}

TEST_F(PublicIdDaemon, ARotationKeepsOldPublicIdsUntilTheirKeyIsRetired) {
  keys({"keygen", "--not-before", "2026-01-01T00:00:00Z", "--name", "a"});
  auto d = dir_.start_ready(keys_args());
  auto c = RespConn::connect_unix(dir_.socket());
  ASSERT_TRUE(c.has_value());

  // Issued under A: each id beside its public id, which UNWRAP reads back
  // and the tool, on the same keyring, writes alike.
  const RespValue issued = ok(*c, {"NEXTPUBIDS", "ord", "200"});
  ASSERT_EQ(issued.elems.size(), 200u) << issued.debug();
  std::vector<std::string> old_ids, old_publics;
  std::set<std::string> distinct;
  for (const RespValue& pair : issued.elems) {
    ASSERT_EQ(pair.elems.size(), 2u) << pair.debug();
    old_ids.push_back(pair.elems[0].str);
    old_publics.push_back(pair.elems[1].str);
    distinct.insert(pair.elems[1].str);
    EXPECT_TRUE(pair.elems[1].str.starts_with("ord_")) << pair.elems[1].str;
    EXPECT_EQ(pair.elems[1].str.size(), 17u);
  }
  EXPECT_EQ(distinct.size(), 200u);
  std::vector<std::string> unwrap = {"UNWRAP"};
  unwrap.insert(unwrap.end(), old_publics.begin(), old_publics.end());
  const RespValue back = ok(*c, unwrap);
  ASSERT_EQ(back.elems.size(), 200u);
  for (std::size_t i = 0; i < 200; ++i) EXPECT_EQ(back.elems[i].str, old_ids[i]);
  EXPECT_EQ(key_line({"wrap", "--type", "ord", old_ids[7]}), old_publics[7]);
  EXPECT_EQ(key_line({"unwrap", old_publics[9]}), old_ids[9]);

  // B, valid from a moment after those ids, added and promoted: the file
  // changes, SIGHUP reads it. Old ids keep their public ids (by_time).
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string b_from = format_iso8601(system_clock().wall_now());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  keys({"keygen", "--not-before", b_from, "--name", "b"});
  keys({"promote", "1"});
  reload(*d);
  EXPECT_EQ(ok(*c, {"WRAP", "ord", old_ids[0], old_ids[199]}).elems.at(1).str, old_publics[199]);
  EXPECT_EQ(ok(*c, {"UNWRAP", old_publics[0]}).elems.at(0).str, old_ids[0]);
  const RespValue fresh = ok(*c, {"NEXTPUBID", "ord"});
  ASSERT_EQ(fresh.elems.size(), 2u);
  const std::string new_id = fresh.elems[0].str, new_public = fresh.elems[1].str;
  EXPECT_NE(key_line({"check", new_public}).find("slot 1"), std::string::npos) << new_public;

  // Over HTTP: the same public ids.
  const int port = d->http_port();
  const auto wrapped = http_get(port, "/v1/ids/" + old_ids[3] + "/public?type=ord");
  ASSERT_TRUE(wrapped.has_value());
  EXPECT_EQ(wrapped->status, 200) << wrapped->body;
  EXPECT_NE(wrapped->body.find("\"public\":\"" + old_publics[3] + "\""), std::string::npos)
      << wrapped->body;
  const auto read = http_get(port, "/v1/public-ids/" + new_public);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->status, 200) << read->body;
  EXPECT_NE(read->body.find("\"id\":\"" + new_id + "\""), std::string::npos) << read->body;
  EXPECT_NE(read->body.find("\"slot\":1"), std::string::npos) << read->body;
  const auto typed = http_get(port, "/v1/ids?type=ord&count=3");
  ASSERT_TRUE(typed.has_value());
  EXPECT_EQ(typed->status, 200) << typed->body;
  EXPECT_NE(typed->body.find("\"public\":[\"ord_"), std::string::npos) << typed->body;

  // A retired: its public ids are refused, B's still read.
  keys({"retire", "0"});
  reload(*d);
  const auto refused = c->command({"UNWRAP", old_publics[0]});
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->error_word(), "UNKNOWN_KEY") << refused->debug();
  const auto gone = http_get(port, "/v1/public-ids/" + old_publics[1]);
  ASSERT_TRUE(gone.has_value());
  EXPECT_EQ(gone->status, 404);
  EXPECT_NE(gone->body.find("\"error\":\"UNKNOWN_KEY\""), std::string::npos) << gone->body;
  EXPECT_EQ(ok(*c, {"UNWRAP", new_public}).elems.at(0).str, new_id);

  const auto metrics = http_get(port, "/metrics");
  ASSERT_TRUE(metrics.has_value());
  // 200 + 1 + 3 issued with public ids, 2 + 1 wrapped; 200 + 1 + 1 + 1 unwrapped.
  EXPECT_EQ(metric_value(metrics->body, "snowid_public_id_wraps_total{result=\"ok\"}"), 207.0);
  EXPECT_EQ(metric_value(metrics->body, "snowid_public_id_unwraps_total{result=\"ok\"}"), 203.0);
  EXPECT_EQ(metric_value(metrics->body, "snowid_public_id_unwraps_total{result=\"refused\"}"), 2.0);
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(30)), 0);
}

TEST_F(PublicIdDaemon, UnwrapIsOfferedOnlyToTheCallersTheSettingTrusts) {
  keys({"keygen", "--not-before", "2026-01-01T00:00:00Z", "--name", "a"});
  // token, with no token set: only the Unix socket may unwrap.
  std::vector<std::string> args = keys_args();
  args.insert(args.end(), {"--tcp", "127.0.0.1:0", "--public-id-unwrap", "token"});
  auto d = dir_.start_ready(args);
  auto local = RespConn::connect_unix(dir_.socket());
  auto tcp = RespConn::connect_tcp(d->tcp_port());
  ASSERT_TRUE(local.has_value() && tcp.has_value());
  const RespValue pair = ok(*tcp, {"NEXTPUBID", "ord"});
  ASSERT_EQ(pair.elems.size(), 2u);
  const auto denied = tcp->command({"UNWRAP", pair.elems[1].str});
  ASSERT_TRUE(denied.has_value());
  EXPECT_EQ(denied->error_word(), "NOPERM") << denied->debug();
  const auto forbidden = http_get(d->http_port(), "/v1/public-ids/" + pair.elems[1].str);
  ASSERT_TRUE(forbidden.has_value());
  EXPECT_EQ(forbidden->status, 403) << forbidden->body;
  EXPECT_EQ(ok(*local, {"UNWRAP", pair.elems[1].str}).elems.at(0).str, pair.elems[0].str);
  const auto metrics = http_get(d->http_port(), "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_EQ(metric_value(metrics->body, "snowid_public_id_unwraps_total{result=\"denied\"}"), 2.0);
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(30)), 0);
}

TEST_F(PublicIdDaemon, WithoutAKeyringEveryPublicIdCommandSaysSo) {
  auto d = dir_.start_ready({});
  auto c = RespConn::connect_unix(dir_.socket());
  ASSERT_TRUE(c.has_value());
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"NEXTPUBID", "ord"}, {"WRAP", "ord", "1"}, {"UNWRAP", "ord_c4khywqwtw0xe"}}) {
    const auto r = c->command(args);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->error_word(), "PUBLIC_IDS_OFF") << r->debug();
  }
  const auto http = http_get(d->http_port(), "/v1/ids?type=ord");
  ASSERT_TRUE(http.has_value());
  EXPECT_EQ(http->status, 404);
  EXPECT_NE(http->body.find("PUBLIC_IDS_OFF"), std::string::npos);
  const auto info = c->command({"INFO", "stats"});
  ASSERT_TRUE(info.has_value());
  EXPECT_NE(info->str.find("ids_issued:0\r\n"), std::string::npos) << info->str;
}

}  // namespace
}  // namespace snowid::daemon_test
