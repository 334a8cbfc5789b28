#include "resp_connection.h"

#include <atomic>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "connection.h"
#include "resp_session.h"
#include "resp_writer.h"

namespace snowid::daemon {
namespace {

// One read's worth of client bytes. RESP replies are written before the next
// read, so a client that pipelines more than this is slowed down by TCP
// rather than buffered without bound.
constexpr std::size_t kReadBuffer = 16 * 1024;
// At shutdown, what an idle RESP connection has already sent (still in the
// kernel) is read and answered, up to this much.
constexpr std::size_t kMaxSalvage = 256 * 1024;
constexpr std::size_t kMaxSalvageReplies = 8 * 1024 * 1024;
// A reply buffer that grew past this (a batch) is freed once sent; the
// session's output budget (256 KiB) bounds how far it grows.
constexpr std::size_t kKeptOutputCapacity = 64 * 1024;

std::atomic<std::uint64_t> g_next_client_id{1};

// Read, answer every complete command, write the answers, read again. Never
// reads while a write is pending, so a client that sends faster than it
// reads is held back by the socket buffers (pipelining with back-pressure).
template <typename Socket>
class RespConnection final : public Connection {
 public:
  RespConnection(ServerCore& core, Socket socket, Transport transport, RespSessionOptions options)
      : Connection(core, transport),
        socket_(std::move(socket)),
        session_(core.resp_sessions->make(std::move(options))),
        buffer_(kReadBuffer) {}

  void stop() override {
    // An idle read is cancelled; its handler answers what the kernel holds.
    if (state_ == State::kReading) {
      error_code ec;
      socket_.cancel(ec);
    }
  }

  asio::any_io_executor executor() override { return socket_.get_executor(); }

 private:
  std::shared_ptr<RespConnection> self() {
    return std::static_pointer_cast<RespConnection>(shared_from_this());
  }

  void begin() override {
    if (transport_ != Transport::kUnix) arm_first_request_timer();
    read();
  }

  void read() {
    state_ = State::kReading;
    socket_.async_read_some(
        asio::buffer(buffer_),
        [self = self()](const error_code& ec, std::size_t n) { self->on_read(ec, n); });
  }

  void on_read(const error_code& ec, std::size_t n) {
    if (state_ == State::kClosed) return;
    state_ = State::kBusy;
    if (ec == asio::error::operation_aborted && core_.stopping()) {
      salvage();
      return;
    }
    if (ec) {
      close();
      return;
    }
    feed(std::string_view(buffer_.data(), n));
    write();
  }

  void feed(std::string_view bytes) {
    if (closing_) return;
    if (!session_.on_bytes(bytes, out_)) {
      closing_ = true;
      if (session_.protocol_error()) count(core_.counters.protocol_errors);
    }
    start_deferred();
    // Every complete command is answered (or handed to the pool), and a
    // malformed frame ends the connection: either way a first request came.
    if (first_request_timer_ && (!out_.empty() || deferred_running_ || closing_)) {
      first_request_timer_->cancel();
      first_request_timer_.reset();
    }
  }

  // ServerOptions::first_request_timeout, from the accept.
  void arm_first_request_timer() {
    first_request_timer_.emplace(socket_.get_executor());
    first_request_timer_->expires_after(core_.options.first_request_timeout);
    first_request_timer_->async_wait([self = self()](const error_code& e) {
      if (e || !self->first_request_timer_ || self->state_ == State::kClosed) return;
      self->count(self->core_.counters.first_request_timeouts);
      self->close();
    });
  }

  // Hands the command the session deferred, if any, to the pool; its reply
  // comes back through on_deferred() on this connection's loop.
  void start_deferred() {
    DeferredReply work = session_.take_deferred();
    if (!work) return;
    deferred_running_ = true;
    const RespVersion version = session_.version();
    hand_to_pool(
        std::move(work),
        [version] {
          std::string reply;
          RespWriter(reply, version)
              .error(error_word(shutdown_code(kStoppingAs), kStoppingAs), kShuttingDownMessage);
          return reply;
        },
        [](std::string_view what) {
          std::string out = "-ERR internal error: ";
          for (const char c : what) out += (c == '\r' || c == '\n') ? ' ' : c;
          return out + "\r\n";
        },
        [self = self()](std::string reply) { self->on_deferred(std::move(reply)); });
  }

  void on_deferred(std::string reply) {
    deferred_running_ = false;
    if (state_ == State::kClosed) return;
    deferred_reply_ = std::move(reply);
    if (state_ == State::kWaiting) {
      state_ = State::kBusy;
      after_write();
    }
  }

  // The commands after a deferred one, or beyond the output budget.
  void answer_pending() {
    if (!session_.on_bytes({}, out_)) closing_ = true;
    start_deferred();
    write();
  }

  // Stopping while idle (reading, or about to): answers the commands the
  // client sent before the stop that are still in the socket buffer, then
  // closes.
  void salvage() {
    error_code ec;
    socket_.non_blocking(true, ec);
    std::size_t total = 0;
    while (!ec && !closing_ && total < kMaxSalvage && out_.size() < kMaxSalvageReplies) {
      const std::size_t n = socket_.read_some(asio::buffer(buffer_), ec);
      if (ec) break;  // would_block: nothing more; or the client is gone
      total += n;
      feed(std::string_view(buffer_.data(), n));
    }
    closing_ = true;
    // Nothing was waiting: nothing to answer, and nothing unread that would
    // make the close a reset.
    if (total == 0) {
      close();
      return;
    }
    write();
  }

  void write() {
    if (out_.empty()) {
      after_write();
      return;
    }
    asio::async_write(socket_, asio::buffer(out_),
                      [self = self()](const error_code& ec, std::size_t) { self->on_write(ec); });
  }

  void on_write(const error_code& ec) {
    if (!carry_on(ec)) return;
    out_.clear();
    // One large batch reply must not pin its buffer for the connection's life.
    if (out_.capacity() > kKeptOutputCapacity) std::string().swap(out_);
    after_write();
  }

  void after_write() {
    // A command on the pool: nothing is read or answered until its reply is
    // back, so that replies keep their order.
    if (deferred_running_) {
      state_ = State::kWaiting;
      return;
    }
    if (deferred_reply_) {
      session_.complete_deferred(*deferred_reply_, out_);
      deferred_reply_.reset();
      answer_pending();
      return;
    }
    // Commands left unanswered at the session's output budget come before
    // anything else, also when closing after a stop (they were received).
    if (session_.pending()) {
      answer_pending();
      return;
    }
    if (closing_) {
      linger();
    } else if (core_.stopping()) {
      salvage();
    } else {
      read();
    }
  }

  void shutdown_send(error_code& ec) override {
    socket_.shutdown(asio::socket_base::shutdown_send, ec);
  }

  void drop_input_for(Duration timeout) override {
    timer_.emplace(socket_.get_executor());
    timer_->expires_after(timeout);
    timer_->async_wait([self = self()](const error_code& e) {
      if (!e) self->close();
    });
    drop_input(socket_, buffer_);
  }

  void close_transport() override {
    error_code ec;
    socket_.close(ec);
    if (timer_) timer_->cancel();
    if (first_request_timer_) first_request_timer_->cancel();
  }

  Socket socket_;
  RespSession session_;
  std::vector<char> buffer_;
  std::string out_;
  std::optional<asio::steady_timer> timer_;  // the linger's
  // Until the first complete command (TCP only).
  std::optional<asio::steady_timer> first_request_timer_;
  bool closing_ = false;
  bool deferred_running_ = false;              // a command's work is on the pool
  std::optional<std::string> deferred_reply_;  // its reply, back and not yet sent
};

template <typename Socket>
void start_resp(ServerCore& core, Socket socket, Transport transport) {
  RespSessionOptions o;
  if (transport != Transport::kUnix) o.token = core.options.token;
  o.limits = core.options.resp_limits;
  o.client_id = g_next_client_id.fetch_add(1, std::memory_order_relaxed);
  o.unix_socket = transport == Transport::kUnix;
  if constexpr (std::is_same_v<Socket, tcp::socket>) o.loopback_peer = loopback_peer(socket);
  o.defer = core.pool.running();
  start_connection(
      std::make_shared<RespConnection<Socket>>(core, std::move(socket), transport, std::move(o)));
}

}  // namespace

void start_resp_connection(ServerCore& core, local::socket socket) {
  start_resp(core, std::move(socket), Transport::kUnix);
}

void start_resp_connection(ServerCore& core, tcp::socket socket) {
  start_resp(core, std::move(socket), Transport::kTcp);
}

}  // namespace snowid::daemon
