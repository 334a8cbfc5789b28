// The uniqueness canary in the real snowidd (docs/canary.md), on the build's
// shared scratch PostgreSQL: two daemons misconfigured onto one worker id
// issue the same ids, and the canary must count, record and log every one;
// a daemon alone stores every id and finds nothing; a database that is down
// never stops issuing.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon_process.h"
#include "http_client.h"
#include "resp_client.h"
#include "test_support.h"
#include "testing/postgres_server.h"

namespace snowid::daemon_test {
namespace {

using namespace std::chrono_literals;

std::string fresh_database() {
  Result<sequences::testing::PostgresServer*> server = sequences::testing::shared_postgres_server();
  EXPECT_TRUE(server.is_ok()) << server.status().message();
  if (!server.is_ok()) return "";
  Result<std::string> conninfo = server.value()->fresh_schema();
  EXPECT_TRUE(conninfo.is_ok()) << conninfo.status().message();
  return conninfo.is_ok() ? conninfo.value() : "";
}

std::vector<std::vector<std::string>> rows(const std::string& conninfo, const std::string& sql) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  PGresult* res = PQexec(conn, sql.c_str());
  EXPECT_EQ(PQresultStatus(res), PGRES_TUPLES_OK) << sql << ": " << PQerrorMessage(conn);
  std::vector<std::vector<std::string>> out;
  for (int r = 0; r < PQntuples(res); ++r) {
    std::vector<std::string> row;
    for (int c = 0; c < PQnfields(res); ++c) row.emplace_back(PQgetvalue(res, r, c));
    out.push_back(std::move(row));
  }
  PQclear(res);
  PQfinish(conn);
  return out;
}

double metric(const DaemonProcess& d, const std::string& name) {
  const std::optional<HttpReply> r = http_get(d.http_port(), "/metrics");
  if (!r || r->status != 200) return -1;
  return metric_value(r->body, name).value_or(-1);
}

// Waits until the daemon's canary has dealt with every sample it took:
// stored, or found to be a duplicate (none dropped in these tests).
bool canary_settled(const DaemonProcess& d, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    const double sampled = metric(d, "snowid_canary_samples_total");
    const double stored = metric(d, "snowid_canary_samples_stored_total");
    const double violations = metric(d, "snowid_canary_violations_total");
    if (sampled >= 0 && stored + violations == sampled) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

// Pulls `calls` NEXTIDS 200 from `conn` once `go` is set.
void pull(RespConn& conn, const std::atomic<bool>& go, int calls, std::vector<std::uint64_t>& out) {
  while (!go.load()) {
  }
  for (int i = 0; i < calls; ++i) {
    const std::optional<RespValue> r = conn.command({"NEXTIDS", "200"});
    ASSERT_TRUE(r.has_value());
    const auto ids = ids_of(*r);
    ASSERT_TRUE(ids.has_value()) << r->debug();
    out.insert(out.end(), ids->begin(), ids->end());
  }
}

std::vector<std::string> canary_args(const std::string& db, const std::string& host_name) {
  // A queue for every sample of the test: none may be dropped.
  return {"--registry",     "file",   "--host",   "5", "--host-name",     host_name,
          "--sequences",    "off",    "--canary", db,  "--canary-sample", "1",
          "--canary-queue", "1048576"};
}

TEST(Canary, TwoDaemonsOnOneWorkerIdAreCaughtOnEveryDuplicateWithBothHostsNamed) {
  const std::string db = fresh_database();
  ASSERT_FALSE(db.empty());
  // Two hosts that each believe worker 0/5 is theirs: separate state
  // directories and host locks, as two machines would have.
  DaemonDir dir_a;
  DaemonDir dir_b;
  auto a = dir_a.start_ready(canary_args(db, "alpha"));
  auto b = dir_b.start_ready(canary_args(db, "beta"));
  ASSERT_TRUE(a->alive() && b->alive());

  // Both issue in the same milliseconds, each tick's sequence starting
  // below 16: the same ids. Rounds of 4,000 ids each, started together,
  // until some are shared.
  std::optional<RespConn> ca = RespConn::connect_unix(a->socket_path());
  std::optional<RespConn> cb = RespConn::connect_unix(b->socket_path());
  ASSERT_TRUE(ca.has_value() && cb.has_value());
  std::vector<std::uint64_t> from_a;
  std::vector<std::uint64_t> from_b;
  std::set<std::uint64_t> both;
  for (int round = 0; round < 50 && both.size() < 100; ++round) {
    std::atomic<bool> go{false};
    std::thread ta([&] { pull(*ca, go, 20, from_a); });
    std::thread tb([&] { pull(*cb, go, 20, from_b); });
    go = true;
    ta.join();
    tb.join();
    const std::set<std::uint64_t> seen_a(from_a.begin(), from_a.end());
    both.clear();
    for (std::uint64_t id : from_b) {
      if (seen_a.contains(id)) both.insert(id);
    }
  }
  const std::set<std::uint64_t> set_a(from_a.begin(), from_a.end());
  ASSERT_EQ(set_a.size(), from_a.size()) << "one daemon repeated itself";
  ASSERT_EQ(std::set<std::uint64_t>(from_b.begin(), from_b.end()).size(), from_b.size())
      << "one daemon repeated itself";
  ASSERT_GT(both.size(), 0u) << "the two daemons never issued the same id: the test proves nothing";

  ASSERT_TRUE(canary_settled(*a, 30s));
  ASSERT_TRUE(canary_settled(*b, 30s));
  EXPECT_EQ(metric(*a, "snowid_canary_samples_total"), static_cast<double>(from_a.size()));
  EXPECT_EQ(metric(*b, "snowid_canary_samples_total"), static_cast<double>(from_b.size()));
  // Every id issued twice is one violation, seen by whichever daemon stored
  // it second; every other sample was stored.
  const double violations =
      metric(*a, "snowid_canary_violations_total") + metric(*b, "snowid_canary_violations_total");
  EXPECT_EQ(violations, static_cast<double>(both.size()));
  EXPECT_EQ(metric(*a, "snowid_canary_samples_stored_total") +
                metric(*b, "snowid_canary_samples_stored_total"),
            static_cast<double>(from_a.size() + from_b.size() - both.size()));

  const auto recorded = rows(db,
                             "SELECT id, first_host, second_host, first_worker_host,"
                             " second_worker_host FROM snowid_canary_violations");
  ASSERT_EQ(recorded.size(), both.size());
  for (const auto& row : recorded) {
    EXPECT_TRUE(both.contains(std::stoull(row[0]))) << row[0];
    EXPECT_NE(row[1], row[2]) << "both holders, one from each host";
    EXPECT_TRUE((row[1] == "alpha" && row[2] == "beta") || (row[1] == "beta" && row[2] == "alpha"));
    EXPECT_EQ(row[3], "5");
    EXPECT_EQ(row[4], "5");
  }
  // And the log says so, naming both.
  std::optional<nlohmann::json> logged = a->wait_for("duplicate id", 2s);
  if (!logged) logged = b->wait_for("duplicate id", 5s);
  ASSERT_TRUE(logged.has_value());
  EXPECT_EQ((*logged)["first_worker"], "0/5");
  EXPECT_EQ((*logged)["second_worker"], "0/5");
  EXPECT_NE((*logged)["first_host"], (*logged)["second_host"]);
}

TEST(Canary, ADaemonAloneStoresEveryIdItIssuesAndFindsNoDuplicate) {
  const std::string db = fresh_database();
  ASSERT_FALSE(db.empty());
  DaemonDir dir;
  auto d = dir.start_ready(
      {"--sequences", "off", "--canary", db, "--canary-sample", "1", "--host-name", "solo"});
  std::vector<std::uint64_t> ids;
  std::optional<RespConn> c = RespConn::connect_unix(d->socket_path());
  ASSERT_TRUE(c.has_value());
  for (int i = 0; i < 50; ++i) {
    const auto got = ids_of(*c->command({"NEXTIDS", "100"}));
    ASSERT_TRUE(got.has_value());
    ids.insert(ids.end(), got->begin(), got->end());
  }
  for (int i = 0; i < 20; ++i) {
    const std::optional<HttpReply> r = http_get(d->http_port(), "/v1/ids?count=50");
    ASSERT_TRUE(r && r->status == 200);
    const auto got = ids_of_json(r->body);
    ASSERT_TRUE(got.has_value());
    ids.insert(ids.end(), got->begin(), got->end());
  }
  ASSERT_TRUE(canary_settled(*d, 30s));
  EXPECT_EQ(metric(*d, "snowid_canary_samples_stored_total"), static_cast<double>(ids.size()));
  EXPECT_EQ(metric(*d, "snowid_canary_violations_total"), 0.0);
  EXPECT_EQ(metric(*d, "snowid_canary_store_up"), 1.0);
  const auto stored = rows(db,
                           "SELECT count(*), count(DISTINCT host) , min(host)"
                           " FROM snowid_canary_ids");
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0][0], std::to_string(ids.size()));
  EXPECT_EQ(stored[0][2], "solo");
}

TEST(Canary, ADatabaseThatIsDownNeverStopsIssuingAndTheDropsAreCounted) {
  DaemonDir dir;
  auto d = dir.start_ready({"--sequences", "off", "--canary",
                            "postgresql://snowid@127.0.0.1:1/snowid?connect_timeout=2",
                            "--canary-sample", "1", "--canary-queue", "16"});
  std::optional<RespConn> c = RespConn::connect_unix(d->socket_path());
  ASSERT_TRUE(c.has_value());
  for (int i = 0; i < 100; ++i) {
    const auto got = ids_of(*c->command({"NEXTIDS", "100"}));
    ASSERT_TRUE(got.has_value()) << "issuing stopped with the canary's database down";
    ASSERT_EQ(got->size(), 100u);
  }
  EXPECT_EQ(metric(*d, "snowid_canary_samples_total"), 10000.0);
  // All but what the queue (16) and the writer's one batch (up to 4,096) hold.
  EXPECT_GE(metric(*d, "snowid_canary_samples_dropped_total{reason=\"queue_full\"}"),
            10000.0 - 16 - 4096);
  EXPECT_TRUE(d->wait_for("canary store unreachable", 10s).has_value());
  EXPECT_GT(metric(*d, "snowid_canary_store_failures_total"), 0.0);
  EXPECT_EQ(metric(*d, "snowid_canary_store_up"), 0.0);
  const std::optional<HttpReply> ready = http_get(d->http_port(), "/readyz");
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->status, 200);
}

TEST(Canary, AConnectionStringLibpqCannotReadIsExitTwo) {
  DaemonDir dir;
  auto d = dir.start({"--sequences", "off", "--canary", "postgresql://%zz"});
  EXPECT_EQ(d->wait_exit(Millis(30000)), 2);
  EXPECT_NE(d->raw_text().find("canary"), std::string::npos) << d->raw_text();
}

}  // namespace
}  // namespace snowid::daemon_test
