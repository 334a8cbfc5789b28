// A double-buffered client of one named sequence: numbers are handed out
// from memory, and the next range is taken from the ticket table in the
// background once `refill_at` of the current range remains, so a database
// slow for a moment never blocks a caller while a range remains.
//
// Guarantees:
// - Every number handed out belongs to a range this buffer took from the
//   store, and is handed out once: no two callers, here or in any other
//   buffer of the same table, ever receive the same number.
// - Numbers from one buffer increase in the order they are taken.
// - Never a made-up number: when both buffers are dry, a caller waits up to
//   `wait_timeout` for the fetcher, then gets kUnavailable (retryable).
// - Numbers are lost, never repeated: what remains of the ranges when the
//   buffer is destroyed or the process dies is a gap. So is a range whose
//   take() failed after the database committed it.
//
// Thread-safe: any number of threads may call next()/next_n() at once. One
// background thread per buffer talks to the store; the callers never do.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "snowid/status.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"

namespace snowid {

struct SequenceBufferOptions {
  // The range size asked of the store; 0: the sequence's own step. At most
  // kMaxSequenceRange.
  std::int64_t step = 0;
  // Start fetching the next range when this share of the current range
  // remains. 0 < refill_at < 1.
  double refill_at = 0.2;
  // How long next()/next_n() wait when both buffers are dry before
  // kUnavailable. Positive.
  Duration wait_timeout = std::chrono::seconds(1);
  // After a failed fetch the fetcher waits this long before trying again,
  // doubling up to retry_backoff_max. Positive, backoff <= max.
  Duration retry_backoff = std::chrono::milliseconds(50);
  Duration retry_backoff_max = std::chrono::seconds(2);

  // Adaptive step: when a range lasts less than target_range_life / 2 (from
  // the moment it starts being handed out to its last number), the next
  // request asks for twice the size, up to max_step; when it lasts more
  // than 2 * target_range_life, half, down to min_step. The first request
  // asks for `step` (or the sequence's step) clamped into [min_step,
  // max_step]. 1 <= min_step <= max_step <= kMaxSequenceRange.
  bool adaptive = false;
  std::int64_t min_step = 100;
  std::int64_t max_step = 100'000;
  Duration target_range_life = std::chrono::seconds(60);
};

// kInvalidArgument naming the first field out of bounds; OK otherwise.
Status validate(const SequenceBufferOptions& options);

// Upper bounds (milliseconds) of the store-latency histogram's buckets; the
// last bucket of SequenceBufferStats::store_latency counts the rest.
inline constexpr std::array<double, 11> kStoreLatencyBoundsMs = {1,   2.5, 5,   10,   25,  50,
                                                                 100, 250, 500, 1000, 2500};

struct SequenceBufferStats {
  std::uint64_t numbers_issued = 0;  // handed to callers
  std::uint64_t numbers_lost = 0;    // taken by a next_n() that then failed
  std::uint64_t ranges_fetched = 0;  // successful take() calls
  std::uint64_t store_calls = 0;     // store round trips, failed ones included: take(), and the
                                     // one get() of an adaptive buffer with step 0
  std::uint64_t store_failures = 0;
  // Callers that found both buffers dry and waited; of those, how many gave
  // up at wait_timeout; and the total time waited.
  std::uint64_t waits = 0;
  std::uint64_t wait_timeouts = 0;
  Duration wait_time = Duration::zero();
  // take() latencies: bucket i counts calls of at most
  // kStoreLatencyBoundsMs[i] ms; the last bucket counts the rest.
  std::array<std::uint64_t, kStoreLatencyBoundsMs.size() + 1> store_latency{};
  Duration store_latency_total = Duration::zero();
  std::int64_t step = 0;      // the size the next request will ask for (0: not known yet)
  std::int64_t buffered = 0;  // numbers in memory now, both buffers
  Status last_error;          // the last failed take(), OK if none since the last success

  // Adds the counters of `other` (the latency histogram bucket by bucket);
  // the gauges (step, buffered) and last_error stay this one's.
  SequenceBufferStats& operator+=(const SequenceBufferStats& other) noexcept {
    numbers_issued += other.numbers_issued;
    numbers_lost += other.numbers_lost;
    ranges_fetched += other.ranges_fetched;
    store_calls += other.store_calls;
    store_failures += other.store_failures;
    waits += other.waits;
    wait_timeouts += other.wait_timeouts;
    wait_time += other.wait_time;
    for (std::size_t i = 0; i < store_latency.size(); ++i)
      store_latency[i] += other.store_latency[i];
    store_latency_total += other.store_latency_total;
    return *this;
  }
};

class SequenceBuffer {
 public:
  // Checks the options (kInvalidArgument) and the name, and starts the
  // fetcher, which takes the first range at once. Does not wait for it.
  // `store` and `clock` must outlive the buffer.
  static Result<std::unique_ptr<SequenceBuffer>> open(TicketStore& store, std::string name,
                                                      const Clock& clock,
                                                      SequenceBufferOptions options = {});

  // Stops the fetcher, waiting for a take() in flight. Numbers not handed
  // out are lost (gaps).
  ~SequenceBuffer();
  SequenceBuffer(const SequenceBuffer&) = delete;
  SequenceBuffer& operator=(const SequenceBuffer&) = delete;

  // The next number. Errors: kUnavailable when no range came within
  // wait_timeout (the message carries the store's last error); the store's
  // own answer when it is final: kNotFound (no such sequence), kOutOfRange
  // (spent), kInvalidArgument, kFailedPrecondition. A final answer stands
  // for every later call: build a new buffer once it is fixed.
  Result<std::int64_t> next();

  // `count` numbers (1 <= count <= kMaxSequenceRange), increasing, appended
  // to `out` as ranges (consecutive numbers merged). Waits as next() does,
  // for each range it needs; when both buffers are dry it asks the fetcher
  // for a range that holds what it lacks, so a count larger than the step
  // costs one round trip, not count / step. All or nothing: on an error `out` is left as it
  // was and the numbers already taken are lost (counted in numbers_lost).
  Status next_n(std::int64_t count, std::vector<SequenceRange>& out);

  // As next_n() without waiting: takes the numbers and returns true when the
  // buffers hold `count` now; otherwise takes nothing and returns false. A
  // final error of the store is returned as an error.
  Result<bool> try_next_n(std::int64_t count, std::vector<SequenceRange>& out);

  const std::string& name() const noexcept;
  SequenceBufferStats stats() const;

  class Impl;

 private:
  explicit SequenceBuffer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace snowid
