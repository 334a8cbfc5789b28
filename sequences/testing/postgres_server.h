// A scratch PostgreSQL for tests: scripts/pg-scratch runs initdb in a fresh
// temporary directory (snowid-pg-XXXXXX, removed afterwards) and starts the
// server on a free port of 127.0.0.1, trusting every connection. PostgreSQL
// must be installed (Debian's postgresql); without it launch() fails, and
// tests that need the database fail rather than skip.
#pragma once

#include <memory>
#include <string>

#include "snowid/status.h"

namespace snowid::sequences::testing {

// Not thread-safe: driven from the test's main thread (the server itself
// serves any number of threads).
class PostgresServer {
 public:
  // A new cluster, started: about a second. The script is
  // $SNOWID_PG_SCRATCH, else the source tree's scripts/pg-scratch.
  // kUnavailable with the script's words if it fails.
  static Result<std::unique_ptr<PostgresServer>> launch();
  // The running server in `dir`, started by someone else (who stops it):
  // `pg-scratch status DIR` must succeed.
  static Result<std::unique_ptr<PostgresServer>> attach(const std::string& dir);
  // Stops a launched server and removes its directory; leaves an attached
  // one running.
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // "postgresql://snowid@127.0.0.1:PORT/snowid": user and database snowid,
  // no password. The same across stop(), start() and restart().
  const std::string& conninfo() const noexcept { return conninfo_; }

  // Stops the server (fast shutdown: open connections are closed). OK if it
  // was stopped.
  Status stop();
  // Starts the stopped server again, on the same port and data.
  Status start();
  // stop() then start().
  Status restart();

  // Creates a new schema (test_PID_1, test_PID_2, ...) and returns the
  // conninfo whose search_path is it:
  // conninfo() + "?options=-csearch_path%3Dtest_PID_N". A clean database for
  // one test, without a server of its own.
  Result<std::string> fresh_schema();

  // The directory that holds the cluster (DIR/data) and its log.
  const std::string& dir() const noexcept;
  // The last lines of the server's log, for failure messages.
  std::string log_tail() const;

 private:
  struct Dir;
  PostgresServer() = default;
  Status script(const char* command, std::string* out);

  std::unique_ptr<Dir> dir_;
  std::string script_;
  std::string conninfo_;
  bool owned_ = false;
  int schemas_ = 0;
};

// The pg-scratch script the servers are run with: $SNOWID_PG_SCRATCH, else
// the source tree's scripts/pg-scratch.
std::string pg_scratch_script();

// One server for the whole test process: the one named by the file
// $SNOWID_PG_SHARED_STATE (its first line is the server's directory; ctest
// starts that server once for all the tests of a build, see
// sequences/testing/shared-postgres), else one launched on first use and
// stopped when the process exits. Thread-safe.
Result<PostgresServer*> shared_postgres_server();

}  // namespace snowid::sequences::testing
