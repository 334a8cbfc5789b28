// Opening a ticket store from one configuration string, as the daemon, the
// CLI and the test clients take it. Private to snowid (target
// snowid_ticket_stores, which links both stores).
//
//   sqlite:PATH              the SQLite file at PATH (created if absent)
//   postgresql://...         PostgreSQL, libpq's URI form
//   postgres://...           the same
//
// Anything else is kInvalidArgument naming the accepted forms.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "snowid/status.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"

namespace snowid::sequences {

struct TicketStoreOpenOptions {
  // SQLite's busy timeout; PostgreSQL's connect and statement timeouts.
  Duration timeout = std::chrono::seconds(5);
  // PostgreSQL connections kept open.
  std::size_t connections = 2;
  bool migrate = true;
};

// "sqlite" or "postgresql" for a well-formed `url`, kInvalidArgument otherwise.
Result<std::string_view> ticket_store_kind(std::string_view url);

// The store `url` names, opened as sqlite_ticket_store.h and
// postgres_ticket_store.h describe (PostgreSQL does not connect yet).
Result<std::unique_ptr<TicketStore>> open_ticket_store(std::string_view url, const Clock& clock,
                                                       const TicketStoreOpenOptions& options = {});

// `url` with any password replaced by "***", for logs and INFO.
std::string redact_ticket_store_url(std::string_view url);

}  // namespace snowid::sequences
