#include "server.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "json_text.h"
#include "resp_session.h"

namespace snowid::daemon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;
using error_code = boost::system::error_code;

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
// After the last reply the daemon shuts down its sending side and reads
// (and drops) what the client still sends, for at most this long, before
// closing: closing with unread bytes would make the kernel reset the
// connection and could destroy replies still on their way.
constexpr Duration kLinger = std::chrono::seconds(2);
// After drain() forces the last connections closed, how long it waits for
// their handlers to finish before stopping the loop regardless.
constexpr Duration kForceWait = std::chrono::seconds(1);
// After an accept fails for want of resources (EMFILE), the pause before the
// next attempt.
constexpr Duration kAcceptRetry = std::chrono::milliseconds(100);

std::atomic<std::uint64_t> g_next_client_id{1};

std::size_t idx(Transport t) { return static_cast<std::size_t>(t); }

std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

std::string errno_text(int err) { return std::strerror(err); }

// Creates `dir` and its missing parents with mode 0755.
Status make_socket_dir(const std::string& dir) {
  if (dir.empty()) return Status::ok();
  for (std::size_t end = dir.find('/', 1);; end = dir.find('/', end + 1)) {
    const std::string prefix = dir.substr(0, end);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      const int err = errno;
      return Status(Code::kUnavailable,
                    "unix listener: cannot create directory " + prefix + ": " + errno_text(err));
    }
    if (end == std::string::npos) break;
  }
  return Status::ok();
}

// ServerOptions::private_socket_dir.
Status check_private_dir(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    const int err = errno;
    return Status(Code::kUnavailable,
                  "unix listener: cannot check " + dir + ": " + errno_text(err));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) {
    return Status(Code::kFailedPrecondition,
                  "unix listener: " + dir +
                      " must be a directory owned by this user and writable by no one else "
                      "(another user could replace the socket in it); remove it, or set "
                      "--socket elsewhere");
  }
  return Status::ok();
}

// The stale-socket policy of server.h, before binding `path`.
Status clear_socket_path(const std::string& path, Logger& log) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::ok();
    const int err = errno;
    return Status(Code::kUnavailable,
                  "unix listener: cannot check " + path + ": " + errno_text(err));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Status(Code::kFailedPrecondition,
                  "unix listener: " + path +
                      " exists and is not a socket; snowidd removes only stale sockets");
  }
  // Non-blocking: a listener with a full backlog answers EAGAIN at once.
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    const int err = errno;
    return Status(Code::kUnavailable, "unix listener: socket(): " + errno_text(err));
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int err = rc == 0 ? 0 : errno;
  ::close(fd);
  // EAGAIN: a listener whose backlog is full; it is serving.
  if (rc == 0 || err == EAGAIN) {
    return Status(Code::kUnavailable, "another snowidd is serving " + path);
  }
  if (err != ECONNREFUSED) {
    return Status(Code::kUnavailable,
                  "unix listener: cannot tell whether " + path + " is in use: " + errno_text(err));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    const int e = errno;
    return Status(Code::kUnavailable,
                  "unix listener: cannot remove the stale socket " + path + ": " + errno_text(e));
  }
  log.info("removed stale socket", {{"address", path}});
  return Status::ok();
}

// The version of a request line that ends in a well-formed "HTTP/d.d"
// ("2.0"), or nullopt.
std::optional<std::string> request_line_version(std::string_view bytes) {
  const std::size_t end = bytes.find("\r\n");
  if (end == std::string_view::npos) return std::nullopt;
  const std::string_view line = bytes.substr(0, end);
  constexpr std::string_view kName = " HTTP/";
  if (line.size() < kName.size() + 3) return std::nullopt;
  const std::string_view tail = line.substr(line.size() - kName.size() - 3);
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (tail.substr(0, kName.size()) != kName || !digit(tail[kName.size()]) ||
      tail[kName.size() + 1] != '.' || !digit(tail[kName.size() + 2])) {
    return std::nullopt;
  }
  return std::string(tail.substr(kName.size()));
}

class Connection {
 public:
  virtual ~Connection() = default;
  // Both run on the connection's executor (posted by the server): its
  // io_context's one thread. stop():
  // finish what was received, then close; close an idle connection at once.
  virtual void stop() = 0;
  virtual void force_close() = 0;
  // True once the connection is closed (on its executor).
  virtual bool closed() const = 0;
  // The same, for any thread: a pool job whose connection is gone skips its
  // work.
  bool gone() const noexcept { return gone_.load(std::memory_order_acquire); }
  // The executor the connection's handlers run on.
  virtual asio::any_io_executor executor() = 0;

 protected:
  void mark_gone() noexcept { gone_.store(true, std::memory_order_release); }

 private:
  std::atomic<bool> gone_{false};
};

// Reads what the peer still sends into `buffer` and drops it, until the
// read fails (the peer closed, or a linger timeout closed the socket) or `c`
// is closed; then closes `c`. For a lingering connection: the client reads
// the last replies instead of a reset.
template <typename Stream, typename Buffer>
void drop_input(std::shared_ptr<Connection> c, Stream& stream, Buffer& buffer) {
  stream.async_read_some(asio::buffer(buffer),
                         [c, &stream, &buffer](const error_code& ec, std::size_t) {
                           if (ec || c->closed()) {
                             c->force_close();
                             return;
                           }
                           drop_input(c, stream, buffer);
                         });
}

// The reply to a command whose work could not reach the pool because the
// server is stopping.
constexpr std::string_view kStoppingMessage = "the daemon is shutting down";

// What the connections share with the server.
struct ServerCore {
  ServerCore(ServerOptions o, ServerCounters& c, Logger& l)
      : options(std::move(o)), counters(c), log(l) {}

  // Runs `job` on the pool: false once the pool is closed (drain() joins it),
  // and then the job has not run. Without a pool (sequences off, so nothing
  // should wait on the table) the job runs here. A job must begin with
  // skip_job(): after the forced close the queue is only emptied.
  template <typename Job>
  bool on_pool(Job&& job) {
    {
      std::lock_guard<std::mutex> lock(pool_mu);
      if (pool_closed) return false;
      if (pool) {
        asio::post(*pool, std::forward<Job>(job));
        return true;
      }
    }
    job();
    return true;
  }
  // True if a pool job about to start for `c` must not do its work: the
  // connection is closed, or drain() has forced the connections closed
  // (then the job answers SHUTTING_DOWN, which the closed connection drops,
  // and drain() waits only for the jobs already running).
  bool skip_job(const Connection& c) const noexcept {
    return pool_cancelled.load(std::memory_order_acquire) || c.gone();
  }
  // Waits for the work on the pool; later on_pool() calls return false.
  void close_pool() {
    {
      std::lock_guard<std::mutex> lock(pool_mu);
      pool_closed = true;
    }
    if (pool) pool->join();
  }

  void add(Connection* c, std::weak_ptr<Connection> w) {
    std::lock_guard<std::mutex> lock(mu);
    live.emplace(c, std::move(w));
  }
  void remove(Connection* c) {
    std::lock_guard<std::mutex> lock(mu);
    live.erase(c);
    if (live.empty()) all_closed.notify_all();
  }
  bool stopping() const noexcept { return stopping_flag.load(std::memory_order_acquire); }

  const ServerOptions options;
  // Set by serve(), before any connection is accepted.
  IdService* service = nullptr;
  const HttpHandler* handler = nullptr;
  SequenceService* sequences = nullptr;
  ServerCounters& counters;
  Logger& log;
  std::atomic<bool> stopping_flag{false};
  // Set by drain() when it forces the connections closed: see skip_job().
  std::atomic<bool> pool_cancelled{false};

  std::mutex mu;
  std::condition_variable all_closed;
  std::unordered_map<Connection*, std::weak_ptr<Connection>> live;  // guarded by mu

  // The threads that wait on the ticket table. Joined by drain() while the
  // loops still run (a job's last act is to post its reply to a loop), so
  // before any io_context goes.
  std::unique_ptr<asio::thread_pool> pool;
  std::mutex pool_mu;        // guards posting against closing
  bool pool_closed = false;  // guarded by pool_mu
};

// Runs `work`; an exception (std::bad_alloc) becomes `fallback`, since it
// must not end a pool thread.
template <typename T, typename Fallback>
T run_guarded(const std::function<T()>& work, Fallback fallback) {
  try {
    return work();
  } catch (const std::exception& e) {
    return fallback(e.what());
  }
}

// A RESP connection on a Unix or TCP socket: read, answer every complete
// command, write the answers, read again. Never reads while a write is
// pending, so a client that sends faster than it reads is held back by the
// socket buffers (pipelining with back-pressure).
template <typename Socket>
class RespConnection final : public Connection,
                             public std::enable_shared_from_this<RespConnection<Socket>> {
 public:
  RespConnection(ServerCore& impl, Socket socket, Transport transport, RespSessionOptions options)
      : impl_(impl),
        socket_(std::move(socket)),
        transport_(transport),
        session_(*impl.service, std::move(options)),
        buffer_(kReadBuffer) {
    impl_.counters.connections_total[idx(transport_)].fetch_add(1, std::memory_order_relaxed);
    impl_.counters.connections_open[idx(transport_)].fetch_add(1, std::memory_order_relaxed);
  }
  ~RespConnection() override {
    impl_.counters.connections_open[idx(transport_)].fetch_sub(1, std::memory_order_relaxed);
    impl_.remove(this);
  }

  void start() {
    impl_.add(this, this->shared_from_this());
    if (impl_.stopping()) {
      close();
      return;
    }
    if (transport_ != Transport::kUnix) arm_first_request_timer();
    read();
  }

  void stop() override {
    // An idle read is cancelled; its handler answers what the kernel holds.
    if (state_ == State::kReading) {
      error_code ec;
      socket_.cancel(ec);
    }
  }

  void force_close() override { close(); }
  bool closed() const override { return state_ == State::kClosed; }
  asio::any_io_executor executor() override { return socket_.get_executor(); }

 private:
  // kWaiting: for a reply from the pool, with nothing to write.
  enum class State { kReading, kBusy, kWaiting, kLingering, kClosed };

  void read() {
    state_ = State::kReading;
    socket_.async_read_some(asio::buffer(buffer_),
                            [self = this->shared_from_this()](const error_code& ec, std::size_t n) {
                              self->on_read(ec, n);
                            });
  }

  void on_read(const error_code& ec, std::size_t n) {
    if (state_ == State::kClosed) return;
    state_ = State::kBusy;
    if (ec == asio::error::operation_aborted && impl_.stopping()) {
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
      if (session_.protocol_error()) {
        impl_.counters.protocol_errors[idx(transport_)].fetch_add(1, std::memory_order_relaxed);
      }
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
    first_request_timer_->expires_after(impl_.options.first_request_timeout);
    first_request_timer_->async_wait([self = this->shared_from_this()](const error_code& e) {
      if (e || !self->first_request_timer_ || self->state_ == State::kClosed) return;
      self->impl_.counters.first_request_timeouts[idx(self->transport_)].fetch_add(
          1, std::memory_order_relaxed);
      self->close();
    });
  }

  // Hands the command the session deferred, if any, to the pool; its reply
  // comes back through on_deferred() on this connection's loop.
  void start_deferred() {
    DeferredReply work = session_.take_deferred();
    if (!work) return;
    deferred_running_ = true;
    asio::any_io_executor ex = socket_.get_executor();
    const RespVersion version = session_.version();
    const bool queued = impl_.on_pool(
        [work = std::move(work), ex, version, self = this->shared_from_this()]() mutable {
          std::string reply;
          if (self->impl_.skip_job(*self)) {
            RespWriter(reply, version).error("SHUTTING_DOWN", kStoppingMessage);
          } else {
            reply = run_guarded<std::string>(work, [](std::string_view what) {
              std::string out = "-ERR internal error: ";
              for (const char c : what) out += (c == '\r' || c == '\n') ? ' ' : c;
              return out + "\r\n";
            });
          }
          asio::post(ex, [self = std::move(self), reply = std::move(reply)]() mutable {
            self->on_deferred(std::move(reply));
          });
        });
    if (!queued) {
      std::string reply;
      RespWriter(reply, session_.version()).error("SHUTTING_DOWN", kStoppingMessage);
      on_deferred(std::move(reply));
    }
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
                      [self = this->shared_from_this()](const error_code& ec, std::size_t) {
                        self->on_write(ec);
                      });
  }

  void on_write(const error_code& ec) {
    if (state_ == State::kClosed) return;
    if (ec) {
      close();
      return;
    }
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
    } else if (impl_.stopping()) {
      salvage();
    } else {
      read();
    }
  }

  // Shuts down sending, then drops what the client still sends until it
  // closes or kLinger passes.
  void linger() {
    state_ = State::kLingering;
    error_code ec;
    socket_.shutdown(asio::socket_base::shutdown_send, ec);
    if (ec) {
      close();
      return;
    }
    timer_.emplace(socket_.get_executor());
    timer_->expires_after(kLinger);
    timer_->async_wait([self = this->shared_from_this()](const error_code& e) {
      if (!e) self->close();
    });
    discard();
  }

  void discard() { drop_input(this->shared_from_this(), socket_, buffer_); }

  void close() {
    state_ = State::kClosed;
    mark_gone();
    error_code ec;
    socket_.close(ec);
    if (timer_) timer_->cancel();
    if (first_request_timer_) first_request_timer_->cancel();
  }

  ServerCore& impl_;
  Socket socket_;
  const Transport transport_;
  RespSession session_;
  std::vector<char> buffer_;
  std::string out_;
  std::optional<asio::steady_timer> timer_;
  // Until the first complete command (TCP only).
  std::optional<asio::steady_timer> first_request_timer_;
  State state_ = State::kBusy;
  bool closing_ = false;
  bool deferred_running_ = false;              // a command's work is on the pool
  std::optional<std::string> deferred_reply_;  // its reply, back and not yet sent
};

// An HTTP/1.1 connection: one request at a time, keep-alive as the client
// asks, closed after an idle timeout.
class HttpConnection final : public Connection,
                             public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(ServerCore& impl, tcp::socket socket) : impl_(impl), stream_(std::move(socket)) {
    impl_.counters.connections_total[idx(Transport::kHttp)].fetch_add(1, std::memory_order_relaxed);
    impl_.counters.connections_open[idx(Transport::kHttp)].fetch_add(1, std::memory_order_relaxed);
  }
  ~HttpConnection() override {
    impl_.counters.connections_open[idx(Transport::kHttp)].fetch_sub(1, std::memory_order_relaxed);
    impl_.remove(this);
  }

  void start() {
    impl_.add(this, shared_from_this());
    if (impl_.stopping()) {
      close();
      return;
    }
    read_request();
  }

  void stop() override {
    // Idle between requests (nothing of the next one received): close now.
    // A request on its way is finished and answered with Connection: close.
    if (state_ == State::kReading && buffer_.size() == 0 && parser_ && !parser_->got_some()) {
      stream_.cancel();
    }
  }

  void force_close() override { close(); }
  bool closed() const override { return state_ == State::kClosed; }
  asio::any_io_executor executor() override { return stream_.get_executor(); }

 private:
  // kWaiting: for the response from the pool.
  enum class State { kReading, kBusy, kWaiting, kLingering, kClosed };

  void read_request() {
    state_ = State::kReading;
    parser_.emplace();
    parser_->header_limit(impl_.options.http_header_limit);
    parser_->body_limit(impl_.options.http_body_limit);
    // The first request must be complete within first_request_timeout; a
    // later one within the idle timeout.
    stream_.expires_after(first_request_ ? impl_.options.first_request_timeout
                                         : impl_.options.http_idle_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](const error_code& ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(const error_code& ec) {
    if (state_ == State::kClosed) return;
    state_ = State::kBusy;
    if (ec) {
      // Too large for the limits: answered, then closed (the rest of the
      // request cannot be told from the next one).
      if (ec == http::error::body_limit) {
        refuse(
            413, "CONTENT_TOO_LARGE",
            "request body larger than " + std::to_string(impl_.options.http_body_limit) + " bytes");
        return;
      }
      if (ec == http::error::header_limit) {
        refuse(431, "HEADERS_TOO_LARGE",
               "request header fields larger than " +
                   std::to_string(impl_.options.http_header_limit) + " bytes");
        return;
      }
      // Beast refuses every version but 1.0 and 1.1 as it refuses a
      // malformed one: a well-formed other version is told apart here.
      if (ec == http::error::bad_version) {
        const beast::string_view unread(static_cast<const char*>(buffer_.cdata().data()),
                                        buffer_.cdata().size());
        if (const std::optional<std::string> v = request_line_version(sv(unread))) {
          refuse(505, "HTTP_VERSION_NOT_SUPPORTED",
                 "HTTP/" + *v + " is not supported; use HTTP/1.1");
          return;
        }
      }
      if (ec == beast::error::timeout && first_request_) {
        impl_.counters.first_request_timeouts[idx(Transport::kHttp)].fetch_add(
            1, std::memory_order_relaxed);
        close();
        return;
      }
      // A malformed request gets an answer; a client that went away, a
      // timeout or a stop does not.
      if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
          ec != http::error::end_of_stream && ec != http::error::partial_message) {
        bad_request(ec.message());
        return;
      }
      if (ec == http::error::end_of_stream) {
        linger();
        return;
      }
      close();
      return;
    }
    first_request_ = false;
    const http::request<http::string_body>& req = parser_->get();
    const boost::optional<std::uint64_t> length = parser_->content_length();
    const HttpRequest request{.method = sv(req.method_string()),
                              .target = sv(req.target()),
                              .authorization = sv(req[http::field::authorization]),
                              .content_type = sv(req[http::field::content_type]),
                              .body = req.body(),
                              .has_body = parser_->chunked() || (length && *length > 0)};
    HttpOutcome outcome = impl_.handler->handle_or_defer(request);
    keep_alive_ = req.keep_alive() && !impl_.stopping();
    const unsigned version = req.version();
    const bool head = req.method() == http::verb::head;
    if (!outcome.deferred) {
      respond(std::move(outcome.response), version, head);
      return;
    }
    // The request waits on the ticket table: on the pool, the response back
    // through on_deferred() on this connection's loop.
    state_ = State::kWaiting;
    asio::any_io_executor ex = stream_.get_executor();
    const bool queued = impl_.on_pool([work = std::move(outcome.deferred), ex, version, head,
                                       self = shared_from_this()]() mutable {
      HttpResponse r = self->impl_.skip_job(*self)
                           ? error_answer(503, "SHUTTING_DOWN", kStoppingMessage)
                           : run_guarded<HttpResponse>(work, [](std::string_view what) {
                               return error_answer(500, "INTERNAL", what);
                             });
      asio::post(ex, [self = std::move(self), r = std::move(r), version, head]() mutable {
        self->on_deferred(std::move(r), version, head);
      });
    });
    if (!queued) on_deferred(error_answer(503, "SHUTTING_DOWN", kStoppingMessage), version, head);
  }

  void on_deferred(HttpResponse answer, unsigned version, bool head) {
    if (state_ == State::kClosed) return;
    state_ = State::kBusy;
    keep_alive_ = keep_alive_ && !impl_.stopping();
    respond(std::move(answer), version, head);
  }

  // A JSON error of the server itself (the handler words all others).
  static HttpResponse error_answer(unsigned status, std::string_view word,
                                   std::string_view message) {
    HttpResponse answer;
    answer.status = status;
    answer.body = "{\"error\":";
    append_json_string(answer.body, word);
    answer.body += ",\"message\":";
    append_json_string(answer.body, message);
    answer.body += ",\"retryable\":false}";
    answer.headers.emplace_back("Cache-Control", "no-store");
    return answer;
  }

  // A request refused before the handler sees it; the connection closes.
  void refuse(unsigned status, std::string_view word, std::string_view message) {
    keep_alive_ = false;
    respond(error_answer(status, word, message), 11, false);
  }

  void bad_request(std::string_view why) {
    impl_.counters.protocol_errors[idx(Transport::kHttp)].fetch_add(1, std::memory_order_relaxed);
    HttpResponse answer;
    answer.status = 400;
    answer.body = "{\"error\":\"BAD_REQUEST\",\"message\":\"malformed HTTP request: ";
    append_json_escaped(answer.body, why);
    answer.body += "\",\"retryable\":false}";
    keep_alive_ = false;
    respond(std::move(answer), 11, false);
  }

  void respond(HttpResponse answer, unsigned version, bool head) {
    if (answer.status >= 200 && answer.status < 300) {
      impl_.counters.http_2xx.fetch_add(1, std::memory_order_relaxed);
    } else if (answer.status >= 400 && answer.status < 500) {
      impl_.counters.http_4xx.fetch_add(1, std::memory_order_relaxed);
    } else {
      impl_.counters.http_5xx.fetch_add(1, std::memory_order_relaxed);
    }
    res_ = {};
    res_.result(answer.status);
    res_.version(version);
    res_.set(http::field::server, "snowidd");
    res_.set(http::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) res_.set(name, value);
    res_.keep_alive(keep_alive_);
    if (head) {
      // The headers a GET would get, without the body.
      res_.content_length(answer.body.size());
    } else {
      res_.body() = std::move(answer.body);
      res_.prepare_payload();
    }
    stream_.expires_after(impl_.options.http_idle_timeout);
    http::async_write(
        stream_, res_,
        [self = shared_from_this()](const error_code& ec, std::size_t) { self->on_write(ec); });
  }

  void on_write(const error_code& ec) {
    if (state_ == State::kClosed) return;
    if (ec) {
      close();
      return;
    }
    if (!keep_alive_) {
      linger();
      return;
    }
    if (impl_.stopping()) {
      // The stop came while this request was answered, so stop() found the
      // connection busy: behave as it would have for an idle one, unless the
      // next request has already arrived (that one is answered, then the
      // connection closes).
      error_code ignored;
      if (buffer_.size() == 0 && stream_.socket().available(ignored) == 0) {
        close();
        return;
      }
    }
    read_request();
  }

  void linger() {
    state_ = State::kLingering;
    error_code ec;
    stream_.socket().shutdown(asio::socket_base::shutdown_send, ec);
    if (ec) {
      close();
      return;
    }
    stream_.expires_after(kLinger);
    discard();
  }

  void discard() { drop_input(shared_from_this(), stream_, drop_); }

  void close() {
    state_ = State::kClosed;
    mark_gone();
    error_code ec;
    stream_.socket().close(ec);
  }

  ServerCore& impl_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  std::array<char, 4096> drop_{};
  State state_ = State::kBusy;
  bool keep_alive_ = true;
  bool first_request_ = true;  // no complete request received yet
};

// Starts `c` on its executor: stop() may be posted there as soon as it is
// registered, and must not run alongside start().
template <typename C>
void start_connection(std::shared_ptr<C> c) {
  asio::any_io_executor ex = c->executor();
  asio::post(ex, [c = std::move(c)] { c->start(); });
}

// ServerOptions::max_connections, 0 resolved.
std::uint32_t connection_limit(std::uint32_t configured) {
  if (configured != 0) return configured;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 65536;
  constexpr rlim_t kKept = 64;
  return static_cast<std::uint32_t>(std::clamp<rlim_t>(
      limit.rlim_cur > kKept * 2 ? limit.rlim_cur - kKept : limit.rlim_cur / 2, 1, 1u << 20));
}

// `threads` io_contexts (at least one), each to be run by one thread.
std::vector<std::unique_ptr<asio::io_context>> make_contexts(std::uint32_t threads) {
  std::vector<std::unique_ptr<asio::io_context>> ios;
  for (std::uint32_t i = 0; i < std::max<std::uint32_t>(threads, 1); ++i) {
    ios.push_back(std::make_unique<asio::io_context>(1));
  }
  return ios;
}

}  // namespace

struct Server::Impl : ServerCore {
  using ServerCore::ServerCore;
  ~Impl() { (void)drain(Duration::zero()); }

  Status bind();
  void serve(IdService& ids, const HttpHandler& http, SequenceService* sequence_service);
  Status bind_unix();
  Status bind_tcp(const Address& address, std::string_view transport,
                  std::optional<tcp::acceptor>& acceptor, std::optional<Address>& bound);
  // One accept, then the next. A failure other than the acceptor's closing
  // is logged and the accept retried after kAcceptRetry.
  template <typename Acceptor, typename Serve>
  void accept_next(Acceptor& acceptor, Transport t, Serve serve);
  // A RESP connection on `s`: TCP asks for the token, the Unix socket does
  // not (its file mode guards it).
  template <typename Socket>
  void serve_resp(Socket s, Transport t);
  bool at_connection_limit() const noexcept;
  // Counts a connection closed at the limit; logs the first and then at most
  // one in 1000, so a flood does not become a flood of log lines.
  void refuse_over_limit(Transport t);
  std::uint64_t refused_over_limit = 0;  // on the listeners' thread only

  void stop_accepting();
  bool drain(Duration timeout);
  void remove_socket_file();
  // Posts `what` to each live connection's executor.
  void for_each_live(void (Connection::*what)());

  BoundAddresses bound;
  bool drained = false;
  bool drained_cleanly = true;
  bool serving = false;

  // The socket file made at start, to be removed only if it is still ours.
  bool socket_made = false;
  dev_t socket_dev = 0;
  ino_t socket_ino = 0;

  // One io_context per loop thread, each run by that thread alone: a
  // connection lives on one of them (round robin at accept), so its reads,
  // commands and writes never hop between threads, and no strand or lock
  // sits on the request path. The listeners are on the first.
  // Declared after everything the connections use (ServerCore comes first):
  // the io_contexts destroy the handlers they still hold, and with them the
  // connections, before the rest goes.
  using Work = asio::executor_work_guard<asio::io_context::executor_type>;
  std::vector<std::unique_ptr<asio::io_context>> ios = make_contexts(options.threads);
  std::vector<Work> work;
  std::size_t next_io = 0;  // used by the listeners' thread only
  std::uint32_t max_open = connection_limit(options.max_connections);
  asio::io_context& listener_io() { return *ios.front(); }
  asio::io_context& next_connection_io() { return *ios[next_io++ % ios.size()]; }
  std::optional<local::acceptor> unix_acceptor;
  std::optional<tcp::acceptor> tcp_acceptor;
  std::optional<tcp::acceptor> http_acceptor;
  std::vector<std::thread> threads;
};

Status Server::Impl::bind_unix() {
  const std::string& path = options.socket;
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return Status(Code::kInvalidArgument, "unix listener: the socket path " + path + " is " +
                                              std::to_string(path.size()) + " bytes; at most " +
                                              std::to_string(sizeof(sockaddr_un{}.sun_path) - 1));
  }
  const std::size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    if (Status s = make_socket_dir(path.substr(0, slash)); !s.is_ok()) return s;
    if (options.private_socket_dir) {
      if (Status s = check_private_dir(path.substr(0, slash)); !s.is_ok()) return s;
    }
  }
  if (Status s = clear_socket_path(path, log); !s.is_ok()) return s;

  unix_acceptor.emplace(listener_io());
  error_code ec;
  auto fail = [&](std::string_view what) {
    return Status(Code::kUnavailable,
                  "unix listener " + path + ": cannot " + std::string(what) + ": " + ec.message());
  };
  if (unix_acceptor->open(local(), ec); ec) return fail("open");
  // The socket file appears at bind with the umask's mode; keep it closed to
  // everyone until chmod gives it the configured mode.
  const mode_t old_mask = ::umask(0177);
  unix_acceptor->bind(local::endpoint(path), ec);
  ::umask(old_mask);
  if (ec) return fail("bind");
  socket_made = true;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    socket_dev = st.st_dev;
    socket_ino = st.st_ino;
  }
  if (::chmod(path.c_str(), static_cast<mode_t>(options.socket_mode)) != 0) {
    const int err = errno;
    return Status(Code::kUnavailable,
                  "unix listener " + path + ": cannot set its mode: " + errno_text(err));
  }
  if (unix_acceptor->listen(asio::socket_base::max_listen_connections, ec); ec) {
    return fail("listen");
  }
  bound.socket = path;
  return Status::ok();
}

Status Server::Impl::bind_tcp(const Address& address, std::string_view transport,
                              std::optional<tcp::acceptor>& acceptor, std::optional<Address>& out) {
  error_code ec;
  auto fail = [&](std::string_view what) {
    return Status(Code::kUnavailable, std::string(transport) + " listener " + address.to_string() +
                                          ": cannot " + std::string(what) + ": " + ec.message());
  };
  const asio::ip::address ip = asio::ip::make_address(address.host, ec);
  if (ec) return fail("parse the address");
  const tcp::endpoint endpoint(ip, address.port);
  acceptor.emplace(listener_io());
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

template <typename Acceptor, typename Serve>
void Server::Impl::accept_next(Acceptor& acceptor, Transport t, Serve serve) {
  using Socket = typename Acceptor::protocol_type::socket;
  acceptor.async_accept(
      asio::any_io_executor(next_connection_io().get_executor()),
      [this, &acceptor, t, serve](const error_code& ec, Socket s) {
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
        if (ec == asio::error::operation_aborted || !acceptor.is_open() || stopping()) return;
        log.warn("accept failed", {{"transport", transport_name(t)}, {"error", ec.message()}});
        auto timer = std::make_shared<asio::steady_timer>(acceptor.get_executor(), kAcceptRetry);
        timer->async_wait([this, timer, &acceptor, t, serve](const error_code&) {
          accept_next(acceptor, t, serve);
        });
      });
}

bool Server::Impl::at_connection_limit() const noexcept {
  std::int64_t open = 0;
  for (const auto& n : counters.connections_open) open += n.load(std::memory_order_relaxed);
  return open >= static_cast<std::int64_t>(max_open);
}

void Server::Impl::refuse_over_limit(Transport t) {
  if (refused_over_limit++ % 1000 == 0) {
    log.warn(
        "connection limit",
        {{"transport", transport_name(t)}, {"limit", max_open}, {"refused", refused_over_limit}});
  }
}

template <typename Socket>
void Server::Impl::serve_resp(Socket s, Transport t) {
  RespSessionOptions o;
  if (t != Transport::kUnix) o.token = options.token;
  o.limits = options.resp_limits;
  o.client_id = g_next_client_id.fetch_add(1, std::memory_order_relaxed);
  o.sequences = sequences;
  o.defer = pool != nullptr;
  start_connection(std::make_shared<RespConnection<Socket>>(*this, std::move(s), t, std::move(o)));
}

Status Server::Impl::bind() {
  Status s = Status::ok();
  if (!options.socket.empty()) s = bind_unix();
  if (s.is_ok() && options.tcp) s = bind_tcp(*options.tcp, "tcp", tcp_acceptor, bound.tcp);
  if (s.is_ok() && options.http) s = bind_tcp(*options.http, "http", http_acceptor, bound.http);
  if (!s.is_ok()) {
    remove_socket_file();
    return s;
  }
  const auto listening = [this](Transport t, const std::string& address) {
    log.info("listening", {{"transport", transport_name(t)}, {"address", address}});
  };
  if (unix_acceptor) listening(Transport::kUnix, bound.socket);
  if (tcp_acceptor) listening(Transport::kTcp, bound.tcp->to_string());
  if (http_acceptor) listening(Transport::kHttp, bound.http->to_string());
  return Status::ok();
}

void Server::Impl::serve(IdService& ids, const HttpHandler& http,
                         SequenceService* sequence_service) {
  if (serving || stopping()) return;
  serving = true;
  service = &ids;
  handler = &http;
  sequences = sequence_service;
  if (sequences != nullptr && sequences->enabled()) {
    pool =
        std::make_unique<asio::thread_pool>(std::max<std::uint32_t>(options.sequence_threads, 1));
  }
  if (unix_acceptor) {
    accept_next(*unix_acceptor, Transport::kUnix,
                [this](local::socket socket) { serve_resp(std::move(socket), Transport::kUnix); });
  }
  if (tcp_acceptor) {
    accept_next(*tcp_acceptor, Transport::kTcp,
                [this](tcp::socket socket) { serve_resp(std::move(socket), Transport::kTcp); });
  }
  if (http_acceptor) {
    accept_next(*http_acceptor, Transport::kHttp, [this](tcp::socket socket) {
      start_connection(std::make_shared<HttpConnection>(*this, std::move(socket)));
    });
  }
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

void Server::Impl::remove_socket_file() {
  if (!socket_made) return;
  socket_made = false;
  struct stat st {};
  // Another daemon may have replaced a file we lost track of; only ours goes.
  if (::lstat(options.socket.c_str(), &st) == 0 && st.st_dev == socket_dev &&
      st.st_ino == socket_ino) {
    ::unlink(options.socket.c_str());
  }
}

void Server::Impl::for_each_live(void (Connection::*what)()) {
  std::vector<std::shared_ptr<Connection>> now;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& entry : live) {
      if (std::shared_ptr<Connection> c = entry.second.lock()) now.push_back(std::move(c));
    }
  }
  for (std::shared_ptr<Connection>& c : now) {
    asio::any_io_executor ex = c->executor();
    asio::post(ex, [c = std::move(c), what] { ((*c).*what)(); });
  }
}

void Server::Impl::stop_accepting() {
  if (stopping_flag.exchange(true, std::memory_order_acq_rel)) return;
  // The acceptors run on the listeners' io_context: close them there,
  // between their handlers.
  const auto close_there = [](auto& acceptor) {
    if (!acceptor) return;
    asio::post(acceptor->get_executor(), [&acceptor] {
      error_code ec;
      acceptor->close(ec);
    });
  };
  close_there(unix_acceptor);
  close_there(tcp_acceptor);
  close_there(http_acceptor);
  remove_socket_file();
  // A connection that registers after this sees `stopping` and closes.
  for_each_live(&Connection::stop);
}

bool Server::Impl::drain(Duration timeout) {
  if (drained) return drained_cleanly;
  drained = true;
  stop_accepting();
  if (timeout < Duration::zero()) timeout = Duration::zero();
  std::unique_lock<std::mutex> lock(mu);
  drained_cleanly = all_closed.wait_for(lock, timeout, [this] { return live.empty(); });
  if (!drained_cleanly && !threads.empty()) {
    lock.unlock();
    // The jobs still queued are for connections closed now: they must not
    // hold the shutdown (and the lease) for their turn at the store.
    pool_cancelled.store(true, std::memory_order_release);
    for_each_live(&Connection::force_close);
    lock.lock();
    (void)all_closed.wait_for(lock, kForceWait, [this] { return live.empty(); });
  }
  lock.unlock();
  // The loops still run, so the replies the pool posts are delivered (to
  // closed connections, by now, which drop them). Only the jobs already
  // running are waited for; each is bounded by the store's timeouts and the
  // buffers' wait timeout.
  close_pool();
  work.clear();
  for (const std::unique_ptr<asio::io_context>& io : ios) io->stop();
  for (std::thread& t : threads) t.join();
  threads.clear();
  return drained_cleanly;
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() = default;

Result<std::unique_ptr<Server>> Server::bind(ServerOptions options, ServerCounters& counters,
                                             Logger& log) {
  auto impl = std::make_unique<Impl>(std::move(options), counters, log);
  if (Status s = impl->bind(); !s.is_ok()) return s;
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

void Server::serve(IdService& service, const HttpHandler& handler, SequenceService* sequences) {
  impl_->serve(service, handler, sequences);
}

Result<std::unique_ptr<Server>> Server::start(ServerOptions options, IdService& service,
                                              const HttpHandler& handler, ServerCounters& counters,
                                              Logger& log, SequenceService* sequences) {
  Result<std::unique_ptr<Server>> bound = bind(std::move(options), counters, log);
  if (bound.is_ok()) bound.value()->serve(service, handler, sequences);
  return bound;
}

const BoundAddresses& Server::addresses() const noexcept { return impl_->bound; }

void Server::stop_accepting() { impl_->stop_accepting(); }

bool Server::drain(Duration timeout) { return impl_->drain(timeout); }

}  // namespace snowid::daemon
