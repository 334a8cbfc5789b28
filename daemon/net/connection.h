// The lifecycle every connection shares, RESP or HTTP: registration with the
// server, the counters, the states, the hand-off of a request to the work
// pool and back, the linger after the last reply, and the close. The
// protocol parts (RespConnection, HttpConnection) read, answer and decide
// when to linger or close.
//
// Threading: everything but gone() runs on the connection's executor (its
// io_context's one thread).
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include "refusals.h"
#include "server_core.h"
#include "snowid/time.h"

namespace snowid::daemon {

// After the last reply the daemon shuts down its sending side and reads
// (and drops) what the client still sends, for at most this long, before
// closing: closing with unread bytes would make the kernel reset the
// connection and could destroy replies still on their way.
inline constexpr Duration kLinger = std::chrono::seconds(2);

// A request whose work could not reach the pool because the server is
// stopping is refused as the ids' shutdown is (refusals.h): SHUTTING_DOWN.
inline constexpr Refusing kStoppingAs = Refusing::kIssue;

// Whether the peer of `socket` is on a loopback address (127.0.0.0/8, ::1,
// or ::ffff:127.x.y.z): what public_id_unwrap = local trusts. False when
// the peer cannot be read.
bool loopback_peer(const tcp::socket& socket) noexcept;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Counts the connection as accepted and open on `transport`.
  Connection(ServerCore& core, Transport transport);
  // Counts it closed and leaves the server's set.
  virtual ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Joins the server's set, then begin(); closes at once if the server is
  // stopping. Posted by start_connection(), so that a stop() posted as soon
  // as the connection is in the set cannot run alongside it.
  void start();
  // Finish what was received, then close; close an idle connection at once.
  virtual void stop() = 0;
  void force_close() { close(); }
  bool closed() const noexcept { return state_ == State::kClosed; }
  // closed(), for any thread: a pool job whose connection is gone skips its
  // work.
  bool gone() const noexcept { return gone_.load(std::memory_order_acquire); }
  // The executor the connection's handlers run on.
  virtual asio::any_io_executor executor() = 0;

 protected:
  // kWaiting: for a reply from the pool.
  enum class State { kReading, kBusy, kWaiting, kLingering, kClosed };

  // The first read, once in the server's set.
  virtual void begin() = 0;
  // Shuts down sending, then drops what the client still sends until it
  // closes or kLinger passes; then closes.
  void linger();
  void close();
  // For an I/O completion: false if the connection is closed, or `ec`
  // failed it (it is then closed); true to carry on.
  bool carry_on(const error_code& ec);

  // Runs `work` (returning a Reply) on the pool; `deliver` gets its reply
  // on this connection's executor. A job that starts after drain() forced
  // the connections closed, or whose connection is gone, delivers
  // `stopping()` without running; so does a pool already closed, at once.
  // An exception from `work` (std::bad_alloc) delivers `failed(what)`, since
  // it must not end a pool thread.
  template <typename Work, typename Stopping, typename Failed, typename Deliver>
  void hand_to_pool(Work work, Stopping stopping, Failed failed, Deliver deliver);

  // Adds one to this connection's transport in `per_transport`.
  template <typename Counter>
  void count(Counter& per_transport) noexcept {
    per_transport[static_cast<std::size_t>(transport_)].fetch_add(1, std::memory_order_relaxed);
  }

  // Reads what the peer still sends into `buffer` and drops it, until the
  // read fails (the peer closed, or the linger timeout closed the socket) or
  // the connection is closed; then closes it.
  template <typename Stream, typename Buffer>
  void drop_input(Stream& stream, Buffer& buffer);

  ServerCore& core_;
  const Transport transport_;
  State state_ = State::kBusy;

 private:
  // linger()'s steps for the protocol's stream: shut down the sending side;
  // close the connection after `timeout` and drop the input meanwhile.
  virtual void shutdown_send(error_code& ec) = 0;
  virtual void drop_input_for(Duration timeout) = 0;
  // close()'s: close the socket and cancel the timers.
  virtual void close_transport() = 0;

  std::atomic<bool> gone_{false};
};

// Posts c->start() to the connection's executor.
void start_connection(std::shared_ptr<Connection> c);

template <typename Work, typename Stopping, typename Failed, typename Deliver>
void Connection::hand_to_pool(Work work, Stopping stopping, Failed failed, Deliver deliver) {
  asio::any_io_executor ex = executor();
  const bool queued = core_.pool.post(
      [work = std::move(work), stopping, failed, deliver, ex, self = shared_from_this()]() mutable {
        auto reply = [&] {
          if (self->core_.pool.cancelled() || self->gone()) return stopping();
          try {
            return work();
          } catch (const std::exception& e) {
            return failed(e.what());
          }
        }();
        asio::post(ex, [self = std::move(self), deliver = std::move(deliver),
                        reply = std::move(reply)]() mutable { deliver(std::move(reply)); });
      });
  if (!queued) deliver(stopping());
}

template <typename Stream, typename Buffer>
void Connection::drop_input(Stream& stream, Buffer& buffer) {
  stream.async_read_some(asio::buffer(buffer), [self = shared_from_this(), &stream, &buffer](
                                                   const error_code& ec, std::size_t) {
    if (ec || self->closed()) {
      self->force_close();
      return;
    }
    self->drop_input(stream, buffer);
  });
}

}  // namespace snowid::daemon
