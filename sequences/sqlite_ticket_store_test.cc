// The SQLite store: the conformance suites on a file in a temporary
// directory, and what only SQLite does (WAL, the file's write lock, values
// of any type in any column).
#include "snowid/sqlite_ticket_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.h"
#include "ticket_store_conformance.h"

namespace snowid::sequences::conformance {
namespace {

using namespace std::chrono_literals;

// Runs one statement on a connection of its own: the first column of the
// first row as text, "" without rows.
Result<std::string> query_file(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    Status s(Code::kUnavailable, std::string("open: ") + sqlite3_errmsg(db));
    sqlite3_close_v2(db);
    return s;
  }
  sqlite3_busy_timeout(db, 10'000);
  sqlite3_stmt* stmt = nullptr;
  Result<std::string> out = std::string();
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(stmt, 0);
      out = std::string(text != nullptr ? reinterpret_cast<const char*>(text) : "");
      while (rc == SQLITE_ROW) rc = sqlite3_step(stmt);
    }
  }
  if (rc != SQLITE_DONE && rc != SQLITE_OK) {
    out = Status(Code::kFailedPrecondition, sql + ": " + sqlite3_errmsg(db));
  }
  sqlite3_finalize(stmt);
  sqlite3_close_v2(db);
  return out;
}

class SqliteBackend final : public StoreBackend {
 public:
  SqliteBackend() : path_(dir_.file("tickets.db")) {}
  bool made() const { return !dir_.path().empty(); }

  Result<std::unique_ptr<TicketStore>> open(const Clock& clock, bool migrate) override {
    SqliteTicketStoreOptions options;
    options.migrate = migrate;
    // Generous: eight takers queue on the file's write lock, each commit an fsync.
    options.busy_timeout = 30s;
    return open_sqlite_ticket_store(path_, clock, options);
  }
  Result<std::string> query(const std::string& sql) override { return query_file(path_, sql); }
  const std::string& path() const { return path_; }

 private:
  test_support::TempDir dir_{"snowid-sqlite"};  // before path_, which is made from it
  std::string path_;
};

BackendParam sqlite_backend() {
  return {"Sqlite", []() -> Result<std::unique_ptr<StoreBackend>> {
            auto backend = std::make_unique<SqliteBackend>();
            if (!backend->made()) return Status(Code::kUnavailable, "no temporary directory");
            return std::unique_ptr<StoreBackend>(std::move(backend));
          }};
}

INSTANTIATE_TEST_SUITE_P(Sqlite, TicketStoreConformance, ::testing::Values(sqlite_backend()),
                         backend_name);
INSTANTIATE_TEST_SUITE_P(Sqlite, SqlTicketStoreTest, ::testing::Values(sqlite_backend()),
                         backend_name);

class SqliteTicketStoreTest : public ::testing::Test {
 protected:
  snowid::testing::SimulatedClock clock_{wall_from_unix_ms(1'893'553'445'678)};
  test_support::TempDir dir_{"snowid-sqlite"};
  std::string path_ = dir_.file("tickets.db");
};

TEST_F(SqliteTicketStoreTest, FileIsInWalModeWithTheSchema) {
  Result<std::unique_ptr<TicketStore>> store = open_sqlite_ticket_store(path_, clock_);
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  Result<std::string> mode = query_file(path_, "PRAGMA journal_mode");
  ASSERT_TRUE(mode.is_ok());
  EXPECT_EQ(mode.value(), "wal");
  Result<std::string> tables = query_file(
      path_,
      "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master WHERE type = 'table' "
      "ORDER BY name)");
  ASSERT_TRUE(tables.is_ok());
  EXPECT_EQ(tables.value(), "snowid_gapless_counters,snowid_schema_migrations,snowid_sequences");
}

TEST_F(SqliteTicketStoreTest, StoresOnOneFileShareItsSequences) {
  Result<std::unique_ptr<TicketStore>> a = open_sqlite_ticket_store(path_, clock_);
  Result<std::unique_ptr<TicketStore>> b = open_sqlite_ticket_store(path_, clock_);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  ASSERT_TRUE(a.value()->create("orders", 0, 10).is_ok());
  EXPECT_EQ(b.value()->create("orders", 0, 10).code(), Code::kAlreadyExists);
  Result<SequenceRange> first = a.value()->take("orders", 0);
  Result<SequenceRange> second = b.value()->take("orders", 0);
  ASSERT_TRUE(first.is_ok() && second.is_ok());
  EXPECT_EQ(first.value(), (SequenceRange{0, 10}));
  EXPECT_EQ(second.value(), (SequenceRange{10, 20}));
}

// Daemons starting together on one new file: each switches it to WAL and
// migrates it at the same moment.
TEST_F(SqliteTicketStoreTest, StoresOpenedAtOnceOnANewFileAllSucceed) {
  constexpr int kOpeners = 8;
  std::vector<Status> results(kOpeners);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kOpeners; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kOpeners) std::this_thread::yield();
      Result<std::unique_ptr<TicketStore>> store = open_sqlite_ticket_store(path_, clock_);
      results[static_cast<std::size_t>(i)] =
          store.is_ok() ? store.value()->create("s" + std::to_string(i), 0, 1) : store.status();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.is_ok()) << s.to_string();
  Result<std::string> versions = query_file(path_, "SELECT COUNT(*) FROM snowid_schema_migrations");
  ASSERT_TRUE(versions.is_ok());
  EXPECT_EQ(versions.value(), "2");
  Result<std::string> rows = query_file(path_, "SELECT COUNT(*) FROM snowid_sequences");
  ASSERT_TRUE(rows.is_ok());
  EXPECT_EQ(rows.value(), std::to_string(kOpeners));
}

// A file not yet in WAL mode that another connection is reading cannot be
// switched until the reader ends. The open gives up after about the busy
// timeout (bounded here by ten times it); each try of the switch must not
// wait a busy timeout of its own (for the default 5 s, over an hour in all).
TEST_F(SqliteTicketStoreTest, OpenGivesUpOnAReaderOfAFileNotInWalModeAtTheBusyTimeout) {
  sqlite3* reader = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &reader), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(reader, "CREATE TABLE other (a)", nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(reader, "BEGIN; SELECT * FROM other", nullptr, nullptr, nullptr),
            SQLITE_OK);
  SqliteTicketStoreOptions options;
  options.busy_timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<TicketStore>> store = open_sqlite_ticket_store(path_, clock_, options);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(store.status().code(), Code::kUnavailable) << store.status().to_string();
  EXPECT_LT(took, 10 * options.busy_timeout)
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
  ASSERT_EQ(sqlite3_exec(reader, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(reader);
  store = open_sqlite_ticket_store(path_, clock_, options);
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  Result<std::string> mode = query_file(path_, "PRAGMA journal_mode");
  ASSERT_TRUE(mode.is_ok());
  EXPECT_EQ(mode.value(), "wal");
}

TEST_F(SqliteTicketStoreTest, SequencesSurviveClosingTheStore) {
  {
    Result<std::unique_ptr<TicketStore>> store = open_sqlite_ticket_store(path_, clock_);
    ASSERT_TRUE(store.is_ok());
    ASSERT_TRUE(store.value()->create("orders", 0, 10).is_ok());
    ASSERT_TRUE(store.value()->take("orders", 0).is_ok());
  }
  Result<std::unique_ptr<TicketStore>> again = open_sqlite_ticket_store(path_, clock_);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  Result<SequenceRange> r = again.value()->take("orders", 0);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r.value(), (SequenceRange{10, 20}));
}

TEST_F(SqliteTicketStoreTest, WriterHoldingTheFileMakesTakesUnavailableUntilItCommits) {
  SqliteTicketStoreOptions options;
  options.busy_timeout = 50ms;
  Result<std::unique_ptr<TicketStore>> store = open_sqlite_ticket_store(path_, clock_, options);
  ASSERT_TRUE(store.is_ok());
  ASSERT_TRUE(store.value()->create("orders", 0, 10).is_ok());

  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  Result<SequenceRange> blocked = store.value()->take("orders", 0);
  EXPECT_EQ(blocked.status().code(), Code::kUnavailable) << blocked.status().to_string();
  EXPECT_EQ(store.value()->create("other", 0, 10).code(), Code::kUnavailable);
  ASSERT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);

  Result<SequenceRange> r = store.value()->take("orders", 0);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), (SequenceRange{0, 10}));
}

TEST_F(SqliteTicketStoreTest, TextInANumberColumnIsDataLoss) {
  Result<std::unique_ptr<TicketStore>> store = open_sqlite_ticket_store(path_, clock_);
  ASSERT_TRUE(store.is_ok());
  // SQLite keeps a text that does not look like a number as text, and
  // 'abc' >= 0 holds in its ordering, so the CHECK lets it in.
  ASSERT_TRUE(
      query_file(path_, "INSERT INTO snowid_sequences VALUES ('odd', 'abc', 10, 0, 0)").is_ok());
  EXPECT_EQ(store.value()->get("odd").status().code(), Code::kDataLoss);
  EXPECT_EQ(store.value()->list().status().code(), Code::kDataLoss);
}

TEST_F(SqliteTicketStoreTest, FileThatIsNotADatabaseIsRefused) {
  std::ofstream(path_) << "this is not an SQLite database, not even a little bit................"
                          "................................................................";
  Result<std::unique_ptr<TicketStore>> store = open_sqlite_ticket_store(path_, clock_);
  ASSERT_FALSE(store.is_ok());
  EXPECT_EQ(store.status().code(), Code::kDataLoss) << store.status().to_string();
}

TEST_F(SqliteTicketStoreTest, FileInAMissingDirectoryIsUnavailable) {
  Result<std::unique_ptr<TicketStore>> store =
      open_sqlite_ticket_store(dir_.file("no/such/dir/tickets.db"), clock_);
  ASSERT_FALSE(store.is_ok());
  EXPECT_EQ(store.status().code(), Code::kUnavailable) << store.status().to_string();
}

TEST_F(SqliteTicketStoreTest, EmptyPathIsInvalidArgument) {
  Result<std::unique_ptr<TicketStore>> store = open_sqlite_ticket_store("", clock_);
  EXPECT_EQ(store.status().code(), Code::kInvalidArgument);
}

TEST_F(SqliteTicketStoreTest, OpeningWithoutMigrateLeavesAnEmptyFileEmpty) {
  SqliteTicketStoreOptions options;
  options.migrate = false;
  Result<std::unique_ptr<TicketStore>> store = open_sqlite_ticket_store(path_, clock_, options);
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  Result<std::string> tables =
      query_file(path_, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'");
  ASSERT_TRUE(tables.is_ok());
  EXPECT_EQ(tables.value(), "0");
}

}  // namespace
}  // namespace snowid::sequences::conformance
