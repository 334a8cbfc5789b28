// The ticket table in PostgreSQL (include/snowid/postgres_ticket_store.h),
// through libpq.
//
// A pool of at most `connections` connections, made on demand and lent to one
// call at a time under a mutex and a condition variable. A connection that
// breaks (the server went away, or closed it) is dropped, with every idle one
// beside it, since a restarted server has closed them all; the next call
// connects afresh. Values always travel as parameters (text format), never
// inside the SQL text.
//
// Every statement is sent without blocking and its answer awaited with
// poll() for at most statement_timeout + connect_timeout (answer_budget()).
// The server's own statement_timeout normally ends a slow statement first
// (57014, and the connection is kept). The bound on this side is for a
// server that no longer answers at all: a stopped or wedged backend, or a
// host gone without a reset, whose kernel may keep acknowledging packets so
// that TCP notices nothing for many minutes. Such a connection is dropped as
// broken, so the call can be retried on a new one instead of holding the
// pool (and a SequenceBuffer's fetcher) for ever.
#include "snowid/postgres_ticket_store.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mutex.h"
#include "pg_io.h"
#include "schema.h"
#include "sql_texts.h"
#include "store_errors.h"

namespace snowid {

using internal::CondVar;
using internal::Mutex;
using internal::MutexLock;
namespace {

using pg::Answer;
using pg::exec_bounded;
using pg::PgResult;
using pg::trimmed;
using sequences::Migration;

// Version n is kMigrations[n - 1]; the versions mean what they mean on
// SQLite (sqlite_ticket_store.cc).
const Migration kMigrations[] = {
    {1, "ticket_table", sequences::postgres_sql::kTicketTable},
    {2, "postgres_gapless_function", sequences::postgres_sql::kGaplessFunction},
};
static_assert(std::size(kMigrations) == sequences::kSchemaVersion);

// The advisory lock that serialises migrators of one database: "snowid" in
// ASCII, read as a number.
constexpr std::string_view kMigrationLock = "126926487505252";

// What a failed statement means under the contract. Sets `broken` when the
// connection cannot be used again.
Status pg_status(PGconn* conn, const PGresult* res, std::string_view what, bool& broken) {
  const char* state = res != nullptr ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  const std::string said =
      trimmed(res != nullptr && *PQresultErrorMessage(res) != '\0' ? PQresultErrorMessage(res)
                                                                   : PQerrorMessage(conn));
  const std::string code = state != nullptr ? state : "";
  std::string message = "postgresql: " + std::string(what) + ": " + said;
  if (!code.empty()) message += " (SQLSTATE " + code + ")";
  if (PQstatus(conn) != CONNECTION_OK) broken = true;
  // No SQLSTATE: libpq's own failure, which means the connection.
  if (code.empty()) {
    broken = true;
    return Status(Code::kUnavailable, message);
  }
  const std::string_view cls = std::string_view(code).substr(0, 2);
  if (cls == "08" || code == "57P01" || code == "57P02" || code == "57P03") {
    broken = true;  // connection exceptions; the server shutting down or starting
    return Status(Code::kUnavailable, message);
  }
  // A server that refuses writes: a standby, or a primary being demoted in a
  // failover. It passes, as a read-only SQLite file does; a new connection
  // may reach the new primary (a multi-host conninfo, or a moved DNS name).
  if (code == "25006") {
    broken = true;
    return Status(Code::kUnavailable, message);
  }
  // Timeouts (57014: statement_timeout), lost serialisation or deadlock,
  // a lock not available, resources short (53: too many connections), and
  // the server's own system errors: all pass.
  if (code == "57014" || code == "40001" || code == "40P01" || code == "55P03" || cls == "53" ||
      cls == "58") {
    return Status(Code::kUnavailable, message);
  }
  if (code == "42P01") return sequences::missing_schema_error(said);
  if (code == "23505") return Status(Code::kAlreadyExists, message);
  if (code == "XX001" || code == "XX002") return Status(Code::kDataLoss, message);
  return Status(Code::kFailedPrecondition, message);
}

// How long one statement's answer is awaited: the server's statement_timeout
// plus the connect timeout's allowance for the network. Sums that would
// overflow are cut to a year, which is for ever here.
Duration answer_budget(const PostgresTicketStoreOptions& o) {
  constexpr Duration kYear = std::chrono::hours(24 * 365);
  if (o.statement_timeout >= kYear || o.connect_timeout >= kYear - o.statement_timeout) {
    return kYear;
  }
  return o.statement_timeout + o.connect_timeout;
}

Result<std::int64_t> parse_int(const PGresult* res, int row, int column, std::string_view name) {
  if (PQgetisnull(res, row, column)) return sequences::bad_row_error(name, "a NULL value");
  const char* text = PQgetvalue(res, row, column);
  const char* end = text + PQgetlength(res, row, column);
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end) {
    return sequences::bad_row_error(
        name, "the value \"" + std::string(text, end) + "\" is not a 64-bit integer");
  }
  return value;
}

constexpr const char* kSelectColumns =
    "SELECT name, next_value, step, created, updated FROM snowid_sequences";

Result<SequenceInfo> row_of(const PGresult* res, int row) {
  SequenceInfo info;
  info.name = PQgetvalue(res, row, 0);
  std::int64_t values[4] = {};
  for (int column = 1; column <= 4; ++column) {
    Result<std::int64_t> v = parse_int(res, row, column, info.name);
    if (!v.is_ok()) return v.status();
    values[column - 1] = v.value();
  }
  info.next_value = values[0];
  info.step = values[1];
  info.created = wall_from_unix_ms(values[2]);
  info.updated = wall_from_unix_ms(values[3]);
  if (Status s = sequences::check_sequence_row(info); !s.is_ok()) return s;
  return info;
}

class PostgresTicketStore;

// One connection lent by the pool to one call; given back on destruction.
class Lease {
 public:
  Lease(PostgresTicketStore* store, PGconn* conn, bool reused, const Clock& clock, Duration budget)
      : store_(store), conn_(conn), reused_(reused), clock_(&clock), budget_(budget) {}
  Lease(Lease&& other) noexcept
      : store_(std::exchange(other.store_, nullptr)),
        conn_(std::exchange(other.conn_, nullptr)),
        reused_(other.reused_),
        clock_(other.clock_),
        budget_(other.budget_),
        broken_(other.broken_) {}
  Lease& operator=(Lease&&) = delete;
  Lease(const Lease&) = delete;
  ~Lease();

  // Runs one statement; OK for a command or rows, the contract's error
  // otherwise (the connection marked broken when it is).
  Result<PgResult> run(const char* sql, std::initializer_list<std::string_view> params,
                       std::string_view what) {
    std::vector<std::string> owned(params.begin(), params.end());
    std::vector<const char*> values;
    values.reserve(owned.size());
    for (const std::string& p : owned) values.push_back(p.c_str());
    return checked(exec_bounded(conn_, sql, &values, *clock_, budget_), what);
  }

  // Runs a text of several statements without parameters (a migration).
  Result<PgResult> run_script(const std::string& sql, std::string_view what) {
    return checked(exec_bounded(conn_, sql.c_str(), nullptr, *clock_, budget_), what);
  }

  // Ends a failed transaction, if one is open, and returns `why`.
  Status rollback(Status why) {
    if (!broken_ && PQtransactionStatus(conn_) != PQTRANS_IDLE) {
      const Answer answer = exec_bounded(conn_, "ROLLBACK", nullptr, *clock_, budget_);
      if (answer.result == nullptr || PQresultStatus(answer.result.get()) != PGRES_COMMAND_OK) {
        broken_ = true;
      }
    }
    return why;
  }

  bool broken() const noexcept { return broken_; }
  // True when the connection served an earlier call: a failure on it may
  // only mean the server restarted since.
  bool reused() const noexcept { return reused_; }

 private:
  Result<PgResult> checked(Answer answer, std::string_view what) {
    if (answer.timed_out) {
      // The statement may still run, and even commit: a take's range is
      // then a gap. The connection is out of step with its answers.
      broken_ = true;
      return Status(
          Code::kUnavailable,
          "postgresql: " + std::string(what) + ": no answer within " +
              std::to_string(
                  std::chrono::duration_cast<std::chrono::milliseconds>(budget_).count()) +
              " ms (statement_timeout + connect_timeout); the connection is dropped");
    }
    PgResult& res = answer.result;
    const ExecStatusType st = res != nullptr ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return std::move(res);
    return pg_status(conn_, res.get(), what, broken_);
  }

  PostgresTicketStore* store_;
  PGconn* conn_;
  bool reused_;
  const Clock* clock_;
  Duration budget_;
  bool broken_ = false;
};

class PostgresTicketStore final : public TicketStore {
 public:
  PostgresTicketStore(std::string conninfo, const Clock& clock, PostgresTicketStoreOptions options)
      : conninfo_(std::move(conninfo)), clock_(clock), options_(options) {}

  ~PostgresTicketStore() override {
    for (PGconn* c : idle_) PQfinish(c);
  }

  Status migrate() override {
    return with_connection(
               [&](Lease& lease) -> Result<bool> {
                 if (Status s = migrate_on(lease); !s.is_ok()) return s;
                 return true;
               },
               /*prepare=*/false, /*retry=*/true)
        .status();
  }

  Status create(std::string_view name, std::int64_t start, std::int64_t step) override {
    if (Status s = validate_sequence_create(name, start, step); !s.is_ok()) return s;
    const std::string now = std::to_string(unix_ms(clock_.wall_now()));
    const std::string start_text = std::to_string(start);
    const std::string step_text = std::to_string(step);
    // No retry: an insert that committed before the connection broke would
    // come back as "exists already".
    Result<bool> done = with_connection(
        [&](Lease& lease) -> Result<bool> {
          Result<PgResult> res = lease.run(
              "INSERT INTO snowid_sequences (name, next_value, step, created, updated)"
              " VALUES ($1, $2, $3, $4, $4)",
              {name, start_text, step_text, now}, "create sequence");
          if (!res.is_ok()) {
            if (res.status().code() == Code::kAlreadyExists) {
              return sequences::sequence_exists_error(name);
            }
            return res.status();
          }
          return true;
        },
        /*prepare=*/true, /*retry=*/false);
    return done.is_ok() ? Status::ok() : done.status();
  }

  Result<SequenceRange> take(std::string_view name, std::int64_t size) override {
    if (Status s = validate_sequence_take(name, size); !s.is_ok()) return s;
    const std::string now = std::to_string(unix_ms(clock_.wall_now()));
    const std::string size_text = std::to_string(size);
    // Retrying after a broken connection is safe: a take that committed
    // unseen leaves a gap, and the retry takes the next range.
    return with_connection(
        [&](Lease& lease) -> Result<SequenceRange> {
          // A miss is either no row or a spent one; the follow-up read tells
          // which. A row created between the two statements is taken on the
          // second pass (rows are never deleted).
          for (int pass = 0; pass < 2; ++pass) {
            // The one statement that takes a range. Concurrent takers of a
            // row queue on its lock, and each applies its increment to the
            // row as the one before left it. The WHERE clause cannot
            // overflow: step and size are at most kMaxSequenceRange.
            Result<PgResult> res = lease.run(
                "UPDATE snowid_sequences"
                "   SET next_value = next_value + COALESCE(NULLIF($2::bigint, 0), step),"
                "       updated = $3::bigint"
                " WHERE name = $1"
                "   AND next_value <= 9223372036854775807 - COALESCE(NULLIF($2::bigint, 0), step)"
                " RETURNING next_value, step",
                {name, size_text, now}, "take a range");
            if (!res.is_ok()) return res.status();
            if (PQntuples(res.value().get()) == 1) {
              Result<std::int64_t> end = parse_int(res.value().get(), 0, 0, name);
              Result<std::int64_t> step = parse_int(res.value().get(), 0, 1, name);
              if (!end.is_ok()) return end.status();
              if (!step.is_ok()) return step.status();
              const std::int64_t n = size == 0 ? step.value() : size;
              if (n < 1 || n > kMaxSequenceRange || end.value() < n) {
                return sequences::bad_row_error(
                    name, "a take left next_value " + std::to_string(end.value()) + " with step " +
                              std::to_string(step.value()));
              }
              return SequenceRange{end.value() - n, end.value()};
            }
            Result<std::optional<SequenceInfo>> row = read(lease, name);
            if (!row.is_ok()) return row.status();
            if (!row.value().has_value()) return sequences::no_sequence_error(name);
            const SequenceInfo& info = *row.value();
            const std::int64_t n = size == 0 ? info.step : size;
            if (n > std::numeric_limits<std::int64_t>::max() - info.next_value) {
              return sequences::sequence_spent_error(name, n, info.next_value);
            }
          }
          return Status(Code::kUnavailable, "postgresql: sequence " + sequences::quoted_name(name) +
                                                " changed during take");
        },
        /*prepare=*/true, /*retry=*/true);
  }

  Result<SequenceInfo> get(std::string_view name) override {
    if (Status s = validate_sequence_name(name); !s.is_ok()) return s;
    return with_connection(
        [&](Lease& lease) -> Result<SequenceInfo> {
          Result<std::optional<SequenceInfo>> row = read(lease, name);
          if (!row.is_ok()) return row.status();
          if (!row.value().has_value()) return sequences::no_sequence_error(name);
          return std::move(*row.value());
        },
        /*prepare=*/true, /*retry=*/true);
  }

  Result<std::vector<SequenceInfo>> list() override {
    return with_connection(
        [&](Lease& lease) -> Result<std::vector<SequenceInfo>> {
          // COLLATE "C": byte order, as the contract's "by name", whatever
          // the database's collation.
          Result<PgResult> res =
              lease.run((std::string(kSelectColumns) + " ORDER BY name COLLATE \"C\"").c_str(), {},
                        "list sequences");
          if (!res.is_ok()) return res.status();
          std::vector<SequenceInfo> out;
          const int rows = PQntuples(res.value().get());
          out.reserve(static_cast<std::size_t>(rows));
          for (int i = 0; i < rows; ++i) {
            Result<SequenceInfo> info = row_of(res.value().get(), i);
            if (!info.is_ok()) return info.status();
            out.push_back(std::move(info.value()));
          }
          return out;
        },
        /*prepare=*/true, /*retry=*/true);
  }

  std::string_view kind() const noexcept override { return "postgresql"; }

  // Takes back a lent connection: kept for the next call if it is sound,
  // closed otherwise, with every idle one when it broke.
  void give_back(PGconn* conn, bool broken) {
    std::vector<PGconn*> to_close;
    if (broken || PQstatus(conn) != CONNECTION_OK || PQtransactionStatus(conn) != PQTRANS_IDLE) {
      to_close.push_back(conn);
      conn = nullptr;
    }
    {
      MutexLock lock(mu_);
      --lent_;
      if (conn != nullptr) {
        idle_.push_back(conn);
      } else if (broken) {
        to_close.insert(to_close.end(), idle_.begin(), idle_.end());
        idle_.clear();
      }
    }
    cv_.notify_all();
    for (PGconn* c : to_close) PQfinish(c);
  }

 private:
  // Runs `call` on a lent connection, with `prepare` first making sure of
  // the schema (prepare_schema()) until that has succeeded once. With
  // `retry`, a call that failed because a connection from an earlier call
  // had broken (the server restarted in between) is tried once more on
  // another connection.
  template <typename F>
  auto with_connection(F&& call, bool prepare, bool retry)
      -> decltype(call(std::declval<Lease&>())) {
    using R = decltype(call(std::declval<Lease&>()));
    for (int attempt = 0;; ++attempt) {
      Result<Lease> lease = acquire();
      if (!lease.is_ok()) return R(lease.status());
      if (prepare && !schema_ready()) {
        if (Status s = prepare_schema(lease.value()); !s.is_ok()) {
          // Migrating or reading the version again is always safe.
          if (attempt == 0 && lease->broken() && lease->reused()) continue;
          return R(s);
        }
      }
      R result = call(lease.value());
      if (!result.is_ok() && retry && attempt == 0 && lease->broken() && lease->reused()) {
        continue;
      }
      return result;
    }
  }

  bool schema_ready() {
    MutexLock lock(mu_);
    return schema_ready_;
  }

  // Migrates the schema when the store should (options.migrate). Otherwise
  // only reads its version: a schema newer than this code is refused, as
  // migrate() would, since its rules may not be the ones this code keeps; a
  // missing one is left to the call, which then says "run migrate".
  Status prepare_schema(Lease& lease) {
    if (options_.migrate) return migrate_on(lease);
    Result<std::int64_t> version = schema_version(lease);
    if (!version.is_ok()) return version.status();
    if (version.value() > sequences::kSchemaVersion) {
      return sequences::newer_schema_error(version.value());
    }
    if (version.value() > 0) {
      MutexLock lock(mu_);
      schema_ready_ = true;
    }
    return Status::ok();
  }

  Result<Lease> acquire() {
    PGconn* conn = nullptr;
    {
      MutexLock lock(mu_);
      while (idle_.empty() && lent_ >= options_.connections) cv_.wait(mu_);
      ++lent_;
      if (!idle_.empty()) {
        conn = idle_.back();
        idle_.pop_back();
      }
    }
    const Duration budget = answer_budget(options_);
    if (conn != nullptr) return Lease(this, conn, /*reused=*/true, clock_, budget);
    Result<PGconn*> made = connect();
    if (!made.is_ok()) {
      {
        MutexLock lock(mu_);
        --lent_;
      }
      cv_.notify_all();
      return made.status();
    }
    return Lease(this, made.value(), /*reused=*/false, clock_, budget);
  }

  // A new connection, in nonblocking mode, with the store's
  // statement_timeout, synchronous commits and READ COMMITTED; or
  // kUnavailable.
  Result<PGconn*> connect() {
    Result<PGconn*> made = pg::connect_nonblocking(conninfo_, options_.connect_timeout, clock_);
    if (!made.is_ok()) return made.status();
    PGconn* conn = made.value();
    const std::string timeout_ms = std::to_string(
        std::chrono::duration_cast<std::chrono::milliseconds>(options_.statement_timeout).count());
    // Two defaults a database or role may have been given are overridden
    // for this session:
    // - synchronous_commit off (or local, or remote_write): the server then
    //   acknowledges a commit that a crash (or a failover) can still
    //   forget, and the next take would return the same range again. A
    //   take must be durable before its range is handed out: at least "on"
    //   (a stricter remote_apply is kept).
    // - default_transaction_isolation above read committed: concurrent
    //   takers of a row would fail with serialisation errors instead of
    //   queueing, and a migrator would read the version from a snapshot
    //   taken before it held the migration lock.
    Lease setup(nullptr, conn, /*reused=*/false, clock_, answer_budget(options_));
    Result<PgResult> set = setup.run(
        "SELECT set_config('statement_timeout', $1, false),"
        " set_config('synchronous_commit',"
        "   CASE current_setting('synchronous_commit') WHEN 'remote_apply' THEN 'remote_apply'"
        "   ELSE 'on' END, false),"
        " set_config('default_transaction_isolation', 'read committed', false)",
        {timeout_ms}, "configure the session");
    if (!set.is_ok()) {
      PQfinish(conn);
      return Status(Code::kUnavailable, set.status().message());
    }
    return conn;
  }

  // Applies the missing migrations on `lease`, each in a transaction under
  // the database's migration lock.
  Status migrate_on(Lease& lease) {
    for (;;) {
      if (Result<PgResult> r = lease.run("BEGIN", {}, "begin a migration"); !r.is_ok()) {
        return lease.rollback(r.status());
      }
      // Held until the transaction ends: concurrent migrators queue here and
      // each sees the version the one before it committed.
      if (Result<PgResult> r = lease.run("SELECT pg_advisory_xact_lock($1::bigint)",
                                         {kMigrationLock}, "take the migration lock");
          !r.is_ok()) {
        return lease.rollback(r.status());
      }
      Result<std::int64_t> version = schema_version(lease);
      if (!version.is_ok()) return lease.rollback(version.status());
      if (version.value() > sequences::kSchemaVersion) {
        return lease.rollback(sequences::newer_schema_error(version.value()));
      }
      if (version.value() == sequences::kSchemaVersion) {
        if (Result<PgResult> r = lease.run("COMMIT", {}, "commit"); !r.is_ok()) {
          return lease.rollback(r.status());
        }
        MutexLock lock(mu_);
        schema_ready_ = true;
        return Status::ok();
      }
      const Migration& m = kMigrations[version.value()];
      const std::string what = "migration " + std::string(m.name);
      if (Result<PgResult> r = lease.run_script(std::string(m.sql), what); !r.is_ok()) {
        return lease.rollback(r.status());
      }
      const std::string version_text = std::to_string(m.version);
      const std::string now = std::to_string(unix_ms(clock_.wall_now()));
      if (Result<PgResult> r = lease.run(
              "INSERT INTO snowid_schema_migrations (version, name, applied) VALUES ($1, $2, $3)",
              {version_text, m.name, now}, "record " + what);
          !r.is_ok()) {
        return lease.rollback(r.status());
      }
      if (Result<PgResult> r = lease.run("COMMIT", {}, "commit " + what); !r.is_ok()) {
        return lease.rollback(r.status());
      }
    }
  }

  // The highest recorded migration; 0 without the migrations table.
  //
  // The table is looked for in pg_class, read with this statement's
  // snapshot, rather than with to_regclass(), which answers from the
  // backend's catalog cache: a connection that looked before the table
  // existed may keep that answer through a migration another one committed
  // while this one waited for the migration lock, and apply it again.
  Result<std::int64_t> schema_version(Lease& lease) {
    Result<PgResult> has = lease.run(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c"
        " WHERE c.relname = $1 AND c.relkind IN ('r', 'p')"
        " AND pg_catalog.pg_table_is_visible(c.oid))",
        {sequences::kMigrationsTable}, "look for the migrations table");
    if (!has.is_ok()) return has.status();
    if (std::string_view(PQgetvalue(has.value().get(), 0, 0)) != "t") return std::int64_t{0};
    Result<PgResult> max =
        lease.run("SELECT COALESCE(MAX(version), 0) FROM snowid_schema_migrations", {},
                  "read the schema version");
    if (!max.is_ok()) return max.status();
    return parse_int(max.value().get(), 0, 0, sequences::kMigrationsTable);
  }

  Result<std::optional<SequenceInfo>> read(Lease& lease, std::string_view name) {
    Result<PgResult> res = lease.run((std::string(kSelectColumns) + " WHERE name = $1").c_str(),
                                     {name}, "read sequence");
    if (!res.is_ok()) return res.status();
    if (PQntuples(res.value().get()) == 0) return std::optional<SequenceInfo>();
    Result<SequenceInfo> info = row_of(res.value().get(), 0);
    if (!info.is_ok()) return info.status();
    return std::optional<SequenceInfo>(std::move(info.value()));
  }

  const std::string conninfo_;
  const Clock& clock_;
  const PostgresTicketStoreOptions options_;

  Mutex mu_;
  CondVar cv_;  // a connection was given back, or a lent slot freed
  // Sound connections waiting for a call.
  std::vector<PGconn*> idle_ GUARDED_BY(mu_);
  // Connections lent out, or being made.
  std::size_t lent_ GUARDED_BY(mu_) = 0;
  // prepare_schema() found the schema usable (or made it so) once.
  bool schema_ready_ GUARDED_BY(mu_) = false;
};

Lease::~Lease() {
  if (store_ != nullptr) store_->give_back(conn_, broken_);
}

}  // namespace

Result<std::unique_ptr<TicketStore>> open_postgres_ticket_store(
    const std::string& conninfo, const Clock& clock, PostgresTicketStoreOptions options) {
  if (Status s = pg::check_conninfo(conninfo); !s.is_ok()) return s;
  if (options.connections < 1) {
    return Status(Code::kInvalidArgument, "postgresql: at least one connection is needed");
  }
  if (options.connect_timeout <= Duration::zero() ||
      options.statement_timeout <= Duration::zero()) {
    return Status(Code::kInvalidArgument, "postgresql: the timeouts must be positive");
  }
  return std::unique_ptr<TicketStore>(
      std::make_unique<PostgresTicketStore>(conninfo, clock, options));
}

}  // namespace snowid
