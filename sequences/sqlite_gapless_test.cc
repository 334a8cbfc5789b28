// The gapless statement of sql/sqlite_gapless.sql, as docs/sequences.md tells
// a business to use it: eight committers, each with a connection of its own,
// number invoices inside their BEGIN IMMEDIATE transactions and roll some
// back; the committed numbers must be exactly 1..M.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "snowid/sqlite_ticket_store.h"
#include "snowid/testing/simulated_clock.h"
#include "sql_texts.h"
#include "temp_dir.h"

namespace snowid::sequences {
namespace {

// A connection of the test's own; every failure is a test failure.
class Connection {
 public:
  explicit Connection(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
    sqlite3_busy_timeout(db_, 60'000);
  }
  ~Connection() { sqlite3_close_v2(db_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs statements that return no value; false (and a test failure) on error.
  bool exec(const std::string& sql) {
    char* error = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    if (rc != SQLITE_OK) ADD_FAILURE() << sql << ": " << (error != nullptr ? error : "?");
    sqlite3_free(error);
    return rc == SQLITE_OK;
  }

  // Runs the gapless statement for `counter`: the number, or -1 when it
  // returned no row (no such counter), or -2 on an error.
  std::int64_t next_gapless(const std::string& counter) {
    sqlite3_stmt* stmt = nullptr;
    const std::string_view sql = sqlite_sql::kGaplessNext;
    if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) !=
        SQLITE_OK) {
      ADD_FAILURE() << "prepare: " << sqlite3_errmsg(db_);
      return -2;
    }
    const int index = sqlite3_bind_parameter_index(stmt, ":name");
    EXPECT_EQ(index, 1);
    sqlite3_bind_text(stmt, index, counter.c_str(), -1, SQLITE_TRANSIENT);
    std::int64_t out = -1;
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      out = sqlite3_column_int64(stmt, 0);
      rc = sqlite3_step(stmt);
    }
    if (rc != SQLITE_DONE) {
      ADD_FAILURE() << "gapless statement: " << sqlite3_errmsg(db_);
      out = -2;
    }
    sqlite3_finalize(stmt);
    return out;
  }

  std::vector<std::int64_t> column(const std::string& sql) {
    std::vector<std::int64_t> out;
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK);
    while (sqlite3_step(stmt) == SQLITE_ROW) out.push_back(sqlite3_column_int64(stmt, 0));
    sqlite3_finalize(stmt);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

class SqliteGaplessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    Result<std::unique_ptr<TicketStore>> store = open_sqlite_ticket_store(path_, clock_);
    ASSERT_TRUE(store.is_ok()) << store.status().to_string();
    Connection setup(path_);
    ASSERT_TRUE(setup.exec(
        "CREATE TABLE invoices (number BIGINT PRIMARY KEY, committer INTEGER NOT NULL);"
        "INSERT INTO snowid_gapless_counters (name, last_value) VALUES ('invoices', 0);"));
  }

  snowid::testing::SimulatedClock clock_{wall_from_unix_ms(1'893'553'445'678)};
  test_support::TempDir dir_{"snowid-sqlite"};
  std::string path_ = dir_.file("tickets.db");
};

TEST_F(SqliteGaplessTest, ConcurrentCommittersGetGaplessUniqueNumbersAndRollbacksLeaveNoGap) {
  constexpr int kCommitters = 8;
  constexpr int kEach = 25;  // every 5th rolled back: 20 committed each
  std::vector<int> committed(kCommitters, 0);
  std::vector<std::thread> threads;
  for (int c = 0; c < kCommitters; ++c) {
    threads.emplace_back([&, c] {
      Connection db(path_);
      for (int k = 0; k < kEach; ++k) {
        if (!db.exec("BEGIN IMMEDIATE")) return;
        const std::int64_t number = db.next_gapless("invoices");
        if (number < 1) return;
        if (!db.exec("INSERT INTO invoices (number, committer) VALUES (" + std::to_string(number) +
                     ", " + std::to_string(c) + ")")) {
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
  Connection check(path_);
  const std::vector<std::int64_t> numbers =
      check.column("SELECT number FROM invoices ORDER BY number");
  ASSERT_EQ(numbers.size(), static_cast<std::size_t>(total));
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    ASSERT_EQ(numbers[i], static_cast<std::int64_t>(i + 1)) << "a gap or a repeat";
  }
  EXPECT_EQ(check.column("SELECT last_value FROM snowid_gapless_counters WHERE name = 'invoices'"),
            std::vector<std::int64_t>{total});
  // Each committer's own numbers rise: it saw the counter as the committer
  // before it left it.
  for (int c = 0; c < kCommitters; ++c) {
    const std::vector<std::int64_t> mine = check.column(
        "SELECT number FROM invoices WHERE committer = " + std::to_string(c) + " ORDER BY rowid");
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end())) << "committer " << c;
  }
}

TEST_F(SqliteGaplessTest, RolledBackNumberIsGivenToTheNextCommitter) {
  Connection db(path_);
  ASSERT_TRUE(db.exec("BEGIN IMMEDIATE"));
  EXPECT_EQ(db.next_gapless("invoices"), 1);
  ASSERT_TRUE(db.exec("ROLLBACK"));
  ASSERT_TRUE(db.exec("BEGIN IMMEDIATE"));
  EXPECT_EQ(db.next_gapless("invoices"), 1);
  ASSERT_TRUE(db.exec("COMMIT"));
  ASSERT_TRUE(db.exec("BEGIN IMMEDIATE"));
  EXPECT_EQ(db.next_gapless("invoices"), 2);
  ASSERT_TRUE(db.exec("COMMIT"));
}

TEST_F(SqliteGaplessTest, UnknownCounterReturnsNoRow) {
  Connection db(path_);
  ASSERT_TRUE(db.exec("BEGIN IMMEDIATE"));
  EXPECT_EQ(db.next_gapless("no_such_counter"), -1);
  ASSERT_TRUE(db.exec("ROLLBACK"));
}

}  // namespace
}  // namespace snowid::sequences
