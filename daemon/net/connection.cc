#include "connection.h"

namespace snowid::daemon {

bool loopback_peer(const tcp::socket& socket) noexcept {
  error_code ec;
  const tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec) return false;
  const asio::ip::address a = peer.address();
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).is_loopback();
  }
  return a.is_loopback();
}

Connection::Connection(ServerCore& core, Transport transport) : core_(core), transport_(transport) {
  count(core_.counters.connections_total);
  core_.counters.connections_open[static_cast<std::size_t>(transport_)].fetch_add(
      1, std::memory_order_relaxed);
}

Connection::~Connection() {
  core_.counters.connections_open[static_cast<std::size_t>(transport_)].fetch_sub(
      1, std::memory_order_relaxed);
  core_.remove(this);
}

void Connection::start() {
  core_.add(this, weak_from_this());
  if (core_.stopping()) {
    close();
    return;
  }
  begin();
}

void Connection::linger() {
  state_ = State::kLingering;
  error_code ec;
  shutdown_send(ec);
  if (ec) {
    close();
    return;
  }
  drop_input_for(kLinger);
}

void Connection::close() {
  state_ = State::kClosed;
  gone_.store(true, std::memory_order_release);
  close_transport();
}

bool Connection::carry_on(const error_code& ec) {
  if (state_ == State::kClosed) return false;
  if (ec) {
    close();
    return false;
  }
  return true;
}

void start_connection(std::shared_ptr<Connection> c) {
  asio::any_io_executor ex = c->executor();
  asio::post(ex, [c = std::move(c)] { c->start(); });
}

}  // namespace snowid::daemon
