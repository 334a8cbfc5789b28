// The listeners: the Unix socket, TCP RESP and HTTP. Binding (with the
// socket path policy), accepting with the connection limit, and closing.
//
// Threading: bind() and close() from the server's owner thread; the accepts
// run on the listeners' io_context.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "server_core.h"
#include "socket_path.h"

namespace snowid::daemon {

class Listeners {
 public:
  // `io` runs the acceptors; `next_executor` names the loop of each
  // connection accepted. `core` must outlive the listeners.
  Listeners(ServerCore& core, asio::io_context& io,
            std::function<asio::any_io_executor()> next_executor);

  // Binds and listens on every listener of the options, and logs
  // "listening" for each (Server::bind's contract). On an error nothing
  // stays bound to the socket path.
  Status bind();
  const BoundAddresses& bound() const noexcept { return bound_; }

  // Accepts on each listener bound, handing every connection to the
  // function for its transport.
  void accept(std::function<void(local::socket)> on_unix, std::function<void(tcp::socket)> on_tcp,
              std::function<void(tcp::socket)> on_http);

  // Closes the acceptors (on their io_context, between their handlers) and
  // removes the socket file if it is still ours.
  void close();

 private:
  Status bind_unix();
  Status bind_tcp(const Address& address, std::string_view transport,
                  std::optional<tcp::acceptor>& acceptor, std::optional<Address>& bound);
  // One accept, then the next. A failure other than the acceptor's closing
  // is logged and the accept retried after a pause.
  template <typename Acceptor, typename Serve>
  void accept_next(Acceptor& acceptor, Transport t, Serve serve);
  bool at_connection_limit() const noexcept;
  // Counts a connection closed at the limit; logs the first and then at most
  // one in 1000, so a flood does not become a flood of log lines.
  void refuse_over_limit(Transport t);

  ServerCore& core_;
  asio::io_context& io_;
  std::function<asio::any_io_executor()> next_executor_;
  // ServerOptions::max_connections, 0 resolved.
  const std::uint32_t max_open_;
  std::uint64_t refused_over_limit_ = 0;  // on the listeners' thread only
  BoundAddresses bound_;
  SocketFile socket_file_;
  std::optional<local::acceptor> unix_acceptor_;
  std::optional<tcp::acceptor> tcp_acceptor_;
  std::optional<tcp::acceptor> http_acceptor_;
};

}  // namespace snowid::daemon
