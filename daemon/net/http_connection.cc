#include "http_connection.h"

#include <array>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <string>

#include "connection.h"
#include "http_responses.h"
#include "json_text.h"

namespace snowid::daemon {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;

std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

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

// One request at a time, keep-alive as the client asks, closed after an
// idle timeout.
class HttpConnection final : public Connection {
 public:
  HttpConnection(ServerCore& core, tcp::socket socket)
      : Connection(core, Transport::kHttp),
        loopback_(loopback_peer(socket)),
        stream_(std::move(socket)) {}

  void stop() override {
    // Idle between requests (nothing of the next one received): close now.
    // A request on its way is finished and answered with Connection: close.
    if (state_ == State::kReading && buffer_.size() == 0 && parser_ && !parser_->got_some()) {
      stream_.cancel();
    }
  }

  asio::any_io_executor executor() override { return stream_.get_executor(); }

 private:
  std::shared_ptr<HttpConnection> self() {
    return std::static_pointer_cast<HttpConnection>(shared_from_this());
  }

  void begin() override { read_request(); }

  void read_request() {
    state_ = State::kReading;
    parser_.emplace();
    parser_->header_limit(core_.options.http_header_limit);
    parser_->body_limit(core_.options.http_body_limit);
    // The first request must be complete within first_request_timeout; a
    // later one within the idle timeout.
    stream_.expires_after(first_request_ ? core_.options.first_request_timeout
                                         : core_.options.http_idle_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = self()](const error_code& ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(const error_code& ec) {
    if (state_ == State::kClosed) return;
    state_ = State::kBusy;
    if (ec) {
      on_read_error(ec);
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
                              .has_body = parser_->chunked() || (length && *length > 0),
                              .loopback_peer = loopback_};
    HttpOutcome outcome = core_.http_handler->handle_or_defer(request);
    keep_alive_ = req.keep_alive() && !core_.stopping();
    const unsigned version = req.version();
    const bool head = req.method() == http::verb::head;
    if (!outcome.deferred) {
      respond(std::move(outcome.response), version, head);
      return;
    }
    // The request waits on the ticket table: on the pool, the response back
    // through on_deferred() on this connection's loop.
    state_ = State::kWaiting;
    hand_to_pool(
        std::move(outcome.deferred),
        [] { return refusal(shutdown_code(kStoppingAs), kShuttingDownMessage, kStoppingAs, {}); },
        [](std::string_view what) { return error_response(500, "INTERNAL", what); },
        [self = self(), version, head](HttpResponse r) {
          self->on_deferred(std::move(r), version, head);
        });
  }

  void on_read_error(const error_code& ec) {
    // Too large for the limits: answered, then closed (the rest of the
    // request cannot be told from the next one).
    if (ec == http::error::body_limit) {
      refuse(
          413, "CONTENT_TOO_LARGE",
          "request body larger than " + std::to_string(core_.options.http_body_limit) + " bytes");
      return;
    }
    if (ec == http::error::header_limit) {
      refuse(431, "HEADERS_TOO_LARGE",
             "request header fields larger than " +
                 std::to_string(core_.options.http_header_limit) + " bytes");
      return;
    }
    // Beast refuses every version but 1.0 and 1.1 as it refuses a
    // malformed one: a well-formed other version is told apart here.
    if (ec == http::error::bad_version) {
      const beast::string_view unread(static_cast<const char*>(buffer_.cdata().data()),
                                      buffer_.cdata().size());
      if (const std::optional<std::string> v = request_line_version(sv(unread))) {
        refuse(505, "HTTP_VERSION_NOT_SUPPORTED", "HTTP/" + *v + " is not supported; use HTTP/1.1");
        return;
      }
    }
    if (ec == beast::error::timeout && first_request_) {
      count(core_.counters.first_request_timeouts);
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
  }

  void on_deferred(HttpResponse answer, unsigned version, bool head) {
    if (state_ == State::kClosed) return;
    state_ = State::kBusy;
    keep_alive_ = keep_alive_ && !core_.stopping();
    respond(std::move(answer), version, head);
  }

  // A request refused before the handler sees it; the connection closes.
  void refuse(unsigned status, std::string_view word, std::string_view message) {
    keep_alive_ = false;
    respond(error_response(status, word, message), 11, false);
  }

  void bad_request(std::string_view why) {
    count(core_.counters.protocol_errors);
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
      core_.counters.http_2xx.fetch_add(1, std::memory_order_relaxed);
    } else if (answer.status >= 400 && answer.status < 500) {
      core_.counters.http_4xx.fetch_add(1, std::memory_order_relaxed);
    } else {
      core_.counters.http_5xx.fetch_add(1, std::memory_order_relaxed);
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
    stream_.expires_after(core_.options.http_idle_timeout);
    http::async_write(stream_, res_,
                      [self = self()](const error_code& ec, std::size_t) { self->on_write(ec); });
  }

  void on_write(const error_code& ec) {
    if (!carry_on(ec)) return;
    if (!keep_alive_) {
      linger();
      return;
    }
    if (core_.stopping()) {
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

  void shutdown_send(error_code& ec) override {
    stream_.socket().shutdown(asio::socket_base::shutdown_send, ec);
  }

  // The stream's own timeout closes the socket, which ends the dropping.
  void drop_input_for(Duration timeout) override {
    stream_.expires_after(timeout);
    drop_input(stream_, drop_);
  }

  void close_transport() override {
    error_code ec;
    stream_.socket().close(ec);
  }

  const bool loopback_;  // the peer, read at accept (public_id_unwrap)
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  std::array<char, 4096> drop_{};
  bool keep_alive_ = true;
  bool first_request_ = true;  // no complete request received yet
};

}  // namespace

void start_http_connection(ServerCore& core, tcp::socket socket) {
  start_connection(std::make_shared<HttpConnection>(core, std::move(socket)));
}

}  // namespace snowid::daemon
