#include "resp_session.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "snowid/layout.h"
#include "snowid/lease_keeper.h"
#include "snowid/status.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"

#ifndef SNOWID_VERSION
#define SNOWID_VERSION "dev"
#endif

namespace snowid::daemon {
namespace {

constexpr std::string_view kVersion = SNOWID_VERSION;
constexpr std::string_view kNotInteger = "value is not an integer or out of range";
constexpr std::string_view kNoAuth = "Authentication required.";
constexpr std::string_view kWrongPass = "invalid username-password pair or user is disabled.";
// The most bytes one id or sequence number takes in a reply.
constexpr std::size_t kMaxNumberBytes = RespWriter::kMaxWideBytes;
// At most this many arguments, each cut to kQuotedArgumentBytes, are quoted
// back in the error for an unknown command.
constexpr std::size_t kQuotedArguments = 3;
constexpr std::size_t kQuotedArgumentBytes = 32;

char ascii_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// True when `text` equals `lower` (all lower case) ignoring ASCII case. No
// lower-cased copy is made: command names are compared on every command.
bool is(std::string_view text, std::string_view lower) noexcept {
  if (text.size() != lower.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (ascii_lower(text[i]) != lower[i]) return false;
  }
  return true;
}

std::string lower_copy(std::string_view text) {
  std::string s(text);
  for (char& c : s) c = ascii_lower(c);
  return s;
}

// A signed decimal as Redis reads one: an optional '-', then digits without
// leading zeros (or the single digit 0), nothing else, within int64.
bool parse_int64(std::string_view text, std::int64_t& value) noexcept {
  if (text.empty() || text.size() > 20) return false;
  const bool negative = text.front() == '-';
  const std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty() || (digits.front() == '0' && (digits.size() > 1 || negative))) return false;
  std::uint64_t magnitude = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return false;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (magnitude > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
    magnitude = magnitude * 10 + d;
  }
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (negative) {
    if (magnitude > kMax + 1) return false;
    value = magnitude == kMax + 1 ? std::numeric_limits<std::int64_t>::min()
                                  : -static_cast<std::int64_t>(magnitude);
  } else {
    if (magnitude > kMax) return false;
    value = static_cast<std::int64_t>(magnitude);
  }
  return true;
}

// Compares in time that depends only on the lengths, so that a wrong token
// does not tell how much of it was right.
bool same_secret(std::string_view given, std::string_view expected) noexcept {
  const std::size_t n = std::max(given.size(), expected.size());
  unsigned diff = given.size() == expected.size() ? 0U : 1U;
  for (std::size_t i = 0; i < n; ++i) {
    const auto a = static_cast<unsigned char>(i < given.size() ? given[i] : 0);
    const auto b = static_cast<unsigned char>(i < expected.size() ? expected[i] : 0);
    diff |= static_cast<unsigned>(a ^ b);
  }
  return diff == 0;
}

// Redis refuses connection names with spaces, line ends or other bytes
// outside '!'..'~', so that CLIENT LIST stays one line per client.
bool valid_client_name(std::string_view name) noexcept {
  return std::all_of(name.begin(), name.end(), [](char c) { return c >= '!' && c <= '~'; });
}

void reserve_more(std::string& out, std::size_t n) {
  if (out.capacity() - out.size() >= n) return;
  out.reserve(std::max(out.size() + n, out.capacity() * 2));
}

void arity_error(RespWriter& w, std::string_view name) {
  std::string message = "wrong number of arguments for '";
  message += lower_copy(name);
  message += "' command";
  w.error("ERR", message);
}

void unknown_subcommand(RespWriter& w, std::string_view command, std::string_view sub) {
  std::string message = "unknown subcommand '";
  message.append(sub.substr(0, kQuotedArgumentBytes));
  message += "'. Try ";
  message += command;
  message += " HELP.";
  w.error("ERR", message);
}

void unknown_command(RespWriter& w, const RespCommand& command) {
  std::string message = "unknown command '";
  message.append(std::string_view(command[0]).substr(0, kQuotedArgumentBytes));
  message += "', with args beginning with: ";
  const std::size_t quoted = std::min(command.size() - 1, kQuotedArguments);
  for (std::size_t i = 1; i <= quoted; ++i) {
    message += '\'';
    message.append(std::string_view(command[i]).substr(0, kQuotedArgumentBytes));
    message += "' ";
  }
  w.error("ERR", message);
}

// -<WORD> <message>[; retry after <n>ms], the hint rounded up to whole
// milliseconds and at least 1, for retryable codes only.
void refusal(RespWriter& w, Code code, Duration retry_after, std::string_view message,
             Refusing what = Refusing::kIssue) {
  if (!is_retryable(code)) {
    w.error(error_word(code, what), message);
    return;
  }
  const auto ms =
      std::max<std::int64_t>(1, std::chrono::ceil<std::chrono::milliseconds>(retry_after).count());
  std::string text(message);
  text += "; retry after ";
  text += std::to_string(ms);
  text += "ms";
  w.error(error_word(code, what), text);
}

// The reply to NEXTIDS: one array of every id of the spans, in order.
void write_spans(RespWriter& w, std::span<const IdSpan> spans) {
  std::size_t total = 0;
  for (const IdSpan& s : spans) total += s.count;
  reserve_more(w.output(), kMaxNumberBytes * (total + 1));
  w.array_header(total);
  for (const IdSpan& s : spans) {
    for (std::uint32_t i = 0; i < s.count; ++i) w.wide_integer(s.first + i);
  }
}

// --- Sequences ---------------------------------------------------------------

// A refusal of a sequence call; an unknown name says how to create it.
void sequence_refusal(RespWriter& w, const Status& s) {
  if (s.code() == Code::kNotFound) {
    return refusal(w, s.code(), kSequenceRetryAfter, s.message() + " (create it with SEQCREATE)",
                   Refusing::kSequence);
  }
  refusal(w, s.code(), kSequenceRetryAfter, s.message(), Refusing::kSequence);
}

// NEXTSEQ's reply: one number for the form without a count, else an array.
void write_numbers(RespWriter& w, const std::vector<SequenceRange>& ranges, bool single) {
  if (single && !ranges.empty()) return w.wide_integer(ranges.front().first);
  std::size_t total = 0;
  for (const SequenceRange& r : ranges) total += static_cast<std::size_t>(r.size());
  reserve_more(w.output(), kMaxNumberBytes * (total + 1));
  w.array_header(total);
  for (const SequenceRange& r : ranges) {
    for (std::int64_t n = r.first; n < r.end; ++n) w.wide_integer(n);
  }
}

void write_sequence_info(RespWriter& w, const SequenceDetails& d) {
  w.map_header(d.buffered ? 9 : 5);
  w.bulk_string("name");
  w.bulk_string(d.row.name);
  w.bulk_string("next_value");
  w.wide_integer(d.row.next_value);
  w.bulk_string("step");
  w.integer(d.row.step);
  w.bulk_string("created");
  w.bulk_string(format_iso8601(d.row.created));
  w.bulk_string("updated");
  w.bulk_string(format_iso8601(d.row.updated));
  if (!d.buffered) return;
  w.bulk_string("buffered");
  w.integer(d.buffer.buffered);
  w.bulk_string("ranges_fetched");
  w.unsigned_integer(d.buffer.ranges_fetched);
  w.bulk_string("numbers_issued");
  w.unsigned_integer(d.buffer.numbers_issued);
  w.bulk_string("step_in_use");
  w.integer(d.buffer.step);
}

bool is_fixed_decode_key(std::string_view name) noexcept {
  return name == "id" || name == "time" || name == "unix_ms" || name == "ticks";
}

// A decoded field of `width` bits: an integer when every value of that width
// is exact in a double, else as an id is written. So the type of each key
// depends on the layout only, never on the value.
void write_field(RespWriter& w, int width, std::uint64_t value) {
  if (width <= 53) return w.unsigned_integer(value);
  w.wide_integer(value);
}

void write_decoded(RespWriter& w, const Layout& layout, const DecodedId& d) {
  const std::span<const FieldInfo> fields = layout.fields();
  const std::size_t count = std::min(fields.size(), static_cast<std::size_t>(d.field_count));
  int time_width = 0;
  for (const FieldInfo& f : fields) {
    if (f.role == FieldRole::kTime) time_width = f.width;
  }
  w.map_header(4 + count);
  w.bulk_string("id");
  w.wide_integer(d.id);
  w.bulk_string("time");
  w.bulk_string(format_iso8601(d.time));
  w.bulk_string("unix_ms");
  w.integer(unix_ms(d.time));
  w.bulk_string("ticks");
  write_field(w, time_width, static_cast<std::uint64_t>(d.ticks));
  for (std::size_t i = 0; i < count; ++i) {
    // A field named like a fixed key (the time field of snowid's own layout
    // is "time") is prefixed, so that a RESP3 map has no repeated key.
    if (is_fixed_decode_key(fields[i].name)) {
      w.bulk_string("field_" + fields[i].name);
    } else {
      w.bulk_string(fields[i].name);
    }
    write_field(w, fields[i].width, d.values[i]);
  }
}

// --- INFO -------------------------------------------------------------------

// INFO sections, as bits of a set.
constexpr unsigned kServer = 1U << 0;
constexpr unsigned kLayout = 1U << 1;
constexpr unsigned kWorker = 1U << 2;
constexpr unsigned kLease = 1U << 3;
constexpr unsigned kHealth = 1U << 4;
constexpr unsigned kStats = 1U << 5;
constexpr unsigned kSequences = 1U << 6;
constexpr unsigned kAllSections = (1U << 7) - 1;

unsigned section_of(std::string_view name) noexcept {
  if (is(name, "server")) return kServer;
  if (is(name, "layout")) return kLayout;
  if (is(name, "worker")) return kWorker;
  if (is(name, "lease")) return kLease;
  if (is(name, "health")) return kHealth;
  if (is(name, "stats")) return kStats;
  if (is(name, "sequences")) return kSequences;
  if (is(name, "all") || is(name, "everything") || is(name, "default")) return kAllSections;
  return 0;
}

class InfoText {
 public:
  void section(std::string_view title) {
    if (!text_.empty()) text_ += "\r\n";
    text_ += "# ";
    text_ += title;
    text_ += "\r\n";
  }
  void line(std::string_view key, std::string_view value) {
    text_ += key;
    text_ += ':';
    // A value is one line: a line end in it would start a fake key.
    for (const char c : value) text_ += (c == '\r' || c == '\n') ? ' ' : c;
    text_ += "\r\n";
  }
  template <typename Int>
  void number(std::string_view key, Int value) {
    char buf[24];
    const char* end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    line(key, std::string_view(buf, static_cast<std::size_t>(end - buf)));
  }
  // Milliseconds with three decimals.
  void millis(std::string_view key, Duration d) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    const std::int64_t whole = us / 1000;
    const std::int64_t frac = us % 1000;
    std::string v = std::to_string(whole) + '.';
    if (frac < 100) v += '0';
    if (frac < 10) v += '0';
    v += std::to_string(frac < 0 ? -frac : frac);
    line(key, v);
  }
  const std::string& text() const noexcept { return text_; }

 private:
  std::string text_;
};

std::string info_text(IdService& ids, const SequenceService* sequences, unsigned sections) {
  const ServiceSnapshot s = ids.snapshot();
  InfoText info;
  if (sections & kServer) {
    info.section("Server");
    info.line("snowid_version", kVersion);
    info.number("process_id", static_cast<std::int64_t>(::getpid()));
    // As Redis names it: what the daemon's wall clock reads, in microseconds
    // since the Unix epoch, so that an operator can compare it with others.
    info.number(
        "server_time_usec",
        std::chrono::duration_cast<std::chrono::microseconds>(s.now.time_since_epoch()).count());
    info.number("uptime_in_seconds",
                std::chrono::duration_cast<std::chrono::seconds>(s.uptime).count());
    info.number("max_batch", s.max_batch);
  }
  if (sections & kLayout) {
    info.section("Layout");
    info.line("layout_name", s.layout.name());
    info.line("layout_epoch", format_iso8601(s.layout.epoch()));
    info.number("layout_unit_ms", s.layout.unit_ms());
    for (const FieldInfo& f : s.layout.fields()) info.number("layout_bits_" + f.name, f.width);
  }
  if (sections & kWorker) {
    info.section("Worker");
    info.number("region", s.worker.region);
    info.number("host", s.worker.host);
  }
  if (sections & kLease) {
    info.section("Lease");
    info.line("lease_state", lower_copy(lease_state_name(s.lease_state)));
    info.number("lease_renewals", s.lease.renewals);
    info.number("lease_renewal_failures", s.lease.renewal_failures);
    info.millis("lease_last_renewal_latency_ms", s.lease.last_renewal_latency);
    info.millis("lease_max_renewal_latency_ms", s.lease.max_renewal_latency);
    info.number("lease_reacquisitions", s.reacquisitions);
    info.number("lease_losses", s.lease_losses);
  }
  if (sections & kHealth) {
    info.section("Health");
    info.number("ready", s.ready ? 1 : 0);
    info.number("healthy", s.health.is_ok() ? 1 : 0);
    info.line("reason", s.ready ? std::string() : ids.not_ready_reason());
  }
  if (sections & kStats) {
    const ServiceCounters& c = s.counters;
    info.section("Stats");
    info.number("ids_issued", c.ids_issued);
    info.number("single_requests", c.single_requests);
    info.number("batch_requests", c.batch_requests);
    info.number("reserve_calls", c.reserve_calls);
    for (std::size_t i = 0; i < c.refusals_by_code.size(); ++i) {
      if (c.refusals_by_code[i] == 0) continue;
      const auto code = static_cast<Code>(i);
      info.number("refusals_" + lower_copy(error_word(code)), c.refusals_by_code[i]);
    }
    info.number("decodes", c.decodes);
    info.number("decode_errors", c.decode_errors);
    info.number("sequence_exhausted", s.generator.sequence_exhausted);
    info.number("clock_behind", s.generator.clock_behind);
    info.number("waits_gave_up", s.generator.waits_gave_up);
    info.number("borrowed_ticks", s.generator.borrowed_ticks);
    info.number("fence_writes", s.generator.fence_writes);
    info.number("fence_write_failures", s.generator.fence_write_failures);
  }
  if (sections & kSequences) {
    info.section("Sequences");
    if (sequences == nullptr || !sequences->enabled()) {
      info.line("sequences_store", "off");
    } else {
      const SequencesSnapshot q = sequences->snapshot();
      std::uint64_t issued = 0, lost = 0, fetched = 0, served = 0;
      for (const SequenceCounters& c : q.sequences) {
        issued += c.numbers_issued;
        lost += c.numbers_lost;
        fetched += c.ranges_fetched;
        served += c.ranges_served;
      }
      info.line("sequences_store", q.store_kind);
      info.line("sequences_url", q.store);
      info.number("sequences_buffered", q.buffers);
      info.number("sequences_numbers_issued", issued);
      info.number("sequences_numbers_lost", lost);
      info.number("sequences_ranges_fetched", fetched);
      info.number("sequences_ranges_served", served);
      info.number("sequences_store_calls", q.store_calls);
      info.number("sequences_store_failures", q.store_failures);
      info.number("sequences_buffer_waits", q.buffer_waits);
      info.number("sequences_buffer_wait_timeouts", q.buffer_wait_timeouts);
    }
  }
  return info.text();
}

}  // namespace

RespSession::RespSession(IdService& ids, RespSessionOptions options)
    : ids_(ids),
      options_(std::move(options)),
      parser_(options_.limits),
      authenticated_(options_.token.empty()) {}

bool RespSession::on_bytes(std::string_view in, std::string& out) {
  if (closing_) return false;
  parser_.feed(in);
  if (awaiting_ || deferred_) {
    // The deferred command's reply comes first.
    pending_ = true;
    return true;
  }
  pending_ = false;
  const std::size_t start = out.size();
  for (;;) {
    // A few bytes of NEXTIDS commands can ask for megabytes of replies: stop
    // at the budget and let the server send them before answering the rest.
    if (out.size() - start >= options_.output_budget) {
      pending_ = true;
      return true;
    }
    switch (parser_.next(command_)) {
      case RespParser::Status::kNeedMore:
        return true;
      case RespParser::Status::kError:
        RespWriter(out, version_).protocol_error(parser_.error());
        closing_ = true;
        return false;
      case RespParser::Status::kCommand:
        ++commands_;
        dispatch(command_, out);
        if (closing_) return false;
        if (deferred_) {
          pending_ = true;
          return true;
        }
        break;
    }
  }
}

DeferredReply RespSession::take_deferred() {
  if (!deferred_) return {};
  awaiting_ = true;
  return std::exchange(deferred_, nullptr);
}

void RespSession::complete_deferred(std::string_view reply, std::string& out) {
  out.append(reply);
  awaiting_ = false;
}

void RespSession::defer(DeferredReply work, RespWriter& w) {
  if (options_.defer) {
    deferred_ = std::move(work);
    return;
  }
  w.output() += work();
}

bool RespSession::dispatch_sequence(std::string_view name, const RespCommand& command,
                                    RespWriter& w) {
  const bool nextseq = is(name, "nextseq");
  const bool seqrange = !nextseq && is(name, "seqrange");
  const bool seqcreate = !nextseq && !seqrange && is(name, "seqcreate");
  const bool seqinfo = !nextseq && !seqrange && !seqcreate && is(name, "seqinfo");
  const bool seqlist = !nextseq && !seqrange && !seqcreate && !seqinfo && is(name, "seqlist");
  if (!nextseq && !seqrange && !seqcreate && !seqinfo && !seqlist) return false;

  const std::size_t argc = command.size();
  const bool arity_ok = nextseq     ? argc == 2 || argc == 3
                        : seqrange  ? argc == 3
                        : seqcreate ? argc == 3 || argc == 4
                        : seqinfo   ? argc == 2
                                    : argc == 1;
  if (!arity_ok) {
    arity_error(w, name);
    return true;
  }
  SequenceService* const service = options_.sequences;
  if (service == nullptr || !service->enabled()) {
    w.error(kSequencesOffWord, kSequencesOffMessage);
    return true;
  }
  const RespVersion version = version_;
  const WideFormat wide = wide_;
  if (seqlist) {
    defer(
        [service, version, wide] {
          std::string out;
          RespWriter r(out, version, wide);
          const Result<std::vector<std::string>> names = service->list();
          if (!names.is_ok()) {
            sequence_refusal(r, names.status());
            return out;
          }
          r.array_header(names->size());
          for (const std::string& n : names.value()) r.bulk_string(n);
          return out;
        },
        w);
    return true;
  }

  std::string sequence = command[1];
  if (Status s = validate_sequence_name(sequence); !s.is_ok()) {
    w.error(error_word(s.code(), Refusing::kSequence), s.message());
    return true;
  }

  if (nextseq) {
    std::int64_t count = 1;
    if (argc == 3) {
      if (!parse_int64(command[2], count)) {
        w.error("ERR", kNotInteger);
        return true;
      }
      const std::uint32_t max_batch = ids_.max_batch();
      if (count < 1 || count > static_cast<std::int64_t>(max_batch)) {
        w.error("ERR", "NEXTSEQ count must be between 1 and " + std::to_string(max_batch));
        return true;
      }
    }
    const bool single = argc == 2;
    SequenceNumbers now = service->try_next(sequence, count);
    if (now.ok()) {
      write_numbers(w, now.ranges, single);
      return true;
    }
    if (!now.would_wait) {
      sequence_refusal(w, now.status);
      return true;
    }
    defer(
        [service, version, wide, sequence = std::move(sequence), count, single] {
          std::string out;
          RespWriter r(out, version, wide);
          const SequenceNumbers got = service->next(sequence, count);
          if (got.ok()) {
            write_numbers(r, got.ranges, single);
          } else {
            sequence_refusal(r, got.status);
          }
          return out;
        },
        w);
    return true;
  }

  if (seqrange) {
    std::int64_t size = 0;
    if (!parse_int64(command[2], size)) {
      w.error("ERR", kNotInteger);
      return true;
    }
    if (size < 1 || size > service->max_range()) {
      w.error("ERR", "SEQRANGE size must be between 1 and " + std::to_string(service->max_range()));
      return true;
    }
    defer(
        [service, version, wide, sequence = std::move(sequence), size] {
          std::string out;
          RespWriter r(out, version, wide);
          const Result<SequenceRange> range = service->range(sequence, size);
          if (!range.is_ok()) {
            sequence_refusal(r, range.status());
            return out;
          }
          r.array_header(2);
          r.wide_integer(range->first);
          r.wide_integer(range->end);
          return out;
        },
        w);
    return true;
  }

  if (seqcreate) {
    std::int64_t start = 0;
    std::int64_t step = kDefaultSequenceStep;
    if (!parse_int64(command[2], start) || (argc == 4 && !parse_int64(command[3], step))) {
      w.error("ERR", kNotInteger);
      return true;
    }
    if (Status s = validate_sequence_create(sequence, start, step); !s.is_ok()) {
      w.error(error_word(s.code(), Refusing::kSequence), s.message());
      return true;
    }
    defer(
        [service, version, wide, sequence = std::move(sequence), start, step] {
          std::string out;
          RespWriter r(out, version, wide);
          const Status s = service->create(sequence, start, step);
          if (s.is_ok()) {
            r.simple_string("OK");
          } else {
            sequence_refusal(r, s);
          }
          return out;
        },
        w);
    return true;
  }

  // SEQINFO
  defer(
      [service, version, wide, sequence = std::move(sequence)] {
        std::string out;
        RespWriter r(out, version, wide);
        const Result<SequenceDetails> d = service->info(sequence);
        if (d.is_ok()) {
          write_sequence_info(r, d.value());
        } else {
          sequence_refusal(r, d.status());
        }
        return out;
      },
      w);
  return true;
}

void RespSession::dispatch(const RespCommand& command, std::string& out) {
  RespWriter w(out, version_, wide_);
  const std::string_view name = command[0];
  const std::size_t argc = command.size();

  // The hot commands first, before anything that could allocate.
  if (is(name, "nextid")) {
    if (!authenticated_) return w.error("NOAUTH", kNoAuth);
    if (argc != 1) return arity_error(w, name);
    const IdResult r = ids_.next_id();
    if (r.ok()) return w.wide_integer(r.id);
    return refusal(w, r.code, r.retry_after, ids_.refusal_message(r.code));
  }
  if (is(name, "nextids")) {
    if (!authenticated_) return w.error("NOAUTH", kNoAuth);
    if (argc != 2) return arity_error(w, name);
    std::int64_t n = 0;
    if (!parse_int64(command[1], n)) return w.error("ERR", kNotInteger);
    // The service holds the bound (a runtime setting) and counts the refusal.
    const IdsAnswer a = ids_.next_ids(n < 1 ? 0 : static_cast<std::uint64_t>(n));
    if (a.ok()) return write_spans(w, a.spans);
    if (a.code == Code::kInvalidArgument) {
      return w.error("ERR",
                     "NEXTIDS count must be between 1 and " + std::to_string(ids_.max_batch()));
    }
    return refusal(w, a.code, a.retry_after, a.message);
  }
  if (is(name, "ping")) {
    if (!authenticated_) return w.error("NOAUTH", kNoAuth);
    if (argc > 2) return arity_error(w, name);
    if (argc == 2) return w.bulk_string(command[1]);
    return w.simple_string("PONG");
  }
  if (is(name, "quit")) {
    closing_ = true;
    return w.simple_string("OK");
  }
  if (is(name, "hello")) {
    std::int64_t proto = static_cast<std::int64_t>(version_);
    if (argc >= 2) {
      if (!parse_int64(command[1], proto)) {
        return w.error("ERR", "Protocol version is not an integer or out of range");
      }
      if (proto < 2 || proto > 3) return w.error("NOPROTO", "unsupported protocol version");
    }
    const std::string* password = nullptr;
    const std::string* setname = nullptr;
    for (std::size_t j = 2; j < argc; ++j) {
      const std::size_t more = argc - 1 - j;
      if (is(command[j], "auth") && more >= 2) {
        password = &command[j + 2];
        j += 2;
      } else if (is(command[j], "setname") && more >= 1) {
        setname = &command[j + 1];
        ++j;
      } else {
        return w.error("ERR", "Syntax error in HELLO option '" + command[j] + "'");
      }
    }
    if (password != nullptr && !options_.token.empty()) {
      // Any user name will do: the token is the one secret.
      if (!same_secret(*password, options_.token)) return w.error("WRONGPASS", kWrongPass);
      authenticated_ = true;
    }
    if (!authenticated_) return w.error("NOAUTH", kNoAuth);
    if (setname != nullptr) {
      if (!valid_client_name(*setname)) {
        return w.error("ERR",
                       "Client names cannot contain spaces, newlines or special characters.");
      }
      name_ = *setname;
    }
    version_ = proto == 3 ? RespVersion::kResp3 : RespVersion::kResp2;
    RespWriter hw(out, version_, wide_);
    hw.map_header(7);
    hw.bulk_string("server");
    hw.bulk_string("snowid");
    hw.bulk_string("version");
    hw.bulk_string(kVersion);
    hw.bulk_string("proto");
    hw.integer(proto);
    hw.bulk_string("id");
    hw.unsigned_integer(options_.client_id);
    hw.bulk_string("mode");
    hw.bulk_string("standalone");
    hw.bulk_string("role");
    hw.bulk_string("master");
    hw.bulk_string("modules");
    hw.array_header(0);
    return;
  }
  if (is(name, "auth")) {
    if (argc != 2 && argc != 3) return arity_error(w, name);
    if (options_.token.empty()) {
      // As Redis with no password for the default user: the password-only
      // form is a configuration mistake; the user-and-password form succeeds.
      if (argc == 2) {
        return w.error("ERR",
                       "AUTH <password> called without any password configured for the default "
                       "user. Are you sure your configuration is correct?");
      }
      return w.simple_string("OK");
    }
    if (!same_secret(command[argc - 1], options_.token)) return w.error("WRONGPASS", kWrongPass);
    authenticated_ = true;
    return w.simple_string("OK");
  }

  if (!authenticated_) return w.error("NOAUTH", kNoAuth);

  if (dispatch_sequence(name, command, w)) return;
  if (is(name, "decode")) {
    if (argc != 2) return arity_error(w, name);
    const Result<DecodedId> d = ids_.decode(command[1]);
    if (!d.is_ok()) return w.error(error_word(d.status().code()), d.status().message());
    return write_decoded(w, ids_.layout(), d.value());
  }
  if (is(name, "idformat")) {
    if (argc == 1) return w.simple_string(wide_ == WideFormat::kString ? "STRING" : "INTEGER");
    if (argc != 2) return arity_error(w, name);
    if (is(command[1], "string")) {
      wide_ = WideFormat::kString;
    } else if (is(command[1], "integer")) {
      wide_ = WideFormat::kInteger;
    } else {
      return w.error("ERR", "IDFORMAT takes STRING (the default: ids as bulk strings) or INTEGER");
    }
    return w.simple_string("OK");
  }
  if (is(name, "echo")) {
    if (argc != 2) return arity_error(w, name);
    return w.bulk_string(command[1]);
  }
  if (is(name, "info")) {
    unsigned sections = argc == 1 ? kAllSections : 0;
    for (std::size_t i = 1; i < argc; ++i) sections |= section_of(command[i]);
    if (sections == 0) return w.bulk_string({});
    return w.bulk_string(info_text(ids_, options_.sequences, sections));
  }
  if (is(name, "client")) {
    if (argc < 2) return arity_error(w, name);
    const std::string_view sub = command[1];
    if (is(sub, "id")) {
      if (argc != 2) return arity_error(w, "client|id");
      return w.unsigned_integer(options_.client_id);
    }
    if (is(sub, "getname")) {
      if (argc != 2) return arity_error(w, "client|getname");
      if (name_.empty()) return w.null();
      return w.bulk_string(name_);
    }
    if (is(sub, "setname")) {
      if (argc != 3) return arity_error(w, "client|setname");
      if (!valid_client_name(command[2])) {
        return w.error("ERR",
                       "Client names cannot contain spaces, newlines or special characters.");
      }
      name_ = command[2];
      return w.simple_string("OK");
    }
    if (is(sub, "setinfo")) {
      // Client libraries announce their name and version; nothing to keep.
      if (argc != 4) return arity_error(w, "client|setinfo");
      return w.simple_string("OK");
    }
    if (is(sub, "info")) {
      if (argc != 2) return arity_error(w, "client|info");
      std::string text = "id=" + std::to_string(options_.client_id) + " name=" + name_ +
                         " db=0 resp=" + std::to_string(static_cast<int>(version_)) +
                         " idformat=" + (wide_ == WideFormat::kString ? "string" : "integer") +
                         "\n";
      return w.bulk_string(text);
    }
    return unknown_subcommand(w, "CLIENT", sub);
  }
  if (is(name, "select")) {
    if (argc != 2) return arity_error(w, name);
    std::int64_t db = 0;
    if (!parse_int64(command[1], db)) return w.error("ERR", kNotInteger);
    if (db != 0) return w.error("ERR", "DB index is out of range");
    return w.simple_string("OK");
  }
  if (is(name, "config")) {
    if (argc < 2) return arity_error(w, name);
    if (is(command[1], "get")) {
      if (argc < 3) return arity_error(w, "config|get");
      // No settings are exposed this way, except the two that
      // redis-benchmark reads at start (it warns when they are missing):
      // nothing is persisted. RESP3 answers CONFIG GET with a map.
      const std::string_view pattern = command[2];
      if (argc == 3 && is(pattern, "save")) {
        w.map_header(1);
        w.bulk_string("save");
        return w.bulk_string("");
      }
      if (argc == 3 && is(pattern, "appendonly")) {
        w.map_header(1);
        w.bulk_string("appendonly");
        return w.bulk_string("no");
      }
      return w.map_header(0);
    }
    return unknown_subcommand(w, "CONFIG", command[1]);
  }
  if (is(name, "command")) {
    if (argc == 1) return w.array_header(0);
    const std::string_view sub = command[1];
    if (is(sub, "count")) {
      if (argc != 2) return arity_error(w, "command|count");
      return w.integer(0);
    }
    if (is(sub, "docs")) return w.map_header(0);
    if (is(sub, "info") || is(sub, "list")) return w.array_header(0);
    return unknown_subcommand(w, "COMMAND", sub);
  }
  return unknown_command(w, command);
}

}  // namespace snowid::daemon
