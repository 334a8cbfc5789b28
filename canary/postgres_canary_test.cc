// The uniqueness canary against a real PostgreSQL (scripts/pg-scratch): each
// test in a schema of its own on the build's shared server, and the outage
// tests on a server of their own, stopped with SIGSTOP or shut down.
#include "snowid/postgres_canary.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "snowid/generator.h"
#include "snowid/time.h"
#include "testing/postgres_server.h"

namespace snowid {
namespace {

using namespace std::chrono_literals;
using sequences::testing::PostgresServer;
using sequences::testing::shared_postgres_server;

// Rows of a query as text, for the assertions.
std::vector<std::vector<std::string>> rows(const std::string& conninfo, const std::string& sql) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  std::vector<std::vector<std::string>> out;
  PGresult* res = PQexec(conn, sql.c_str());
  EXPECT_EQ(PQresultStatus(res), PGRES_TUPLES_OK) << sql << ": " << PQerrorMessage(conn);
  for (int r = 0; r < PQntuples(res); ++r) {
    std::vector<std::string> row;
    for (int c = 0; c < PQnfields(res); ++c) {
      row.emplace_back(PQgetisnull(res, r, c) ? "NULL" : PQgetvalue(res, r, c));
    }
    out.push_back(std::move(row));
  }
  PQclear(res);
  PQfinish(conn);
  return out;
}

std::int64_t count(const std::string& conninfo, const std::string& sql) {
  const auto r = rows(conninfo, sql);
  return r.empty() ? -1 : std::stoll(r[0][0]);
}

std::string fresh_schema() {
  Result<PostgresServer*> server = shared_postgres_server();
  EXPECT_TRUE(server.is_ok()) << server.status().message();
  if (!server.is_ok()) return "";
  Result<std::string> conninfo = server.value()->fresh_schema();
  EXPECT_TRUE(conninfo.is_ok()) << conninfo.status().message();
  return conninfo.is_ok() ? conninfo.value() : "";
}

CanaryOptions options_for(const std::string& conninfo, const std::string& host) {
  CanaryOptions o;
  o.conninfo = conninfo;
  o.sample_every = 1;
  o.host = host;
  o.holder = host + " pid " + std::to_string(::getpid());
  o.connect_timeout = 2s;
  o.statement_timeout = 2s;
  o.idle_wait = 5ms;
  return o;
}

std::shared_ptr<PostgresCanary> start(CanaryOptions o) {
  Result<std::shared_ptr<PostgresCanary>> c = PostgresCanary::start(system_clock(), std::move(o));
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  return c.is_ok() ? c.value() : nullptr;
}

// Waits until the canary is connected: its tables exist, and in the outage
// tests its backend is among those FrozenServer stops (one connecting while
// the freeze is set up would escape it).
bool connected(const PostgresCanary& canary) {
  for (int i = 0; i < 3000; ++i) {
    if (canary.stats().store_up) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

std::unique_ptr<Generator> generator(WorkerId worker, std::shared_ptr<IssueObserver> observer) {
  GeneratorOptions o;
  o.worker = worker;
  o.observer = std::move(observer);
  Result<std::unique_ptr<Generator>> g = Generator::create(system_clock(), std::move(o));
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return g.is_ok() ? std::move(g).value() : nullptr;
}

TEST(PostgresCanary, StoresEveryIssuedIdWithItsWorkerAndHost) {
  const std::string db = fresh_schema();
  auto canary = start(options_for(db, "host-a"));
  ASSERT_NE(canary, nullptr);
  auto gen = generator(WorkerId{2, 17}, canary);
  ASSERT_NE(gen, nullptr);
  std::set<std::uint64_t> issued;
  for (int i = 0; i < 500; ++i) {
    const IdResult r = gen->next();
    ASSERT_TRUE(r.ok());
    issued.insert(r.id);
  }
  const IdBatch b = gen->reserve(300);
  ASSERT_TRUE(b.ok());
  for (std::uint32_t i = 0; i < b.count; ++i) issued.insert(b.first + i);
  ASSERT_TRUE(canary->flush(30s));

  const auto stored =
      rows(db, "SELECT id, region, worker_host, host, holder FROM snowid_canary_ids");
  ASSERT_EQ(stored.size(), issued.size());
  for (const auto& row : stored) {
    EXPECT_TRUE(issued.contains(std::stoull(row[0]))) << row[0];
    EXPECT_EQ(row[1], "2");
    EXPECT_EQ(row[2], "17");
    EXPECT_EQ(row[3], "host-a");
    EXPECT_EQ(row[4], "host-a pid " + std::to_string(::getpid()));
  }
  const CanaryStats s = canary->stats();
  EXPECT_EQ(s.sampled, issued.size());
  EXPECT_EQ(s.stored, issued.size());
  EXPECT_EQ(s.violations, 0u);
  EXPECT_EQ(s.dropped_full + s.dropped_unstored, 0u);
  EXPECT_TRUE(s.store_up);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_violations"), 0);
}

TEST(PostgresCanary, SamplesExactlyTheIdsTheRuleChooses) {
  const std::string db = fresh_schema();
  CanaryOptions o = options_for(db, "host-a");
  o.sample_every = 7;
  auto canary = start(o);
  ASSERT_NE(canary, nullptr);
  auto gen = generator(WorkerId{0, 3}, canary);
  std::set<std::uint64_t> chosen;
  std::uint64_t total = 0;
  for (int i = 0; i < 20; ++i) {
    const IdBatch b = gen->reserve(1000);
    ASSERT_TRUE(b.ok());
    for (std::uint32_t k = 0; k < b.count; ++k) {
      if (canary_samples(b.first + k, 7)) chosen.insert(b.first + k);
    }
    total += b.count;
  }
  ASSERT_TRUE(canary->flush(30s));
  std::set<std::uint64_t> stored;
  for (const auto& row : rows(db, "SELECT id FROM snowid_canary_ids")) {
    stored.insert(std::stoull(row[0]));
  }
  EXPECT_EQ(stored, chosen);
  // About 1 in 7 of consecutive ids (whose sequence fields count up).
  EXPECT_GT(chosen.size(), total / 7 * 8 / 10);
  EXPECT_LT(chosen.size(), total / 7 * 12 / 10);
}

TEST(PostgresCanary, TheRuleSamplesEveryIdAtOneAndAboutOneInNOtherwise) {
  std::uint64_t hits = 0;
  for (std::uint64_t id = 1ULL << 40; id < (1ULL << 40) + 1000000; ++id) {
    EXPECT_TRUE(canary_samples(id, 1));
    hits += canary_samples(id, 1000) ? 1 : 0;
  }
  EXPECT_GT(hits, 900u);
  EXPECT_LT(hits, 1100u);
  // Pinned (docs/canary.md lists them for ports of the rule): the first ids
  // from 2^40 that 1 in 1,000 keeps, and splitmix64's known first output
  // for 0.
  std::vector<std::uint64_t> first;
  for (std::uint64_t id = 1ULL << 40; first.size() < 6; ++id) {
    if (canary_samples(id, 1000)) first.push_back(id);
  }
  EXPECT_EQ(first, (std::vector<std::uint64_t>{1099511628492, 1099511629969, 1099511633025,
                                               1099511633432, 1099511633548, 1099511634320}));
  // 0xe220a8397b1dcdaf is above half of 2^64: kept by 1 in 1 only. 558 is
  // the first id 1 in 1,000 keeps.
  EXPECT_TRUE(canary_samples(0, 1));
  EXPECT_FALSE(canary_samples(0, 2));
  EXPECT_TRUE(canary_samples(558, 1000));
  for (std::uint64_t id = 0; id < 558; ++id) EXPECT_FALSE(canary_samples(id, 1000)) << id;
}

TEST(PostgresCanary, AnIdStoredByTwoHoldersIsRecordedWithBoth) {
  const std::string db = fresh_schema();
  std::mutex mu;
  std::vector<CanaryViolation> told;
  CanaryOptions oa = options_for(db, "host-a");
  CanaryOptions ob = options_for(db, "host-b");
  ob.on_violation = [&](const CanaryViolation& v) {
    std::lock_guard<std::mutex> lock(mu);
    told.push_back(v);
  };
  auto a = start(oa);
  auto b = start(ob);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // Two holders of worker 1/5 issuing the same ids, as two hosts sharing a
  // worker id would.
  a->issued(1000000, 10, WorkerId{1, 5});
  ASSERT_TRUE(a->flush(30s));
  b->issued(1000005, 10, WorkerId{1, 5});
  ASSERT_TRUE(b->flush(30s));

  EXPECT_EQ(a->stats().violations, 0u);
  EXPECT_EQ(b->stats().violations, 5u);
  EXPECT_EQ(b->stats().stored, 5u);
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(told.size(), 5u);
    for (const CanaryViolation& v : told) {
      EXPECT_GE(v.id, 1000005u);
      EXPECT_LT(v.id, 1000010u);
      EXPECT_EQ(v.first.host, "host-a");
      EXPECT_EQ(v.second.host, "host-b");
      EXPECT_EQ(v.first.worker, (WorkerId{1, 5}));
      EXPECT_TRUE(v.first.stored_at.has_value());
    }
  }
  const auto recorded = rows(db,
                             "SELECT id, first_host, first_region, first_worker_host,"
                             " second_host, second_holder FROM snowid_canary_violations"
                             " ORDER BY id");
  ASSERT_EQ(recorded.size(), 5u);
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    EXPECT_EQ(recorded[i][0], std::to_string(1000005 + i));
    EXPECT_EQ(recorded[i][1], "host-a");
    EXPECT_EQ(recorded[i][2], "1");
    EXPECT_EQ(recorded[i][3], "5");
    EXPECT_EQ(recorded[i][4], "host-b");
    EXPECT_EQ(recorded[i][5], ob.holder);
  }
}

TEST(PostgresCanary, AnIdIssuedTwiceWithinOneBatchIsCaught) {
  const std::string db = fresh_schema();
  CanaryOptions o = options_for(db, "host-a");
  o.idle_wait = std::chrono::seconds(1);  // both reach the queue before the writer looks
  auto canary = start(o);
  ASSERT_NE(canary, nullptr);
  ASSERT_TRUE(connected(*canary));  // tables made; the writer now idles for 1 s
  canary->issued(77, 1, WorkerId{0, 1});
  canary->issued(77, 1, WorkerId{0, 2});
  ASSERT_TRUE(canary->flush(30s));
  EXPECT_EQ(canary->stats().stored, 1u);
  EXPECT_EQ(canary->stats().violations, 1u);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_violations WHERE id = 77"), 1);
}

TEST(PostgresCanary, BadOptionsAreRefusedBeforeAnythingStarts) {
  CanaryOptions o = options_for("postgresql://snowid@127.0.0.1:1/snowid", "h");
  auto refused = [](CanaryOptions bad) {
    return PostgresCanary::start(system_clock(), std::move(bad)).status().code();
  };
  CanaryOptions bad = o;
  bad.conninfo = "";
  EXPECT_EQ(refused(bad), Code::kInvalidArgument);
  bad = o;
  bad.conninfo = "not a conninfo at all =";
  EXPECT_EQ(refused(bad), Code::kInvalidArgument);
  bad = o;
  bad.sample_every = 0;
  EXPECT_EQ(refused(bad), Code::kInvalidArgument);
  bad = o;
  bad.queue_capacity = 8;
  EXPECT_EQ(refused(bad), Code::kInvalidArgument);
  bad = o;
  bad.batch_max = 0;
  EXPECT_EQ(refused(bad), Code::kInvalidArgument);
  bad = o;
  bad.statement_timeout = Duration::zero();
  EXPECT_EQ(refused(bad), Code::kInvalidArgument);
}

// The server's postmaster and its backends, stopped with SIGSTOP until
// destroyed: a database that takes connections into its backlog and
// statements into its socket, and answers nothing.
class FrozenServer {
 public:
  explicit FrozenServer(const PostgresServer& server) {
    std::ifstream pidfile(server.dir() + "/data/postmaster.pid");
    pid_t postmaster = 0;
    pidfile >> postmaster;
    EXPECT_GT(postmaster, 0);
    pids_.push_back(postmaster);
    for (const auto& row : rows(server.conninfo(),
                                "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()")) {
      pids_.push_back(static_cast<pid_t>(std::stol(row[0])));
    }
    for (pid_t p : pids_) ::kill(p, SIGSTOP);
  }
  ~FrozenServer() {
    for (pid_t p : pids_) ::kill(p, SIGCONT);
  }
  FrozenServer(const FrozenServer&) = delete;
  FrozenServer& operator=(const FrozenServer&) = delete;

 private:
  std::vector<pid_t> pids_;
};

Result<std::unique_ptr<PostgresServer>> own_server() { return PostgresServer::launch(); }

TEST(PostgresCanary, AStoppedServerNeverHoldsUpIssuingAndWhatDoesNotFitIsCountedDropped) {
  auto server = own_server();
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  const std::string db = server.value()->conninfo();
  CanaryOptions o = options_for(db, "host-a");
  o.queue_capacity = 1024;
  o.batch_max = 256;
  auto canary = start(o);
  ASSERT_NE(canary, nullptr);
  ASSERT_TRUE(connected(*canary));
  auto gen = generator(WorkerId{0, 9}, canary);
  std::uint64_t issued = 0;
  {
    FrozenServer frozen(*server.value());
    // Were a sample ever to wait for the database, this would hang here.
    for (int i = 0; i < 200; ++i) {
      const IdBatch b = gen->reserve(1000);
      ASSERT_TRUE(b.ok());
      issued += b.count;
    }
    const CanaryStats s = canary->stats();
    EXPECT_EQ(s.sampled, issued);
    // At most the ring and the writer's one batch are held.
    EXPECT_GE(s.dropped_full, issued - 1024 - 256);
  }
  // Back: the writer carries on by itself with what it held.
  ASSERT_TRUE(canary->flush(60s));
  const CanaryStats s = canary->stats();
  EXPECT_TRUE(s.store_up);
  EXPECT_EQ(s.violations, 0u);
  EXPECT_EQ(s.stored + s.dropped_full + s.dropped_unstored, s.sampled);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_ids"),
            static_cast<std::int64_t>(s.stored));
  // New samples are stored again.
  const std::uint64_t before = s.stored;
  ASSERT_TRUE(gen->reserve(50).ok());
  ASSERT_TRUE(canary->flush(30s));
  EXPECT_EQ(canary->stats().stored, before + 50);
}

TEST(PostgresCanary, ADatabaseDownAtStartIsReachedWhenItComesUp) {
  auto server = own_server();
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  const std::string db = server.value()->conninfo();
  ASSERT_TRUE(server.value()->stop().is_ok());
  std::mutex mu;
  std::vector<Status> changes;
  CanaryOptions o = options_for(db, "host-a");
  o.on_store_change = [&](const Status& s) {
    std::lock_guard<std::mutex> lock(mu);
    changes.push_back(s);
  };
  auto canary = start(o);
  ASSERT_NE(canary, nullptr);
  canary->issued(5000, 100, WorkerId{3, 1});
  EXPECT_FALSE(canary->flush(1s));
  EXPECT_FALSE(canary->stats().store_up);
  EXPECT_GT(canary->stats().store_failures, 0u);
  ASSERT_TRUE(server.value()->start().is_ok());
  ASSERT_TRUE(canary->flush(60s));
  EXPECT_EQ(canary->stats().stored, 100u);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_ids"), 100);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_GE(changes.size(), 2u);
  EXPECT_FALSE(changes.front().is_ok());
  EXPECT_TRUE(changes.back().is_ok());
}

TEST(PostgresCanary, CloseGivesUpOnAServerThatDoesNotAnswerAndCountsWhatWasLeft) {
  auto server = own_server();
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  CanaryOptions o = options_for(server.value()->conninfo(), "host-a");
  o.statement_timeout = 60s;  // the server's own timeout would not end it sooner
  auto canary = start(o);
  ASSERT_NE(canary, nullptr);
  ASSERT_TRUE(connected(*canary));
  FrozenServer frozen(*server.value());
  canary->issued(9000, 500, WorkerId{0, 1});
  // The writer is now waiting on the frozen server (up to 62 s by its
  // budget); close() ends that wait after its own timeout. Were it to wait
  // out the budget, this would take a minute.
  const auto began = std::chrono::steady_clock::now();
  canary->close(200ms);
  EXPECT_LT(std::chrono::steady_clock::now() - began, 30s);
  const CanaryStats s = canary->stats();
  EXPECT_EQ(s.sampled, 500u);
  EXPECT_EQ(s.stored, 0u);
  EXPECT_EQ(s.dropped_unstored, 500u);
  // Closed: later samples are dropped, never queued.
  canary->issued(9500, 1, WorkerId{0, 1});
  EXPECT_EQ(canary->stats().dropped_unstored, 501u);
}

// A connection attempt to a server that accepts but never answers (its
// postmaster stopped) is given up by close(), not waited out.
TEST(PostgresCanary, CloseEndsAConnectionAttemptThatGetsNoAnswer) {
  auto server = own_server();
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  CanaryOptions o = options_for(server.value()->conninfo(), "host-a");
  o.connect_timeout = 60s;
  std::shared_ptr<PostgresCanary> canary;
  {
    FrozenServer frozen(*server.value());
    canary = start(o);
    ASSERT_NE(canary, nullptr);
    canary->issued(1, 10, WorkerId{0, 1});
    std::this_thread::sleep_for(300ms);  // the writer is in its connection attempt
    const auto began = std::chrono::steady_clock::now();
    canary->close(100ms);
    EXPECT_LT(std::chrono::steady_clock::now() - began, 30s);
  }
  const CanaryStats s = canary->stats();
  EXPECT_FALSE(s.store_up);
  EXPECT_EQ(s.dropped_unstored, 10u);
}

// Tables made by an administrator, and a role that may only insert and
// read: the canary stores without creating anything.
TEST(PostgresCanary, ARoleThatMayNotCreateStoresIntoTablesMadeForIt) {
  const std::string db = fresh_schema();
  {
    auto owner = start(options_for(db, "admin"));  // creates the tables
    ASSERT_NE(owner, nullptr);
    ASSERT_TRUE(connected(*owner));
  }
  const auto schema = rows(db, "SELECT current_schema()");
  ASSERT_EQ(schema.size(), 1u);
  const std::string role = "canary_writer_" + std::to_string(::getpid());
  for (const std::string& sql :
       {"CREATE ROLE " + role + " LOGIN", "GRANT USAGE ON SCHEMA " + schema[0][0] + " TO " + role,
        "GRANT SELECT, INSERT, DELETE ON snowid_canary_ids, snowid_canary_violations TO " + role,
        "REVOKE CREATE ON SCHEMA " + schema[0][0] + " FROM PUBLIC"}) {
    PGconn* conn = PQconnectdb(db.c_str());
    PGresult* res = PQexec(conn, sql.c_str());
    EXPECT_EQ(PQresultStatus(res), PGRES_COMMAND_OK) << sql << ": " << PQerrorMessage(conn);
    PQclear(res);
    PQfinish(conn);
  }
  std::string as_role = db;
  as_role.replace(as_role.find("snowid@"), 7, role + "@");
  auto canary = start(options_for(as_role, "host-r"));
  ASSERT_NE(canary, nullptr);
  canary->issued(4242, 5, WorkerId{1, 2});
  ASSERT_TRUE(canary->flush(30s));
  EXPECT_EQ(canary->stats().stored, 5u);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_ids WHERE host = 'host-r'"), 5);
}

}  // namespace
}  // namespace snowid
