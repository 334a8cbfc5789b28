#include "http_commands.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "http_responses.h"
#include "json_body.h"
#include "json_text.h"
#include "snowid/layout.h"
#include "snowid/time.h"

namespace snowid::daemon {
namespace {

// The most parameters a row takes.
constexpr std::size_t kMaxParams = 4;
// A parameter is plain decimal digits, at most this many (leading zeros
// count), so that it always fits before the bound check; a start may take
// every value below INT64_MAX.
constexpr std::size_t kMaxDigits = 10;
constexpr std::size_t kMaxStartDigits = 19;

using Texts = std::array<std::optional<std::string_view>, kMaxParams>;

// `path` against `pattern`, where "{}" is one non-empty segment.
bool path_matches(std::string_view pattern, std::string_view path, std::string_view& subject) {
  const std::size_t hole = pattern.find("{}");
  if (hole == std::string_view::npos) return pattern == path;
  const std::string_view head = pattern.substr(0, hole);
  const std::string_view tail = pattern.substr(hole + 2);
  if (path.size() <= head.size() + tail.size()) return false;
  if (!path.starts_with(head) || !path.ends_with(tail)) return false;
  const std::string_view segment =
      path.substr(head.size(), path.size() - head.size() - tail.size());
  if (segment.find('/') != std::string_view::npos) return false;
  subject = segment;
  return true;
}

bool head_is_get(const CommandRow& row) noexcept { return row.method == "GET" && row.safe; }

// The methods the path answers, for 405's Allow: GET, HEAD, then the others.
std::string allow_of(const RouteMatch& m) {
  bool get = false, head = false;
  std::string others;
  for (std::size_t i = 0; i < m.count; ++i) {
    const CommandRow& row = *m.rows[i];
    if (row.method == "GET") {
      get = true;
      head = head || row.safe;
    } else if (others.find(row.method) == std::string::npos) {
      others += ", ";
      others += row.method;
    }
  }
  std::string allow = get ? (head ? "GET, HEAD" : "GET") : "";
  if (!get && !others.empty()) others.erase(0, 2);
  return allow + others;
}

// The row for the method; among rows of one method, the one taking the
// most parameters (the others are reached from it: see ids_row()).
const CommandRow* row_for(const RouteMatch& m, std::string_view method) {
  const CommandRow* best = nullptr;
  for (std::size_t i = 0; i < m.count; ++i) {
    const CommandRow& row = *m.rows[i];
    const bool answers = row.method == method || (method == "HEAD" && head_is_get(row));
    if (answers && (best == nullptr || row.params.size() > best->params.size())) best = &row;
  }
  return best;
}

// HEAD on an unsafe row, or a method no row of the path takes.
std::optional<HttpResponse> refuse_method(const RouteMatch& m, const HttpRequest& request) {
  if (request.method == "HEAD") {
    for (std::size_t i = 0; i < m.count; ++i) {
      const CommandRow& row = *m.rows[i];
      if (row.method != "GET" || row.safe) continue;
      HttpResponse r = error_response(
          405, "METHOD_NOT_ALLOWED",
          "HEAD would " + std::string(row.effect) + " without handing them out; use GET");
      r.headers.emplace_back("Allow", "GET");
      return r;
    }
  }
  if (row_for(m, request.method) == nullptr) return method_not_allowed(request.method, allow_of(m));
  return std::nullopt;
}

std::optional<std::size_t> param_index(const CommandRow& row, std::string_view name) {
  for (std::size_t i = 0; i < row.params.size(); ++i) {
    if (row.params[i].name == name) return i;
  }
  return std::nullopt;
}

// The query's parameters: each the row names, each at most once.
std::optional<HttpResponse> read_query(const CommandRow& row, const ParsedTarget& target,
                                       Texts& texts) {
  for (const auto& [key, value] : target.query) {
    const std::optional<std::size_t> i = param_index(row, key);
    if (!i) return bad_request("unknown query parameter \"" + echo(key) + "\"");
    if (texts[*i]) return bad_request("query parameter \"" + echo(key) + "\" given more than once");
    texts[*i] = value;
  }
  return std::nullopt;
}

// A PUT's JSON body: the same parameters as the query, never one in both.
// `fields` keeps the text the views in `texts` point at.
std::optional<HttpResponse> read_body(const CommandRow& row, const HttpRequest& request,
                                      std::vector<std::pair<std::string, std::string>>& fields,
                                      Texts& texts) {
  if (request.body.empty()) return std::nullopt;
  if (!is_json_media_type(request.content_type)) {
    return error_response(
        415, "UNSUPPORTED_MEDIA_TYPE",
        "the request body must be application/json, not \"" + echo(request.content_type) + "\"");
  }
  std::array<std::string_view, kMaxParams> names{};
  for (std::size_t i = 0; i < row.params.size(); ++i) names[i] = row.params[i].name;
  Result<std::vector<std::pair<std::string, std::string>>> parsed = parse_integer_fields(
      request.body, std::span<const std::string_view>(names.data(), row.params.size()));
  if (!parsed.is_ok()) return bad_request(parsed.status().message());
  fields = std::move(parsed).value();
  for (const auto& [key, value] : fields) {
    const std::size_t i = *param_index(row, key);
    if (texts[i]) {
      return bad_request("\"" + key + "\" given both in the query and in the request body");
    }
    texts[i] = value;
  }
  return std::nullopt;
}

// Decimal digits only; nullopt for anything else or too many digits.
std::optional<std::int64_t> parse_digits(std::string_view text, std::size_t max_digits) {
  if (text.empty() || text.size() > max_digits) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  return static_cast<std::int64_t>(std::min(value, kMax));
}

std::string bounds_message(const Param& p, std::int64_t low, std::int64_t high,
                           std::string_view text) {
  return std::string(p.name) + " must be a decimal number from " + std::to_string(low) + " to " +
         std::to_string(high) + ", got \"" + echo(text) + "\"";
}

// The texts into `request`; text that is no number is refused with the
// bounds, as a number out of them is.
std::optional<HttpResponse> parse_params(const Commands& commands, const Texts& texts,
                                         Request& request) {
  const CommandRow& row = *request.row;
  for (std::size_t i = 0; i < row.params.size(); ++i) {
    if (!texts[i]) continue;
    const Param& p = row.params[i];
    if (p.text) {
      request.set_text(i, std::string(*texts[i]));
      continue;
    }
    const std::optional<std::int64_t> v =
        parse_digits(*texts[i], p.high == Limit::kMaxStart ? kMaxStartDigits : kMaxDigits);
    if (!v) return bad_request(bounds_message(p, p.low, commands.limit(p.high), *texts[i]));
    request.set(i, *v);
  }
  return std::nullopt;
}

// /v1/ids reads its query with the NEXTPUBIDS row (type and count): the
// row the given parameters choose. Without a type, NEXTIDS, or NEXTID for
// count=1 (one id, counted as NEXTID is); with one, NEXTPUBIDS, or
// NEXTPUBID.
const CommandRow& ids_row(const CommandRow& row, const Request& request) {
  if (row.op != Op::kNextPubIds) return row;
  const bool typed = request.given[0];
  const bool many = request.given[1] && request.value(1) != 1;
  if (typed) return command_row(many ? Op::kNextPubIds : Op::kNextPubId);
  return command_row(many ? Op::kNextIds : Op::kNextId);
}

// `from` moved onto `to`, whose parameters are some of `from`'s, by name;
// `texts` follow.
Request moved_to(const CommandRow& to, const Request& from, Texts& texts) {
  Request r(to);
  r.subject = from.subject;
  r.items = from.items;
  r.caller = from.caller;
  Texts moved{};
  for (std::size_t i = 0; i < to.params.size(); ++i) {
    const std::size_t j = *param_index(*from.row, to.params[i].name);
    moved[i] = texts[j];
    if (!from.given[j]) continue;
    if (to.params[i].text) {
      r.set_text(i, from.texts[j]);
    } else {
      r.set(i, from.value(j));
    }
  }
  texts = moved;
  return r;
}

// ------------------------------------------------------------------ answers

HttpResponse refusal_response(const Refusal& r, std::string_view subject, const Texts& texts,
                              const CommandRow& row) {
  switch (r.kind) {
    case Refusal::Kind::kSequencesOff:
      return error_response(404, kSequencesOffWord, r.message);
    case Refusal::Kind::kPublicIdsOff:
      return error_response(404, kPublicIdsOffWord, r.message);
    case Refusal::Kind::kDenied:
      return error_response(403, "FORBIDDEN", r.message);
    case Refusal::Kind::kOutOfBounds:
      return bad_request(bounds_message(row.params[r.param], r.low, r.high,
                                        texts[r.param].value_or(std::string_view())));
    case Refusal::Kind::kMissing:
      if (row.params[r.param].text) {
        return bad_request(std::string(row.params[r.param].name) + " is required");
      }
      return bad_request(std::string(row.params[r.param].name) +
                         " is required: a decimal number from " + std::to_string(r.low) + " to " +
                         std::to_string(r.high));
    case Refusal::Kind::kRefused:
      break;
  }
  std::string message = r.message;
  if (r.hint != nullptr) {
    std::string path(r.hint->path);
    path.replace(path.find("{}"), 2, echo(subject));
    message += " (create it with " + std::string(r.hint->method) + ' ' + path + ")";
  }
  if (!r.word.empty()) {
    return error_response(http_status(r.code, r.refusing), r.word, message, r.retryable(),
                          r.retry_after);
  }
  return refusal(r.code, message, r.refusing, r.retry_after);
}

// {"ids":["<id>",...]}: written in place into a buffer sized for the
// longest ids, then cut to length.
HttpResponse ids_response(const IssuedIds& a) {
  std::size_t total = 0;
  for (const IdSpan& span : a.spans) total += span.count;
  constexpr std::string_view kHead = "{\"ids\":[";
  std::string body;
  body.resize(kHead.size() + total * 23 + 2);
  char* p = body.data();
  char* const end = body.data() + body.size();
  p = std::copy(kHead.begin(), kHead.end(), p);
  bool first = true;
  for (const IdSpan& span : a.spans) {
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

HttpResponse decode_response(const Layout& layout, const DecodedId& d) {
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

// {"sequence":"orders","next_value":"1001","step":1000,"created":"...",
//  "updated":"...","buffer":{...} or null}; without the times unless `times`.
std::string sequence_json(const SequenceDetails& d, bool times) {
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
  if (!d.buffered) return body + "null}";
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

HttpResponse sequence_response(const SequenceAnswer& a) {
  if (!a.created) return json_response(200, sequence_json(a.details, a.times));
  HttpResponse r = json_response(201, sequence_json(a.details, a.times));
  r.headers.emplace_back("Location", "/v1/sequences/" + a.details.row.name);
  return r;
}

// {"sequence":"orders","numbers":["1001","1002"]}
HttpResponse numbers_response(const NumbersAnswer& a) {
  std::int64_t total = 0;
  for (const SequenceRange& r : a.ranges) total += r.size();
  std::string body;
  body.reserve(64 + a.sequence.size() + static_cast<std::size_t>(total) * 22);
  body += "{\"sequence\":";
  append_json_string(body, a.sequence);
  body += ",\"numbers\":[";
  bool first = true;
  for (const SequenceRange& r : a.ranges) {
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
HttpResponse range_response(const RangeAnswer& a) {
  std::string body;
  body += "{\"sequence\":";
  append_json_string(body, a.sequence);
  body += ",\"start\":\"";
  append_decimal(body, a.range.first);
  body += "\",\"end\":\"";
  append_decimal(body, a.range.end);
  body += "\",\"size\":";
  append_json_integer(body, a.range.size());
  body += '}';
  return json_response(200, std::move(body));
}

HttpResponse names_response(const NamesAnswer& a) {
  std::string body = "{\"sequences\":[";
  for (std::size_t i = 0; i < a.names.size(); ++i) {
    if (i > 0) body += ',';
    append_json_string(body, a.names[i]);
  }
  body += "]}";
  return json_response(200, std::move(body));
}

// A Record (record.h): {"name":value,...}, its fields in order; a wide
// value as a decimal string (it may pass 2^53).
HttpResponse record_response(const Record& record) {
  std::string body;
  body.reserve(16 + record.fields.size() * 32);
  body += '{';
  for (const RecordField& f : record.fields) {
    if (body.size() > 1) body += ',';
    append_json_string(body, f.name);
    body += ':';
    switch (f.kind) {
      case RecordField::Kind::kWide:
        body += '"';
        append_decimal(body, f.number);
        body += '"';
        break;
      case RecordField::Kind::kInteger:
        append_json_integer(body, f.number);
        break;
      case RecordField::Kind::kText:
        append_json_string(body, f.text);
        break;
      case RecordField::Kind::kNull:
        body += "null";
        break;
    }
  }
  body += '}';
  return json_response(200, std::move(body));
}

// WRAP over HTTP (one id): {"id":"..","public":".."}; the issuing forms:
// {"ids":["..",...],"public":["..",...]}, in the same order.
HttpResponse public_ids_response(const CommandRow& row, const PublicIdsAnswer& a) {
  std::string body;
  body.reserve(32 + a.ids.size() * (24 + (a.publics.empty() ? 0 : a.publics[0].size() + 3)));
  if (row.op == Op::kWrap && a.ids.size() == 1) {
    body += "{\"id\":\"";
    append_decimal(body, a.ids[0]);
    body += "\",\"public\":";
    append_json_string(body, a.publics[0]);
    body += '}';
    return json_response(200, std::move(body));
  }
  body += "{\"ids\":[";
  for (std::size_t i = 0; i < a.ids.size(); ++i) {
    if (i > 0) body += ',';
    body += '"';
    append_decimal(body, a.ids[i]);
    body += '"';
  }
  body += "],\"public\":[";
  for (std::size_t i = 0; i < a.publics.size(); ++i) {
    if (i > 0) body += ',';
    append_json_string(body, a.publics[i]);
  }
  body += "]}";
  return json_response(200, std::move(body));
}

// {"id":"..","type":"ord","slot":1,"form":"compact"}: the one public id of
// the route.
HttpResponse unwrap_response(const UnwrapAnswer& a) {
  const UnwrappedId& u = a.ids.front();
  std::string body = "{\"id\":\"";
  append_decimal(body, u.id);
  body += "\",\"type\":";
  append_json_string(body, u.type);
  body += ",\"slot\":";
  append_json_integer(body, static_cast<std::int64_t>(u.slot));
  body += ",\"form\":";
  append_json_string(body, u.sealed ? "sealed" : "compact");
  body += '}';
  return json_response(200, std::move(body));
}

HttpResponse to_response(const Layout& layout, const CommandRow& row, std::string_view subject,
                         const Texts& texts, const Answer& answer) {
  return std::visit(
      [&](const auto& a) -> HttpResponse {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, Refusal>) {
          return refusal_response(a, subject, texts, row);
        } else if constexpr (std::is_same_v<T, IssuedIds>) {
          return ids_response(a);
        } else if constexpr (std::is_same_v<T, DecodeAnswer>) {
          return decode_response(layout, a.decoded);
        } else if constexpr (std::is_same_v<T, NumbersAnswer>) {
          return numbers_response(a);
        } else if constexpr (std::is_same_v<T, RangeAnswer>) {
          return range_response(a);
        } else if constexpr (std::is_same_v<T, SequenceAnswer>) {
          return sequence_response(a);
        } else if constexpr (std::is_same_v<T, ClockAnswer>) {
          return record_response(clock_record(a));
        } else if constexpr (std::is_same_v<T, Record>) {
          return record_response(a);
        } else if constexpr (std::is_same_v<T, PublicIdsAnswer>) {
          return public_ids_response(row, a);
        } else if constexpr (std::is_same_v<T, UnwrapAnswer>) {
          return unwrap_response(a);
        } else {
          static_assert(std::is_same_v<T, NamesAnswer>, "every answer type has a response");
          return names_response(a);
        }
      },
      answer);
}

}  // namespace

RouteMatch match_command_route(std::string_view path) {
  RouteMatch m;
  for (const CommandRow& row : command_rows()) {
    std::string_view subject;
    if (!row.http() || !path_matches(row.path, path, subject) || m.count == m.rows.size()) {
      continue;
    }
    m.rows[m.count++] = &row;
    m.subject = subject;
  }
  return m;
}

HttpResponse answer_command(const Commands& commands, const RouteMatch& match,
                            const HttpRequest& request, const ParsedTarget& target,
                            const PublicIdCaller& caller, std::function<HttpResponse()>& deferred) {
  if (std::optional<Refusal> off = commands.available(*match.rows[0])) {
    return refusal_response(*off, match.subject, {}, *match.rows[0]);
  }
  if (std::optional<HttpResponse> r = refuse_method(match, request)) return std::move(*r);
  const CommandRow& row = *row_for(match, request.method);
  // Only a PUT reads a body; one sent anywhere else would be ignored, so it
  // is refused.
  if (request.has_body && row.method != "PUT") {
    return bad_request("this request takes no body; send it without one");
  }
  Texts texts{};
  std::vector<std::pair<std::string, std::string>> body_fields;
  if (std::optional<HttpResponse> r = read_query(row, target, texts)) return std::move(*r);
  if (row.method == "PUT") {
    if (std::optional<HttpResponse> r = read_body(row, request, body_fields, texts)) {
      return std::move(*r);
    }
  }
  Request command(row);
  if (row.items != Items::kNone) {
    command.items.emplace_back(match.subject);
  } else {
    command.subject = std::string(match.subject);
  }
  command.describe = true;
  command.caller = caller;
  if (std::optional<HttpResponse> r = parse_params(commands, texts, command)) return std::move(*r);
  const CommandRow& chosen = ids_row(row, command);
  if (&chosen != &row) command = moved_to(chosen, command, texts);
  Outcome outcome = commands.run(command);
  if (!outcome.deferred) {
    return to_response(commands.layout(), chosen, command.subject, texts, outcome.answer);
  }
  deferred = [layout = &commands.layout(), &chosen, subject = command.subject,
              job = std::move(outcome.deferred)] {
    return to_response(*layout, chosen, subject, Texts{}, job());
  };
  return {};
}

}  // namespace snowid::daemon
