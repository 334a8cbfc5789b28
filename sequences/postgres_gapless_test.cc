// The gapless function of sql/002_postgres_gapless.sql, as docs/sequences.md
// tells a business to use it: eight committers, each with a connection of
// its own, number invoices inside their transactions and roll some back;
// the committed numbers must be exactly 1..M.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "snowid/postgres_ticket_store.h"
#include "snowid/testing/simulated_clock.h"
#include "testing/postgres_server.h"

namespace snowid::sequences {
namespace {

// A connection of the test's own; every unexpected failure is a test failure.
class Connection {
 public:
  explicit Connection(const std::string& conninfo) : conn_(PQconnectdb(conninfo.c_str())) {
    EXPECT_EQ(PQstatus(conn_), CONNECTION_OK) << PQerrorMessage(conn_);
  }
  ~Connection() { PQfinish(conn_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs `sql` with text parameters: the first column of every row, or the
  // SQLSTATE of the error with `ok` false.
  std::vector<std::string> run(const std::string& sql, const std::vector<std::string>& params,
                               bool& ok, std::string* sqlstate = nullptr) {
    std::vector<const char*> values;
    for (const std::string& p : params) values.push_back(p.c_str());
    PGresult* res = PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                 values.data(), nullptr, nullptr, 0);
    const ExecStatusType st = PQresultStatus(res);
    std::vector<std::string> out;
    ok = st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK;
    if (!ok && sqlstate != nullptr) {
      const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
      *sqlstate = state != nullptr ? state : "";
      last_error_ = PQresultErrorMessage(res);
    } else if (!ok) {
      ADD_FAILURE() << sql << ": " << PQresultErrorMessage(res);
    }
    for (int i = 0; ok && st == PGRES_TUPLES_OK && i < PQntuples(res); ++i) {
      out.emplace_back(PQgetvalue(res, i, 0));
    }
    PQclear(res);
    return out;
  }
  bool exec(const std::string& sql, const std::vector<std::string>& params = {}) {
    bool ok = false;
    run(sql, params, ok);
    return ok;
  }
  const std::string& last_error() const { return last_error_; }

 private:
  PGconn* conn_;
  std::string last_error_;
};

class PostgresGaplessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<testing::PostgresServer*> server = testing::shared_postgres_server();
    ASSERT_TRUE(server.is_ok()) << server.status().to_string();
    Result<std::string> conninfo = server.value()->fresh_schema();
    ASSERT_TRUE(conninfo.is_ok()) << conninfo.status().to_string();
    conninfo_ = conninfo.value();
    // The store's migration installs snowid_next_gapless().
    Result<std::unique_ptr<TicketStore>> store = open_postgres_ticket_store(conninfo_, clock_);
    ASSERT_TRUE(store.is_ok()) << store.status().to_string();
    ASSERT_TRUE(store.value()->migrate().is_ok());
    Connection setup(conninfo_);
    ASSERT_TRUE(setup.exec(
        "CREATE TABLE invoices (number BIGINT PRIMARY KEY, committer INTEGER NOT NULL)"));
    ASSERT_TRUE(setup.exec(
        "INSERT INTO snowid_gapless_counters (name, last_value) VALUES ('invoices', 0)"));
  }

  snowid::testing::SimulatedClock clock_{wall_from_unix_ms(1'893'553'445'678)};
  std::string conninfo_;
};

TEST_F(PostgresGaplessTest, ConcurrentCommittersGetGaplessUniqueNumbersAndRollbacksLeaveNoGap) {
  constexpr int kCommitters = 8;
  constexpr int kEach = 25;  // every 5th rolled back: 20 committed each
  std::vector<int> committed(kCommitters, 0);
  std::vector<std::thread> threads;
  for (int c = 0; c < kCommitters; ++c) {
    threads.emplace_back([&, c] {
      Connection db(conninfo_);
      const std::string me = std::to_string(c);
      for (int k = 0; k < kEach; ++k) {
        if (!db.exec("BEGIN")) return;
        // The number is taken in the statement that inserts the record.
        if (!db.exec("INSERT INTO invoices (number, committer) "
                     "VALUES (snowid_next_gapless('invoices'), $1)",
                     {me})) {
          return;
        }
        if ((k + 1) % 5 == 0) {
          if (!db.exec("ROLLBACK")) return;
        } else {
          if (!db.exec("COMMIT")) return;
          ++committed[static_cast<std::size_t>(c)];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();

  int total = 0;
  for (const int n : committed) {
    EXPECT_EQ(n, kEach - kEach / 5);
    total += n;
  }
  Connection check(conninfo_);
  bool ok = false;
  const std::vector<std::string> numbers =
      check.run("SELECT number FROM invoices ORDER BY number", {}, ok);
  ASSERT_TRUE(ok);
  ASSERT_EQ(numbers.size(), static_cast<std::size_t>(total));
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    ASSERT_EQ(numbers[i], std::to_string(i + 1)) << "a gap or a repeat";
  }
  EXPECT_EQ(
      check.run("SELECT last_value FROM snowid_gapless_counters WHERE name = 'invoices'", {}, ok),
      std::vector<std::string>{std::to_string(total)});
}

TEST_F(PostgresGaplessTest, RolledBackNumberIsGivenToTheNextCommitter) {
  Connection db(conninfo_);
  bool ok = false;
  ASSERT_TRUE(db.exec("BEGIN"));
  EXPECT_EQ(db.run("SELECT snowid_next_gapless('invoices')", {}, ok),
            std::vector<std::string>{"1"});
  ASSERT_TRUE(db.exec("ROLLBACK"));
  EXPECT_EQ(db.run("SELECT snowid_next_gapless($1)", {"invoices"}, ok),
            std::vector<std::string>{"1"});
  EXPECT_EQ(db.run("SELECT snowid_next_gapless($1)", {"invoices"}, ok),
            std::vector<std::string>{"2"});
}

TEST_F(PostgresGaplessTest, UnknownCounterRaisesNoDataFound) {
  Connection db(conninfo_);
  bool ok = true;
  std::string sqlstate;
  db.run("SELECT snowid_next_gapless('no_such_counter')", {}, ok, &sqlstate);
  EXPECT_FALSE(ok);
  EXPECT_EQ(sqlstate, "P0002");
  EXPECT_NE(db.last_error().find("no_such_counter"), std::string::npos) << db.last_error();
}

}  // namespace
}  // namespace snowid::sequences
