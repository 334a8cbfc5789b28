// What every user of libpq in snowid shares (the ticket table and the
// uniqueness canary, both in snowid::postgres): connections in nonblocking
// mode, and statements whose answer is awaited for a bounded time, so that a
// stopped or wedged server never holds a caller for ever.
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <vector>

#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::pg {

struct ResultFree {
  void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, ResultFree>;

// libpq's message without its trailing newline and spaces; "" for null.
std::string trimmed(const char* text);

// OK if libpq can parse `conninfo` (a "postgresql://" URL or "key=value"
// words); kInvalidArgument naming what is wrong otherwise. Does not connect.
Status check_conninfo(const std::string& conninfo);

// A new connection in nonblocking mode (exec_bounded() waits for the socket
// itself), named "snowid" to the server unless `conninfo` names it, or
// kUnavailable with libpq's words. `connect_timeout` bounds the whole
// attempt, measured on `clock` (a connect_timeout in `conninfo` is
// overridden); a readable `wake_fd` (when not -1) ends it early. The server's
// notices are not printed (they would land in a daemon's log stream).
Result<PGconn*> connect_nonblocking(const std::string& conninfo, Duration connect_timeout,
                                    const Clock& clock, int wake_fd = -1);

// The answer to one command sent by exec_bounded().
struct Answer {
  PgResult result;         // null when the command could not be sent or read
  bool timed_out = false;  // no complete answer within the budget
};

// Sends `sql` (with `params` as text, one statement; without, a script of
// several statements) and collects its answer as PQexec would (the first
// error, else the last result), waiting at most `budget` on `clock`. The
// connection must be in nonblocking mode. A readable `wake_fd` (when not
// -1) ends the wait early, as a timeout. After a timeout the command is
// still in flight: the connection must be dropped.
Answer exec_bounded(PGconn* conn, const char* sql, const std::vector<const char*>* params,
                    const Clock& clock, Duration budget, int wake_fd = -1);

}  // namespace snowid::pg
