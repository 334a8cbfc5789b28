#include "server.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "http_connection.h"
#include "resp_connection.h"
#include "server_impl.h"

namespace snowid::daemon {
namespace {

// `threads` io_contexts (at least one), each to be run by one thread.
std::vector<std::unique_ptr<asio::io_context>> make_contexts(std::uint32_t threads) {
  std::vector<std::unique_ptr<asio::io_context>> ios;
  for (std::uint32_t i = 0; i < std::max<std::uint32_t>(threads, 1); ++i) {
    ios.push_back(std::make_unique<asio::io_context>(1));
  }
  return ios;
}

}  // namespace

Server::Impl::Impl(ServerOptions o, ServerCounters& c, Logger& l)
    : ServerCore(std::move(o), c, l),
      ios(make_contexts(options.threads)),
      listeners(*this, *ios.front(), [this] {
        return asio::any_io_executor(ios[next_io++ % ios.size()]->get_executor());
      }) {}

void Server::Impl::serve(std::unique_ptr<const RespSessionFactory> resp,
                         const HttpRequestHandler& http) {
  if (serving || stopping()) return;
  serving = true;
  resp_sessions = std::move(resp);
  http_handler = &http;
  if (resp_sessions->may_defer()) pool.start(options.sequence_threads);
  listeners.accept(
      [this](local::socket socket) { start_resp_connection(*this, std::move(socket)); },
      [this](tcp::socket socket) { start_resp_connection(*this, std::move(socket)); },
      [this](tcp::socket socket) { start_http_connection(*this, std::move(socket)); });
  for (const std::unique_ptr<asio::io_context>& io : ios) {
    work.emplace_back(io->get_executor());
    threads.emplace_back([this, context = io.get()] {
      for (;;) {
        try {
          context->run();
          return;
        } catch (const std::exception& e) {
          // A handler that throws must not take the loop thread with it.
          log.error("event loop error", {{"error", e.what()}});
        }
      }
    });
  }
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() = default;

Result<std::unique_ptr<Server>> Server::bind(ServerOptions options, ServerCounters& counters,
                                             Logger& log) {
  auto impl = std::make_unique<Impl>(std::move(options), counters, log);
  if (Status s = impl->listeners.bind(); !s.is_ok()) return s;
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

void Server::serve(std::unique_ptr<const RespSessionFactory> resp, const HttpRequestHandler& http) {
  impl_->serve(std::move(resp), http);
}

Result<std::unique_ptr<Server>> Server::start(ServerOptions options,
                                              std::unique_ptr<const RespSessionFactory> resp,
                                              const HttpRequestHandler& http,
                                              ServerCounters& counters, Logger& log) {
  Result<std::unique_ptr<Server>> bound = bind(std::move(options), counters, log);
  if (bound.is_ok()) bound.value()->serve(std::move(resp), http);
  return bound;
}

const BoundAddresses& Server::addresses() const noexcept { return impl_->listeners.bound(); }

void Server::stop_accepting() { impl_->stop_accepting(); }

bool Server::drain(Duration timeout) { return impl_->drain(timeout); }

}  // namespace snowid::daemon
