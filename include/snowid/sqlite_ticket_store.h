// The ticket table in an SQLite file: the embedded default, for one host.
// Several processes may share the file; SQLite's write lock serialises
// their takes. Link snowid::sqlite.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "snowid/status.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"

namespace snowid {

struct SqliteTicketStoreOptions {
  // How long a statement waits for another process's write lock before
  // kUnavailable.
  Duration busy_timeout = std::chrono::seconds(5);
  // Apply the schema migrations when opening. Without it a schema newer
  // than this code is still refused (kFailedPrecondition).
  bool migrate = true;
};

// Opens (creating it if absent) the database file at `path` in WAL mode and,
// by default, migrates it. kUnavailable when the file cannot be opened or is
// locked past busy_timeout; kFailedPrecondition for a schema newer than this
// code. `clock` stamps the created/updated times and must outlive the store.
Result<std::unique_ptr<TicketStore>> open_sqlite_ticket_store(
    const std::string& path, const Clock& clock, SqliteTicketStoreOptions options = {});

}  // namespace snowid
