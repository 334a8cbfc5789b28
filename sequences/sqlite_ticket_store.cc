// The ticket table in an SQLite file (include/snowid/sqlite_ticket_store.h).
//
// One connection per store, used under the store's mutex: SQLite's own
// locking then only has to arbitrate between processes (and between stores
// of one process, each with its connection). The file runs in WAL mode with
// synchronous=FULL: every commit is on disk before take() returns its range.
// synchronous=NORMAL would be faster and is safe against a crash of the
// process, but after a power cut or an OS crash the last commits before the
// WAL was synced can vanish; the next take() would then return a range that
// was already handed out. Uniqueness across a crash is the one promise that
// may never break, so every commit pays its fsync.
#include "snowid/sqlite_ticket_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mutex.h"
#include "schema.h"
#include "sql_texts.h"
#include "store_errors.h"

namespace snowid {

using internal::Mutex;
using internal::MutexLock;
namespace {

using sequences::Migration;

// Version n is kMigrations[n - 1]. Version 2 is PostgreSQL's gapless
// function: SQLite's gapless number is a statement the caller runs
// (sql/sqlite_gapless.sql), so there is nothing to create here.
const Migration kMigrations[] = {
    {1, "ticket_table", sequences::sqlite_sql::kTicketTable},
    {2, "postgres_gapless_function", {}},
};
static_assert(std::size(kMigrations) == sequences::kSchemaVersion);

// The contract's errors from an SQLite result code. `what` says which step
// failed; the message carries SQLite's own words.
Status sqlite_status(sqlite3* db, int rc, std::string_view what) {
  const std::string said = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const std::string message = "sqlite: " + std::string(what) + ": " + said;
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status(Code::kUnavailable, message + " (another writer holds the database)");
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_NOMEM:
    case SQLITE_READONLY:
    case SQLITE_PROTOCOL:
    case SQLITE_INTERRUPT:
      return Status(Code::kUnavailable, message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status(Code::kDataLoss, message);
    case SQLITE_ERROR:
      if (said.rfind("no such table", 0) == 0) return sequences::missing_schema_error(said);
      return Status(Code::kFailedPrecondition, message);
    default:
      return Status(Code::kFailedPrecondition, message);
  }
}

// One prepared statement, finalised on destruction.
class Statement {
 public:
  explicit Statement(sqlite3* db) : db_(db) {}
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Status prepare(std::string_view sql) {
    const int rc =
        sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
    if (rc != SQLITE_OK) return sqlite_status(db_, rc, "prepare");
    return Status::ok();
  }
  void bind(int index, std::string_view text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int index, std::int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(stmt_); }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  bool is_integer(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_INTEGER; }
  std::string text(int column) const {
    const unsigned char* p = sqlite3_column_text(stmt_, column);
    const int n = sqlite3_column_bytes(stmt_, column);
    return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), n);
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

constexpr std::string_view kSelectColumns =
    "SELECT name, next_value, step, created, updated FROM snowid_sequences";

class SqliteTicketStore final : public TicketStore {
 public:
  SqliteTicketStore(sqlite3* db, const Clock& clock) : db_(db), clock_(clock) {}
  ~SqliteTicketStore() override { sqlite3_close_v2(db_); }

  Status migrate() override {
    MutexLock lock(mu_);
    for (;;) {
      // IMMEDIATE: the write lock first, so concurrent migrators queue here
      // and each sees the version the one before it committed.
      if (Status s = exec("BEGIN IMMEDIATE", "begin a migration"); !s.is_ok()) return s;
      Result<std::int64_t> version = schema_version();
      if (!version.is_ok()) return rollback(version.status());
      if (version.value() > sequences::kSchemaVersion) {
        return rollback(sequences::newer_schema_error(version.value()));
      }
      if (version.value() == sequences::kSchemaVersion) {
        // A failed COMMIT leaves the transaction open, and with it the
        // file's write lock: end it, as every other failure here does.
        if (Status s = exec("COMMIT", "commit"); !s.is_ok()) return rollback(s);
        return Status::ok();
      }
      const Migration& m = kMigrations[version.value()];
      if (!m.sql.empty()) {
        const std::string sql(m.sql);
        if (Status s = exec(sql.c_str(), "migration " + std::string(m.name)); !s.is_ok()) {
          return rollback(s);
        }
      }
      Statement record(db_);
      if (Status s = record.prepare(
              "INSERT INTO snowid_schema_migrations (version, name, applied) VALUES (?1, ?2, ?3)");
          !s.is_ok()) {
        return rollback(s);
      }
      record.bind(1, m.version);
      record.bind(2, m.name);
      record.bind(3, unix_ms(clock_.wall_now()));
      if (const int rc = record.step(); rc != SQLITE_DONE) {
        return rollback(sqlite_status(db_, rc, "record migration " + std::string(m.name)));
      }
      if (Status s = exec("COMMIT", "commit migration " + std::string(m.name)); !s.is_ok()) {
        return rollback(s);
      }
    }
  }

  Status create(std::string_view name, std::int64_t start, std::int64_t step) override {
    if (Status s = validate_sequence_create(name, start, step); !s.is_ok()) return s;
    const std::int64_t now = unix_ms(clock_.wall_now());
    MutexLock lock(mu_);
    Statement insert(db_);
    if (Status s = insert.prepare(
            "INSERT INTO snowid_sequences (name, next_value, step, created, updated) "
            "VALUES (?1, ?2, ?3, ?4, ?4)");
        !s.is_ok()) {
      return s;
    }
    insert.bind(1, name);
    insert.bind(2, start);
    insert.bind(3, step);
    insert.bind(4, now);
    const int rc = insert.step();
    if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE) {
      return sequences::sequence_exists_error(name);
    }
    if (rc != SQLITE_DONE) return sqlite_status(db_, rc, "create sequence");
    return Status::ok();
  }

  Result<SequenceRange> take(std::string_view name, std::int64_t size) override {
    if (Status s = validate_sequence_take(name, size); !s.is_ok()) return s;
    const std::int64_t now = unix_ms(clock_.wall_now());
    MutexLock lock(mu_);
    // A miss is either no row or a spent one; the follow-up read tells which.
    // A row created between the two statements is taken on the second pass
    // (rows are never deleted, so a third pass cannot be needed).
    for (int pass = 0; pass < 2; ++pass) {
      Result<std::optional<SequenceRange>> taken = advance(name, size, now);
      if (!taken.is_ok()) return taken.status();
      if (taken.value().has_value()) return *taken.value();
      Result<std::optional<SequenceInfo>> row = read(name);
      if (!row.is_ok()) return row.status();
      if (!row.value().has_value()) return sequences::no_sequence_error(name);
      const SequenceInfo& info = *row.value();
      const std::int64_t n = size == 0 ? info.step : size;
      if (n > std::numeric_limits<std::int64_t>::max() - info.next_value) {
        return sequences::sequence_spent_error(name, n, info.next_value);
      }
    }
    return Status(Code::kUnavailable,
                  "sqlite: sequence " + sequences::quoted_name(name) + " changed during take");
  }

  Result<SequenceInfo> get(std::string_view name) override {
    if (Status s = validate_sequence_name(name); !s.is_ok()) return s;
    MutexLock lock(mu_);
    Result<std::optional<SequenceInfo>> row = read(name);
    if (!row.is_ok()) return row.status();
    if (!row.value().has_value()) return sequences::no_sequence_error(name);
    return std::move(*row.value());
  }

  Result<std::vector<SequenceInfo>> list() override {
    MutexLock lock(mu_);
    Statement select(db_);
    // BINARY collation, SQLite's default: byte order, as the contract's "by name".
    if (Status s = select.prepare(std::string(kSelectColumns) + " ORDER BY name"); !s.is_ok()) {
      return s;
    }
    std::vector<SequenceInfo> out;
    for (;;) {
      const int rc = select.step();
      if (rc == SQLITE_DONE) return out;
      if (rc != SQLITE_ROW) return sqlite_status(db_, rc, "list sequences");
      Result<SequenceInfo> info = row_of(select);
      if (!info.is_ok()) return info.status();
      out.push_back(std::move(info.value()));
    }
  }

  std::string_view kind() const noexcept override { return "sqlite"; }

  // For a store opened without migrating: a schema newer than this code is
  // refused, as migrate() would, since its rules may not be the ones this
  // code keeps. A missing schema is left to the calls ("run migrate").
  Status check_schema() {
    MutexLock lock(mu_);
    Result<std::int64_t> version = schema_version();
    if (!version.is_ok()) return version.status();
    if (version.value() > sequences::kSchemaVersion) {
      return sequences::newer_schema_error(version.value());
    }
    return Status::ok();
  }

  // Used by open_sqlite_ticket_store() before the store is shared.
  Status configure(Duration busy_timeout) {
    MutexLock lock(mu_);
    const int timeout_ms = static_cast<int>(std::clamp<std::int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(busy_timeout).count(), 0,
        std::numeric_limits<int>::max()));
    sqlite3_extended_result_codes(db_, 1);
    // Switching a new file to WAL needs it to itself for a moment. When
    // another connection is opening it too (daemons starting together)
    // SQLite answers BUSY at once instead of calling the busy handler; when
    // one is reading it, each try may first wait a whole busy timeout. So
    // the busy handler is off for the switch, and this loop waits in its
    // place, counting the time slept, up to the busy timeout in all.
    sqlite3_busy_timeout(db_, 0);
    constexpr int kRetryMs = 5;
    for (int waited_ms = 0;; waited_ms += kRetryMs) {
      // Preparing reads the schema, which a writer of a file not yet in WAL
      // mode locks out: a busy prepare is retried as a busy step is.
      Statement wal(db_);
      const Status prepared = wal.prepare("PRAGMA journal_mode = WAL");
      const int rc = prepared.is_ok() ? wal.step() : sqlite3_extended_errcode(db_);
      if (rc == SQLITE_ROW) {
        // "memory" for an in-memory database, which has no journal file.
        if (const std::string mode = wal.text(0); mode != "wal" && mode != "memory") {
          return Status(Code::kUnavailable, "sqlite: the database refused WAL mode (" + mode + ")");
        }
        break;
      }
      const int primary = rc & 0xff;
      if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) || waited_ms >= timeout_ms) {
        return prepared.is_ok() ? sqlite_status(db_, rc, "switch to WAL") : prepared;
      }
      sqlite3_sleep(kRetryMs);
    }
    sqlite3_busy_timeout(db_, timeout_ms);
    return exec("PRAGMA synchronous = FULL", "set synchronous");
  }

 private:
  Status exec(const char* sql, std::string_view what) REQUIRES(mu_) {
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return sqlite_status(db_, rc, what);
    return Status::ok();
  }

  // Ends a failed transaction and returns `why`. SQLite may have rolled it
  // back itself already (after SQLITE_FULL, for one).
  Status rollback(Status why) REQUIRES(mu_) {
    if (sqlite3_get_autocommit(db_) == 0) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
    return why;
  }

  // The highest recorded migration; 0 without the migrations table.
  Result<std::int64_t> schema_version() REQUIRES(mu_) {
    Statement has(db_);
    if (Status s =
            has.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
        !s.is_ok()) {
      return s;
    }
    has.bind(1, sequences::kMigrationsTable);
    if (const int rc = has.step(); rc != SQLITE_ROW) {
      return sqlite_status(db_, rc, "look for the migrations table");
    }
    if (has.integer(0) == 0) return std::int64_t{0};
    Statement max(db_);
    if (Status s = max.prepare("SELECT COALESCE(MAX(version), 0) FROM snowid_schema_migrations");
        !s.is_ok()) {
      return s;
    }
    if (const int rc = max.step(); rc != SQLITE_ROW) {
      return sqlite_status(db_, rc, "read the schema version");
    }
    return max.integer(0);
  }

  // The one statement that takes a range: the row moves forward and says
  // where it now stands, atomically. No row when the sequence is missing or
  // would pass INT64_MAX (the WHERE clause is written so that it cannot
  // overflow: step and size are at most kMaxSequenceRange).
  Result<std::optional<SequenceRange>> advance(std::string_view name, std::int64_t size,
                                               std::int64_t now) REQUIRES(mu_) {
    Statement update(db_);
    if (Status s = update.prepare(
            "UPDATE snowid_sequences"
            "   SET next_value = next_value + COALESCE(NULLIF(?2, 0), step), updated = ?3"
            " WHERE name = ?1"
            "   AND next_value <= 9223372036854775807 - COALESCE(NULLIF(?2, 0), step)"
            " RETURNING next_value, step");
        !s.is_ok()) {
      return s;
    }
    update.bind(1, name);
    update.bind(2, size);
    update.bind(3, now);
    int rc = update.step();
    if (rc == SQLITE_DONE) return std::optional<SequenceRange>();
    if (rc != SQLITE_ROW) return sqlite_status(db_, rc, "take a range");
    const std::int64_t end = update.integer(0);
    const std::int64_t step = update.integer(1);
    // The range counts only once the statement has finished, which is when
    // its autocommit transaction commits.
    rc = update.step();
    if (rc != SQLITE_DONE) return sqlite_status(db_, rc, "commit the range");
    const std::int64_t n = size == 0 ? step : size;
    if (n < 1 || n > kMaxSequenceRange || end < n) {
      return sequences::bad_row_error(name, "a take left next_value " + std::to_string(end) +
                                                " with step " + std::to_string(step));
    }
    return std::optional<SequenceRange>(SequenceRange{end - n, end});
  }

  Result<std::optional<SequenceInfo>> read(std::string_view name) REQUIRES(mu_) {
    Statement select(db_);
    if (Status s = select.prepare(std::string(kSelectColumns) + " WHERE name = ?1"); !s.is_ok()) {
      return s;
    }
    select.bind(1, name);
    const int rc = select.step();
    if (rc == SQLITE_DONE) return std::optional<SequenceInfo>();
    if (rc != SQLITE_ROW) return sqlite_status(db_, rc, "read sequence");
    Result<SequenceInfo> info = row_of(select);
    if (!info.is_ok()) return info.status();
    return std::optional<SequenceInfo>(std::move(info.value()));
  }

  // A row of kSelectColumns. SQLite stores what it is given whatever the
  // column's type, so each value's type is checked too.
  static Result<SequenceInfo> row_of(const Statement& row) {
    SequenceInfo info;
    info.name = row.text(0);
    for (int column = 1; column <= 4; ++column) {
      if (!row.is_integer(column))
        return sequences::bad_row_error(info.name, "a non-integer value");
    }
    info.next_value = row.integer(1);
    info.step = row.integer(2);
    info.created = wall_from_unix_ms(row.integer(3));
    info.updated = wall_from_unix_ms(row.integer(4));
    if (Status s = sequences::check_sequence_row(info); !s.is_ok()) return s;
    return info;
  }

  Mutex mu_;
  sqlite3* const db_ GUARDED_BY(mu_);  // every use of the connection
  const Clock& clock_;
};

}  // namespace

Result<std::unique_ptr<TicketStore>> open_sqlite_ticket_store(const std::string& path,
                                                              const Clock& clock,
                                                              SqliteTicketStoreOptions options) {
  if (path.empty()) return Status(Code::kInvalidArgument, "sqlite: the database path is empty");
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status s = sqlite_status(db, rc, "open " + path);
    sqlite3_close_v2(db);
    return Status(Code::kUnavailable, s.message());
  }
  auto store = std::make_unique<SqliteTicketStore>(db, clock);
  if (Status s = store->configure(options.busy_timeout); !s.is_ok()) return s;
  if (Status s = options.migrate ? store->migrate() : store->check_schema(); !s.is_ok()) return s;
  return std::unique_ptr<TicketStore>(std::move(store));
}

}  // namespace snowid
