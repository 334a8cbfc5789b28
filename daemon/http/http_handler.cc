#include "http_handler.h"

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

#include "ascii.h"
#include "fleet_page.h"
#include "http_commands.h"
#include "http_responses.h"
#include "json_text.h"
#include "secret.h"
#include "sequence_service.h"
#include "skew_json.h"
#include "snowid/lease_keeper.h"
#include "snowid/status.h"

namespace snowid::daemon {
namespace {

// Longer targets are answered 414 before any parsing. Beast's header limit
// bounds the request line anyway; this keeps the parsing cost of one request
// small and fixed.
constexpr std::size_t kMaxTargetLength = 8 * 1024;
// More query parameters than this: 400. No route takes more than a few.
constexpr std::size_t kMaxQueryParameters = 32;

constexpr std::string_view kPrometheusText = "text/plain; version=0.0.4; charset=utf-8";

// ------------------------------------------------------------- authorization

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// "Bearer <token>", the scheme in any case (RFC 7235), matching `token`.
bool bearer_matches(std::string_view authorization, std::string_view token) {
  std::string_view v = trim(authorization);
  constexpr std::string_view kScheme = "bearer";
  if (v.size() <= kScheme.size() || !is_space(v[kScheme.size()])) return false;
  if (lower_ascii(v.substr(0, kScheme.size())) != kScheme) return false;
  const std::string_view credentials = trim(v.substr(kScheme.size()));
  if (credentials.empty()) return false;
  return same_secret(credentials, token);
}

// ------------------------------------------------------------- target parsing

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes `in` onto `out`. False on a bad escape, a decoded NUL, a
// raw byte outside visible ASCII, or (in the path) an escaped '/', which
// would make the decoded path's segments ambiguous. In the query, '+' is a
// space (HTML forms).
bool decode_component(std::string_view in, bool query, std::string& out) {
  out.reserve(out.size() + in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%') {
      if (in.size() - i < 3) return false;
      const int hi = hex_value(in[i + 1]);
      const int lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      const char decoded = static_cast<char>(hi * 16 + lo);
      if (decoded == '\0') return false;
      if (!query && decoded == '/') return false;
      out += decoded;
      i += 2;
      continue;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '#') return false;
    out += query && c == '+' ? ' ' : c;
  }
  return true;
}

// ------------------------------------------------------------------ probes

// The routes served over HTTP only: GET and HEAD, no parameters.
enum class Probe { kHealthz, kReadyz, kMetrics, kSkew, kFleet, kNone };

// Trailing slashes are not forgiven: "/healthz/" is 404. One spelling per
// resource.
Probe probe_of(std::string_view path) {
  if (path == "/healthz") return Probe::kHealthz;
  if (path == "/readyz") return Probe::kReadyz;
  if (path == "/metrics") return Probe::kMetrics;
  if (path == "/v1/skew") return Probe::kSkew;
  if (path == "/fleet") return Probe::kFleet;
  return Probe::kNone;
}

HttpResponse healthz(IdService& ids) {
  // Live means fit to go on: a generator that refused a clock step back
  // stays unhealthy until the process restarts, so an orchestrator's
  // liveness probe must see it (a restart waits out the fence, or is
  // refused until the clock is past it).
  const Status health = ids.health();
  if (health.is_ok()) return json_response(200, "{\"status\":\"ok\"}");
  return error_response(503, error_word(health.code()),
                        "unhealthy until restarted: " + health.message());
}

HttpResponse readyz(IdService& ids) {
  const std::string_view lease = lease_state_label(ids.lease_state());
  std::string body;
  if (ids.ready() && !ids.issues()) {
    return json_response(200, "{\"status\":\"ready\",\"monitor_only\":true}");
  }
  if (ids.ready()) {
    const WorkerId worker = ids.worker();
    body += "{\"status\":\"ready\",\"worker\":{\"region\":";
    append_decimal(body, worker.region);
    body += ",\"host\":";
    append_decimal(body, worker.host);
    body += "},\"lease\":";
    append_json_string(body, lease);
    body += '}';
    return json_response(200, std::move(body));
  }
  std::string reason = ids.not_ready_reason();
  if (reason.empty()) reason = "not ready";
  body += "{\"status\":\"not ready\",\"reason\":";
  append_json_string(body, reason);
  body += ",\"lease\":";
  append_json_string(body, lease);
  body += '}';
  return json_response(503, std::move(body));
}

HttpResponse metrics_response(const std::function<std::string()>& metrics) {
  HttpResponse r;
  r.status = 200;
  r.content_type = std::string(kPrometheusText);
  if (metrics) r.body = metrics();
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

// GET /v1/skew[?history=1]: the skew monitor's last round; 404 when it is
// off, 503 before its first round.
HttpResponse skew_view(IdService& ids, bool history) {
  const std::shared_ptr<const SkewSnapshot> skew = ids.skew_snapshot();
  if (!ids.skew_monitor_on()) {
    return error_response(404, "NOT_FOUND",
                          "the skew monitor is off: it runs when etcd is the registry and "
                          "skew_monitor is true");
  }
  if (skew == nullptr) {
    return error_response(503, "UNAVAILABLE", "the skew monitor has not finished a round yet");
  }
  HttpResponse r = json_response(200, skew_json(*skew, history));
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

HttpResponse fleet_page() {
  HttpResponse r;
  r.status = 200;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::string(kFleetPage);
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; script-src 'unsafe-inline'; "
                         "style-src 'unsafe-inline'; connect-src 'self'");
  return r;
}

// The checks a probe shares with every route, then its answer.
HttpResponse answer_probe(Probe probe, const HttpRequest& request, const ParsedTarget& target,
                          IdService& ids, const std::function<std::string()>& metrics) {
  if (request.method != "GET" && request.method != "HEAD") {
    return method_not_allowed(request.method, "GET, HEAD");
  }
  if (request.has_body) return bad_request("this request takes no body; send it without one");
  bool history = false;
  for (const auto& [name, value] : target.query) {
    if (probe == Probe::kSkew && name == "history" && (value == "1" || value == "0")) {
      history = value == "1";
      continue;
    }
    if (probe == Probe::kSkew && name == "history") {
      return bad_request("history must be 0 or 1, not \"" + echo(value) + "\"");
    }
    return bad_request("unknown query parameter \"" + echo(name) + "\"");
  }
  switch (probe) {
    case Probe::kHealthz:
      return healthz(ids);
    case Probe::kReadyz:
      return readyz(ids);
    case Probe::kMetrics:
      return metrics_response(metrics);
    case Probe::kSkew:
      return skew_view(ids, history);
    case Probe::kFleet:
      return fleet_page();
    case Probe::kNone:
      break;
  }
  return error_response(404, "NOT_FOUND", "no resource at " + echo(target.path));
}

}  // namespace

bool is_json_media_type(std::string_view content_type) {
  const std::size_t semicolon = content_type.find(';');
  if (lower_ascii(trim(content_type.substr(0, semicolon))) != kJson) return false;
  std::string_view rest =
      semicolon == std::string_view::npos ? std::string_view() : content_type.substr(semicolon + 1);
  while (!rest.empty()) {
    const std::size_t next = rest.find(';');
    const std::string_view parameter = trim(rest.substr(0, next));
    rest = next == std::string_view::npos ? std::string_view() : rest.substr(next + 1);
    const std::size_t eq = parameter.find('=');
    if (eq == std::string_view::npos) {
      if (parameter.empty()) continue;
      return false;
    }
    if (lower_ascii(trim(parameter.substr(0, eq))) != "charset") continue;
    std::string_view value = trim(parameter.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (lower_ascii(value) != "utf-8") return false;
  }
  return true;
}

std::optional<ParsedTarget> parse_target(std::string_view target) {
  // Origin form only (RFC 9112 3.2.1): absolute form, authority form and "*"
  // are refused, and so is a fragment, which a client never sends.
  if (target.empty() || target.front() != '/') return std::nullopt;
  const std::size_t question = target.find('?');
  const std::string_view raw_path = target.substr(0, question);
  ParsedTarget parsed;
  if (!decode_component(raw_path, false, parsed.path)) return std::nullopt;
  if (question == std::string_view::npos) return parsed;

  // name=value pairs separated by '&'; empty pairs are skipped; a pair
  // without '=' has an empty value; only the first '=' separates.
  std::string_view query = target.substr(question + 1);
  while (true) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (!pair.empty()) {
      const std::size_t eq = pair.find('=');
      std::string name;
      std::string value;
      if (!decode_component(pair.substr(0, eq), true, name)) return std::nullopt;
      if (eq != std::string_view::npos && !decode_component(pair.substr(eq + 1), true, value)) {
        return std::nullopt;
      }
      parsed.query.emplace_back(std::move(name), std::move(value));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return parsed;
}

HttpHandler::HttpHandler(IdService& ids, std::function<std::string()> metrics, std::string token,
                         SequenceService* sequences, const PublicIdPort* public_ids)
    : ids_(ids),
      commands_(ids, sequences, public_ids),
      metrics_(std::move(metrics)),
      token_(std::move(token)) {}

HttpResponse HttpHandler::handle(const HttpRequest& request) const {
  HttpOutcome outcome = handle_or_defer(request);
  if (outcome.deferred) return outcome.deferred();
  return std::move(outcome.response);
}

HttpOutcome HttpHandler::handle_or_defer(const HttpRequest& request) const {
  HttpOutcome out;
  out.response = answer(request, out.deferred);
  return out;
}

HttpResponse HttpHandler::answer(const HttpRequest& request,
                                 std::function<HttpResponse()>& deferred) const {
  if (request.target.size() > kMaxTargetLength) {
    return error_response(
        414, error_word(Code::kInvalidArgument),
        "request target longer than " + std::to_string(kMaxTargetLength) + " bytes");
  }
  std::optional<ParsedTarget> target = parse_target(request.target);
  if (!target) {
    return bad_request("malformed request target: origin form with valid percent escapes expected");
  }
  if (target->query.size() > kMaxQueryParameters) {
    return bad_request("more than " + std::to_string(kMaxQueryParameters) + " query parameters");
  }
  const Probe probe = probe_of(target->path);
  const RouteMatch match = probe == Probe::kNone ? match_command_route(target->path) : RouteMatch{};
  // The probes stay open; everything else, unknown paths included (so that
  // routes cannot be probed without the secret), needs the token.
  // The fleet page holds no data: it asks /v1/skew, with the token the
  // operator types into it.
  const bool open = probe == Probe::kHealthz || probe == Probe::kReadyz || probe == Probe::kFleet;
  const bool token = !token_.empty() && bearer_matches(request.authorization, token_);
  if (!token_.empty() && !open && !token) {
    HttpResponse r =
        error_response(401, "UNAUTHENTICATED", "missing or wrong bearer token in Authorization");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"snowid\"");
    return r;
  }
  if (probe != Probe::kNone) return answer_probe(probe, request, *target, ids_, metrics_);
  if (!match.found())
    return error_response(404, "NOT_FOUND", "no resource at " + echo(target->path));
  const PublicIdCaller caller{.loopback = request.loopback_peer, .token = token};
  return answer_command(commands_, match, request, *target, caller, deferred);
}

}  // namespace snowid::daemon
