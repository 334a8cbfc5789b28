// The daemon's named sequences from its settings: the buffers' options and
// the ticket table. A snowidd built without the SQLite and PostgreSQL stores
// takes only `sequences = off`.
#pragma once

#include <cstdint>
#include <memory>

#include "log.h"
#include "sequence_service.h"
#include "settings.h"
#include "snowid/sequence_buffer.h"
#include "snowid/status.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"

namespace snowid::daemon {

// The ticket table's connections beyond one per pool thread: the buffers'
// fetchers share them (each take holds one only for its round trip), so
// that a refill does not queue behind the pool.
inline constexpr std::uint32_t kFetcherConnections = 4;

// The buffers' options from the settings.
SequenceBufferOptions buffer_options(const Settings& s);
// The sequence service's options from the settings: the buffers', the
// bounds, and the table's URL as logs and INFO show it (no password).
SequenceServiceOptions sequence_service_options(const Settings& s);

// The ticket table the settings name: null for "off". A malformed URL is a
// configuration mistake (kInvalidArgument); an SQLite file that cannot be
// opened or migrated fails the start. PostgreSQL is not reached yet: it is
// connected on first use, so that a database down at start only makes the
// sequences answer UNAVAILABLE until it is back.
Result<std::unique_ptr<TicketStore>> open_sequences(const Settings& s, const Clock& clock,
                                                    Logger& log);

}  // namespace snowid::daemon
