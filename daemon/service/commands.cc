#include "commands.h"

#include <array>
#include <limits>
#include <utility>

#include "ascii.h"
#include "snowid/id_text.h"
#include "snowid/ticket_store.h"

namespace snowid::daemon {
namespace {

// No bound on RESP's argument count: the items' count is checked against
// max_batch, which SIGHUP may change.
constexpr std::size_t kAnyCount = std::numeric_limits<std::size_t>::max();

constexpr Param kCount[] = {{.name = "count", .low = 1, .high = Limit::kMaxBatch, .fallback = 1}};
constexpr Param kSize[] = {
    {.name = "size", .low = 1, .high = Limit::kMaxRange, .fallback = 1, .required = true}};
// The ticket table's own rule (validate_sequence_create), so RESP words a
// bad start or step as it does every refusal of the table's rules.
constexpr Param kCreate[] = {
    {.name = "start",
     .low = 0,
     .high = Limit::kMaxStart,
     .fallback = 1,
     .resp_word = "INVALID_ARGUMENT"},
    {.name = "step",
     .low = 1,
     .high = Limit::kMaxStep,
     .fallback = kDefaultSequenceStep,
     .resp_word = "INVALID_ARGUMENT"},
};

// A public-id type: text, required, checked by the keyring (BAD_TYPE).
constexpr Param kType[] = {{.name = "type", .required = true, .text = true}};
constexpr Param kTypeCount[] = {
    {.name = "type", .required = true, .text = true},
    {.name = "count", .low = 1, .high = Limit::kMaxBatch, .fallback = 1}};

// The table. The order is the order of Op. HTTP matches paths in this order.
// clang-format off
constexpr CommandRow kCommands[] = {
    {.op = Op::kNextId, .resp = "NEXTID", .resp_min_args = 0, .resp_max_args = 0,
     .method = "GET", .path = "/v1/ids", .subject = Subject::kNone, .params = {},
     .items = Items::kNone, .safe = false, .effect = "issue ids", .refusing = Refusing::kIssue},
    {.op = Op::kNextIds, .resp = "NEXTIDS", .resp_min_args = 1, .resp_max_args = 1,
     .method = "GET", .path = "/v1/ids", .subject = Subject::kNone, .params = kCount,
     .items = Items::kNone, .safe = false, .effect = "issue ids", .refusing = Refusing::kIssue},
    {.op = Op::kDecode, .resp = "DECODE", .resp_min_args = 1, .resp_max_args = 1,
     .method = "GET", .path = "/v1/ids/{}", .subject = Subject::kId, .params = {},
     .items = Items::kNone, .safe = true, .effect = "", .refusing = Refusing::kDecode},
    {.op = Op::kNextSeq, .resp = "NEXTSEQ", .resp_min_args = 1, .resp_max_args = 2,
     .method = "GET", .path = "/v1/sequences/{}/next", .subject = Subject::kSequence,
     .params = kCount, .items = Items::kNone, .safe = false, .effect = "take numbers",
     .refusing = Refusing::kSequence},
    {.op = Op::kSeqRange, .resp = "SEQRANGE", .resp_min_args = 2, .resp_max_args = 2,
     .method = "GET", .path = "/v1/sequences/{}/range", .subject = Subject::kSequence,
     .params = kSize, .items = Items::kNone, .safe = false, .effect = "take numbers",
     .refusing = Refusing::kSequence},
    {.op = Op::kSeqCreate, .resp = "SEQCREATE", .resp_min_args = 2, .resp_max_args = 3,
     .method = "PUT", .path = "/v1/sequences/{}", .subject = Subject::kSequence,
     .params = kCreate, .items = Items::kNone, .safe = false, .effect = "create it",
     .refusing = Refusing::kSequence},
    {.op = Op::kSeqInfo, .resp = "SEQINFO", .resp_min_args = 1, .resp_max_args = 1,
     .method = "GET", .path = "/v1/sequences/{}", .subject = Subject::kSequence, .params = {},
     .items = Items::kNone, .safe = true, .effect = "", .refusing = Refusing::kSequence},
    {.op = Op::kSeqList, .resp = "SEQLIST", .resp_min_args = 0, .resp_max_args = 0,
     .method = "GET", .path = "/v1/sequences", .subject = Subject::kNone, .params = {},
     .items = Items::kNone, .safe = true, .effect = "", .refusing = Refusing::kSequence},
    // The clock probes never refuse (but for their arity); kDecode words
    // nothing of the generator's state.
    {.op = Op::kTime, .resp = "TIME", .resp_min_args = 0, .resp_max_args = 0,
     .method = "", .path = "", .subject = Subject::kNone, .params = {},
     .items = Items::kNone, .safe = true, .effect = "", .refusing = Refusing::kDecode},
    {.op = Op::kClock, .resp = "SNOWID.CLOCK", .resp_min_args = 0, .resp_max_args = 0,
     .method = "GET", .path = "/v1/clock", .subject = Subject::kNone, .params = {},
     .items = Items::kNone, .safe = true, .effect = "", .refusing = Refusing::kDecode},
    // Public ids (docs/public-id.md). WRAP and UNWRAP take up to max_batch
    // items over RESP, one over HTTP; the issuing forms share /v1/ids with
    // NEXTID and NEXTIDS, told apart by the type parameter.
    {.op = Op::kWrap, .resp = "WRAP", .resp_min_args = 2, .resp_max_args = kAnyCount,
     .method = "GET", .path = "/v1/ids/{}/public", .subject = Subject::kNone, .params = kType,
     .items = Items::kIds, .safe = true, .effect = "", .refusing = Refusing::kPublicId},
    {.op = Op::kUnwrap, .resp = "UNWRAP", .resp_min_args = 1, .resp_max_args = kAnyCount,
     .method = "GET", .path = "/v1/public-ids/{}", .subject = Subject::kNone, .params = {},
     .items = Items::kPublicIds, .safe = true, .effect = "", .refusing = Refusing::kPublicId},
    {.op = Op::kNextPubId, .resp = "NEXTPUBID", .resp_min_args = 1, .resp_max_args = 1,
     .method = "GET", .path = "/v1/ids", .subject = Subject::kNone, .params = kType,
     .items = Items::kNone, .safe = false, .effect = "issue ids", .refusing = Refusing::kIssue},
    {.op = Op::kNextPubIds, .resp = "NEXTPUBIDS", .resp_min_args = 2, .resp_max_args = 2,
     .method = "GET", .path = "/v1/ids", .subject = Subject::kNone, .params = kTypeCount,
     .items = Items::kNone, .safe = false, .effect = "issue ids", .refusing = Refusing::kIssue},
};
// clang-format on

bool is_sequence_row(const CommandRow& row) noexcept { return row.refusing == Refusing::kSequence; }

bool is_public_id_row(const CommandRow& row) noexcept {
  return row.op == Op::kWrap || row.op == Op::kUnwrap || row.op == Op::kNextPubId ||
         row.op == Op::kNextPubIds;
}

Refusal refused(const CommandRow& row, Code code, std::string message, Duration retry_after) {
  Refusal r;
  r.code = code;
  r.refusing = row.refusing;
  r.message = std::move(message);
  r.retry_after = retry_after;
  return r;
}

// A refusal of the sequence service: retry after kSequenceRetryAfter when
// retryable; an unknown sequence is never created, the answer says how.
Refusal sequence_refused(const CommandRow& row, const Status& s) {
  Refusal r = refused(row, s.code(), s.message(), kSequenceRetryAfter);
  if (s.code() == Code::kNotFound && row.subject == Subject::kSequence) {
    r.hint = &command_row(Op::kSeqCreate);
  }
  return r;
}

}  // namespace

std::span<const CommandRow> command_rows() noexcept { return kCommands; }

const CommandRow& command_row(Op op) noexcept { return kCommands[static_cast<std::size_t>(op)]; }

const CommandRow* find_resp_command(std::string_view name) noexcept {
  for (const CommandRow& row : kCommands) {
    if (equal_ignoring_ascii_case(name, row.resp)) return &row;
  }
  return nullptr;
}

Request::Request(const CommandRow& r)
    : row(&r), values(r.params.size()), given(r.params.size(), false), texts(r.params.size()) {
  for (std::size_t i = 0; i < r.params.size(); ++i) values[i] = r.params[i].fallback;
}

void Request::set(std::size_t param, std::int64_t value) {
  values[param] = value;
  given[param] = true;
}

void Request::set_text(std::size_t param, std::string value) {
  texts[param] = std::move(value);
  given[param] = true;
}

std::optional<Refusal> Commands::available(const CommandRow& row) const {
  if (is_public_id_row(row)) {
    if (public_ids_ != nullptr && public_ids_->on()) return {};
    Refusal r;
    r.kind = Refusal::Kind::kPublicIdsOff;
    r.refusing = Refusing::kPublicId;
    r.message = std::string(kPublicIdsOffMessage);
    return r;
  }
  if (!is_sequence_row(row) || (sequences_ != nullptr && sequences_->enabled())) return {};
  Refusal r;
  r.kind = Refusal::Kind::kSequencesOff;
  r.refusing = Refusing::kSequence;
  r.message = std::string(kSequencesOffMessage);
  return r;
}

std::int64_t Commands::limit(Limit limit) const noexcept {
  switch (limit) {
    case Limit::kMaxBatch:
      return ids_.max_batch();
    case Limit::kMaxRange:
      return sequences_ != nullptr ? sequences_->max_range() : 0;
    case Limit::kMaxStep:
      return kMaxSequenceRange;
    case Limit::kMaxStart:
      return std::numeric_limits<std::int64_t>::max() - 1;
  }
  return 0;
}

std::optional<Refusal> Commands::check(const Request& request) const {
  const CommandRow& row = *request.row;
  if (std::optional<Refusal> off = available(row)) return off;
  if (row.subject == Subject::kSequence) {
    if (Status s = validate_sequence_name(request.subject); !s.is_ok()) {
      return refused(row, s.code(), s.message(), Duration::zero());
    }
  }
  for (std::size_t i = 0; i < row.params.size(); ++i) {
    const Param& p = row.params[i];
    Refusal r;
    r.refusing = row.refusing;
    r.param = i;
    r.low = p.low;
    r.high = limit(p.high);
    if (p.required && !request.given[i]) {
      r.kind = Refusal::Kind::kMissing;
      return r;
    }
    if (p.text) continue;
    if (request.values[i] < r.low || request.values[i] > r.high) {
      r.kind = Refusal::Kind::kOutOfBounds;
      return r;
    }
  }
  if (row.items != Items::kNone) {
    const auto most = static_cast<std::size_t>(limit(Limit::kMaxBatch));
    if (request.items.empty() || request.items.size() > most) {
      return refused(row, Code::kInvalidArgument,
                     std::string(row.resp) + " takes 1 to " + std::to_string(most) +
                         (row.items == Items::kIds ? " ids" : " public ids"),
                     Duration::zero());
    }
  }
  return {};
}

ClockReading read_clock(const ClockAnswer& a) noexcept {
  ClockReading r;
  r.received = a.received;
  if (a.bound != nullptr) r.bound = a.bound->at(a.clock->mono_now());
  // The wall clock last: nothing but the encoding follows it.
  r.sent = a.clock->wall_now();
  if (r.bound.known()) {
    r.earliest = r.sent - r.bound.bound;
    r.latest = r.sent + r.bound.bound;
  }
  return r;
}

Record clock_record(const ClockAnswer& a) {
  // Allocated before the clock is read, so that only the encoding follows it.
  Record out;
  out.fields.reserve(6);
  const ClockReading r = read_clock(a);
  const auto ns = [](WallTime t) -> std::int64_t { return t.time_since_epoch().count(); };
  out.wide("receive_ns", ns(r.received))
      .wide("send_ns", ns(r.sent))
      .text("bound_source", std::string(bound_source_name(r.bound.source)));
  if (r.bound.known()) {
    out.integer("bound_ns", r.bound.bound.count())
        .wide("earliest_ns", ns(r.earliest))
        .wide("latest_ns", ns(r.latest));
  } else {
    out.null("bound_ns").null("earliest_ns").null("latest_ns");
  }
  return out;
}

Outcome Commands::run(const Request& request) const {
  if (std::optional<Refusal> r = check(request)) return {std::move(*r), {}};
  if (is_sequence_row(*request.row)) return run_sequence(request);
  if (is_public_id_row(*request.row)) return run_public_ids(request);
  if (request.row->op == Op::kTime || request.row->op == Op::kClock) return run_clock(request);
  return run_ids(request);
}

Outcome Commands::run_clock(const Request&) const {
  const Clock& clock = ids_.clock();
  return {ClockAnswer{clock.wall_now(), &clock, &ids_.host_bound()}, {}};
}

Outcome Commands::run_ids(const Request& request) const {
  const CommandRow& row = *request.row;
  switch (row.op) {
    case Op::kNextId: {
      const IdResult r = ids_.next_id();
      if (!r.ok()) return {refused(row, r.code, ids_.refusal_message(r.code), r.retry_after), {}};
      return {IssuedIds{{IdSpan{r.id, 1}}}, {}};
    }
    case Op::kNextIds: {
      IdsAnswer a = ids_.next_ids(static_cast<std::uint64_t>(request.value(0)));
      if (!a.ok()) return {refused(row, a.code, std::move(a.message), a.retry_after), {}};
      return {IssuedIds{std::move(a.spans)}, {}};
    }
    case Op::kDecode: {
      Result<DecodedId> d = ids_.decode(request.subject);
      if (!d.is_ok()) {
        return {refused(row, d.status().code(), d.status().message(), Duration::zero()), {}};
      }
      return {DecodeAnswer{d.value()}, {}};
    }
    default:
      return {refused(row, Code::kInvalidArgument, "not an id command", Duration::zero()), {}};
  }
}

namespace {

// A refusal of the keyring: its reason word, then the rest of its message.
Refusal public_id_refused(const CommandRow& row, const Status& s) {
  Refusal r = refused(row, s.code(), s.message(), Duration::zero());
  const std::string_view word = public_id_word(s.message());
  if (!word.empty()) {
    r.word = std::string(word);
    std::string_view rest = std::string_view(s.message()).substr(word.size());
    while (!rest.empty() && (rest.front() == ':' || rest.front() == ' ')) rest.remove_prefix(1);
    r.message = std::string(rest);
  }
  return r;
}

}  // namespace

Outcome Commands::run_public_ids(const Request& request) const {
  const CommandRow& row = *request.row;
  const PublicIdPort& port = *public_ids_;
  if (row.op == Op::kUnwrap) {
    if (!port.may_unwrap(request.caller)) {
      Refusal r;
      r.kind = Refusal::Kind::kDenied;
      r.refusing = Refusing::kPublicId;
      r.message = std::string(kUnwrapDeniedMessage);
      return {std::move(r), {}};
    }
    UnwrapAnswer a;
    a.ids.reserve(request.items.size());
    for (const std::string& text : request.items) {
      Result<UnwrappedId> u = port.unwrap(text);
      if (!u.is_ok()) return {public_id_refused(row, u.status()), {}};
      a.ids.push_back(std::move(u).value());
    }
    return {std::move(a), {}};
  }
  const std::string& type = request.texts[0];
  PublicIdsAnswer a;
  if (row.op == Op::kWrap) {
    a.ids.reserve(request.items.size());
    for (const std::string& text : request.items) {
      Result<std::uint64_t> id = parse_id(text, ids_.layout());
      if (!id.is_ok()) {
        return {refused(row, Code::kInvalidArgument, "not an id: " + id.status().message(),
                        Duration::zero()),
                {}};
      }
      a.ids.push_back(id.value());
    }
  } else {
    // The type is checked before any id is issued for it, so that a bad one
    // costs no id.
    if (Status s = port.check_type(type); !s.is_ok()) return {public_id_refused(row, s), {}};
    const std::int64_t count = row.op == Op::kNextPubIds ? request.value(1) : 1;
    IdsAnswer issued = ids_.next_ids(static_cast<std::uint64_t>(count));
    if (!issued.ok()) {
      Refusal r = refused(row, issued.code, std::move(issued.message), issued.retry_after);
      return {std::move(r), {}};
    }
    a.ids.reserve(static_cast<std::size_t>(count));
    for (const IdSpan& span : issued.spans) {
      for (std::uint32_t i = 0; i < span.count; ++i) a.ids.push_back(span.first + i);
    }
  }
  if (Status s = port.wrap(type, a.ids, a.publics); !s.is_ok()) {
    return {public_id_refused(row, s), {}};
  }
  return {std::move(a), {}};
}

Outcome Commands::run_sequence(const Request& request) const {
  SequenceService* const service = sequences_;
  const CommandRow& row = *request.row;
  std::string name = request.subject;
  switch (row.op) {
    case Op::kNextSeq: {
      const std::int64_t count = request.value(0);
      SequenceNumbers now = service->try_next(name, count);
      if (now.ok()) return {NumbersAnswer{std::move(name), std::move(now.ranges)}, {}};
      if (!now.would_wait) return {sequence_refused(row, now.status), {}};
      return {{}, [service, &row, name = std::move(name), count]() -> Answer {
                SequenceNumbers got = service->next(name, count);
                if (!got.ok()) return sequence_refused(row, got.status);
                return NumbersAnswer{name, std::move(got.ranges)};
              }};
    }
    case Op::kSeqRange:
      return {{}, [service, &row, name = std::move(name), size = request.value(0)]() -> Answer {
                const Result<SequenceRange> r = service->range(name, size);
                if (!r.is_ok()) return sequence_refused(row, r.status());
                return RangeAnswer{name, r.value()};
              }};
    case Op::kSeqCreate:
      return {{},
              [service, &row, name = std::move(name), start = request.value(0),
               step = request.value(1), describe = request.describe]() -> Answer {
                const Status created = service->create(name, start, step);
                if (!created.is_ok()) return sequence_refused(row, created);
                SequenceAnswer a;
                a.created = true;
                a.details.row.name = name;
                a.details.row.next_value = start;
                a.details.row.step = step;
                a.times = false;
                if (!describe) return a;
                // Created; should reading it back fail: what the request set,
                // without the times.
                if (Result<SequenceDetails> d = service->info(name); d.is_ok()) {
                  a.details = std::move(d).value();
                  a.times = true;
                }
                return a;
              }};
    case Op::kSeqInfo:
      return {{}, [service, &row, name = std::move(name)]() -> Answer {
                Result<SequenceDetails> d = service->info(name);
                if (!d.is_ok()) return sequence_refused(row, d.status());
                return SequenceAnswer{std::move(d).value(), false, true};
              }};
    case Op::kSeqList:
      return {{}, [service, &row]() -> Answer {
                Result<std::vector<std::string>> names = service->list();
                if (!names.is_ok()) return sequence_refused(row, names.status());
                return NamesAnswer{std::move(names).value()};
              }};
    default:
      return {refused(row, Code::kInvalidArgument, "not a sequence command", Duration::zero()), {}};
  }
}

}  // namespace snowid::daemon
