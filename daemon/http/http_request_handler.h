// What the network layer asks of the HTTP side: a parsed request in, the
// response (or the work that computes it) out. The server (net/) holds one
// HttpRequestHandler for every HTTP connection, since an HTTP exchange keeps
// no state between requests; HttpHandler (http_handler.h) is the daemon's,
// over the services. The RESP side's counterpart is RespSessionFactory
// (resp_session_factory.h).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace snowid::daemon {

struct HttpRequest {
  std::string_view method;         // "GET"
  std::string_view target;         // origin form: "/v1/ids?count=10"
  std::string_view authorization;  // the Authorization header's value, or empty
  std::string_view content_type;   // the Content-Type header's value, or empty
  std::string_view body;           // the whole body (the server bounds its size)
  bool has_body = false;           // Content-Length > 0, or chunked framing
  bool loopback_peer = false;      // the peer is on a loopback address (public_id_unwrap)
};

struct HttpResponse {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type/-Length
};

// The answer, or the work that computes it where waiting on the ticket table
// is allowed. The work owns copies of what it needs from the request.
struct HttpOutcome {
  HttpResponse response;                   // when `deferred` is empty
  std::function<HttpResponse()> deferred;  // to run on the pool
};

// Thread-safe: handle_or_defer() runs on every loop thread at once.
class HttpRequestHandler {
 public:
  virtual ~HttpRequestHandler() = default;
  // Never waits on the ticket table: what must is given back as
  // HttpOutcome::deferred, for the server to run on its pool.
  virtual HttpOutcome handle_or_defer(const HttpRequest& request) const = 0;
};

}  // namespace snowid::daemon
