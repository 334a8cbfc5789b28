// The commands served on both protocols, each declared once: its RESP name,
// its HTTP method and path, its parameters with their bounds, whether it is
// safe, and its handler. RESP (resp_commands.h) and HTTP (http_commands.h)
// only translate: argv, or a route with its query and body, into a Request;
// the Answer back into reply bytes or a response. Bounds, name checks,
// retry-after, the shutdown answer and the "create it with" hint are decided
// here, once; each protocol only words them.
//
// Adding a command served on both protocols: an Op, a row in kCommands
// (commands.cc), and a case in Commands::run() with its answer. An answer
// that is a flat Record (record.h) is encoded by both protocols as it is;
// only an answer whose RESP and HTTP forms differ needs a type of its own,
// with an encoding in each protocol.
//
// Thread-safe: one Commands serves every connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "id_service.h"
#include "public_id_port.h"
#include "record.h"
#include "sequence_service.h"
#include "snowid/layout.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {

enum class Op : std::uint8_t {
  kNextId,
  kNextIds,
  kDecode,
  kNextSeq,
  kSeqRange,
  kSeqCreate,
  kSeqInfo,
  kSeqList,
  kTime,        // RESP only: Redis's TIME
  kClock,       // SNOWID.CLOCK, GET /v1/clock
  kWrap,        // WRAP, GET /v1/ids/{id}/public
  kUnwrap,      // UNWRAP, GET /v1/public-ids/{public}
  kNextPubId,   // NEXTPUBID, GET /v1/ids?type=
  kNextPubIds,  // NEXTPUBIDS, GET /v1/ids?type=&count=
};

// Where a parameter's largest value is read: the runtime settings where they
// live (IdService::max_batch, SequenceService::max_range) or the ticket
// table's fixed limits.
enum class Limit : std::uint8_t { kMaxBatch, kMaxRange, kMaxStep, kMaxStart };

// A parameter: a number, low..limit inclusive, or a text (a public-id type)
// that the command's handler checks. RESP takes the parameters positionally
// after the subject; HTTP by name, in the query (or the PUT's JSON body).
struct Param {
  std::string_view name;  // "count"
  std::int64_t low = 1;
  Limit high = Limit::kMaxBatch;
  std::int64_t fallback = 1;  // when not given
  bool required = false;      // HTTP refuses a request without it (RESP: by arity)
  // RESP's error word for a value outside low..limit: ERR as Redis words a
  // bad argument, or the word of the ticket table's own rule.
  std::string_view resp_word = "ERR";
  bool text = false;  // a text: no bounds, kept in Request::texts
};

// What a command acts on, besides its parameters.
enum class Subject : std::uint8_t {
  kNone,
  kId,        // an id's text (DECODE, /v1/ids/{id})
  kSequence,  // a sequence name, validated (validate_sequence_name)
};

// A list a command takes after its parameters: every later RESP argument,
// one to max_batch of them; over HTTP, the one "{}" path segment.
enum class Items : std::uint8_t {
  kNone,
  kIds,        // ids' text (WRAP)
  kPublicIds,  // public ids' text (UNWRAP)
};

struct CommandRow {
  Op op;
  std::string_view resp;  // the RESP command name, upper case
  // RESP argument count after the name: min..max.
  std::size_t resp_min_args;
  std::size_t resp_max_args;
  std::string_view method;  // HTTP method
  // HTTP path; "{}" stands for the subject (one path segment).
  std::string_view path;
  Subject subject;
  std::span<const Param> params;
  Items items;
  // No side effect: HTTP answers HEAD as GET. Otherwise HEAD is refused,
  // for what `effect` says it would do.
  bool safe;
  std::string_view effect;  // "issue ids", "take numbers"
  Refusing refusing;        // how a refusal's code is worded (refusals.h)

  // Served over HTTP: a row without a path is RESP's only (TIME).
  bool http() const noexcept { return !path.empty(); }
};

// Every command served on both protocols.
std::span<const CommandRow> command_rows() noexcept;
// The row of `op`.
const CommandRow& command_row(Op op) noexcept;
// The row named `name` (RESP, any case), or null.
const CommandRow* find_resp_command(std::string_view name) noexcept;

struct Request {
  const CommandRow* row = nullptr;
  std::string subject;
  std::vector<std::int64_t> values;  // one per row->params; unset: the fallback
  std::vector<bool> given;
  std::vector<std::string> texts;  // one per row->params: a text parameter's value
  std::vector<std::string> items;  // row->items
  PublicIdCaller caller;           // who asks (UNWRAP)
  // SEQCREATE: answer with the sequence as it now is (HTTP's 201 body; costs
  // one more round trip to the ticket table) rather than only that it exists.
  bool describe = false;

  explicit Request(const CommandRow& r);
  void set(std::size_t param, std::int64_t value);
  void set_text(std::size_t param, std::string value);
  std::int64_t value(std::size_t param) const { return values[param]; }
};

// The answers whose wire forms differ between the protocols, one type per
// shape (each protocol's encoder says how): a bare value or positional array
// over RESP against a JSON object naming it (NEXTID, NEXTIDS, NEXTSEQ,
// SEQRANGE, SEQLIST, UNWRAP), a flattened map against a nested object with
// fields only HTTP shows (DECODE, SEQINFO), +OK against 201 with a Location
// (SEQCREATE), [id, public] pairs against parallel arrays (NEXTPUBIDS).
// A shape both protocols write alike is a Record (record.h).
struct IssuedIds {
  std::vector<IdSpan> spans;  // NEXTID: one span of one
};
struct DecodeAnswer {
  DecodedId decoded;
};
struct NumbersAnswer {
  std::string sequence;
  std::vector<SequenceRange> ranges;
};
struct RangeAnswer {
  std::string sequence;
  SequenceRange range;
};
struct SequenceAnswer {
  SequenceDetails details;
  bool created = false;  // SEQCREATE
  bool times = true;     // false: read back failed; the row as the request set it
};
struct NamesAnswer {
  std::vector<std::string> names;
};
// WRAP, NEXTPUBID, NEXTPUBIDS: each id beside its public id.
struct PublicIdsAnswer {
  std::vector<std::uint64_t> ids;
  std::vector<std::string> publics;
};
// UNWRAP: one per public id asked, in order.
struct UnwrapAnswer {
  std::vector<UnwrappedId> ids;
};
// TIME and SNOWID.CLOCK: the generator's clock when the command ran (T2 of
// the four NTP timestamps), and what the protocol needs to read the send
// time (T3) as late as it can: when it encodes the reply, the last step
// before the bytes are queued on the socket.
struct ClockAnswer {
  WallTime received;
  const Clock* clock = nullptr;
  const HostBound* bound = nullptr;
};
// The send time and the host's bound, read now, with the interval
// [earliest, latest] around the send time (unset when the bound is unknown).
struct ClockReading {
  WallTime received;
  WallTime sent;
  BoundNow bound;
  WallTime earliest;
  WallTime latest;
};
ClockReading read_clock(const ClockAnswer& a) noexcept;
// SNOWID.CLOCK and GET /v1/clock: read_clock() as a record, built when the
// answer is encoded: receive_ns, send_ns (wide), bound_source (text),
// bound_ns (integer), earliest_ns, latest_ns (wide); the last three null
// while the bound is unknown.
Record clock_record(const ClockAnswer& a);

// A refusal, decided once; each protocol words it.
struct Refusal {
  enum class Kind : std::uint8_t {
    kRefused,       // the service refused: code, message, retry_after
    kOutOfBounds,   // a parameter outside low..high
    kMissing,       // a required parameter not given
    kSequencesOff,  // the named sequences are off
    kPublicIdsOff,  // no public-id keyring is in use
    kDenied,        // this caller may not unwrap (public_id_unwrap)
  };
  Kind kind = Kind::kRefused;
  Code code = Code::kInvalidArgument;
  Refusing refusing = Refusing::kIssue;
  std::string message;  // kRefused: one line for humans
  // For a retryable code: when to try again (each protocol rounds it up to
  // its own unit).
  Duration retry_after = Duration::zero();
  // Set: the refusal suggests this command (an unknown sequence: create it).
  const CommandRow* hint = nullptr;
  // Set: the word to answer instead of the code's (a public id's reason,
  // such as UNKNOWN_KEY); the message then holds the rest.
  std::string word;
  std::size_t param = 0;  // kOutOfBounds, kMissing: which one
  std::int64_t low = 0;
  std::int64_t high = 0;
  bool retryable() const noexcept { return kind == Kind::kRefused && is_retryable(code); }
};

using Answer =
    std::variant<Refusal, IssuedIds, DecodeAnswer, NumbersAnswer, RangeAnswer, SequenceAnswer,
                 NamesAnswer, ClockAnswer, PublicIdsAnswer, UnwrapAnswer, Record>;

// The answer, or the work that computes it where waiting on the ticket table
// is allowed (the server's pool). The work owns copies of what it needs.
struct Outcome {
  Answer answer;
  std::function<Answer()> deferred;
};

class Commands {
 public:
  // `ids`, `sequences` and `public_ids` must outlive this; `sequences` null:
  // they are off; `public_ids` null: built without them (always off).
  Commands(IdService& ids, SequenceService* sequences, const PublicIdPort* public_ids = nullptr)
      : ids_(ids), sequences_(sequences), public_ids_(public_ids) {}

  // Refuses a sequence command while sequences are off, and a public-id
  // command while public ids are. Protocols ask this at the point their
  // checks order it, before their own parameter checks.
  std::optional<Refusal> available(const CommandRow& row) const;
  // The largest value of `limit`, read now.
  std::int64_t limit(Limit limit) const noexcept;
  // Checks the subject and the parameters' bounds, then runs the command or
  // gives back the work that must wait. Never waits.
  Outcome run(const Request& request) const;

  const Layout& layout() const noexcept { return ids_.layout(); }

 private:
  std::optional<Refusal> check(const Request& request) const;
  Outcome run_ids(const Request& request) const;
  Outcome run_sequence(const Request& request) const;
  Outcome run_clock(const Request& request) const;
  Outcome run_public_ids(const Request& request) const;

  IdService& ids_;
  SequenceService* sequences_;
  const PublicIdPort* public_ids_;
};

}  // namespace snowid::daemon
