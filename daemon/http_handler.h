// The batched central service's requests, independent of the transport: a
// parsed HTTP request in, a response out. The server (Boost.Beast) parses the
// HTTP/1.1 framing; this file parses the target (path and query) by hand,
// which is why it has a fuzzer (http_target_fuzzer.cc).
//
// Routes (GET; HEAD is answered as GET without a body; any other method:
// 405 with Allow: GET, HEAD):
//   /v1/ids[?count=N]   200 {"ids":["<id>",...]}: ids as decimal strings
//                       (JavaScript numbers lose precision above 2^53).
//                       count defaults to 1, 1 <= N <= max_batch.
//   /v1/ids/{id}        200 {"id":"..","layout":"..","time":"<ISO 8601>",
//                       "unix_ms":..,"ticks":..,"fields":{"<name>":<value>,...}};
//                       the id always, other values above 2^53 as strings.
//   /healthz            200 {"status":"ok"} while the process serves and its
//                       generator is healthy; 503 (CLOCK_MOVED_BACK, ...)
//                       once a clock step back made it unhealthy for good,
//                       which only a restart clears
//   /readyz             200 {"status":"ready",...} while the lease is held and
//                       the clock guard satisfied; else 503 with the reason
//   /metrics            200 Prometheus text format 0.0.4
// Errors are JSON, {"error":"<WORD>","message":"...","retryable":bool}, with
// the status of http_status() (id_service.h): 400 bad input (an unknown or
// repeated query parameter, a count that is not a number or out of bounds, a
// malformed id, more than 32 query parameters), 414 a target over 8 KiB,
// 404 unknown path (a trailing slash included: one spelling per resource),
// 401 without the bearer token, 503 when not issuing (plus Retry-After in
// whole seconds, at least 1, when retryable). Every response carries
// Cache-Control: no-store. Checks run in this order: 414, 400 malformed
// target, 401, 404, 405, 400 parameters, then the route; so without the
// token even unknown paths answer 401 and routes cannot be probed.
//
// With a token configured, every route but /healthz and /readyz needs
// "Authorization: Bearer <token>" (compared in constant time): 401 with
// WWW-Authenticate: Bearer realm="snowid" otherwise. Probes stay open so that an
// orchestrator can use them without the secret.
//
// Thread-safe: handle() may run on any number of threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "id_service.h"

namespace snowid::daemon {

struct HttpRequest {
  std::string_view method;         // "GET"
  std::string_view target;         // origin form: "/v1/ids?count=10"
  std::string_view authorization;  // the Authorization header's value, or empty
};

struct HttpResponse {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type/-Length
};

// A target split into its path and its query parameters, percent-decoded.
// nullopt for a target that is not origin form, holds '#' or a raw byte
// outside visible ASCII, has a bad escape, decodes to a NUL, or has an escaped
// '/' (%2F) in its path, which would hide the path's segments.
struct ParsedTarget {
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;
};
std::optional<ParsedTarget> parse_target(std::string_view target);

class HttpHandler {
 public:
  // `metrics` renders /metrics (metrics.h supplies it). `ids` must outlive
  // the handler.
  HttpHandler(IdService& ids, std::function<std::string()> metrics, std::string token);

  HttpResponse handle(const HttpRequest& request) const;

 private:
  IdService& ids_;
  std::function<std::string()> metrics_;
  std::string token_;
};

}  // namespace snowid::daemon
