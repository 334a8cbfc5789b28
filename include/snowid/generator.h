// The in-process id generator.
//
// Ids are composed from the injected clock's current tick, the worker this
// generator holds, and a per-tick sequence. The (last tick, sequence) state
// changes with one compare-and-swap, so any number of threads may call next()
// at once without a lock.
//
// Policies (each tested in generator_test.cc and generator_model_test.cc):
// - Sequence exhausted within a tick: wait for the next tick; never wrap.
// - Clock behind the last issued tick by at most `max_backward`: keep issuing
//   from the last tick while its sequence lasts, then wait for the clock.
// - Clock behind by more than `max_backward`: refuse with kClockMovedBack,
//   turn unhealthy for good, and call `on_unhealthy` once (the worker-id lease
//   is released through it). Every later call returns kUnhealthy.
// - A new tick starts its sequence at a random value below
//   `random_start_bound` (0: always at 0), so quiet periods do not produce ids
//   that all end in ...000.
// - With `max_borrow` > 0, an exhausted tick may move on to the next tick
//   before the clock gets there, as long as the issued tick stays at most
//   `max_borrow` ahead of the clock. The backward allowance then grows by
//   `max_borrow`, since the last tick may already be that far ahead.
// - With a fence store, the generator never issues in a tick beyond the stored
//   fence: before it would, it durably stores a fence `fence_window` ahead. On
//   creation, a clock behind the stored fence is waited out like a backward
//   step, and refused if it is behind by more than `fence_window` +
//   `max_borrow` + `max_backward` (docs/generator.md).
// - With `continue_after` (the last id of the generator this one replaces in
//   the same process), no id is in that tick or before it: a clock behind it
//   is a backward step as above, waited out or refused.
// - With `wait_until`, no id carries a time before it (kClockBehind until the
//   clock gets there). With a `lease`, no id is issued unless the guard
//   permits it (kLeaseUncertain, or kLeaseLost for good). Both bound id
//   times, so they hold whatever the wall clock does; see generator_lease_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "snowid/fence.h"
#include "snowid/issue_observer.h"
#include "snowid/layout.h"
#include "snowid/lease_guard.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid {

struct GeneratorOptions {
  // Must satisfy can_generate().
  Layout layout = Layout::snowid_default();
  // Must fit the layout's region and host fields.
  WorkerId worker;
  // Largest backward clock step that is waited out rather than refused.
  // Default 100 ms; at least 0, at most 1 hour.
  Duration max_backward = std::chrono::milliseconds(100);
  // Exclusive bound of a new tick's first sequence value; 0 turns it off.
  // Default 16; at most a quarter of the sequence capacity.
  std::uint32_t random_start_bound = 16;
  // How far ahead of the clock an exhausted tick may move. Default 0 (off).
  // At most 1 second.
  Duration max_borrow = Duration::zero();
  // Longest next()/reserve() waits, measured on the monotonic clock, before
  // giving up with the retryable code that made it wait. Protects callers from
  // a wall clock that has stopped. A wait asked for that is longer than what
  // is left (a far wait_until) is given up at once. Default max_backward + 50 ms.
  Duration max_wait = Duration::zero();  // zero: the default
  // Optional persisted fence. Shared ownership: the generator writes to it.
  std::shared_ptr<FenceStore> fence_store;
  // How far ahead of the current tick each stored fence is. Default 1 s;
  // between 10 ms and 1 hour.
  Duration fence_window = std::chrono::seconds(1);
  // Ids for instants before this are refused with kOutOfRange (use the
  // cut-over of the layout's era in a LayoutHistory). Default: the epoch.
  std::optional<WallTime> not_before;
  // Ids for instants at or after this are refused with kOutOfRange, as past
  // the layout's end of life: set it to the next era's cut-over in a
  // LayoutHistory, because an id of this layout issued after it would read
  // as an id of the next layout and could equal one that a generator of that
  // era issues. Must be after not_before. Default: the layout's end of life.
  std::optional<WallTime> not_after;
  // Until the clock reaches this instant, calls answer kClockBehind (retryable)
  // and next()/reserve() wait for it, within max_wait. A new holder of a
  // leased worker id sets it past the previous holder's high-water mark.
  // It bounds id times, not clock readings: no id's time (the start of its
  // tick) is before it, so the first tick used is the first one starting at
  // or after it. Once such a tick is issued, a clock stepped back below it is
  // an ordinary backward step. At or before the epoch or not_before: no effect.
  std::optional<WallTime> wait_until;
  // The time of the last id this process issued before this generator, under
  // another generator (LeasedGenerator passes that of the one it replaces
  // after a lost lease, whatever its worker id). No id of this generator is
  // in that tick or before it, so one process's ids keep increasing across a
  // change of worker id whatever the clock says. The generator starts as if
  // it had issued that tick itself: a clock behind it is a backward step like
  // any other, waited out within max_backward and refused beyond it
  // (kClockMovedBack, unhealthy). At or before the epoch: no effect.
  std::optional<WallTime> continue_after;
  // Optional worker-id lease (see lease_guard.h). With one, every id also
  // needs the guard's permission: kLeaseUncertain while it is not renewed in
  // time or the id's time is past its high-water mark, kLeaseLost once lost.
  // Asked once per claim, just before the compare-and-swap: the monotonic
  // clock against the deadline, and the id's time (the start of its tick,
  // also for a borrowed tick and for every id of a reserve() batch) against
  // the high-water cap. next()/reserve() never wait on kLeaseUncertain: only
  // a renewal can change it. Without a lease the monotonic clock is not read.
  std::shared_ptr<const LeaseGuard> lease;
  // Called once, on the thread that saw the clock go back beyond
  // max_backward. Must not call back into the generator.
  std::function<void(const Status&)> on_unhealthy;
  // Told about every id issued (see issue_observer.h); none when unset. A
  // LeasedGenerator hands it to each generator it makes, with that
  // generator's worker id.
  std::shared_ptr<IssueObserver> observer;
};

struct [[nodiscard]] IdResult {
  std::uint64_t id = 0;
  Code code = Code::kOk;
  // For retryable codes: about how long until a retry can succeed.
  Duration retry_after = Duration::zero();
  bool ok() const noexcept { return code == Code::kOk; }
};

// `count` consecutive ids starting at `first`: first, first+1, ... first+count-1.
struct [[nodiscard]] IdBatch {
  std::uint64_t first = 0;
  std::uint32_t count = 0;
  Code code = Code::kOk;
  Duration retry_after = Duration::zero();
  bool ok() const noexcept { return code == Code::kOk; }
};

// Counters of the slow paths only; the hot path touches none of them.
struct GeneratorStats {
  std::uint64_t sequence_exhausted = 0;    // calls that found the tick's sequence used up
  std::uint64_t clock_behind = 0;          // calls that found the clock behind (a tick, wait_until)
  std::uint64_t waits_gave_up = 0;         // next()/reserve() that hit max_wait
  std::uint64_t borrowed_ticks = 0;        // ticks started ahead of the clock
  std::uint64_t fence_writes = 0;          // fences stored
  std::uint64_t fence_write_failures = 0;  // fence stores that failed
  std::uint64_t refusals = 0;              // kClockMovedBack, kUnhealthy, kOutOfRange, kLeaseLost
  std::uint64_t lease_refusals = 0;        // kLeaseUncertain and kLeaseLost answers

  // Adds every counter of `other`.
  GeneratorStats& operator+=(const GeneratorStats& other) noexcept {
    sequence_exhausted += other.sequence_exhausted;
    clock_behind += other.clock_behind;
    waits_gave_up += other.waits_gave_up;
    borrowed_ticks += other.borrowed_ticks;
    fence_writes += other.fence_writes;
    fence_write_failures += other.fence_write_failures;
    refusals += other.refusals;
    lease_refusals += other.lease_refusals;
    return *this;
  }
};

class Generator {
 public:
  // Validates the options, reads the stored fence, and checks the clock
  // against it. The clock must outlive the generator.
  static Result<std::unique_ptr<Generator>> create(const Clock& clock, GeneratorOptions options);

  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;
  ~Generator();

  // The next id. Waits as the policies above say (never longer than
  // max_wait); otherwise returns the refusal.
  IdResult next() noexcept;
  // As next(), but never waits: kSequenceExhausted or kClockBehind instead.
  IdResult try_next() noexcept;
  // Up to `n` consecutive ids from one tick with a single compare-and-swap:
  // at least 1 and no more than what is left of the tick's sequence. Waits
  // like next(). `n` of 0 is kInvalidArgument.
  IdBatch reserve(std::uint32_t n) noexcept;
  IdBatch try_reserve(std::uint32_t n) noexcept;

  // Stops issuing for good, then records the exact last issued tick as the
  // fence (tighter than the window-ahead one) so that a restart waits no longer
  // than needed. Later calls return kFailedPrecondition. Call on clean shutdown.
  Status close();

  bool healthy() const noexcept;
  // OK while healthy; otherwise the refusal that made it unhealthy.
  Status health() const;
  GeneratorStats stats() const noexcept;
  const Layout& layout() const noexcept;
  WorkerId worker() const noexcept;
  // The last tick any id was issued in (or, before the first, the fence tick
  // after a restart or the tick of continue_after, whichever is later).
  std::int64_t last_ticks() const noexcept;

 private:
  struct Impl;
  explicit Generator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace snowid
