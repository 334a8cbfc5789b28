// The named sequences behind both transports (issue 5): numbers handed out
// from the ticket table (snowid/ticket_store.h) through one SequenceBuffer
// per sequence, opened on the first request for it. Private to the daemon.
//
// The event-loop threads must never wait on the database. They call only
// try_next(), which answers from the buffer's memory or says that it would
// wait, and snapshot(). Every other call may wait, for a round trip to the
// store (bounded by its busy or statement timeout) or for a buffer's next
// range (bounded by wait_timeout), and runs on the server's pool.
//
// Never an implicit create: a name the table does not hold is kNotFound, and
// no buffer is kept for it (a buffer is opened only after the store has
// confirmed the row), so the per-sequence metrics are bounded by the table's
// rows. The buffers, each with a fetcher thread, are bounded by
// max_sequences: a request that would open one more is refused
// (kResourceExhausted, word RESOURCE_EXHAUSTED, HTTP 503, not retryable: the
// setting must grow, or the daemon restart). A buffer that later finds its
// row gone is dropped, so that a create afterwards works.
//
// Numbers are lost, never repeated: whatever the buffers hold when the
// service closes (or the process dies) is a gap.
//
// Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mutex.h"
#include "snowid/sequence_buffer.h"
#include "snowid/status.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"

namespace snowid::daemon {

// The word both transports answer with when the daemon runs with
// `sequences = off`: not retryable, the configuration must change.
inline constexpr std::string_view kSequencesOffWord = "SEQUENCES_OFF";
inline constexpr std::string_view kSequencesOffMessage =
    "sequences are off in this snowidd (setting sequences = off)";
// The retry hint of an UNAVAILABLE sequence answer: the fetcher retries on
// its own backoff (from 50 ms), so a client coming back after this finds the
// result of its next attempt.
inline constexpr Duration kSequenceRetryAfter = std::chrono::milliseconds(100);

struct SequenceServiceOptions {
  // Every buffer's options (validated by the caller: validate()).
  SequenceBufferOptions buffer;
  // The largest range() a client may take, 1..kMaxSequenceRange.
  std::int64_t max_range = 1'000'000;
  // The most buffers open at once (each holds a fetcher thread), >= 1.
  std::size_t max_sequences = 1000;
  // The store as INFO and the logs show it: the redacted URL.
  std::string store_description;
};

// Numbers of one sequence, or why there are none.
struct SequenceNumbers {
  Status status;  // OK: `ranges` holds the numbers; else the refusal
  // try_next() only: nothing was taken and nothing is wrong; next() (on the
  // pool) would wait for the store.
  bool would_wait = false;
  std::vector<SequenceRange> ranges;  // increasing, consecutive numbers merged
  bool ok() const noexcept { return status.is_ok() && !would_wait; }
};

// A row of the table, and what this daemon's buffer of it holds.
struct SequenceDetails {
  SequenceInfo row;
  bool buffered = false;  // a buffer serves the sequence in this daemon
  SequenceBufferStats buffer;
};

// One sequence's counters, for /metrics and INFO. Counters include buffers
// dropped since the daemon started.
struct SequenceCounters {
  std::string name;
  std::uint64_t numbers_issued = 0;  // by NEXTSEQ and /next, from the buffer
  std::uint64_t numbers_lost = 0;    // taken from the store, never handed out
  std::uint64_t ranges_fetched = 0;  // by the buffer's fetcher
  std::uint64_t ranges_served = 0;   // SEQRANGE and /range
  std::int64_t buffered = 0;         // numbers in memory now
  bool has_buffer = false;
};

struct SequencesSnapshot {
  bool enabled = false;
  std::string store_kind = "off";           // "sqlite", "postgresql", "memory", or "off"
  std::string store;                        // SequenceServiceOptions::store_description
  std::size_t buffers = 0;                  // sequences with a buffer now
  std::vector<SequenceCounters> sequences;  // by name
  // Round trips to the store: the buffers' takes and the direct calls
  // (range, create, info, list and the check before a buffer opens); and
  // those the store could not answer. For the direct calls a refusal (no
  // such sequence, one that exists, one spent) is an answer, not a failure;
  // the buffers count every take that brought no range.
  std::uint64_t store_calls = 0;
  std::uint64_t store_failures = 0;
  // Bucket i counts calls of at most kStoreLatencyBoundsMs[i] ms; the last
  // bucket the rest (not cumulative).
  std::array<std::uint64_t, kStoreLatencyBoundsMs.size() + 1> store_latency{};
  Duration store_latency_total = Duration::zero();
  // Callers that found a buffer dry and waited; how many gave up at
  // wait_timeout; the total time waited.
  std::uint64_t buffer_waits = 0;
  std::uint64_t buffer_wait_timeouts = 0;
  Duration buffer_wait_time = Duration::zero();
};

class SequenceService {
 public:
  // `store` null: sequences are off; every call answers kFailedPrecondition
  // with kSequencesOffMessage (the transports answer kSequencesOffWord).
  // `clock` must outlive the service.
  SequenceService(std::unique_ptr<TicketStore> store, const Clock& clock,
                  SequenceServiceOptions options);
  // close().
  ~SequenceService();
  SequenceService(const SequenceService&) = delete;
  SequenceService& operator=(const SequenceService&) = delete;

  bool enabled() const noexcept { return store_ != nullptr; }
  std::int64_t max_range() const noexcept { return options_.max_range; }

  // `count` numbers (1..kMaxSequenceRange; the transports bound it by
  // max_batch) from the sequence's buffer if it holds them now. Never waits
  // and never touches the store: with no buffer yet, or too few numbers in
  // it, `would_wait` is set and nothing is taken; except that a buffer too
  // short whose last fetch failed with a retryable error answers
  // kUnavailable with that error at once, rather than send the caller to
  // wait on a store that is failing.
  SequenceNumbers try_next(std::string_view name, std::int64_t count);

  // The same, waiting: opens the buffer if there is none (after reading the
  // row: kNotFound if there is none; kResourceExhausted if max_sequences are
  // open), then waits up to wait_timeout for each range it needs
  // (kUnavailable after it, with the store's last error). A buffer that
  // finds its row gone is dropped and the call tried once more on a new
  // one, so that a row deleted and re-created outside the daemon is served.
  SequenceNumbers next(std::string_view name, std::int64_t count);

  // Takes `size` numbers (1..max_range()) straight from the store, for a
  // client that buffers them itself.
  Result<SequenceRange> range(std::string_view name, std::int64_t size);

  // Creates the sequence; kAlreadyExists if it exists.
  Status create(std::string_view name, std::int64_t start, std::int64_t step);

  // The row, and the buffer's state if this daemon has one.
  Result<SequenceDetails> info(std::string_view name);

  // Every sequence's name, in order.
  Result<std::vector<std::string>> list();

  // Never waits on the store.
  SequencesSnapshot snapshot() const;

  // Destroys the buffers (what they hold is lost: gaps); every later call
  // answers kUnavailable. Call after the transports have stopped.
  void close();

 private:
  struct Entry;

  // The buffer of `name`, opening it if needed.
  Result<std::shared_ptr<SequenceBuffer>> buffer_for(std::string_view name);
  // Drops `buffer` if it still serves `name`, keeping its counters.
  void retire(std::string_view name, const std::shared_ptr<SequenceBuffer>& buffer);
  // The entry of `name`, made if absent.
  Entry& entry_locked(std::string_view name) REQUIRES(mu_);
  // Records one direct store call.
  void count_store_call(Duration latency, bool failed) noexcept;
  // OK, or why no call may go on: off, a bad name, closed.
  Status usable(std::string_view name) const;
  // usable(name), and 1 <= count <= kMaxSequenceRange.
  Status usable_for(std::string_view name, std::int64_t count) const;

  std::unique_ptr<TicketStore> store_;
  const Clock& clock_;
  const SequenceServiceOptions options_;

  // Guards `entries_` and each entry's buffer pointer; shared by the event
  // loops (try_next, snapshot) and exclusive only to add or drop an entry's
  // buffer. A buffer is destroyed only on a thread that may wait (its
  // destructor joins the fetcher, which may be in a take): the event loops
  // use buffers under the shared lock and never keep a reference.
  mutable internal::SharedMutex mu_;
  std::map<std::string, std::unique_ptr<Entry>, std::less<>> entries_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  std::size_t open_buffers_ GUARDED_BY(mu_) = 0;
  // Serialises opening buffers, so that two requests for a new sequence
  // open one buffer between them. Taken before mu_.
  internal::Mutex open_mu_ ACQUIRED_BEFORE(mu_);

  // Direct store calls (the buffers count their own).
  std::atomic<std::uint64_t> store_calls_{0};
  std::atomic<std::uint64_t> store_failures_{0};
  std::array<std::atomic<std::uint64_t>, kStoreLatencyBoundsMs.size() + 1> store_latency_{};
  std::atomic<std::int64_t> store_latency_ns_{0};
};

}  // namespace snowid::daemon
