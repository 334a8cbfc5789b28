// The uniqueness canary: samples issued ids into a PostgreSQL table whose
// primary key is the id, so that an id issued twice anywhere in a fleet is
// caught by the database, logged with both holders and counted. Link
// snowid::postgres; docs/canary.md is the runbook.
//
// Hook it to a generator: options.generator.observer = canary (a
// LeasedGenerator passes it to every generator it makes). On the issuing
// thread it costs one hash of each id and, for a sampled id, one push into
// a bounded lock-free queue: it never blocks and never waits for the
// database. A writer thread stores the queue in batches. When the database
// is slow or down the queue fills and further samples are dropped, counted;
// the writer reconnects by itself.
//
// Which ids are sampled depends on the id alone (canary_samples()), so both
// copies of a duplicated id are sampled or neither is: at 1 in N a duplicate
// is caught with probability 1/N, where sampling each copy independently
// would catch it with 1/N².
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "snowid/issue_observer.h"
#include "snowid/layout.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid {

// Whether the canary samples `id` when it keeps 1 id in `every`: the
// splitmix64 finaliser of the id is at most (2^64 - 1) / `every` (integer
// division). Every id for `every` <= 1. The same rule in every process and
// language, so that the copies of an id are sampled together
// (docs/canary.md).
bool canary_samples(std::uint64_t id, std::uint32_t every) noexcept;

// One stored sample: an id, the worker whose generator issued it, and where.
struct CanarySample {
  std::uint64_t id = 0;
  WorkerId worker;
  std::string host;    // the serving host (CanaryOptions::host)
  std::string holder;  // the process (CanaryOptions::holder)
  // When the database stored it (its clock); nullopt for a sample of this
  // process not yet stored, or a first copy already pruned by the retention.
  std::optional<WallTime> stored_at;
};

// An id stored twice: `first` is the row the table kept, `second` the copy
// this process tried to store after it.
struct CanaryViolation {
  std::uint64_t id = 0;
  CanarySample first;
  CanarySample second;
};

struct CanaryOptions {
  // A libpq connection string: "postgresql://user@host:port/db" or
  // "host=... dbname=...". Required.
  std::string conninfo;
  // 1 id in this many is sampled (canary_samples()); 1 samples every id.
  std::uint32_t sample_every = 1000;
  // Samples waiting for the writer; a full queue drops new samples. Rounded
  // up to a power of two; between 16 and 2^24.
  std::size_t queue_capacity = 65536;
  // Samples stored by one statement; between 1 and 65536.
  std::size_t batch_max = 4096;
  // Stored with every sample, to find the offending process from a
  // violation: the host name, and the process on it (a pid, a start time).
  std::string host;
  std::string holder;
  // Bound one connection attempt and one statement, on the server
  // (statement_timeout) and on this side (the answer is awaited at most
  // their sum; a server that no longer answers at all has its connection
  // dropped). At least 1 ms. The whole connection attempt is bounded by
  // connect_timeout (one in `conninfo` is overridden).
  Duration connect_timeout = std::chrono::seconds(5);
  Duration statement_timeout = std::chrono::seconds(5);
  // Samples stored longer ago than this are deleted, about once a minute,
  // busy or idle, so the table stays bounded. The table is the fleet's: the
  // shortest retention of any canary on it applies to every sample, so give
  // every canary the same one. A duplicate of an id older than this is not
  // caught. Zero keeps everything (no canary deletes); else at least 1 hour.
  Duration retention = std::chrono::hours(24 * 7);
  // How long the writer sleeps when the queue is empty; between 1 ms and 1 s.
  Duration idle_wait = std::chrono::milliseconds(20);
  // Told about each violation, on the writer thread (after it is recorded).
  std::function<void(const CanaryViolation&)> on_violation;
  // Told when the database becomes unreachable (the error) and reachable
  // again (OK), on the writer thread: once per change, for the log; and of
  // each batch the server refused (the error), which is dropped.
  std::function<void(const Status&)> on_store_change;
};

struct CanaryStats {
  std::uint64_t sampled = 0;       // ids chosen for sampling
  std::uint64_t stored = 0;        // samples the table took (a new id)
  std::uint64_t violations = 0;    // samples whose id the table already had
  std::uint64_t dropped_full = 0;  // samples dropped because the queue was full
  std::uint64_t dropped_unstored =
      0;  // samples dropped unstored: refused by the server, or left at close()
  std::uint64_t store_failures = 0;  // connections and statements that failed
  std::uint64_t queued = 0;          // samples waiting now
  bool store_up = false;             // the last attempt to reach the database worked
};

class PostgresCanary final : public IssueObserver {
 public:
  // Checks the options (kInvalidArgument) and starts the writer. The
  // database may be down: the writer keeps trying, and creates the tables
  // (snowid_canary_ids, snowid_canary_violations) when they are missing.
  // `clock` paces the writer and must outlive the canary.
  static Result<std::shared_ptr<PostgresCanary>> start(const Clock& clock, CanaryOptions options);
  ~PostgresCanary() override;  // close(0) if not closed
  PostgresCanary(const PostgresCanary&) = delete;
  PostgresCanary& operator=(const PostgresCanary&) = delete;

  void issued(std::uint64_t first, std::uint32_t count, WorkerId worker) noexcept override;

  // Waits until every sample queued before the call is stored or dropped,
  // for at most `timeout`. False on timeout.
  bool flush(Duration timeout);
  // Stores what is queued for at most `timeout`, then stops the writer; a
  // statement or connection attempt under way is given up at `timeout`.
  // Must not be called from on_violation or on_store_change (the writer's
  // own thread), and the last reference must not be dropped there.
  // Samples still queued after that are dropped (counted in dropped_unstored).
  // Later samples are dropped as well.
  void close(Duration timeout);

  CanaryStats stats() const noexcept;
  const CanaryOptions& options() const noexcept;

 private:
  struct Impl;
  explicit PostgresCanary(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace snowid
