// snowidd's listeners and event loop (Boost.Asio, Boost.Beast for HTTP):
// the Unix socket and the optional TCP listener speak RESP through a
// RespSession each, made by a RespSessionFactory; the HTTP listener hands
// parsed requests to an HttpRequestHandler. The server knows the protocols
// only through those two interfaces, never the services behind them.
// `threads` threads run one io_context, so both cores serve.
//
// Unix socket: created at start with the configured mode (chmod after bind,
// under a umask that keeps it closed in between); its directory is created
// (0755) if missing. An existing file at the path is handled as a stale
// socket: if something accepts connections on it, start fails (kUnavailable,
// "another snowidd is serving <path>"); if it is a socket nobody serves it is
// removed; if it is not a socket, start fails (kFailedPrecondition) rather
// than delete a file the daemon did not make. The file is removed at stop.
//
// The event loops never wait on the ticket table of the named sequences. A
// RESP command or HTTP request that must (RespSession and the HTTP handler
// say which) is run on a pool of `sequence_threads` threads; its reply is posted
// back to the connection's loop and sent in its place: the connection reads
// and answers nothing else meanwhile, so replies keep the order of the
// requests, while the loop serves its other connections.
//
// Shutdown (stop_accepting() then drain()): listeners close at once; each
// connection finishes the commands or request it has already received, sends
// the replies and closes; idle keep-alive connections close at once; one
// waiting on the pool is waited for. drain() waits up to its timeout, then
// closes whatever is left and cancels the pool's queue: a job that starts
// after that (or whose connection is closed) answers SHUTTING_DOWN without
// touching the sequences. Then it joins the pool, which waits only for the
// jobs already running, each bounded by the store's timeouts and the
// buffers' wait timeout per range it needs; work handed to the pool after
// that is answered SHUTTING_DOWN.
//
// Thread-safe: start/stop from one thread (main); the loop threads do the rest.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "address.h"
#include "http_request_handler.h"
#include "resp_parser.h"
#include "resp_session_factory.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {

class Logger;
struct ServerCounters;

struct ServerOptions {
  std::string socket;  // empty: no Unix listener
  std::uint32_t socket_mode = 0660;
  // The socket's directory must be a real directory owned by this user and
  // writable by no one else, or start fails (kFailedPrecondition). For a
  // directory in a shared place such as /tmp, where another user could have
  // made it first and could swap the socket for one of their own.
  bool private_socket_dir = false;
  std::optional<Address> tcp;
  std::optional<Address> http;
  std::uint32_t threads = 2;
  std::string token;  // required on TCP RESP (AUTH) and HTTP (Bearer) when set
  RespLimits resp_limits;
  // HTTP: largest request header block (431 beyond it) and body (413)
  // accepted; either answer closes the connection.
  std::uint32_t http_header_limit = 16 * 1024;
  std::uint32_t http_body_limit = 64 * 1024;
  // Open connections, all transports together; one more is closed as soon
  // as it is accepted. 0: the process's open-file limit less 64, kept for
  // the registry, the fences and the log, so that a flood of idle clients
  // can never starve the lease renewals of descriptors.
  std::uint32_t max_connections = 0;
  // Idle keep-alive connections are closed after this. Default 60 s.
  Duration http_idle_timeout = std::chrono::seconds(60);
  // A TCP RESP or HTTP connection whose first request is not complete this
  // long after the accept is closed (and counted in first_request_timeouts).
  // Not the Unix socket: local pooled clients open connections ahead of use.
  Duration first_request_timeout = std::chrono::seconds(10);
  // The pool that waits on the ticket table, made by serve() when the RESP
  // sessions may defer work (RespSessionFactory::may_defer()).
  std::uint32_t sequence_threads = 4;
};

// Where each listener ended up (port 0 resolved to the kernel's choice).
struct BoundAddresses {
  std::string socket;
  std::optional<Address> tcp;
  std::optional<Address> http;
};

class Server {
 public:
  // Binds and listens on every listener, and logs one "listening" event per
  // listener, with "transport" (unix, tcp, http) and "address". Nothing is
  // accepted until serve(): clients that connect wait in the backlog. An
  // error names the listener and the address; a port in use, an address this
  // host does not have or a port it may not bind is kFailedPrecondition
  // (configuration), other failures kUnavailable, a socket path too long
  // kInvalidArgument. `counters` and `log` must outlive the server.
  static Result<std::unique_ptr<Server>> bind(ServerOptions options, ServerCounters& counters,
                                              Logger& log);
  // Starts the loop threads and accepts on the listeners bound: each RESP
  // connection gets a session from `resp` (kept by the server), each HTTP
  // request goes to `http`, which must outlive the server, as must whatever
  // either refers to. Once only; nothing after stop_accepting().
  void serve(std::unique_ptr<const RespSessionFactory> resp, const HttpRequestHandler& http);
  // bind(), then serve().
  static Result<std::unique_ptr<Server>> start(ServerOptions options,
                                               std::unique_ptr<const RespSessionFactory> resp,
                                               const HttpRequestHandler& http,
                                               ServerCounters& counters, Logger& log);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  // Stops everything (drain(0) if not done) and joins the threads.
  ~Server();

  const BoundAddresses& addresses() const noexcept;

  // Closes the listeners; connections carry on as described above.
  void stop_accepting();
  // Waits until every connection has closed, at most `timeout`; then closes
  // the rest and stops the loop. True if all closed on their own.
  bool drain(Duration timeout);

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace snowid::daemon
