// The ticket table in PostgreSQL, through libpq: for fleets, where many
// hosts share one sequence. Link snowid::postgres.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "snowid/status.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"

namespace snowid {

struct PostgresTicketStoreOptions {
  // Bounds one connection attempt, and one statement (statement_timeout set
  // on each connection). Whole seconds for the connection (libpq's unit).
  // The client also gives up on an answer after statement_timeout +
  // connect_timeout (a frozen server cannot time out its own statement):
  // the connection is dropped and the call answers kUnavailable. Each
  // session sets synchronous_commit = on (a committed take must survive a
  // crash of the server, or its range could be handed out again) and READ
  // COMMITTED isolation, whatever the database's defaults.
  Duration connect_timeout = std::chrono::seconds(5);
  Duration statement_timeout = std::chrono::seconds(5);
  // Connections kept open; calls beyond this many at once wait their turn.
  std::size_t connections = 2;
  // Apply the schema migrations on the first successful connection. Without
  // it a schema newer than this code is still refused (kFailedPrecondition).
  bool migrate = true;
};

// Checks `conninfo` (a libpq connection string, "postgresql://..." or
// "host=... port=..."; kInvalidArgument if libpq cannot parse it) without
// connecting: a database that is down at start is not an error. Each call
// connects as needed, and a broken connection is dropped and made again by
// the next call; a call that finds the database unreachable returns
// kUnavailable. `clock` stamps the created/updated times and must outlive the
// store.
Result<std::unique_ptr<TicketStore>> open_postgres_ticket_store(
    const std::string& conninfo, const Clock& clock, PostgresTicketStoreOptions options = {});

}  // namespace snowid
