// HTTP/1.1 connections (HttpHandler answers the requests; this reads them
// with Boost.Beast, writes the responses and hands deferred ones to the
// pool).
#pragma once

#include "server_core.h"

namespace snowid::daemon {

// Makes an HTTP connection on `socket` and starts it on the socket's
// executor.
void start_http_connection(ServerCore& core, tcp::socket socket);

}  // namespace snowid::daemon
