// RESP connections on the Unix socket and on TCP (RespSession does the
// protocol; this reads, writes and hands deferred commands to the pool).
#pragma once

#include "server_core.h"

namespace snowid::daemon {

// Makes a RESP connection on `socket` and starts it on the socket's
// executor. TCP asks for the token; the Unix socket does not (its file mode
// guards it).
void start_resp_connection(ServerCore& core, local::socket socket);
void start_resp_connection(ServerCore& core, tcp::socket socket);

}  // namespace snowid::daemon
