// The ticket table: one row per named sequence holding the next free number.
// A range is taken by advancing the row in one atomic statement, so two
// allocators never receive overlapping ranges, whatever their number.
//
// Implementations: open_sqlite_ticket_store() (sqlite_ticket_store.h, the
// embedded default), open_postgres_ticket_store() (postgres_ticket_store.h,
// for fleets) and testing::MemoryTicketStore. All run the same schema
// migration (docs/sequences.md) and keep the same contract, checked by one
// conformance suite.
//
// Numbers are signed 64-bit (what every SQL database stores natively):
// 0 <= number < INT64_MAX. A range is half-open: [first, end).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid {

// The default range size of a new sequence.
inline constexpr std::int64_t kDefaultSequenceStep = 1000;
// The largest range one call may take (and the largest step).
inline constexpr std::int64_t kMaxSequenceRange = 1'000'000'000;
// Longest sequence name, in bytes.
inline constexpr std::size_t kMaxSequenceNameLength = 64;

// [first, end): the numbers first, first + 1, ..., end - 1.
struct SequenceRange {
  std::int64_t first = 0;
  std::int64_t end = 0;
  std::int64_t size() const noexcept { return end - first; }
  friend bool operator==(const SequenceRange&, const SequenceRange&) = default;
};

// One row of the ticket table.
struct SequenceInfo {
  std::string name;
  std::int64_t next_value = 0;               // the first number no range has taken yet
  std::int64_t step = kDefaultSequenceStep;  // range size when a taker asks for none
  WallTime created;
  WallTime updated;  // the last create or take
};

// OK when `name` is 1 to kMaxSequenceNameLength bytes of [A-Za-z0-9_.-], the
// first a letter or a digit (so safe in a URL path, where "." and ".." would
// be resolved away, a RESP word, a command line, a metric label and a log
// line);
// kInvalidArgument naming the rule otherwise.
Status validate_sequence_name(std::string_view name);
// The argument checks every store makes before touching its table, so that
// all stores refuse the same calls with the same words: the name as above,
// 0 <= start < INT64_MAX, 1 <= step <= kMaxSequenceRange; for take(),
// 0 <= size <= kMaxSequenceRange (0: the sequence's step).
Status validate_sequence_create(std::string_view name, std::int64_t start, std::int64_t step);
Status validate_sequence_take(std::string_view name, std::int64_t size);

// Thread-safe: every method may be called from many threads at once. Each
// call is one round trip (or one transaction) to the store. Errors:
//   kUnavailable        the database is unreachable or busy: retry later. A
//                       take() that fails this way may have committed: its
//                       range is then lost (a gap), never handed out twice.
//   kNotFound           no sequence of that name (never created implicitly)
//   kAlreadyExists      create() of a name that exists
//   kInvalidArgument    a bad name, start, step or size
//   kOutOfRange         the range would pass INT64_MAX: the sequence is spent
//   kDataLoss           the table holds something the contract forbids
//   kFailedPrecondition the schema is missing or newer than this code knows
class TicketStore {
 public:
  virtual ~TicketStore() = default;

  // Applies the schema migrations this store lacks, in order, each in its own
  // transaction; safe when many processes migrate at once. Idempotent.
  virtual Status migrate() = 0;

  // Creates `name` whose first range starts at `start` (0 <= start <
  // INT64_MAX) with default range size `step` (1 <= step <= kMaxSequenceRange).
  virtual Status create(std::string_view name, std::int64_t start, std::int64_t step) = 0;

  // Takes the next `size` numbers of `name` (1 <= size <= kMaxSequenceRange),
  // or its step when `size` is 0, advancing the row atomically.
  virtual Result<SequenceRange> take(std::string_view name, std::int64_t size) = 0;

  virtual Result<SequenceInfo> get(std::string_view name) = 0;
  // Every sequence, by name.
  virtual Result<std::vector<SequenceInfo>> list() = 0;

  // "sqlite", "postgresql", "memory": for logs and metrics.
  virtual std::string_view kind() const noexcept = 0;
};

}  // namespace snowid
