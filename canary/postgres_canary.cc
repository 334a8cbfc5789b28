// The uniqueness canary (include/snowid/postgres_canary.h).
//
// Issuing threads push sampled ids into a SampleRing and never wait. One
// writer thread owns the connection: it takes up to batch_max samples,
// inserts them with one statement that skips ids the table already has and
// answers the ids it took, and treats every other sample as a duplicate:
// it reads the row the table kept, records the pair in
// snowid_canary_violations and tells on_violation. A batch whose answer was
// lost with the connection is sent again with the same batch number, so its
// own rows are not mistaken for duplicates. While the database is
// unreachable the writer holds one batch and retries; the ring fills and
// issuing threads drop what does not fit.
#include "snowid/postgres_canary.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "canary_sql.h"
#include "mutex.h"
#include "pg_io.h"
#include "sample_ring.h"

namespace snowid {

using internal::CondVar;
using internal::Mutex;
using internal::MutexLock;

namespace {

using canary::QueuedSample;
using canary::SampleRing;
using pg::Answer;
using pg::PgResult;

constexpr std::size_t kMinQueue = 16;
constexpr std::size_t kMaxQueue = std::size_t{1} << 24;
constexpr std::size_t kMaxBatch = 65536;
constexpr Duration kFirstBackoff = std::chrono::milliseconds(100);
constexpr Duration kMaxBackoff = std::chrono::seconds(5);
constexpr Duration kPruneEvery = std::chrono::minutes(1);
constexpr Duration kPruneBudget = std::chrono::seconds(5);
constexpr int kPruneRows = 5000;  // canary_sql.h kPrune's LIMIT
constexpr Duration kIdleCheck = std::chrono::seconds(10);

// "{1,2,3}": an array parameter in PostgreSQL's text form.
template <class Get>
std::string array_text(const std::vector<QueuedSample>& batch, Get get) {
  std::string out = "{";
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (i != 0) out += ',';
    out += std::to_string(get(batch[i]));
  }
  out += '}';
  return out;
}

bool parse_i64(const PGresult* res, int row, int column, std::int64_t& out) {
  if (PQgetisnull(res, row, column)) return false;
  const char* text = PQgetvalue(res, row, column);
  const char* end = text + PQgetlength(res, row, column);
  const auto [ptr, ec] = std::from_chars(text, end, out);
  return ec == std::errc() && ptr == end;
}

// How a statement ended.
enum class Outcome {
  kDone,    // answered
  kBroken,  // the connection is gone or out of step: reconnect, send again
  kFailed,  // the server refused it: sending it again would fail again
};

}  // namespace

namespace {

// splitmix64's finaliser: every bit of the id moves every bit of the hash,
// so consecutive ids are sampled independently of their sequence field.
std::uint64_t canary_hash(std::uint64_t id) noexcept {
  std::uint64_t z = id + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The largest hash sampled at 1 in `every`: a compare on the hot path where
// a modulo would cost a 64-bit division per id.
std::uint64_t canary_threshold(std::uint32_t every) noexcept {
  return every <= 1 ? ~std::uint64_t{0} : ~std::uint64_t{0} / every;
}

}  // namespace

bool canary_samples(std::uint64_t id, std::uint32_t every) noexcept {
  return canary_hash(id) <= canary_threshold(every);
}

struct PostgresCanary::Impl {
  Impl(const Clock& c, CanaryOptions o)
      : clock(c),
        opt(std::move(o)),
        ring(opt.queue_capacity),
        budget(opt.statement_timeout + opt.connect_timeout),
        threshold(canary_threshold(opt.sample_every)) {}

  ~Impl() {
    if (conn != nullptr) PQfinish(conn);
    for (int fd : wake) {
      if (fd >= 0) ::close(fd);
    }
  }

  const Clock& clock;
  const CanaryOptions opt;
  SampleRing ring;
  const Duration budget;
  const std::uint64_t threshold;  // canary_threshold(opt.sample_every)
  // A pipe whose read end ends the writer's waits on the server at close().
  int wake[2] = {-1, -1};

  std::atomic<std::uint64_t> sampled{0};
  std::atomic<std::uint64_t> stored{0};
  std::atomic<std::uint64_t> violations{0};
  std::atomic<std::uint64_t> dropped_full{0};
  std::atomic<std::uint64_t> dropped_unstored{0};
  std::atomic<std::uint64_t> store_failures{0};
  std::atomic<bool> store_up{false};
  std::atomic<bool> closed{false};
  // Samples pushed, and samples the writer is done with (stored, found to
  // be duplicates, or dropped): flush() waits for the second to reach the first.
  std::atomic<std::uint64_t> pushed{0};
  std::atomic<std::uint64_t> settled{0};

  Mutex mu;
  CondVar cv;  // the writer is asked to stop or hurry; a batch settled
  bool stop GUARDED_BY(mu) = false;
  MonoTime stop_by GUARDED_BY(mu){};
  bool hurry GUARDED_BY(mu) = false;
  bool writer_done GUARDED_BY(mu) = false;

  std::thread writer;
  std::mutex join_mu;  // close() joins the writer once

  // The writer's own.
  PGconn* conn = nullptr;
  std::vector<QueuedSample> batch;
  std::int64_t batch_number = 0;  // of `batch`, kept when it is sent again
  std::int64_t next_batch = 0;
  enum class Reach { kUnknown, kUp, kDown } reach = Reach::kUnknown;
  Duration backoff = kFirstBackoff;
  MonoTime last_contact{};  // the last statement answered, for the idle check
  MonoTime next_connect{};
  MonoTime next_prune{};

  void push(std::uint64_t id, WorkerId worker) noexcept {
    sampled.fetch_add(1, std::memory_order_relaxed);
    if (closed.load(std::memory_order_acquire)) {
      dropped_unstored.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (!ring.push(QueuedSample{id, worker.region, worker.host})) {
      dropped_full.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    pushed.fetch_add(1, std::memory_order_release);
  }

  void settle(std::uint64_t n) {
    settled.fetch_add(n, std::memory_order_release);
    MutexLock lock(mu);
    cv.notify_all();
  }

  void reached(const Status& s) {
    store_up.store(s.is_ok(), std::memory_order_relaxed);
    const Reach now = s.is_ok() ? Reach::kUp : Reach::kDown;
    if (!s.is_ok()) store_failures.fetch_add(1, std::memory_order_relaxed);
    if (now == reach) return;
    reach = now;
    if (opt.on_store_change) opt.on_store_change(s);
  }

  void drop_connection() {
    if (conn != nullptr) PQfinish(conn);
    conn = nullptr;
  }

  // Runs one statement on the connection.
  Outcome run(const char* sql, const std::vector<const char*>* params, PgResult& out,
              Status& error) {
    Answer a = pg::exec_bounded(conn, sql, params, clock, budget, wake[0]);
    if (a.timed_out || a.result == nullptr) {
      error = Status(Code::kUnavailable, a.timed_out
                                             ? "postgresql: no answer within the statement budget"
                                             : "postgresql: " + pg::trimmed(PQerrorMessage(conn)));
      return Outcome::kBroken;
    }
    const ExecStatusType st = PQresultStatus(a.result.get());
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
      out = std::move(a.result);
      return Outcome::kDone;
    }
    const char* state = PQresultErrorField(a.result.get(), PG_DIAG_SQLSTATE);
    const std::string code = state != nullptr ? state : "";
    error = Status(Code::kUnavailable,
                   "postgresql: " + pg::trimmed(PQresultErrorMessage(a.result.get())) +
                       (code.empty() ? "" : " (SQLSTATE " + code + ")"));
    // The connection failed, the server is going away or is read-only, a
    // timeout, or the tables were dropped under it: another connection
    // (which creates the tables again) may succeed.
    // Also a role without rights (42501) or a table of another shape (42703,
    // 42P01): nothing can be stored until someone fixes it, so the store is
    // down, not the batch bad. And the server's own failures (58, XX000).
    if (PQstatus(conn) != CONNECTION_OK || code.empty() || code.starts_with("08") ||
        code.starts_with("57") || code.starts_with("53") || code.starts_with("58") ||
        code == "25006" || code == "42P01" || code == "42501" || code == "42703" ||
        code == "XX000" || code == "40001" || code == "40P01") {
      return Outcome::kBroken;
    }
    return Outcome::kFailed;
  }

  // A connection with the session settings and the tables, or false (and
  // the next attempt scheduled) when the database cannot be reached.
  bool connected() {
    if (conn != nullptr) return true;
    if (clock.mono_now() < next_connect) return false;
    Result<PGconn*> made =
        pg::connect_nonblocking(opt.conninfo, opt.connect_timeout, clock, wake[0]);
    Status error;
    if (made.is_ok()) {
      conn = made.value();
      const std::string timeout_ms = std::to_string(
          std::chrono::duration_cast<std::chrono::milliseconds>(opt.statement_timeout).count());
      const std::vector<const char*> params = {timeout_ms.c_str()};
      PgResult res;
      // The tables are created only when missing: a role that may insert
      // but not create (or does not own them) still works.
      if (run(canary::sql::kSession, &params, res, error) == Outcome::kDone &&
          run(canary::sql::kTablesExist, nullptr, res, error) == Outcome::kDone &&
          (std::string_view(PQgetvalue(res.get(), 0, 0)) == "t" ||
           run(canary::sql::kSchema, nullptr, res, error) == Outcome::kDone)) {
        reached(Status::ok());
        last_contact = clock.mono_now();
        return true;
      }
      drop_connection();
    } else {
      error = made.status();
    }
    reached(error);
    retry_later();
    return false;
  }

  // The next connection no sooner than the back-off, which doubles up to
  // kMaxBackoff with each failure and starts again only once a batch is
  // stored: a store that takes connections but refuses every batch is not
  // hammered with connections and schema checks.
  void retry_later() {
    next_connect = clock.mono_now() + backoff;
    backoff = std::min(backoff * 2, kMaxBackoff);
  }

  void fill_batch() {
    QueuedSample s;
    while (batch.size() < opt.batch_max && ring.pop(s)) batch.push_back(s);
    if (!batch.empty() && batch_number == 0) batch_number = ++next_batch;
  }

  void finish_batch() {
    const std::size_t n = batch.size();
    batch.clear();
    batch_number = 0;
    settle(n);
  }

  // Stores `batch`; on kDone every sample is counted, stored or duplicate.
  Outcome store_batch(Status& error) {
    const std::string ids = array_text(batch, [](const QueuedSample& s) { return s.id; });
    const std::string regions = array_text(batch, [](const QueuedSample& s) { return s.region; });
    const std::string hosts = array_text(batch, [](const QueuedSample& s) { return s.host; });
    const std::string number = std::to_string(batch_base + batch_number);
    const std::vector<const char*> params = {ids.c_str(),      regions.c_str(),    hosts.c_str(),
                                             opt.host.c_str(), opt.holder.c_str(), number.c_str()};
    PgResult res;
    if (const Outcome o = run(canary::sql::kInsert, &params, res, error); o != Outcome::kDone) {
      return o;
    }
    std::unordered_set<std::uint64_t> taken;
    for (int row = 0; row < PQntuples(res.get()); ++row) {
      std::int64_t id = 0;
      if (parse_i64(res.get(), row, 0, id)) taken.insert(static_cast<std::uint64_t>(id));
    }
    // A sample is new if the statement took its id and no earlier sample of
    // the batch claimed that: the second copy within a batch is a duplicate.
    std::vector<QueuedSample> doubtful;
    std::unordered_set<std::uint64_t> claimed;
    for (const QueuedSample& s : batch) {
      if (taken.contains(s.id) && claimed.insert(s.id).second) continue;
      doubtful.push_back(s);
    }
    std::uint64_t fresh = batch.size() - doubtful.size();
    if (!doubtful.empty()) {
      const Outcome o = judge(doubtful, claimed, fresh, error);
      if (o == Outcome::kBroken) return o;  // sent again, recognised by its batch number
      if (o == Outcome::kFailed) {
        // The insert is committed; only the doubtful samples go unjudged.
        store_failures.fetch_add(1, std::memory_order_relaxed);
        dropped_unstored.fetch_add(doubtful.size(), std::memory_order_relaxed);
        fresh = batch.size() - doubtful.size();
      }
    }
    stored.fetch_add(fresh, std::memory_order_relaxed);
    return Outcome::kDone;
  }

  // The samples whose id the table already had: duplicates, unless the row
  // is this batch's own from an attempt whose answer was lost.
  Outcome judge(const std::vector<QueuedSample>& doubtful,
                std::unordered_set<std::uint64_t>& claimed, std::uint64_t& fresh, Status& error) {
    const std::string ids = array_text(doubtful, [](const QueuedSample& s) { return s.id; });
    const std::vector<const char*> params = {ids.c_str()};
    PgResult res;
    if (const Outcome o = run(canary::sql::kFirstHolders, &params, res, error);
        o != Outcome::kDone) {
      return o;
    }
    struct Kept {
      CanarySample sample;
      std::int64_t batch = 0;
    };
    std::unordered_map<std::uint64_t, Kept> kept;
    for (int row = 0; row < PQntuples(res.get()); ++row) {
      std::int64_t id = 0;
      std::int64_t region = 0;
      std::int64_t host = 0;
      std::int64_t number = 0;
      std::int64_t at_us = 0;
      if (!parse_i64(res.get(), row, 0, id) || !parse_i64(res.get(), row, 1, region) ||
          !parse_i64(res.get(), row, 2, host) || !parse_i64(res.get(), row, 5, number)) {
        continue;
      }
      Kept k;
      k.sample.id = static_cast<std::uint64_t>(id);
      k.sample.worker =
          WorkerId{static_cast<std::uint32_t>(region), static_cast<std::uint32_t>(host)};
      k.sample.host = PQgetvalue(res.get(), row, 3);
      k.sample.holder = PQgetvalue(res.get(), row, 4);
      if (parse_i64(res.get(), row, 6, at_us)) {
        k.sample.stored_at = WallTime(std::chrono::microseconds(at_us));
      }
      k.batch = number;
      kept.emplace(k.sample.id, std::move(k));
    }
    const std::int64_t own = batch_base + batch_number;
    std::vector<CanaryViolation> found;
    for (const QueuedSample& s : doubtful) {
      const auto it = kept.find(s.id);
      if (it != kept.end() && it->second.batch == own && claimed.insert(s.id).second) {
        ++fresh;  // stored by this batch's earlier attempt
        continue;
      }
      CanaryViolation v;
      v.id = s.id;
      if (it != kept.end()) v.first = it->second.sample;
      v.first.id = s.id;
      v.second = CanarySample{s.id, WorkerId{s.region, s.host}, opt.host, opt.holder, {}};
      found.push_back(std::move(v));
    }
    for (const CanaryViolation& v : found) {
      violations.fetch_add(1, std::memory_order_relaxed);
      record(v);
      if (opt.on_violation) opt.on_violation(v);
    }
    return Outcome::kDone;
  }

  // Writes the pair into snowid_canary_violations. A failure there loses
  // only the row: the violation is counted and told all the same.
  void record(const CanaryViolation& v) {
    // The kept row was found (it has a stored time), else it was pruned.
    const bool known = v.first.stored_at.has_value();
    const std::string id = std::to_string(v.id);
    const std::string r1 = std::to_string(v.first.worker.region);
    const std::string h1 = std::to_string(v.first.worker.host);
    const std::string at =
        v.first.stored_at ? std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(
                                               v.first.stored_at->time_since_epoch())
                                               .count())
                          : std::string();
    const std::string r2 = std::to_string(v.second.worker.region);
    const std::string h2 = std::to_string(v.second.worker.host);
    const std::vector<const char*> params = {id.c_str(),
                                             known ? r1.c_str() : nullptr,
                                             known ? h1.c_str() : nullptr,
                                             known ? v.first.host.c_str() : nullptr,
                                             known ? v.first.holder.c_str() : nullptr,
                                             v.first.stored_at ? at.c_str() : nullptr,
                                             r2.c_str(),
                                             h2.c_str(),
                                             v.second.host.c_str(),
                                             v.second.holder.c_str()};
    PgResult ignored;
    Status error;
    const Outcome o = run(canary::sql::kRecordViolation, &params, ignored, error);
    if (o != Outcome::kDone) {
      // The violation is counted and told; only its row is lost.
      store_failures.fetch_add(1, std::memory_order_relaxed);
      if (o == Outcome::kBroken) drop_connection();
    }
  }

  // About once a minute, busy or idle: statements of up to kPruneRows rows
  // until one deletes fewer or kPruneBudget has passed, so that pruning
  // keeps up with a fleet storing thousands of samples a second.
  void prune() {
    if (opt.retention <= Duration::zero() || conn == nullptr) return;
    const MonoTime began = clock.mono_now();
    if (began < next_prune) return;
    next_prune = began + kPruneEvery;
    const std::string ms = std::to_string(
        std::chrono::duration_cast<std::chrono::milliseconds>(opt.retention).count());
    const std::vector<const char*> params = {ms.c_str()};
    for (;;) {
      PgResult res;
      Status error;
      const Outcome o = run(canary::sql::kPrune, &params, res, error);
      if (o == Outcome::kBroken) {
        drop_connection();
        reached(error);
        retry_later();
        return;
      }
      if (o != Outcome::kDone) return;
      const char* deleted = PQcmdTuples(res.get());
      if (std::string_view(deleted) != std::to_string(kPruneRows)) return;
      if (clock.mono_now() - began > kPruneBudget) return;
    }
  }

  // While idle and connected, the connection is tried every kIdleCheck, so
  // that store_up says whether the database is there while nothing is sent.
  void idle_check() {
    if (conn == nullptr || clock.mono_now() - last_contact < kIdleCheck) return;
    PgResult ignored;
    Status error;
    if (run("SELECT 1", nullptr, ignored, error) == Outcome::kDone) {
      last_contact = clock.mono_now();
      return;
    }
    drop_connection();
    reached(error);
    retry_later();
  }

  // Sleeps up to `d`, or until asked to stop or hurry.
  void pause(Duration d) {
    MutexLock lock(mu);
    if (!stop && !hurry) cv.wait_for(mu, d);
    hurry = false;
  }

  void run_writer() {
    for (;;) {
      bool stopping = false;
      MonoTime stop_deadline{};
      {
        MutexLock lock(mu);
        stopping = stop;
        stop_deadline = stop_by;
      }
      fill_batch();
      if (stopping && (batch.empty() || clock.mono_now() >= stop_deadline)) break;
      if (!stopping) prune();
      if (batch.empty()) {
        // Connected before the first sample, so that the store's state
        // (store_up) is known, and alerted on, while nothing is issued.
        if (!stopping && connected()) idle_check();
        pause(opt.idle_wait);
        continue;
      }
      if (!connected()) {
        if (stopping) break;
        pause(std::max(Duration(std::chrono::milliseconds(1)), next_connect - clock.mono_now()));
        continue;
      }
      Status error;
      switch (store_batch(error)) {
        case Outcome::kDone:
          backoff = kFirstBackoff;
          last_contact = clock.mono_now();
          finish_batch();
          break;
        case Outcome::kBroken:
          // Sent again on a new connection, with the same batch number.
          drop_connection();
          reached(error);
          retry_later();
          break;
        case Outcome::kFailed:
          // Refused for this batch's content (it cannot be sent again as it
          // is): dropped, counted, and told like an outage for the log.
          store_failures.fetch_add(1, std::memory_order_relaxed);
          dropped_unstored.fetch_add(batch.size(), std::memory_order_relaxed);
          if (opt.on_store_change) opt.on_store_change(error);
          finish_batch();
          break;
      }
    }
    // Stopped: what is left is not stored.
    closed.store(true, std::memory_order_release);
    QueuedSample s;
    while (ring.pop(s)) batch.push_back(s);
    dropped_unstored.fetch_add(batch.size(), std::memory_order_relaxed);
    finish_batch();
    drop_connection();
    MutexLock lock(mu);
    writer_done = true;
    cv.notify_all();
  }

  // Batch numbers start at a random point of the 63-bit range, so that two
  // processes (or two canaries of one process) do not share them.
  const std::int64_t batch_base = [] {
    std::random_device rd;
    const std::uint64_t r = (std::uint64_t{rd()} << 32) ^ rd();
    return static_cast<std::int64_t>(r >> 2);
  }();
};

Result<std::shared_ptr<PostgresCanary>> PostgresCanary::start(const Clock& clock,
                                                              CanaryOptions options) {
  if (options.conninfo.empty()) {
    return Status(Code::kInvalidArgument, "canary: a PostgreSQL connection string is needed");
  }
  if (!pg::check_conninfo(options.conninfo).is_ok()) {
    // Not libpq's words: they quote the string, which may hold a password.
    return Status(Code::kInvalidArgument,
                  "canary: the connection string is not valid (libpq cannot read it; expected "
                  "postgresql://user@host:port/db or key=value words)");
  }
  if (options.sample_every == 0) {
    return Status(Code::kInvalidArgument, "canary: sample_every must be at least 1");
  }
  if (options.queue_capacity < kMinQueue || options.queue_capacity > kMaxQueue) {
    return Status(Code::kInvalidArgument, "canary: queue_capacity must be between 16 and 16777216");
  }
  if (options.batch_max < 1 || options.batch_max > kMaxBatch) {
    return Status(Code::kInvalidArgument, "canary: batch_max must be between 1 and 65536");
  }
  if (options.connect_timeout < std::chrono::milliseconds(1) ||
      options.statement_timeout < std::chrono::milliseconds(1)) {
    return Status(Code::kInvalidArgument, "canary: the timeouts must be at least 1 ms");
  }
  if (options.retention < Duration::zero() ||
      (options.retention > Duration::zero() && options.retention < std::chrono::hours(1))) {
    return Status(Code::kInvalidArgument,
                  "canary: retention must be 0 (keep everything) or at least 1 hour");
  }
  if (options.idle_wait < std::chrono::milliseconds(1) ||
      options.idle_wait > std::chrono::seconds(1)) {
    return Status(Code::kInvalidArgument, "canary: idle_wait must be between 1 ms and 1 s");
  }
  auto impl = std::make_unique<Impl>(clock, std::move(options));
  if (::pipe2(impl->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status(Code::kUnavailable, "canary: cannot make a pipe");
  }
  impl->batch.reserve(impl->opt.batch_max);
  Impl* raw = impl.get();
  std::shared_ptr<PostgresCanary> canary(new PostgresCanary(std::move(impl)));
  raw->writer = std::thread([raw] { raw->run_writer(); });
  return canary;
}

PostgresCanary::PostgresCanary(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PostgresCanary::~PostgresCanary() { close(Duration::zero()); }

void PostgresCanary::issued(std::uint64_t first, std::uint32_t count, WorkerId worker) noexcept {
  Impl& c = *impl_;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (canary_hash(first + i) <= c.threshold) c.push(first + i, worker);
  }
}

bool PostgresCanary::flush(Duration timeout) {
  Impl& c = *impl_;
  const std::uint64_t target = c.pushed.load(std::memory_order_acquire);
  const MonoTime deadline = c.clock.mono_now() + timeout;
  MutexLock lock(c.mu);
  c.hurry = true;
  c.cv.notify_all();
  while (c.settled.load(std::memory_order_acquire) < target) {
    const Duration left = deadline - c.clock.mono_now();
    if (left <= Duration::zero() || c.closed.load(std::memory_order_acquire)) break;
    // Bounded slices: the writer's notification may come between the check
    // and the wait only if it runs outside the lock, which it does not.
    c.cv.wait_for(c.mu, std::min(left, Duration(std::chrono::milliseconds(50))));
  }
  return c.settled.load(std::memory_order_acquire) >= target;
}

void PostgresCanary::close(Duration timeout) {
  Impl& c = *impl_;
  {
    MutexLock lock(c.mu);
    if (!c.stop) {
      c.stop = true;
      c.stop_by = c.clock.mono_now() + timeout;
    }
    c.cv.notify_all();
    // The writer stores what it can until stop_by; a statement then still
    // awaited from a server that does not answer is given up below.
    while (!c.writer_done && c.writer.joinable()) {
      const Duration left = c.stop_by - c.clock.mono_now();
      if (left <= Duration::zero()) break;
      c.cv.wait_for(c.mu, std::min(left, Duration(std::chrono::milliseconds(50))));
    }
  }
  if (c.wake[1] >= 0) {
    const char byte = 1;
    (void)!::write(c.wake[1], &byte, 1);
  }
  {
    // One joiner, whoever else calls close() at the same time.
    std::lock_guard<std::mutex> lock(c.join_mu);
    if (c.writer.joinable()) c.writer.join();
  }
  // A producer that saw the canary open just before the writer's last
  // drain may have pushed after it: what is left is dropped, counted.
  canary::QueuedSample s;
  std::uint64_t left = 0;
  while (c.ring.pop(s)) ++left;
  if (left > 0) {
    c.dropped_unstored.fetch_add(left, std::memory_order_relaxed);
    c.settle(left);
  }
}

CanaryStats PostgresCanary::stats() const noexcept {
  const Impl& c = *impl_;
  auto get = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  CanaryStats s;
  s.sampled = get(c.sampled);
  s.stored = get(c.stored);
  s.violations = get(c.violations);
  s.dropped_full = get(c.dropped_full);
  s.dropped_unstored = get(c.dropped_unstored);
  s.store_failures = get(c.store_failures);
  s.queued = c.ring.size();
  s.store_up = c.store_up.load(std::memory_order_relaxed);
  return s;
}

const CanaryOptions& PostgresCanary::options() const noexcept { return impl_->opt; }

}  // namespace snowid
