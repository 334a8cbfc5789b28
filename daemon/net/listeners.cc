#include "listeners.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace snowid::daemon {
namespace {

// After an accept fails for want of resources (EMFILE), the pause before the
// next attempt.
constexpr Duration kAcceptRetry = std::chrono::milliseconds(100);

// ServerOptions::max_connections, 0 resolved.
std::uint32_t connection_limit(std::uint32_t configured) {
  if (configured != 0) return configured;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 65536;
  constexpr rlim_t kKept = 64;
  return static_cast<std::uint32_t>(std::clamp<rlim_t>(
      limit.rlim_cur > kKept * 2 ? limit.rlim_cur - kKept : limit.rlim_cur / 2, 1, 1u << 20));
}

}  // namespace

Listeners::Listeners(ServerCore& core, asio::io_context& io,
                     std::function<asio::any_io_executor()> next_executor)
    : core_(core),
      io_(io),
      next_executor_(std::move(next_executor)),
      max_open_(connection_limit(core.options.max_connections)) {}

Status Listeners::bind() {
  const ServerOptions& options = core_.options;
  Status s = Status::ok();
  if (!options.socket.empty()) s = bind_unix();
  if (s.is_ok() && options.tcp) s = bind_tcp(*options.tcp, "tcp", tcp_acceptor_, bound_.tcp);
  if (s.is_ok() && options.http) s = bind_tcp(*options.http, "http", http_acceptor_, bound_.http);
  if (!s.is_ok()) {
    socket_file_.remove();
    return s;
  }
  const auto listening = [this](Transport t, const std::string& address) {
    core_.log.info("listening", {{"transport", transport_name(t)}, {"address", address}});
  };
  if (unix_acceptor_) listening(Transport::kUnix, bound_.socket);
  if (tcp_acceptor_) listening(Transport::kTcp, bound_.tcp->to_string());
  if (http_acceptor_) listening(Transport::kHttp, bound_.http->to_string());
  return Status::ok();
}

Status Listeners::bind_unix() {
  const std::string& path = core_.options.socket;
  if (Status s = prepare_socket_path(path, core_.options.private_socket_dir, core_.log);
      !s.is_ok()) {
    return s;
  }
  unix_acceptor_.emplace(io_);
  error_code ec;
  auto fail = [&](std::string_view what) {
    return Status(Code::kUnavailable,
                  "unix listener " + path + ": cannot " + std::string(what) + ": " + ec.message());
  };
  if (unix_acceptor_->open(local(), ec); ec) return fail("open");
  // The socket file appears at bind with the umask's mode; keep it closed to
  // everyone until chmod gives it the configured mode.
  const mode_t old_mask = ::umask(0177);
  unix_acceptor_->bind(local::endpoint(path), ec);
  ::umask(old_mask);
  if (ec) return fail("bind");
  socket_file_.made(path);
  if (::chmod(path.c_str(), static_cast<mode_t>(core_.options.socket_mode)) != 0) {
    const int err = errno;
    return Status(Code::kUnavailable,
                  "unix listener " + path + ": cannot set its mode: " + errno_text(err));
  }
  if (unix_acceptor_->listen(asio::socket_base::max_listen_connections, ec); ec) {
    return fail("listen");
  }
  bound_.socket = path;
  return Status::ok();
}

Status Listeners::bind_tcp(const Address& address, std::string_view transport,
                           std::optional<tcp::acceptor>& acceptor, std::optional<Address>& out) {
  error_code ec;
  auto fail = [&](std::string_view what) {
    return Status(Code::kUnavailable, std::string(transport) + " listener " + address.to_string() +
                                          ": cannot " + std::string(what) + ": " + ec.message());
  };
  const asio::ip::address ip = asio::ip::make_address(address.host, ec);
  if (ec) return fail("parse the address");
  const tcp::endpoint endpoint(ip, address.port);
  acceptor.emplace(io_);
  if (acceptor->open(endpoint.protocol(), ec); ec) return fail("open");
  if (acceptor->set_option(asio::socket_base::reuse_address(true), ec); ec) {
    return fail("set SO_REUSEADDR");
  }
  if (acceptor->bind(endpoint, ec); ec) {
    // A port in use, an address this host does not have or a privileged
    // port: the configuration must change, a restart alone cannot help.
    if (ec == asio::error::address_in_use || ec == boost::system::errc::address_not_available ||
        ec == asio::error::access_denied) {
      return Status(Code::kFailedPrecondition, std::string(transport) + " listener " +
                                                   address.to_string() +
                                                   ": cannot bind: " + ec.message());
    }
    return fail("bind");
  }
  if (acceptor->listen(asio::socket_base::max_listen_connections, ec); ec) return fail("listen");
  const tcp::endpoint local_end = acceptor->local_endpoint(ec);
  if (ec) return fail("read the bound address");
  Address b = address;
  b.port = local_end.port();
  out = b;
  return Status::ok();
}

void Listeners::accept(std::function<void(local::socket)> on_unix,
                       std::function<void(tcp::socket)> on_tcp,
                       std::function<void(tcp::socket)> on_http) {
  if (unix_acceptor_) accept_next(*unix_acceptor_, Transport::kUnix, std::move(on_unix));
  if (tcp_acceptor_) accept_next(*tcp_acceptor_, Transport::kTcp, std::move(on_tcp));
  if (http_acceptor_) accept_next(*http_acceptor_, Transport::kHttp, std::move(on_http));
}

template <typename Acceptor, typename Serve>
void Listeners::accept_next(Acceptor& acceptor, Transport t, Serve serve) {
  using Socket = typename Acceptor::protocol_type::socket;
  acceptor.async_accept(next_executor_(), [this, &acceptor, t, serve](const error_code& ec,
                                                                      Socket s) {
    if (!ec && at_connection_limit()) {
      error_code ignored;
      s.close(ignored);
      refuse_over_limit(t);
      accept_next(acceptor, t, serve);
      return;
    }
    if (!ec) {
      if constexpr (std::is_same_v<Socket, tcp::socket>) {
        error_code ignored;
        s.set_option(tcp::no_delay(true), ignored);
      }
      serve(std::move(s));
      accept_next(acceptor, t, serve);
      return;
    }
    if (ec == asio::error::operation_aborted || !acceptor.is_open() || core_.stopping()) return;
    core_.log.warn("accept failed", {{"transport", transport_name(t)}, {"error", ec.message()}});
    auto timer = std::make_shared<asio::steady_timer>(acceptor.get_executor(), kAcceptRetry);
    timer->async_wait(
        [this, timer, &acceptor, t, serve](const error_code&) { accept_next(acceptor, t, serve); });
  });
}

bool Listeners::at_connection_limit() const noexcept {
  std::int64_t open = 0;
  for (const auto& n : core_.counters.connections_open) open += n.load(std::memory_order_relaxed);
  return open >= static_cast<std::int64_t>(max_open_);
}

void Listeners::refuse_over_limit(Transport t) {
  if (refused_over_limit_++ % 1000 == 0) {
    core_.log.warn(
        "connection limit",
        {{"transport", transport_name(t)}, {"limit", max_open_}, {"refused", refused_over_limit_}});
  }
}

void Listeners::close() {
  const auto close_there = [](auto& acceptor) {
    if (!acceptor) return;
    asio::post(acceptor->get_executor(), [&acceptor] {
      error_code ec;
      acceptor->close(ec);
    });
  };
  close_there(unix_acceptor_);
  close_there(tcp_acceptor_);
  close_there(http_acceptor_);
  socket_file_.remove();
}

}  // namespace snowid::daemon
