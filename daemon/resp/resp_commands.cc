#include "resp_commands.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <span>
#include <utility>
#include <variant>
#include <vector>

#include "resp_args.h"
#include "snowid/layout.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {
namespace {

// The most bytes one id or sequence number takes in a reply.
constexpr std::size_t kMaxNumberBytes = RespWriter::kMaxWideBytes;

void reserve_more(std::string& out, std::size_t n) {
  if (out.capacity() - out.size() >= n) return;
  out.reserve(std::max(out.size() + n, out.capacity() * 2));
}

void write_refusal(RespWriter& w, const CommandRow& row, const Refusal& r) {
  switch (r.kind) {
    case Refusal::Kind::kSequencesOff:
      return w.error(kSequencesOffWord, r.message);
    case Refusal::Kind::kPublicIdsOff:
      return w.error(kPublicIdsOffWord, r.message);
    case Refusal::Kind::kDenied:
      return w.error("NOPERM", r.message);
    case Refusal::Kind::kOutOfBounds:
    case Refusal::Kind::kMissing: {
      const Param& p = row.params[r.param];
      return w.error(p.resp_word, std::string(row.resp) + ' ' + std::string(p.name) +
                                      " must be between " + std::to_string(r.low) + " and " +
                                      std::to_string(r.high));
    }
    case Refusal::Kind::kRefused:
      break;
  }
  std::string text = r.message;
  if (r.hint != nullptr) text += " (create it with " + std::string(r.hint->resp) + ")";
  if (r.retryable()) {
    const auto ms = std::max<std::int64_t>(
        1, std::chrono::ceil<std::chrono::milliseconds>(r.retry_after).count());
    text += "; retry after " + std::to_string(ms) + "ms";
  }
  w.error(r.word.empty() ? error_word(r.code, r.refusing) : std::string_view(r.word), text);
}

// NEXTID: the id; NEXTIDS: one array of every id of the spans, in order.
void write_ids(RespWriter& w, const CommandRow& row, std::span<const IdSpan> spans) {
  if (row.op == Op::kNextId && !spans.empty()) return w.wide_integer(spans.front().first);
  std::size_t total = 0;
  for (const IdSpan& s : spans) total += s.count;
  reserve_more(w.output(), kMaxNumberBytes * (total + 1));
  w.array_header(total);
  for (const IdSpan& s : spans) {
    for (std::uint32_t i = 0; i < s.count; ++i) w.wide_integer(s.first + i);
  }
}

// NEXTSEQ: one number for the form without a count, else an array.
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

// TIME as Redis answers it: two bulk strings, the Unix seconds and the
// microseconds within the second, whatever the IDFORMAT.
void write_time(RespWriter& w, WallTime t) {
  const auto us = std::chrono::floor<std::chrono::microseconds>(t).time_since_epoch().count();
  const std::int64_t seconds = us >= 0 ? us / 1000000 : (us - 999999) / 1000000;
  w.array_header(2);
  w.bulk_string(std::to_string(seconds));
  w.bulk_string(std::to_string(us - seconds * 1000000));
}

// A Record (record.h): a map of its fields, in order; wide values per the
// connection's IDFORMAT.
void write_record(RespWriter& w, const Record& record) {
  w.map_header(record.fields.size());
  for (const RecordField& f : record.fields) {
    w.bulk_string(f.name);
    switch (f.kind) {
      case RecordField::Kind::kWide:
        w.wide_integer(f.number);
        break;
      case RecordField::Kind::kInteger:
        w.integer(f.number);
        break;
      case RecordField::Kind::kText:
        w.bulk_string(f.text);
        break;
      case RecordField::Kind::kNull:
        w.null();
        break;
    }
  }
}

// WRAP: the public ids; NEXTPUBID: [id, public]; NEXTPUBIDS: one such pair
// per id.
void write_public_ids(RespWriter& w, const CommandRow& row, const PublicIdsAnswer& a) {
  if (row.op == Op::kWrap) {
    w.array_header(a.publics.size());
    for (const std::string& p : a.publics) w.bulk_string(p);
    return;
  }
  const bool pairs = row.op == Op::kNextPubIds;
  if (pairs) w.array_header(a.ids.size());
  for (std::size_t i = 0; i < a.ids.size(); ++i) {
    w.array_header(2);
    w.wide_integer(a.ids[i]);
    w.bulk_string(a.publics[i]);
  }
}

// The reply for `answer`; `single`: NEXTSEQ without a count.
void write_answer(RespWriter& w, const Layout& layout, const CommandRow& row, bool single,
                  const Answer& answer) {
  std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, Refusal>) {
          write_refusal(w, row, a);
        } else if constexpr (std::is_same_v<T, IssuedIds>) {
          write_ids(w, row, a.spans);
        } else if constexpr (std::is_same_v<T, DecodeAnswer>) {
          write_decoded(w, layout, a.decoded);
        } else if constexpr (std::is_same_v<T, NumbersAnswer>) {
          write_numbers(w, a.ranges, single);
        } else if constexpr (std::is_same_v<T, RangeAnswer>) {
          w.array_header(2);
          w.wide_integer(a.range.first);
          w.wide_integer(a.range.end);
        } else if constexpr (std::is_same_v<T, SequenceAnswer>) {
          if (a.created) return w.simple_string("OK");
          write_sequence_info(w, a.details);
        } else if constexpr (std::is_same_v<T, ClockAnswer>) {
          if (row.op == Op::kTime) return write_time(w, a.received);
          write_record(w, clock_record(a));
        } else if constexpr (std::is_same_v<T, Record>) {
          write_record(w, a);
        } else if constexpr (std::is_same_v<T, PublicIdsAnswer>) {
          write_public_ids(w, row, a);
        } else if constexpr (std::is_same_v<T, UnwrapAnswer>) {
          // UNWRAP: the ids, one per public id asked.
          w.array_header(a.ids.size());
          for (const UnwrappedId& u : a.ids) w.wide_integer(u.id);
        } else {
          static_assert(std::is_same_v<T, NamesAnswer>, "every answer type has a reply");
          w.array_header(a.names.size());
          for (const std::string& n : a.names) w.bulk_string(n);
        }
      },
      answer);
}

}  // namespace

void run_resp_command(const Commands& commands, const CommandRow& row, const RespCommand& command,
                      RespWriter& w, DeferredReply& deferred, const PublicIdCaller& caller) {
  const std::size_t args = command.size() - 1;
  if (args < row.resp_min_args || args > row.resp_max_args) return arity_error(w, command[0]);
  if (std::optional<Refusal> off = commands.available(row)) return write_refusal(w, row, *off);
  Request request(row);
  request.caller = caller;
  std::size_t next = 1;
  if (row.subject != Subject::kNone) request.subject = command[next++];
  for (std::size_t i = 0; i < row.params.size() && next < command.size(); ++i, ++next) {
    if (row.params[i].text) {
      request.set_text(i, std::string(command[next]));
      continue;
    }
    std::int64_t value = 0;
    if (!parse_int64(command[next], value)) return w.error("ERR", kNotInteger);
    request.set(i, value);
  }
  for (; next < command.size(); ++next) request.items.emplace_back(command[next]);
  const bool single = row.op == Op::kNextSeq && !request.given[0];
  Outcome outcome = commands.run(request);
  if (!outcome.deferred) return write_answer(w, commands.layout(), row, single, outcome.answer);
  deferred = [commands, &row, single, job = std::move(outcome.deferred), version = w.version(),
              wide = w.wide_format()] {
    std::string out;
    RespWriter r(out, version, wide);
    write_answer(r, commands.layout(), row, single, job());
    return out;
  };
}

}  // namespace snowid::daemon
