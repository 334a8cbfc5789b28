#include "commands.h"

#include <array>
#include <limits>
#include <utility>

#include "snowid/ticket_store.h"

namespace snowid::daemon {
namespace {

constexpr Param kCount[] = {{"count", 1, Limit::kMaxBatch, 1, false, "ERR"}};
constexpr Param kSize[] = {{"size", 1, Limit::kMaxRange, 1, true, "ERR"}};
// The ticket table's own rule (validate_sequence_create), so RESP words a
// bad start or step as it does every refusal of the table's rules.
constexpr Param kCreate[] = {
    {"start", 0, Limit::kMaxStart, 1, false, "INVALID_ARGUMENT"},
    {"step", 1, Limit::kMaxStep, kDefaultSequenceStep, false, "INVALID_ARGUMENT"},
};

// The table. The order is the order of Op. HTTP matches paths in this order.
constexpr CommandRow kCommands[] = {
    {Op::kNextId,
     "NEXTID",
     0,
     0,
     "GET",
     "/v1/ids",
     Subject::kNone,
     {},
     false,
     "issue ids",
     Refusing::kIssue},
    {Op::kNextIds, "NEXTIDS", 1, 1, "GET", "/v1/ids", Subject::kNone, kCount, false, "issue ids",
     Refusing::kIssue},
    {Op::kDecode,
     "DECODE",
     1,
     1,
     "GET",
     "/v1/ids/{}",
     Subject::kId,
     {},
     true,
     "",
     Refusing::kDecode},
    {Op::kNextSeq, "NEXTSEQ", 1, 2, "GET", "/v1/sequences/{}/next", Subject::kSequence, kCount,
     false, "take numbers", Refusing::kSequence},
    {Op::kSeqRange, "SEQRANGE", 2, 2, "GET", "/v1/sequences/{}/range", Subject::kSequence, kSize,
     false, "take numbers", Refusing::kSequence},
    {Op::kSeqCreate, "SEQCREATE", 2, 3, "PUT", "/v1/sequences/{}", Subject::kSequence, kCreate,
     false, "create it", Refusing::kSequence},
    {Op::kSeqInfo,
     "SEQINFO",
     1,
     1,
     "GET",
     "/v1/sequences/{}",
     Subject::kSequence,
     {},
     true,
     "",
     Refusing::kSequence},
    {Op::kSeqList,
     "SEQLIST",
     0,
     0,
     "GET",
     "/v1/sequences",
     Subject::kNone,
     {},
     true,
     "",
     Refusing::kSequence},
    // The clock probes never refuse (but for their arity); kDecode words
    // nothing of the generator's state.
    {Op::kTime, "TIME", 0, 0, "", "", Subject::kNone, {}, true, "", Refusing::kDecode},
    {Op::kClock,
     "SNOWID.CLOCK",
     0,
     0,
     "GET",
     "/v1/clock",
     Subject::kNone,
     {},
     true,
     "",
     Refusing::kDecode},
};

bool is_sequence_row(const CommandRow& row) noexcept { return row.refusing == Refusing::kSequence; }

bool same_ignoring_case(std::string_view text, std::string_view upper) noexcept {
  if (text.size() != upper.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char u = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    if (u != upper[i]) return false;
  }
  return true;
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
    if (same_ignoring_case(name, row.resp)) return &row;
  }
  return nullptr;
}

Request::Request(const CommandRow& r)
    : row(&r), values(r.params.size()), given(r.params.size(), false) {
  for (std::size_t i = 0; i < r.params.size(); ++i) values[i] = r.params[i].fallback;
}

void Request::set(std::size_t param, std::int64_t value) {
  values[param] = value;
  given[param] = true;
}

std::optional<Refusal> Commands::available(const CommandRow& row) const {
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
    if (request.values[i] < r.low || request.values[i] > r.high) {
      r.kind = Refusal::Kind::kOutOfBounds;
      return r;
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

Outcome Commands::run(const Request& request) const {
  if (std::optional<Refusal> r = check(request)) return {std::move(*r), {}};
  if (is_sequence_row(*request.row)) return run_sequence(request);
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
