// The batched central service's requests, independent of the transport: a
// parsed HTTP request in, a response out. The server (Boost.Beast) parses the
// HTTP/1.1 framing; this file parses the target (path and query) by hand,
// which is why it has a fuzzer (http_target_fuzzer.cc).
//
// Routes (GET; HEAD is answered as GET without a body, except where it would
// take numbers; any other method: 405 with the route's Allow, GET, HEAD
// unless said otherwise):
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
//   /v1/sequences/{name}/next[?count=N]
//                       200 {"sequence":"orders","numbers":["1001","1002"]}:
//                       the sequence's next numbers, as decimal strings;
//                       count defaults to 1, 1 <= N <= max_batch. GET only
//                       (Allow: GET): a HEAD would burn numbers.
//   /v1/sequences/{name}/range?size=N
//                       200 {"sequence":"orders","start":"3001","end":"4001",
//                       "size":1000}: N numbers taken from the ticket table
//                       for a client that hands them out itself, start to
//                       end - 1 (end exclusive). size is required, 1 <= N <=
//                       max_range. GET only.
//   /v1/sequences/{name}
//                       GET: 200 {"sequence":..,"next_value":"..","step":..,
//                       "created":"<ISO 8601>","updated":"..","buffer":null or
//                       {"buffered":..,"ranges_fetched":..,"numbers_issued":..,
//                       "step_in_use":..}}, the buffer while this daemon holds
//                       one. PUT[?start=N][&step=N]: creates it (start
//                       default 1, step default 1000): 201 with that JSON and
//                       Location, 409 ALREADY_EXISTS if it exists. Allow:
//                       GET, HEAD, PUT. The PUT may give start and step in a
//                       JSON body instead ({"start":1000,"step":100}, each a
//                       JSON integer or a decimal string, json_body.h), with
//                       Content-Type application/json (else 415); the same
//                       field in the query and the body, or any other
//                       field: 400. An empty body: the query alone.
//   /v1/sequences       200 {"sequences":["<name>",...]}, in order
//   /v1/ids?type=T[&count=N]
//                       200 {"ids":["<id>",...],"public":["T_...",...]}: new
//                       ids with their public ids (docs/public-id.md)
//   /v1/ids/{id}/public?type=T
//                       200 {"id":"..","public":"T_..."}
//   /v1/public-ids/{public}
//                       200 {"id":"..","type":"T","slot":N,"form":"compact"}
//                       for callers public_id_unwrap allows (else 403
//                       FORBIDDEN); refusals with the keyring's reason word
//                       (UNKNOWN_KEY 404, FORGED 400, ...); public ids off:
//                       404 PUBLIC_IDS_OFF
// A sequence name fails validate_sequence_name(): 400. An unknown sequence is
// never created: 404 NOT_FOUND; a spent one: 409 OUT_OF_RANGE; the ticket
// table unreachable or a buffer dry past the wait: 503 UNAVAILABLE with
// Retry-After. With sequences off every sequence route is 404 SEQUENCES_OFF.
// Errors are JSON, {"error":"<WORD>","message":"...","retryable":bool}, with
// the status of http_status() (refusals.h): 400 bad input (an unknown or
// repeated query parameter, a count that is not a number or out of bounds, a
// malformed id, more than 32 query parameters), 414 a target over 8 KiB,
// 404 unknown path (a trailing slash included: one spelling per resource),
// 401 without the bearer token, 503 when not issuing (plus Retry-After in
// whole seconds, at least 1, when retryable). Every response carries
// Cache-Control: no-store. A request with a body (Content-Length > 0 or
// chunked) on any route but the PUT is refused with 400, never ignored.
// Checks run in this order: 414, 400 malformed target, 401, 404, 405, 400 a
// body where none is read, 400 parameters, 415 and 400 the PUT's body, then
// the route; so without the token even unknown paths answer 401 and routes
// cannot be probed (and the 404 of sequences off comes with the 404 of
// unknown paths). The server answers 413, 431 and 505 itself.
//
// The /v1 routes are the rows of the command table (commands.h), served on
// RESP too; http_commands.h maps them. The probes and /metrics are HTTP's own.
//
// With a token configured, every route but /healthz and /readyz needs
// "Authorization: Bearer <token>" (compared in constant time): 401 with
// WWW-Authenticate: Bearer realm="snowid" otherwise. Probes stay open so that an
// orchestrator can use them without the secret.
//
// Waiting on the ticket table: a sequence request that cannot be answered
// from memory (/next with the buffer dry or not open yet; every other
// sequence route) must wait for the database. handle_or_defer() never waits:
// it gives such a request back as work for the server to run on its pool.
// handle() runs that work inline.
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

#include "commands.h"
#include "http_request_handler.h"
#include "id_service.h"
#include "sequence_service.h"

namespace snowid::daemon {

// True for "application/json" in any case, with parameters, of which a
// charset must be UTF-8 (RFC 8259: JSON is UTF-8).
bool is_json_media_type(std::string_view content_type);

// A target split into its path and its query parameters, percent-decoded.
// nullopt for a target that is not origin form, holds '#' or a raw byte
// outside visible ASCII, has a bad escape, decodes to a NUL, or has an escaped
// '/' (%2F) in its path, which would hide the path's segments.
struct ParsedTarget {
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;
};
std::optional<ParsedTarget> parse_target(std::string_view target);

class HttpHandler final : public HttpRequestHandler {
 public:
  // `metrics` renders /metrics (metrics.h supplies it). `ids` and
  // `sequences` must outlive the handler; `sequences` null: sequences off.
  HttpHandler(IdService& ids, std::function<std::string()> metrics, std::string token,
              SequenceService* sequences = nullptr, const PublicIdPort* public_ids = nullptr);

  // May wait on the ticket table.
  HttpResponse handle(const HttpRequest& request) const;
  // Never waits on the ticket table.
  HttpOutcome handle_or_defer(const HttpRequest& request) const override;

 private:
  HttpResponse answer(const HttpRequest& request, std::function<HttpResponse()>& deferred) const;

  IdService& ids_;
  Commands commands_;
  std::function<std::string()> metrics_;
  std::string token_;
};

}  // namespace snowid::daemon
