#include "http_handler.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <limits>
#include <string_view>
#include <system_error>
#include <utility>

#include "json_body.h"
#include "json_text.h"
#include "sequence_service.h"
#include "snowid/layout.h"
#include "snowid/lease_keeper.h"
#include "snowid/status.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"

namespace snowid::daemon {
namespace {

// Longer targets are answered 414 before any parsing. Beast's header limit
// bounds the request line anyway; this keeps the parsing cost of one request
// small and fixed.
constexpr std::size_t kMaxTargetLength = 8 * 1024;
// More query parameters than this: 400. No route takes more than one.
constexpr std::size_t kMaxQueryParameters = 32;
// The count parameter: plain decimal digits, at most this many (leading
// zeros count), so that it always fits before the bound check.
constexpr std::size_t kMaxCountDigits = 10;
// Client text echoed in an error message is cut to this many bytes.
constexpr std::size_t kMaxEchoedBytes = 64;
// Integers beyond this are written as JSON strings: JavaScript's doubles
// lose precision above 2^53 - 1.
constexpr std::uint64_t kMaxSafeJsonInteger = (std::uint64_t{1} << 53) - 1;

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kPrometheusText = "text/plain; version=0.0.4; charset=utf-8";

// ---------------------------------------------------------------- JSON output

template <typename Int>
void append_decimal(std::string& out, Int value) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, r.ptr);
}

// A JSON number, or a decimal string where a double would lose precision.
void append_json_integer(std::string& out, std::uint64_t value) {
  if (value <= kMaxSafeJsonInteger) {
    append_decimal(out, value);
  } else {
    out += '"';
    append_decimal(out, value);
    out += '"';
  }
}

void append_json_integer(std::string& out, std::int64_t value) {
  const std::uint64_t magnitude = value < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(value)
                                            : static_cast<std::uint64_t>(value);
  if (magnitude <= kMaxSafeJsonInteger) {
    append_decimal(out, value);
  } else {
    out += '"';
    append_decimal(out, value);
    out += '"';
  }
}

// A decoded field of `width` bits: a JSON number when every value of that
// width is exact in a double, else always a decimal string, so that the type
// of a key depends on the layout only, never on the value.
void append_json_field(std::string& out, int width, std::uint64_t value) {
  if (width <= 53) {
    append_decimal(out, value);
    return;
  }
  out += '"';
  append_decimal(out, value);
  out += '"';
}

// `text` (from the client) cut short for a message; append_json_string
// repairs a sequence cut in the middle.
std::string echo(std::string_view text) {
  if (text.size() <= kMaxEchoedBytes) return std::string(text);
  std::string s(text.substr(0, kMaxEchoedBytes));
  s += "...";
  return s;
}

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// --------------------------------------------------------------- responses

HttpResponse json_response(unsigned status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = std::string(kJson);
  r.body = std::move(body);
  // Every answer is about this moment (or, for errors, this request): ids
  // must never be served twice from a cache.
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

// Retry-After in whole seconds, rounded up, at least 1.
std::string retry_after_seconds(Duration d) {
  constexpr std::int64_t kSecond = 1'000'000'000;
  const std::int64_t ns = d.count();
  std::int64_t seconds = ns <= 0 ? 1 : ns / kSecond + (ns % kSecond != 0 ? 1 : 0);
  if (seconds < 1) seconds = 1;
  return std::to_string(seconds);
}

HttpResponse error_response(unsigned status, std::string_view word, std::string_view message,
                            bool retryable = false, Duration retry_after = Duration::zero()) {
  std::string body;
  body.reserve(64 + word.size() + message.size());
  body += "{\"error\":";
  append_json_string(body, word);
  body += ",\"message\":";
  append_json_string(body, message);
  body += ",\"retryable\":";
  body += retryable ? "true" : "false";
  body += '}';
  HttpResponse r = json_response(status, std::move(body));
  if (retryable) r.headers.emplace_back("Retry-After", retry_after_seconds(retry_after));
  return r;
}

HttpResponse bad_request(std::string_view message) {
  return error_response(400, error_word(Code::kInvalidArgument), message);
}

// A refusal of the service, as id_service.h's table says.
HttpResponse refusal(Code code, std::string_view message, Refusing what, Duration retry_after) {
  const std::string_view word = error_word(code, what);
  std::string fallback;
  if (message.empty()) {
    fallback = std::string(what == Refusing::kIssue    ? "not issuing: "
                           : what == Refusing::kDecode ? "cannot decode: "
                                                       : "sequence refused: ") +
               std::string(word);
    message = fallback;
  }
  const bool retryable = is_retryable(code);
  return error_response(http_status(code, what), word, message, retryable, retry_after);
}

// A refusal of a sequence call; an unknown name says how to create it.
HttpResponse sequence_refusal(const Status& s, std::string_view name) {
  if (s.code() == Code::kNotFound) {
    return refusal(s.code(), s.message() + " (create it with PUT /v1/sequences/" + echo(name) + ")",
                   Refusing::kSequence, kSequenceRetryAfter);
  }
  return refusal(s.code(), s.message(), Refusing::kSequence, kSequenceRetryAfter);
}

HttpResponse method_not_allowed(std::string_view method, std::string_view allow) {
  HttpResponse r =
      error_response(405, "METHOD_NOT_ALLOWED",
                     "method " + echo(method) + " not allowed; use " + std::string(allow));
  r.headers.emplace_back("Allow", std::string(allow));
  return r;
}

// ------------------------------------------------------------- authorization

// Equal in time that depends only on the length of `expected`.
bool constant_time_equal(std::string_view given, std::string_view expected) {
  unsigned diff = given.size() == expected.size() ? 0u : 1u;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const char g = i < given.size() ? given[i] : '\0';
    diff |= static_cast<unsigned char>(g ^ expected[i]);
  }
  return diff == 0;
}

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
  return constant_time_equal(credentials, token);
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

// ------------------------------------------------------------------ routes

enum class Route {
  kIds,
  kDecode,
  kHealthz,
  kReadyz,
  kMetrics,
  kSequences,      // /v1/sequences
  kSequence,       // /v1/sequences/{name}
  kSequenceNext,   // /v1/sequences/{name}/next
  kSequenceRange,  // /v1/sequences/{name}/range
  kNone,
};

constexpr std::string_view kIdsPath = "/v1/ids";
constexpr std::string_view kSequencesPath = "/v1/sequences";

bool is_sequence_route(Route r) {
  return r == Route::kSequences || r == Route::kSequence || r == Route::kSequenceNext ||
         r == Route::kSequenceRange;
}

// The methods a route answers, for 405's Allow.
std::string_view allowed_methods(Route r) {
  switch (r) {
    case Route::kSequence:
      return "GET, HEAD, PUT";
    case Route::kSequenceNext:
    case Route::kSequenceRange:
      // HEAD must be safe (RFC 9110): a probe must not use up numbers.
      return "GET";
    default:
      return "GET, HEAD";
  }
}

// Trailing slashes are not forgiven: "/v1/ids/" is 404, not the collection,
// and "/healthz/" is 404 too. One spelling per resource. `segment` is the id
// of kDecode, the name of the kSequence* routes.
Route route_of(std::string_view path, std::string_view& segment) {
  if (path == kIdsPath) return Route::kIds;
  if (path == "/healthz") return Route::kHealthz;
  if (path == "/readyz") return Route::kReadyz;
  if (path == "/metrics") return Route::kMetrics;
  if (path == kSequencesPath) return Route::kSequences;
  if (path.size() > kIdsPath.size() + 1 && path.substr(0, kIdsPath.size()) == kIdsPath &&
      path[kIdsPath.size()] == '/') {
    const std::string_view rest = path.substr(kIdsPath.size() + 1);
    if (rest.find('/') == std::string_view::npos) {
      segment = rest;
      return Route::kDecode;
    }
  }
  if (path.size() > kSequencesPath.size() + 1 &&
      path.substr(0, kSequencesPath.size()) == kSequencesPath &&
      path[kSequencesPath.size()] == '/') {
    const std::string_view rest = path.substr(kSequencesPath.size() + 1);
    const std::size_t slash = rest.find('/');
    segment = rest.substr(0, slash);
    if (segment.empty()) return Route::kNone;
    if (slash == std::string_view::npos) return Route::kSequence;
    const std::string_view tail = rest.substr(slash + 1);
    if (tail == "next") return Route::kSequenceNext;
    if (tail == "range") return Route::kSequenceRange;
  }
  return Route::kNone;
}

// count: 1 to `max_digits` decimal digits and nothing else; the value must
// be 1..max_batch. Leading zeros are allowed ("0010" is 10). At most 19
// digits, so that the value always fits.
std::optional<std::uint64_t> parse_count(std::string_view text,
                                         std::size_t max_digits = kMaxCountDigits) {
  if (text.empty() || text.size() > max_digits) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

// A sequence's start: plain decimal, 0 <= start < INT64_MAX.
constexpr std::size_t kMaxStartDigits = 19;

// ------------------------------------------------------------- sequences

// {"sequence":"orders","next_value":"1001","step":1000,"created":"...",
//  "updated":"...","buffer":{...} or null}; without the times unless `times`.
std::string sequence_json(const SequenceDetails& d, bool times = true) {
  std::string body;
  body.reserve(256);
  body += "{\"sequence\":";
  append_json_string(body, d.row.name);
  body += ",\"next_value\":\"";
  append_decimal(body, d.row.next_value);
  body += "\",\"step\":";
  append_json_integer(body, d.row.step);
  if (times) {
    body += ",\"created\":";
    append_json_string(body, format_iso8601(d.row.created));
    body += ",\"updated\":";
    append_json_string(body, format_iso8601(d.row.updated));
  }
  body += ",\"buffer\":";
  if (!d.buffered) {
    body += "null}";
    return body;
  }
  body += "{\"buffered\":";
  append_json_integer(body, d.buffer.buffered);
  body += ",\"ranges_fetched\":";
  append_json_integer(body, d.buffer.ranges_fetched);
  body += ",\"numbers_issued\":";
  append_json_integer(body, d.buffer.numbers_issued);
  body += ",\"step_in_use\":";
  append_json_integer(body, d.buffer.step);
  body += "}}";
  return body;
}

// {"sequence":"orders","numbers":["1001","1002"]}
HttpResponse numbers_response(std::string_view name, const std::vector<SequenceRange>& ranges) {
  std::int64_t total = 0;
  for (const SequenceRange& r : ranges) total += r.size();
  std::string body;
  body.reserve(64 + name.size() + static_cast<std::size_t>(total) * 22);
  body += "{\"sequence\":";
  append_json_string(body, name);
  body += ",\"numbers\":[";
  bool first = true;
  for (const SequenceRange& r : ranges) {
    for (std::int64_t n = r.first; n < r.end; ++n) {
      if (!first) body += ',';
      first = false;
      body += '"';
      append_decimal(body, n);
      body += '"';
    }
  }
  body += "]}";
  return json_response(200, std::move(body));
}

// {"sequence":"orders","start":"3001","end":"4001","size":1000}
HttpResponse range_response(std::string_view name, const SequenceRange& r) {
  std::string body;
  body += "{\"sequence\":";
  append_json_string(body, name);
  body += ",\"start\":\"";
  append_decimal(body, r.first);
  body += "\",\"end\":\"";
  append_decimal(body, r.end);
  body += "\",\"size\":";
  append_json_integer(body, r.size());
  body += '}';
  return json_response(200, std::move(body));
}

HttpResponse list_response(const std::vector<std::string>& names) {
  std::string body = "{\"sequences\":[";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) body += ',';
    append_json_string(body, names[i]);
  }
  body += "]}";
  return json_response(200, std::move(body));
}

// The sequence routes, after the checks every route shares. Sets `deferred`
// (and returns nothing useful) for the work that must wait on the store.
HttpResponse sequence_route(Route route, std::string_view name, const ParsedTarget& target,
                            const HttpRequest& request, SequenceService* service,
                            std::uint32_t max_batch, std::function<HttpResponse()>& deferred) {
  const bool put = request.method == "PUT";
  // Each route takes only the parameters it names, each at most once.
  std::optional<std::string_view> count_text;
  std::optional<std::string_view> size_text;
  std::optional<std::string_view> start_text;
  std::optional<std::string_view> step_text;
  for (const auto& [key, value] : target.query) {
    std::optional<std::string_view>* slot = nullptr;
    if (route == Route::kSequenceNext && key == "count") slot = &count_text;
    if (route == Route::kSequenceRange && key == "size") slot = &size_text;
    if (route == Route::kSequence && put && key == "start") slot = &start_text;
    if (route == Route::kSequence && put && key == "step") slot = &step_text;
    if (slot == nullptr) return bad_request("unknown query parameter \"" + echo(key) + "\"");
    if (*slot) return bad_request("query parameter \"" + echo(key) + "\" given more than once");
    *slot = value;
  }

  if (route == Route::kSequences) {
    deferred = [service] {
      const Result<std::vector<std::string>> names = service->list();
      if (!names.is_ok()) return sequence_refusal(names.status(), {});
      return list_response(names.value());
    };
    return {};
  }

  if (Status s = validate_sequence_name(name); !s.is_ok()) return bad_request(s.message());
  std::string sequence(name);

  switch (route) {
    case Route::kSequenceNext: {
      std::int64_t count = 1;
      if (count_text) {
        const std::optional<std::uint64_t> n = parse_count(*count_text);
        if (!n || *n < 1 || *n > max_batch) {
          return bad_request("count must be a decimal number from 1 to " +
                             std::to_string(max_batch) + ", got \"" + echo(*count_text) + "\"");
        }
        count = static_cast<std::int64_t>(*n);
      }
      SequenceNumbers now = service->try_next(sequence, count);
      if (now.ok()) return numbers_response(sequence, now.ranges);
      if (!now.would_wait) return sequence_refusal(now.status, sequence);
      deferred = [service, sequence = std::move(sequence), count] {
        const SequenceNumbers got = service->next(sequence, count);
        if (!got.ok()) return sequence_refusal(got.status, sequence);
        return numbers_response(sequence, got.ranges);
      };
      return {};
    }

    case Route::kSequenceRange: {
      const std::int64_t max_range = service->max_range();
      if (!size_text) {
        return bad_request("size is required: a decimal number from 1 to " +
                           std::to_string(max_range));
      }
      const std::optional<std::uint64_t> n = parse_count(*size_text);
      if (!n || *n < 1 || *n > static_cast<std::uint64_t>(max_range)) {
        return bad_request("size must be a decimal number from 1 to " + std::to_string(max_range) +
                           ", got \"" + echo(*size_text) + "\"");
      }
      const auto size = static_cast<std::int64_t>(*n);
      deferred = [service, sequence = std::move(sequence), size] {
        const Result<SequenceRange> r = service->range(sequence, size);
        if (!r.is_ok()) return sequence_refusal(r.status(), sequence);
        return range_response(sequence, r.value());
      };
      return {};
    }

    case Route::kSequence: {
      if (!put) {
        deferred = [service, sequence = std::move(sequence)] {
          const Result<SequenceDetails> d = service->info(sequence);
          if (!d.is_ok()) return sequence_refusal(d.status(), sequence);
          return json_response(200, sequence_json(d.value()));
        };
        return {};
      }
      // The body's fields (their text), looked at as the query's are.
      std::vector<std::pair<std::string, std::string>> body_fields;
      if (!request.body.empty()) {
        if (!is_json_media_type(request.content_type)) {
          return error_response(415, "UNSUPPORTED_MEDIA_TYPE",
                                "the request body must be application/json, not \"" +
                                    echo(request.content_type) + "\"");
        }
        Result<std::vector<std::pair<std::string, std::string>>> parsed =
            parse_integer_fields(request.body, {"start", "step"});
        if (!parsed.is_ok()) return bad_request(parsed.status().message());
        body_fields = std::move(parsed).value();
      }
      for (const auto& [key, value] : body_fields) {
        std::optional<std::string_view>& slot = key == "start" ? start_text : step_text;
        if (slot) {
          return bad_request("\"" + key + "\" given both in the query and in the request body");
        }
        slot = value;
      }
      std::int64_t start = 1;
      std::int64_t step = kDefaultSequenceStep;
      if (start_text) {
        const std::optional<std::uint64_t> v = parse_count(*start_text, kMaxStartDigits);
        if (!v || *v >= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          return bad_request("start must be a decimal number from 0 to " +
                             std::to_string(std::numeric_limits<std::int64_t>::max() - 1) +
                             ", got \"" + echo(*start_text) + "\"");
        }
        start = static_cast<std::int64_t>(*v);
      }
      if (step_text) {
        const std::optional<std::uint64_t> v = parse_count(*step_text);
        if (!v || *v < 1 || *v > static_cast<std::uint64_t>(kMaxSequenceRange)) {
          return bad_request("step must be a decimal number from 1 to " +
                             std::to_string(kMaxSequenceRange) + ", got \"" + echo(*step_text) +
                             "\"");
        }
        step = static_cast<std::int64_t>(*v);
      }
      deferred = [service, sequence = std::move(sequence), start, step] {
        const Status created = service->create(sequence, start, step);
        if (!created.is_ok()) return sequence_refusal(created, sequence);
        const Result<SequenceDetails> d = service->info(sequence);
        SequenceDetails details;
        details.row.name = sequence;
        details.row.next_value = start;
        details.row.step = step;
        // Created, but should reading it back fail: what the request set,
        // without the times.
        HttpResponse r = json_response(
            201, d.is_ok() ? sequence_json(d.value()) : sequence_json(details, false));
        r.headers.emplace_back("Location", "/v1/sequences/" + sequence);
        return r;
      };
      return {};
    }

    default:
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
                         SequenceService* sequences)
    : ids_(ids), metrics_(std::move(metrics)), token_(std::move(token)), sequences_(sequences) {}

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

  std::string_view segment;
  const Route route = route_of(target->path, segment);

  // The probes stay open; everything else, unknown paths included (so that
  // routes cannot be probed without the secret), needs the token.
  const bool open = route == Route::kHealthz || route == Route::kReadyz;
  if (!token_.empty() && !open && !bearer_matches(request.authorization, token_)) {
    HttpResponse r =
        error_response(401, "UNAUTHENTICATED", "missing or wrong bearer token in Authorization");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"snowid\"");
    return r;
  }
  if (route == Route::kNone) {
    return error_response(404, "NOT_FOUND", "no resource at " + echo(target->path));
  }
  if (is_sequence_route(route) && (sequences_ == nullptr || !sequences_->enabled())) {
    return error_response(404, kSequencesOffWord, kSequencesOffMessage);
  }
  // HEAD is answered exactly as GET, body included: the server sends the
  // headers (with the GET body's length) and drops the body. Only a
  // sequence takes PUT (to create it).
  const bool put = request.method == "PUT";
  if (request.method == "HEAD" &&
      (route == Route::kSequenceNext || route == Route::kSequenceRange)) {
    HttpResponse r = error_response(405, "METHOD_NOT_ALLOWED",
                                    "HEAD would take numbers without handing them out; use GET");
    r.headers.emplace_back("Allow", "GET");
    return r;
  }
  if (request.method != "GET" && request.method != "HEAD" && !(put && route == Route::kSequence)) {
    return method_not_allowed(request.method, allowed_methods(route));
  }
  // Only the PUT reads a body; one sent anywhere else would be ignored, so it
  // is refused.
  if (request.has_body && !put) {
    return bad_request("this request takes no body; send it without one");
  }
  if (is_sequence_route(route)) {
    return sequence_route(route, segment, *target, request, sequences_, ids_.max_batch(), deferred);
  }

  // Each route takes only the parameters it names; anything else is a
  // client mistake worth reporting (a misspelt "count" would otherwise
  // silently give one id).
  std::optional<std::string_view> count_text;
  for (const auto& [name, value] : target->query) {
    if (route == Route::kIds && name == "count") {
      if (count_text) return bad_request("query parameter \"count\" given more than once");
      count_text = value;
      continue;
    }
    return bad_request("unknown query parameter \"" + echo(name) + "\"");
  }

  switch (route) {
    case Route::kIds: {
      const std::uint32_t max_batch = ids_.max_batch();
      std::uint64_t count = 1;
      if (count_text) {
        const std::optional<std::uint64_t> n = parse_count(*count_text);
        if (!n || *n < 1 || *n > max_batch) {
          return bad_request("count must be a decimal number from 1 to " +
                             std::to_string(max_batch) + ", got \"" + echo(*count_text) + "\"");
        }
        count = *n;
      }
      // HEAD must be safe (RFC 9110): a probe must not use up ids.
      if (request.method == "HEAD") {
        HttpResponse r = error_response(405, "METHOD_NOT_ALLOWED",
                                        "HEAD would issue ids without handing them out; use GET");
        r.headers.emplace_back("Allow", "GET");
        return r;
      }
      IdsAnswer answer;
      if (count == 1) {
        // Counted as a single request, as NEXTID is.
        const IdResult one = ids_.next_id();
        if (!one.ok()) {
          return refusal(one.code, ids_.refusal_message(one.code), Refusing::kIssue,
                         one.retry_after);
        }
        answer.spans.push_back(IdSpan{one.id, 1});
      } else {
        answer = ids_.next_ids(count);
        if (!answer.ok()) {
          return refusal(answer.code, answer.message, Refusing::kIssue, answer.retry_after);
        }
      }

      std::size_t total = 0;
      for (const IdSpan& span : answer.spans) total += span.count;
      // {"ids":["<up to 20 digits>",...]}: written in place into a buffer
      // sized for the longest ids, then cut to length.
      constexpr std::string_view kHead = "{\"ids\":[";
      std::string body;
      body.resize(kHead.size() + total * 23 + 2);
      char* p = body.data();
      char* const end = body.data() + body.size();
      p = std::copy(kHead.begin(), kHead.end(), p);
      bool first = true;
      for (const IdSpan& span : answer.spans) {
        for (std::uint64_t id = span.first, last = span.first + span.count; id != last; ++id) {
          if (!first) *p++ = ',';
          first = false;
          *p++ = '"';
          p = std::to_chars(p, end, id).ptr;
          *p++ = '"';
        }
      }
      *p++ = ']';
      *p++ = '}';
      body.resize(static_cast<std::size_t>(p - body.data()));
      return json_response(200, std::move(body));
    }

    case Route::kDecode: {
      const Result<DecodedId> decoded = ids_.decode(segment);
      if (!decoded.is_ok()) {
        return refusal(decoded.status().code(), decoded.status().message(), Refusing::kDecode,
                       Duration::zero());
      }
      const DecodedId& d = decoded.value();
      const Layout& layout = ids_.layout();
      std::string body;
      body.reserve(256);
      body += "{\"id\":\"";
      append_decimal(body, d.id);
      body += "\",\"layout\":";
      append_json_string(body, layout.name());
      body += ",\"time\":";
      append_json_string(body, format_iso8601(d.time));
      body += ",\"unix_ms\":";
      append_json_integer(body, unix_ms(d.time));
      const auto fields = layout.fields();
      int time_width = 0;
      for (const FieldInfo& f : fields) {
        if (f.role == FieldRole::kTime) time_width = f.width;
      }
      body += ",\"ticks\":";
      append_json_field(body, time_width, static_cast<std::uint64_t>(d.ticks));
      body += ",\"fields\":{";
      for (std::size_t i = 0;
           i < fields.size() && i < static_cast<std::size_t>(d.field_count) && i < d.values.size();
           ++i) {
        if (i > 0) body += ',';
        append_json_string(body, fields[i].name);
        body += ':';
        append_json_field(body, fields[i].width, d.values[i]);
      }
      body += "}}";
      return json_response(200, std::move(body));
    }

    case Route::kHealthz: {
      // Live means fit to go on: a generator that refused a clock step back
      // stays unhealthy until the process restarts, so an orchestrator's
      // liveness probe must see it (a restart waits out the fence, or is
      // refused until the clock is past it).
      const Status health = ids_.generator().health();
      if (health.is_ok()) return json_response(200, "{\"status\":\"ok\"}");
      return error_response(503, error_word(health.code()),
                            "unhealthy until restarted: " + health.message());
    }

    case Route::kReadyz: {
      LeasedGenerator& generator = ids_.generator();
      const std::string lease = lower_ascii(lease_state_name(generator.lease_state()));
      std::string body;
      if (ids_.ready()) {
        const WorkerId worker = generator.worker();
        body += "{\"status\":\"ready\",\"worker\":{\"region\":";
        append_decimal(body, worker.region);
        body += ",\"host\":";
        append_decimal(body, worker.host);
        body += "},\"lease\":";
        append_json_string(body, lease);
        body += '}';
        return json_response(200, std::move(body));
      }
      std::string reason = ids_.not_ready_reason();
      if (reason.empty()) reason = "not ready";
      body += "{\"status\":\"not ready\",\"reason\":";
      append_json_string(body, reason);
      body += ",\"lease\":";
      append_json_string(body, lease);
      body += '}';
      return json_response(503, std::move(body));
    }

    case Route::kMetrics: {
      HttpResponse r;
      r.status = 200;
      r.content_type = std::string(kPrometheusText);
      if (metrics_) r.body = metrics_();
      r.headers.emplace_back("Cache-Control", "no-store");
      return r;
    }

    case Route::kSequences:
    case Route::kSequence:
    case Route::kSequenceNext:
    case Route::kSequenceRange:
    case Route::kNone:
      break;
  }
  return error_response(404, "NOT_FOUND", "no resource at " + echo(target->path));
}

}  // namespace snowid::daemon
