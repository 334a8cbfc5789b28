// The PostgreSQL store against a real server (scripts/pg-scratch): the
// conformance suites, each test in a schema of its own on one server per
// test process; and what only a server does: go away and come back, time a
// statement out, close a connection.
#include "snowid/postgres_ticket_store.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "testing/postgres_server.h"
#include "ticket_store_conformance.h"

namespace snowid::sequences::conformance {
namespace {

using namespace std::chrono_literals;
using testing::PostgresServer;

// A connection of the test's own.
class Connection {
 public:
  explicit Connection(const std::string& conninfo) : conn_(PQconnectdb(conninfo.c_str())) {}
  ~Connection() { PQfinish(conn_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The first column of the first row as text, "" without rows.
  Result<std::string> query(const std::string& sql) {
    if (PQstatus(conn_) != CONNECTION_OK) {
      return Status(Code::kUnavailable, std::string("connect: ") + PQerrorMessage(conn_));
    }
    PGresult* res = PQexec(conn_, sql.c_str());
    const ExecStatusType st = PQresultStatus(res);
    Result<std::string> out = std::string();
    if (st == PGRES_TUPLES_OK && PQntuples(res) > 0) {
      out = std::string(PQgetvalue(res, 0, 0));
    } else if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
      out = Status(Code::kFailedPrecondition, sql + ": " + PQresultErrorMessage(res));
    }
    PQclear(res);
    return out;
  }

 private:
  PGconn* conn_;
};

// Holds a server process stopped (SIGSTOP) until destroyed: a backend that
// hangs while its host still acknowledges every packet, so that neither TCP
// nor the server's own statement_timeout ends a statement sent to it.
class FrozenProcess {
 public:
  explicit FrozenProcess(pid_t pid) : pid_(pid) {
    frozen_ = pid_ > 0 && ::kill(pid_, SIGSTOP) == 0;
  }
  ~FrozenProcess() { thaw(); }
  FrozenProcess(const FrozenProcess&) = delete;
  FrozenProcess& operator=(const FrozenProcess&) = delete;
  bool frozen() const { return frozen_; }
  void thaw() {
    if (frozen_) ::kill(pid_, SIGCONT);
    frozen_ = false;
  }
  // Ends the process without letting it run again.
  bool kill_frozen() {
    const bool killed = frozen_ && ::kill(pid_, SIGKILL) == 0;
    frozen_ = false;
    return killed;
  }

 private:
  pid_t pid_;
  bool frozen_ = false;
};

// The server process pg_stat_activity shows `where` (an SQL condition of the
// test's own), or 0.
pid_t server_pid(const std::string& conninfo, const std::string& where) {
  Result<std::string> pid =
      Connection(conninfo).query("SELECT pid FROM pg_stat_activity WHERE " + where);
  return pid.is_ok() && !pid.value().empty() ? static_cast<pid_t>(std::stol(pid.value())) : 0;
}

class PostgresBackend final : public StoreBackend {
 public:
  explicit PostgresBackend(std::string conninfo) : conninfo_(std::move(conninfo)) {}

  Result<std::unique_ptr<TicketStore>> open(const Clock& clock, bool migrate) override {
    PostgresTicketStoreOptions options;
    options.migrate = migrate;
    options.statement_timeout = 30s;
    return open_postgres_ticket_store(conninfo_, clock, options);
  }
  Result<std::string> query(const std::string& sql) override {
    return Connection(conninfo_).query(sql);
  }

 private:
  std::string conninfo_;
};

BackendParam postgres_backend() {
  return {
      "Postgres", []() -> Result<std::unique_ptr<StoreBackend>> {
        Result<PostgresServer*> server = testing::shared_postgres_server();
        if (!server.is_ok()) return server.status();
        Result<std::string> conninfo = server.value()->fresh_schema();
        if (!conninfo.is_ok()) return conninfo.status();
        return std::unique_ptr<StoreBackend>(std::make_unique<PostgresBackend>(conninfo.value()));
      }};
}

INSTANTIATE_TEST_SUITE_P(Postgres, TicketStoreConformance, ::testing::Values(postgres_backend()),
                         backend_name);
INSTANTIATE_TEST_SUITE_P(Postgres, SqlTicketStoreTest, ::testing::Values(postgres_backend()),
                         backend_name);

class PostgresTicketStoreTest : public ::testing::Test {
 protected:
  snowid::testing::SimulatedClock clock_{wall_from_unix_ms(1'893'553'445'678)};
};

// The process's shared server, each test in a schema of its own.
class PostgresSharedServerTest : public PostgresTicketStoreTest {
 protected:
  void SetUp() override {
    Result<PostgresServer*> server = testing::shared_postgres_server();
    ASSERT_TRUE(server.is_ok()) << server.status().to_string();
    Result<std::string> conninfo = server.value()->fresh_schema();
    ASSERT_TRUE(conninfo.is_ok()) << conninfo.status().to_string();
    conninfo_ = conninfo.value();
  }

  std::string conninfo_;
};

TEST_F(PostgresTicketStoreTest, UnparsableConninfoIsInvalidArgument) {
  for (const char* bad : {"postgresql://snowid@[::1", "host=127.0.0.1 no_such_keyword=1",
                          "postgresql://x/db?no_such_keyword=1"}) {
    Result<std::unique_ptr<TicketStore>> store = open_postgres_ticket_store(bad, clock_);
    EXPECT_EQ(store.status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST_F(PostgresTicketStoreTest, ZeroConnectionsIsInvalidArgument) {
  PostgresTicketStoreOptions options;
  options.connections = 0;
  Result<std::unique_ptr<TicketStore>> store =
      open_postgres_ticket_store("postgresql://snowid@127.0.0.1:1/snowid", clock_, options);
  EXPECT_EQ(store.status().code(), Code::kInvalidArgument);
}

TEST_F(PostgresTicketStoreTest, DatabaseDownAtOpenIsNotAnErrorButCallsAreUnavailable) {
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  Result<std::unique_ptr<TicketStore>> store =
      open_postgres_ticket_store("postgresql://snowid@127.0.0.1:1/snowid", clock_);
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  Result<SequenceRange> r = store.value()->take("orders", 0);
  EXPECT_EQ(r.status().code(), Code::kUnavailable) << r.status().to_string();
  EXPECT_NE(r.status().message().find("connect"), std::string::npos) << r.status().message();
  EXPECT_EQ(store.value()->migrate().code(), Code::kUnavailable);
}

TEST_F(PostgresSharedServerTest, FirstCallMigratesAnEmptyDatabase) {
  Result<std::unique_ptr<TicketStore>> opened = open_postgres_ticket_store(conninfo_, clock_);
  ASSERT_TRUE(opened.is_ok());
  Connection admin(conninfo_);
  Result<std::string> before = admin.query("SELECT to_regclass('snowid_sequences') IS NULL");
  ASSERT_TRUE(before.is_ok());
  EXPECT_EQ(before.value(), "t") << "open_postgres_ticket_store() must not connect";
  Result<std::vector<SequenceInfo>> rows = opened.value()->list();
  ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
  EXPECT_TRUE(rows->empty());
  Result<std::string> version = admin.query("SELECT MAX(version) FROM snowid_schema_migrations");
  ASSERT_TRUE(version.is_ok()) << version.status().to_string();
  EXPECT_EQ(version.value(), "2");
}

TEST_F(PostgresSharedServerTest, StoreOpenedWithoutMigrateLeavesTheDatabaseAlone) {
  PostgresTicketStoreOptions options;
  options.migrate = false;
  Result<std::unique_ptr<TicketStore>> opened =
      open_postgres_ticket_store(conninfo_, clock_, options);
  ASSERT_TRUE(opened.is_ok());
  const Status create = opened.value()->create("orders", 0, 10);
  EXPECT_EQ(create.code(), Code::kFailedPrecondition) << create.to_string();
  EXPECT_NE(create.message().find("run migrate"), std::string::npos) << create.message();
  Result<std::string> absent =
      Connection(conninfo_).query("SELECT to_regclass('snowid_schema_migrations') IS NULL");
  ASSERT_TRUE(absent.is_ok());
  EXPECT_EQ(absent.value(), "t");
}

// A server of the test's own, since it is stopped and started.
class PostgresRestartTest : public PostgresTicketStoreTest {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<PostgresServer>> server = PostgresServer::launch();
    ASSERT_TRUE(server.is_ok()) << server.status().to_string();
    server_ = std::move(server.value());
  }

  std::unique_ptr<PostgresServer> server_;
};

TEST_F(PostgresRestartTest, StoppedServerIsUnavailableAndTheSameStoreWorksOnceItIsBack) {
  PostgresTicketStoreOptions options;
  options.connect_timeout = 2s;
  Result<std::unique_ptr<TicketStore>> opened =
      open_postgres_ticket_store(server_->conninfo(), clock_, options);
  ASSERT_TRUE(opened.is_ok()) << opened.status().to_string();
  TicketStore& store = *opened.value();
  ASSERT_TRUE(store.create("orders", 0, 10).is_ok());
  Result<SequenceRange> before = store.take("orders", 0);
  ASSERT_TRUE(before.is_ok()) << before.status().to_string();

  ASSERT_TRUE(server_->stop().is_ok());
  Result<SequenceRange> down = store.take("orders", 0);
  EXPECT_EQ(down.status().code(), Code::kUnavailable) << down.status().to_string();
  EXPECT_EQ(store.get("orders").status().code(), Code::kUnavailable);
  EXPECT_EQ(store.list().status().code(), Code::kUnavailable);
  EXPECT_EQ(store.create("other", 0, 10).code(), Code::kUnavailable);

  ASSERT_TRUE(server_->start().is_ok()) << server_->log_tail();
  Result<SequenceRange> after = store.take("orders", 0);
  ASSERT_TRUE(after.is_ok()) << after.status().to_string();
  EXPECT_GE(after->first, before->end);
  Result<SequenceInfo> info = store.get("orders");
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->next_value, after->end);
}

TEST_F(PostgresRestartTest, IdleConnectionsClosedByARestartAreReplacedWithoutAnError) {
  PostgresTicketStoreOptions options;
  options.connections = 3;
  Result<std::unique_ptr<TicketStore>> opened =
      open_postgres_ticket_store(server_->conninfo(), clock_, options);
  ASSERT_TRUE(opened.is_ok());
  TicketStore& store = *opened.value();
  ASSERT_TRUE(store.create("orders", 0, 10).is_ok());
  // Fill the pool: three calls at once each hold a connection.
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&] { EXPECT_TRUE(store.take("orders", 0).is_ok()); });
  }
  for (std::thread& t : threads) t.join();

  ASSERT_TRUE(server_->restart().is_ok()) << server_->log_tail();
  // Every pooled connection is dead; the first call finds one, drops them
  // all and goes on with a new connection.
  Result<SequenceRange> r = store.take("orders", 0);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  Result<SequenceInfo> info = store.get("orders");
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->next_value, r->end);
}

// A database (or role) set to synchronous_commit = off acknowledges a commit
// before its WAL is written; a crash then forgets the last takes, and the
// next take would hand their ranges out again. The store's sessions commit
// synchronously whatever the default. The crash is made certain: the WAL
// writer is held stopped (nothing else writes WAL here meanwhile), then
// killed, which makes the postmaster reset every process and recover.
TEST_F(PostgresRestartTest, TakesSurviveACrashOfADatabaseThatCommitsAsynchronously) {
  const std::string conninfo = server_->conninfo() + "?options=-csynchronous_commit%3Doff";
  PostgresTicketStoreOptions options;
  options.connect_timeout = 2s;
  Result<std::unique_ptr<TicketStore>> opened =
      open_postgres_ticket_store(conninfo, clock_, options);
  ASSERT_TRUE(opened.is_ok());
  TicketStore& store = *opened.value();
  ASSERT_TRUE(store.create("orders", 0, 10).is_ok());
  Connection admin(server_->conninfo());
  // A synchronous commit writes all the WAL before it: the row is on disk.
  ASSERT_TRUE(admin.query("CREATE TABLE flushed ()").is_ok());
  const pid_t walwriter = server_pid(server_->conninfo(), "backend_type = 'walwriter'");
  ASSERT_NE(walwriter, 0);
  std::int64_t handed_out_end = 0;
  {
    FrozenProcess frozen(walwriter);
    ASSERT_TRUE(frozen.frozen());
    for (int i = 0; i < 3; ++i) {
      Result<SequenceRange> r = store.take("orders", 0);
      ASSERT_TRUE(r.is_ok()) << r.status().to_string();
      handed_out_end = r->end;
    }
    ASSERT_TRUE(frozen.kill_frozen());
  }
  ASSERT_EQ(handed_out_end, 30);
  // The postmaster resets the server by itself (a new WAL writer shows it
  // done); calls are UNAVAILABLE meanwhile.
  const auto give_up = std::chrono::steady_clock::now() + 60s;
  pid_t new_walwriter = 0;
  while (std::chrono::steady_clock::now() < give_up) {
    new_walwriter = server_pid(server_->conninfo(), "backend_type = 'walwriter'");
    if (new_walwriter != 0 && new_walwriter != walwriter) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_NE(new_walwriter, walwriter) << server_->log_tail();
  Result<SequenceRange> after = Status(Code::kUnavailable, "not tried");
  while (std::chrono::steady_clock::now() < give_up) {
    after = store.take("orders", 0);
    if (after.is_ok() || after.status().code() != Code::kUnavailable) break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(after.is_ok()) << after.status().to_string() << "\n" << server_->log_tail();
  EXPECT_GE(after->first, handed_out_end) << "a range handed out before the crash, again";
}

TEST_F(PostgresRestartTest, RestartUnderLoadNeverHandsOutANumberTwice) {
  Result<std::unique_ptr<TicketStore>> admin =
      open_postgres_ticket_store(server_->conninfo(), clock_);
  ASSERT_TRUE(admin.is_ok());
  ASSERT_TRUE(admin.value()->create("orders", 0, 7).is_ok());

  constexpr int kTakers = 4;
  std::atomic<bool> stop{false};
  std::atomic<bool> restarted{false};
  std::atomic<int> before_restart{0};
  std::atomic<int> after_restart{0};
  std::vector<std::vector<SequenceRange>> taken(kTakers);
  std::vector<std::vector<Status>> odd_failures(kTakers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kTakers; ++i) {
    threads.emplace_back([&, i] {
      const auto me = static_cast<std::size_t>(i);
      PostgresTicketStoreOptions options;
      options.connect_timeout = 2s;
      Result<std::unique_ptr<TicketStore>> store =
          open_postgres_ticket_store(server_->conninfo(), clock_, options);
      if (!store.is_ok()) {
        odd_failures[me].push_back(store.status());
        return;
      }
      while (!stop.load()) {
        Result<SequenceRange> r = store.value()->take("orders", 0);
        if (r.is_ok()) {
          taken[me].push_back(r.value());
          (restarted.load() ? after_restart : before_restart).fetch_add(1);
        } else if (r.status().code() != Code::kUnavailable) {
          odd_failures[me].push_back(r.status());
        } else {
          std::this_thread::sleep_for(10ms);  // the server is away: do not spin
        }
      }
    });
  }
  // Restart the server under the takers once they are going, and go on until
  // they have taken ranges from the new one.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  auto wait_for = [&](const std::atomic<int>& n) {
    while (n.load() < 50 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
  };
  wait_for(before_restart);
  const Status restart = server_->restart();
  restarted.store(true);
  wait_for(after_restart);
  stop.store(true);
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(restart.is_ok()) << restart.to_string() << "\n" << server_->log_tail();
  EXPECT_GE(before_restart.load(), 50);
  EXPECT_GE(after_restart.load(), 50);

  std::vector<SequenceRange> all;
  for (int i = 0; i < kTakers; ++i) {
    for (const Status& s : odd_failures[static_cast<std::size_t>(i)]) {
      ADD_FAILURE() << "taker " << i << ": " << s.to_string();
    }
    all.insert(all.end(), taken[static_cast<std::size_t>(i)].begin(),
               taken[static_cast<std::size_t>(i)].end());
  }
  std::sort(all.begin(), all.end(),
            [](const SequenceRange& a, const SequenceRange& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < all.size(); ++i) {
    ASSERT_GE(all[i].first, all[i - 1].end) << "overlapping ranges";
  }
  // A take lost with its reply leaves a gap, never an overlap; everything
  // handed out lies below the row's next value.
  Result<SequenceInfo> info = admin.value()->get("orders");
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  ASSERT_FALSE(all.empty());
  EXPECT_LE(all.back().end, info->next_value);
}

TEST_F(PostgresSharedServerTest, StatementTimeoutOnALockedRowIsUnavailable) {
  PostgresTicketStoreOptions options;
  options.statement_timeout = 200ms;
  Result<std::unique_ptr<TicketStore>> opened =
      open_postgres_ticket_store(conninfo_, clock_, options);
  ASSERT_TRUE(opened.is_ok());
  TicketStore& store = *opened.value();
  ASSERT_TRUE(store.create("orders", 0, 10).is_ok());

  Connection holder(conninfo_);
  ASSERT_TRUE(holder.query("BEGIN").is_ok());
  ASSERT_TRUE(
      holder.query("SELECT 1 FROM snowid_sequences WHERE name = 'orders' FOR UPDATE").is_ok());
  Result<SequenceRange> blocked = store.take("orders", 0);
  EXPECT_EQ(blocked.status().code(), Code::kUnavailable) << blocked.status().to_string();
  EXPECT_NE(blocked.status().message().find("57014"), std::string::npos)
      << blocked.status().message();
  ASSERT_TRUE(holder.query("ROLLBACK").is_ok());

  Result<SequenceRange> r = store.take("orders", 0);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), (SequenceRange{0, 10}));
}

// A backend that stops answering must not hold a take, or the pool, for
// ever: the store gives up on the connection once the statement's time is
// well past, and the retry on a new connection takes a new range.
TEST_F(PostgresSharedServerTest, TakeOnAFrozenBackendIsAbandonedAndTakenAgainElsewhere) {
  const std::string app = "snowid_frozen_" + std::to_string(::getpid());
  PostgresTicketStoreOptions options;
  options.statement_timeout = 300ms;
  options.connect_timeout = 1s;
  options.connections = 1;
  Result<std::unique_ptr<TicketStore>> opened =
      open_postgres_ticket_store(conninfo_ + "&application_name=" + app, clock_, options);
  ASSERT_TRUE(opened.is_ok());
  TicketStore& store = *opened.value();
  ASSERT_TRUE(store.create("orders", 0, 10).is_ok());
  Result<SequenceRange> before = store.take("orders", 0);
  ASSERT_TRUE(before.is_ok()) << before.status().to_string();

  FrozenProcess frozen(server_pid(conninfo_, "application_name = '" + app + "'"));
  ASSERT_TRUE(frozen.frozen()) << "no backend of " << app << " to stop";
  std::atomic<bool> done{false};
  Result<SequenceRange> during = Status(Code::kUnavailable, "not returned");
  std::thread taker([&] {
    during = store.take("orders", 0);
    done = true;
  });
  // Far longer than the 1.3 s the store allows a statement; the bound only
  // keeps a broken store from hanging the test.
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while (!done.load() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(5ms);
  }
  const bool returned_while_frozen = done.load();
  frozen.thaw();
  taker.join();
  ASSERT_TRUE(returned_while_frozen) << "take() waited on the stopped backend";
  ASSERT_TRUE(during.is_ok()) << during.status().to_string();
  EXPECT_GE(during->first, before->end);
  // The stopped backend, once it runs again, may still commit the take it
  // was sent: a gap beside the new range, never the same numbers.
  Result<SequenceRange> after = store.take("orders", 0);
  ASSERT_TRUE(after.is_ok()) << after.status().to_string();
  EXPECT_GE(after->first, during->end);
}

// Concurrent takers of one row rely on READ COMMITTED: each UPDATE waits for
// the one before and applies itself to the row as that one left it. Under a
// stricter default isolation a database may have been given, every taker
// that met a concurrent one would fail with a serialisation error instead.
TEST_F(PostgresSharedServerTest, ConcurrentTakersSucceedWhateverTheDefaultIsolation) {
  const std::string serializable = conninfo_ + "%20-cdefault_transaction_isolation%3Dserializable";
  constexpr int kTakers = 6;
  constexpr int kTakesEach = 30;
  std::vector<std::unique_ptr<TicketStore>> stores;
  for (int i = 0; i < kTakers; ++i) {
    Result<std::unique_ptr<TicketStore>> s = open_postgres_ticket_store(serializable, clock_);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    stores.push_back(std::move(s.value()));
  }
  ASSERT_TRUE(stores[0]->create("orders", 0, 10).is_ok());
  for (auto& s : stores) ASSERT_TRUE(s->get("orders").is_ok());  // connected and migrated
  std::vector<std::vector<Status>> failures(kTakers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kTakers; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < kTakesEach; ++k) {
        Result<SequenceRange> r = stores[static_cast<std::size_t>(i)]->take("orders", 0);
        if (!r.is_ok()) failures[static_cast<std::size_t>(i)].push_back(r.status());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::size_t failed = 0;
  for (const std::vector<Status>& f : failures) {
    failed += f.size();
    if (!f.empty()) ADD_FAILURE() << f.front().to_string();
  }
  EXPECT_EQ(failed, 0u);
  Result<SequenceInfo> info = stores[0]->get("orders");
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->next_value, 10 * (kTakers * kTakesEach - static_cast<int>(failed)));
}

// Migrators queue on the migration lock and read the version after taking
// it; under REPEATABLE READ or SERIALIZABLE that read would come from a
// snapshot older than the lock, and a migrator would apply again what the
// one before it had just committed.
TEST_F(PostgresSharedServerTest, ConcurrentMigratorsSucceedWhateverTheDefaultIsolation) {
  const std::string repeatable =
      conninfo_ + "%20-cdefault_transaction_isolation%3Drepeatable%5C%20read";
  constexpr int kMigrators = 6;
  std::vector<std::unique_ptr<TicketStore>> stores;
  for (int i = 0; i < kMigrators; ++i) {
    PostgresTicketStoreOptions options;
    options.migrate = false;
    Result<std::unique_ptr<TicketStore>> s =
        open_postgres_ticket_store(repeatable, clock_, options);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    stores.push_back(std::move(s.value()));
  }
  std::vector<Status> results(kMigrators);
  std::vector<std::thread> threads;
  for (int i = 0; i < kMigrators; ++i) {
    threads.emplace_back([&, i] {
      results[static_cast<std::size_t>(i)] = stores[static_cast<std::size_t>(i)]->migrate();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.is_ok()) << s.to_string();
  Result<std::string> count =
      Connection(conninfo_).query("SELECT COUNT(*) FROM snowid_schema_migrations");
  ASSERT_TRUE(count.is_ok()) << count.status().to_string();
  EXPECT_EQ(count.value(), "2");
}

// A server that refuses writes (a standby, or a primary being demoted during
// a failover) is a passing state, as a read-only SQLite file is: retry, on a
// new connection, which may reach the new primary. A final answer would
// stop every SequenceBuffer on it for good.
TEST_F(PostgresSharedServerTest, ReadOnlyServerIsUnavailable) {
  Result<std::unique_ptr<TicketStore>> writer = open_postgres_ticket_store(conninfo_, clock_);
  ASSERT_TRUE(writer.is_ok());
  ASSERT_TRUE(writer.value()->create("orders", 0, 10).is_ok());
  Result<std::unique_ptr<TicketStore>> reader =
      open_postgres_ticket_store(conninfo_ + "%20-cdefault_transaction_read_only%3Don", clock_);
  ASSERT_TRUE(reader.is_ok());
  Result<SequenceRange> taken = reader.value()->take("orders", 0);
  EXPECT_EQ(taken.status().code(), Code::kUnavailable) << taken.status().to_string();
  EXPECT_NE(taken.status().message().find("25006"), std::string::npos) << taken.status().message();
  const Status created = reader.value()->create("other", 0, 10);
  EXPECT_EQ(created.code(), Code::kUnavailable) << created.to_string();
  Result<SequenceInfo> info = reader.value()->get("orders");
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->next_value, 0);
}

// The store's connections carry a name of their own: the server is shared
// with tests running at the same time, whose connections must live.
TEST_F(PostgresSharedServerTest, ConnectionClosedByTheServerIsReplaced) {
  const std::string app = "snowid_closed_" + std::to_string(::getpid());
  Result<std::unique_ptr<TicketStore>> opened =
      open_postgres_ticket_store(conninfo_ + "&application_name=" + app, clock_);
  ASSERT_TRUE(opened.is_ok());
  TicketStore& store = *opened.value();
  ASSERT_TRUE(store.create("orders", 0, 10).is_ok());
  Connection killer(conninfo_);
  Result<std::string> killed = killer.query(
      "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity "
      "WHERE application_name = '" +
      app + "'");
  ASSERT_TRUE(killed.is_ok()) << killed.status().to_string();
  EXPECT_NE(killed.value(), "0");
  Result<SequenceRange> r = store.take("orders", 0);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), (SequenceRange{0, 10}));
}

TEST_F(PostgresSharedServerTest, ListIsInByteOrderWhateverTheDatabaseCollation) {
  // The scratch cluster's default collation is C already; ICU's root
  // collation (a, A, b, B) on the column shows the store does not depend on it.
  Connection admin(conninfo_);
  Result<std::string> collation =
      admin.query("SELECT collname FROM pg_collation WHERE collname = 'und-x-icu'");
  ASSERT_TRUE(collation.is_ok()) << collation.status().to_string();
  ASSERT_EQ(collation.value(), "und-x-icu") << "this PostgreSQL has no ICU collations";
  Result<std::unique_ptr<TicketStore>> opened = open_postgres_ticket_store(conninfo_, clock_);
  ASSERT_TRUE(opened.is_ok());
  TicketStore& store = *opened.value();
  ASSERT_TRUE(store.migrate().is_ok());
  ASSERT_TRUE(
      admin.query("ALTER TABLE snowid_sequences ALTER COLUMN name TYPE text COLLATE \"und-x-icu\"")
          .is_ok());
  for (const char* name : {"b", "B", "a", "A"}) ASSERT_TRUE(store.create(name, 0, 1).is_ok());
  Result<std::string> column_order =
      admin.query("SELECT string_agg(name, ',' ORDER BY name) FROM snowid_sequences");
  ASSERT_TRUE(column_order.is_ok());
  ASSERT_EQ(column_order.value(), "a,A,b,B");
  Result<std::vector<SequenceInfo>> rows = store.list();
  ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
  std::vector<std::string> names;
  for (const SequenceInfo& r : rows.value()) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"A", "B", "a", "b"}));
}

}  // namespace
}  // namespace snowid::sequences::conformance
