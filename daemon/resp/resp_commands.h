// The commands of the table (commands.h) over RESP: argv into a Request,
// the Answer into reply bytes. The row gives the name and the arity; the
// arguments after the subject are the row's parameters, in order, as Redis
// integers (a text parameter as it is), then the row's items (WRAP's ids,
// UNWRAP's public ids). Replies: ids and sequence numbers per the connection's
// IDFORMAT; a refusal as -<WORD> <message>, "; retry after <n>ms" (rounded
// up, at least 1) when retryable; a parameter out of bounds as
// "-ERR <COMMAND> <param> must be between <low> and <high>" (or the row's
// word); the hint of an unknown sequence as " (create it with SEQCREATE)";
// a public id's refusal with the keyring's reason word (-UNKNOWN_KEY ...),
// public ids off as -PUBLIC_IDS_OFF, an unwrap the caller may not make as
// -NOPERM (Redis's word for a command the user may not run).
#pragma once

#include <functional>
#include <string>

#include "commands.h"
#include "resp_parser.h"
#include "resp_writer.h"

namespace snowid::daemon {

// The reply of a deferred command, computed where waiting is allowed.
using DeferredReply = std::function<std::string()>;

// Answers `command`, whose name is `row`'s, into `w`; or, for work that
// must wait on the ticket table, sets `deferred` and writes nothing.
// `caller` is who asks, for UNWRAP.
void run_resp_command(const Commands& commands, const CommandRow& row, const RespCommand& command,
                      RespWriter& w, DeferredReply& deferred, const PublicIdCaller& caller = {});

}  // namespace snowid::daemon
