#include "snowid/generator.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "mutex.h"

namespace snowid {

using internal::Mutex;
using internal::MutexLock;
namespace {

constexpr std::int64_t kNsPerMs = 1'000'000;
// The retry hint of kLeaseUncertain: the guard changes only when the keeper
// renews, so this only paces callers that poll.
constexpr Duration kLeaseRetry = std::chrono::milliseconds(10);
// Bit 63 of the state word: the generator has stopped (unhealthy or closed).
// Time and sequence together use at most 63 bits, so the bit is always free,
// and setting it makes every in-flight compare-and-swap fail.
constexpr std::uint64_t kStopped = std::uint64_t{1} << 63;

// Per-thread xorshift64*: the random start of a tick needs no quality beyond
// spreading low bits, and must not contend between threads.
std::uint32_t next_random() noexcept {
  thread_local std::uint64_t s = [] {
    std::uint64_t seed = reinterpret_cast<std::uintptr_t>(&s) ^ 0x9e3779b97f4a7c15ULL;
    return seed == 0 ? 1 : seed;
  }();
  s ^= s >> 12;
  s ^= s << 25;
  s ^= s >> 27;
  return static_cast<std::uint32_t>((s * 0x2545f4914f6cdd1dULL) >> 32);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

bool waiting_helps(Code code) noexcept {
  return code == Code::kSequenceExhausted || code == Code::kClockBehind;
}

std::string ms_text(std::int64_t ns) { return std::to_string(ns / kNsPerMs) + " ms"; }

}  // namespace

struct Generator::Impl {
  Impl(const Clock& c, GeneratorOptions o) : clock(c), opt(std::move(o)) {}

  const Clock& clock;
  GeneratorOptions opt;

  // Fixed at creation.
  int seq_bits = 0;
  std::uint64_t seq_mask = 0;
  int time_shift = 0;
  std::uint64_t worker_bits = 0;
  std::int64_t epoch_ns = 0;
  std::int64_t unit_ns = kNsPerMs;
  std::int64_t min_ns = 0;  // earliest instant ids may be issued for
  // The one instant the hot path compares the clock with: max(min_ns, the
  // start of the first tick at or after wait_until). Below it, the slow path
  // tells the two apart.
  std::int64_t gate_ns = 0;
  // First tick whose time is at or after wait_until (INT64_MIN without one).
  std::int64_t wait_ticks = INT64_MIN;
  std::int64_t max_ticks = 0;
  std::int64_t backward_ticks = 0;
  std::int64_t restart_backward_ticks = 0;
  std::int64_t borrow_ticks = 0;
  std::int64_t window_ticks = 0;
  // The fence tick restored at start. Until a later tick is issued, a clock
  // behind is allowed the fence window on top of max_backward.
  std::int64_t restart_floor = -1;
  Duration max_wait{};
  const LeaseGuard* lease = nullptr;  // opt.lease, read on the hot path

  // (last tick << seq_bits) | last issued sequence, plus kStopped.
  alignas(64) std::atomic<std::uint64_t> state{0};
  // Largest tick covered by a durable fence; INT64_MAX without a fence store.
  alignas(64) std::atomic<std::int64_t> fence_ticks{INT64_MAX};
  std::atomic<bool> unhealthy{false};

  // Serialises fence stores (fence_ticks is read without it); never taken on
  // the hot path.
  Mutex fence_mu;
  mutable Mutex health_mu;
  Status health_status GUARDED_BY(health_mu);

  struct Counters {
    std::atomic<std::uint64_t> sequence_exhausted{0}, clock_behind{0}, waits_gave_up{0},
        borrowed_ticks{0}, fence_writes{0}, fence_write_failures{0}, refusals{0}, lease_refusals{0};
  } counters;

  std::int64_t ticks_of_ns(std::int64_t ns) const noexcept {
    const std::int64_t since = ns - epoch_ns;  // >= 0: callers checked min_ns
    return unit_ns == kNsPerMs ? since / kNsPerMs : since / unit_ns;
  }

  std::uint64_t start_sequence() const noexcept {
    const std::uint32_t bound = opt.random_start_bound;
    if (bound == 0) return 0;
    return (std::uint64_t{next_random()} * bound) >> 32;
  }

  static IdBatch fail(Code code, Duration retry_after = Duration::zero()) noexcept {
    IdBatch b;
    b.code = code;
    b.retry_after = retry_after;
    return b;
  }

  IdBatch refuse(Code code) noexcept {
    counters.refusals.fetch_add(1, std::memory_order_relaxed);
    return fail(code);
  }

  IdBatch stopped() noexcept {
    return refuse(unhealthy.load(std::memory_order_acquire) ? Code::kUnhealthy
                                                            : Code::kFailedPrecondition);
  }

  IdBatch moved_back(std::int64_t now, std::int64_t last) noexcept {
    {
      MutexLock lock(health_mu);
      if (health_status.is_ok()) {
        health_status =
            Status(Code::kClockMovedBack,
                   "clock moved back " + std::to_string((last - now) * unit_ns / kNsPerMs) +
                       " ms behind the last issued time, more than the " +
                       ms_text(opt.max_backward.count()) + " allowed; refusing to issue ids");
      }
    }
    unhealthy.store(true, std::memory_order_release);
    const std::uint64_t prev = state.fetch_or(kStopped, std::memory_order_acq_rel);
    if ((prev & kStopped) != 0) return stopped();
    counters.refusals.fetch_add(1, std::memory_order_relaxed);
    if (opt.on_unhealthy) opt.on_unhealthy(health());
    return fail(Code::kClockMovedBack);
  }

  Status extend_fence(std::int64_t t) {
    MutexLock lock(fence_mu);
    if (t <= fence_ticks.load(std::memory_order_relaxed)) return Status::ok();
    const std::int64_t fence = std::min(t + window_ticks, max_ticks);
    Status s = opt.fence_store->store(opt.layout.time_of_ticks(fence));
    if (!s.is_ok()) {
      counters.fence_write_failures.fetch_add(1, std::memory_order_relaxed);
      return s;
    }
    counters.fence_writes.fetch_add(1, std::memory_order_relaxed);
    fence_ticks.store(fence, std::memory_order_release);
    return Status::ok();
  }

  Status health() const {
    MutexLock lock(health_mu);
    return health_status;
  }

  // `b`, after telling the observer about it when ids were issued.
  IdBatch told(IdBatch b) const noexcept {
    if (opt.observer != nullptr && b.code == Code::kOk) {
      opt.observer->issued(b.first, b.count, opt.worker);
    }
    return b;
  }

  // The guard did not permit an id: for good if the lease is lost, until a
  // renewal otherwise.
  IdBatch lease_refusal() noexcept {
    counters.lease_refusals.fetch_add(1, std::memory_order_relaxed);
    if (lease->lost()) return refuse(Code::kLeaseLost);
    return fail(Code::kLeaseUncertain, kLeaseRetry);
  }

  // True when the clock reading `now_ns` may be used against state `s`
  // although it is below gate_ns: it is past min_ns, and a tick at or after
  // wait_until is already taken (issued, or restored from the fence). Ticks
  // never go back, so every later id is past wait_until whatever the clock
  // says, and a clock behind such a tick is an ordinary backward step.
  bool gate_passed(std::int64_t now_ns, std::uint64_t s) const noexcept {
    return now_ns >= min_ns && static_cast<std::int64_t>((s & ~kStopped) >> seq_bits) >= wait_ticks;
  }

  // One attempt: reads the clock once and claims up to n ids with one
  // successful compare-and-swap. Never waits.
  IdBatch attempt(std::uint32_t n) noexcept {
    std::int64_t now_ns = clock.wall_now().time_since_epoch().count();
    std::uint64_t s = state.load(std::memory_order_acquire);
    if (now_ns < gate_ns && !gate_passed(now_ns, s)) return before_gate(now_ns, s);
    std::int64_t now = ticks_of_ns(now_ns);
    bool fresh = false;  // `now` was read after the state it is compared with
    // With a lease: the monotonic time the guard is asked about, read once,
    // after the wall clock and only when a tick is about to be claimed.
    std::int64_t mono_ns = 0;
    bool mono_read = false;
    for (;;) {
      if ((s & kStopped) != 0) return stopped();
      const auto last = static_cast<std::int64_t>(s >> seq_bits);
      const std::uint64_t seq = s & seq_mask;
      std::int64_t t;
      std::uint64_t first;
      if (now > last) {
        t = now;
        first = start_sequence();
      } else {
        // Borrowing legitimately puts the last tick up to borrow_ticks ahead
        // of the clock; only what lies beyond that is the clock's doing.
        const bool clock_behind = last - now > borrow_ticks;
        if (clock_behind) {
          counters.clock_behind.fetch_add(1, std::memory_order_relaxed);
          // Until this process issues past the restored fence, the allowance
          // is the one create() checked; afterwards, max_backward.
          const std::int64_t limit =
              (last > restart_floor ? backward_ticks : restart_backward_ticks) + borrow_ticks;
          if (last - now > limit) {
            // The reading may be stale rather than the clock wrong: this thread
            // can be preempted between its read and its compare-and-swap while
            // others issue at later ticks. Only a reading taken after loading
            // the state proves that the clock is behind a tick already issued.
            if (!fresh) {
              s = state.load(std::memory_order_acquire);
              now_ns = clock.wall_now().time_since_epoch().count();
              if (now_ns < gate_ns && !gate_passed(now_ns, s)) return before_gate(now_ns, s);
              now = ticks_of_ns(now_ns);
              fresh = true;
              continue;
            }
            return moved_back(now, last);
          }
        }
        if (seq < seq_mask) {
          t = last;
          first = seq + 1;
        } else if (last + 1 - now <= borrow_ticks) {
          t = last + 1;
          first = start_sequence();
          counters.borrowed_ticks.fetch_add(1, std::memory_order_relaxed);
        } else {
          // Wait until the clock reaches the tick from which the next one may
          // be started: last + 1, or borrow_ticks before it when borrowing.
          const Duration wait((last + 1 - borrow_ticks) * unit_ns + epoch_ns - now_ns);
          if (clock_behind) return fail(Code::kClockBehind, wait);
          counters.sequence_exhausted.fetch_add(1, std::memory_order_relaxed);
          return fail(Code::kSequenceExhausted, wait);
        }
      }
      if (t > max_ticks) return refuse(Code::kOutOfRange);
      if (lease != nullptr) {
        // Every id of the batch is in tick t, so one question covers them all.
        if (!mono_read) {
          // Coarse: a deadline passed by at most a kernel tick is harmless
          // (stop at 8 s + 4 ms on a 10 s lease), and the high-water cap,
          // which is what keeps ids unique, is checked exactly.
          mono_ns = clock.mono_coarse_now().time_since_epoch().count();
          mono_read = true;
        }
        if (!lease->permits(mono_ns, t * unit_ns + epoch_ns)) return lease_refusal();
      }
      if (t > fence_ticks.load(std::memory_order_acquire)) {
        if (!extend_fence(t).is_ok()) return fail(Code::kUnavailable, std::chrono::milliseconds(1));
        s = state.load(std::memory_order_acquire);
        continue;
      }
      const std::uint64_t room = seq_mask - first + 1;
      const std::uint64_t count = n < room ? n : room;
      const std::uint64_t next = (static_cast<std::uint64_t>(t) << seq_bits) | (first + count - 1);
      if (state.compare_exchange_weak(s, next, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        IdBatch b;
        b.first = (static_cast<std::uint64_t>(t) << time_shift) | worker_bits | first;
        b.count = static_cast<std::uint32_t>(count);
        return b;
      }
    }
  }

  // The clock reads below gate_ns and gate_passed() is false. Before the
  // epoch or not_before: before_start(). Otherwise only wait_until holds the
  // caller back: kClockBehind until the first tick at or after it.
  IdBatch before_gate(std::int64_t now_ns, std::uint64_t s) noexcept {
    if (now_ns < min_ns) return before_start(now_ns, s);
    if ((s & kStopped) != 0) return stopped();
    if (lease != nullptr && lease->lost()) return lease_refusal();
    if (wait_ticks > max_ticks) return refuse(Code::kOutOfRange);
    counters.clock_behind.fetch_add(1, std::memory_order_relaxed);
    return fail(Code::kClockBehind, Duration(gate_ns - now_ns));
  }

  // The clock reads before the epoch or `not_before`. If ids were issued, that
  // is a backward step like any other, refused for good beyond max_backward.
  // Within it, a clock at or past the epoch but before `not_before` (a step
  // back across an era's cut-over) is waited out: kClockBehind until the
  // clock is back at `not_before` (no id is issued before it, not even in the
  // last tick). Before the epoch, and when nothing was issued, the instant is
  // out of range (vectors/generator.json pins the epoch case for every
  // language).
  IdBatch before_start(std::int64_t now_ns, std::uint64_t s) noexcept {
    if ((s & kStopped) != 0) return stopped();
    const auto last = static_cast<std::int64_t>(s >> seq_bits);
    const std::int64_t now = opt.layout.ticks_at(WallTime(Duration(now_ns)));
    if (last > restart_floor) {
      if (last - now > backward_ticks + borrow_ticks) return moved_back(now, last);
      if (now_ns >= epoch_ns) {
        counters.clock_behind.fetch_add(1, std::memory_order_relaxed);
        return fail(Code::kClockBehind, Duration(min_ns - now_ns));
      }
    }
    return refuse(Code::kOutOfRange);
  }

  // Retries while the answer says waiting helps, pausing on the clock, for at
  // most max_wait of monotonic time. Gives up at once when the answer asks for
  // a longer wait than is left (a wait_until far ahead): a pause that long
  // would overrun max_wait. kLeaseUncertain is returned without waiting: only
  // the keeper's next renewal can change it, and callers should see it.
  IdBatch wait_for(std::uint32_t n) noexcept {
    IdBatch b = attempt(n);
    if (!waiting_helps(b.code)) return b;
    const MonoTime start = clock.mono_now();
    for (;;) {
      const Duration left = max_wait - (clock.mono_now() - start);
      if (left < Duration::zero() || b.retry_after > left) {
        counters.waits_gave_up.fetch_add(1, std::memory_order_relaxed);
        return b;
      }
      clock.pause(b.retry_after);
      b = attempt(n);
      if (!waiting_helps(b.code)) return b;
    }
  }
};

Result<std::unique_ptr<Generator>> Generator::create(const Clock& clock, GeneratorOptions options) {
  auto invalid = [](std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); };
  const Layout& layout = options.layout;
  if (!layout.can_generate()) {
    return invalid("layout " + layout.name() + " cannot be used to generate ids");
  }
  const WallTime now = clock.wall_now();
  Result<LayoutReport> report = check_layout(layout, now);
  if (!report.is_ok()) return report.status();
  if (Status s = layout.check_worker(options.worker); !s.is_ok()) return s;
  if (options.max_backward < Duration::zero() || options.max_backward > std::chrono::hours(1)) {
    return invalid("max_backward must be between 0 and 1 hour");
  }
  if (options.max_borrow < Duration::zero() || options.max_borrow > std::chrono::seconds(1)) {
    return invalid("max_borrow must be between 0 and 1 second");
  }
  if (options.random_start_bound > layout.sequence_capacity() / 4) {
    return invalid("random_start_bound " + std::to_string(options.random_start_bound) +
                   " is over a quarter of the sequence capacity (" +
                   std::to_string(layout.sequence_capacity()) + ")");
  }
  if (options.fence_window < std::chrono::milliseconds(10) ||
      options.fence_window > std::chrono::hours(1)) {
    return invalid("fence_window must be between 10 ms and 1 hour");
  }
  if (options.max_wait < Duration::zero()) return invalid("max_wait must not be negative");
  if (options.not_after &&
      *options.not_after <= std::max(layout.epoch(), options.not_before.value_or(layout.epoch()))) {
    return invalid("not_after " + format_iso8601(*options.not_after) +
                   " is not after the epoch and not_before");
  }

  auto impl = std::make_unique<Impl>(clock, std::move(options));
  Impl& g = *impl;
  const Layout& l = g.opt.layout;
  g.seq_bits = l.width_of(FieldRole::kSequence);
  g.seq_mask = l.sequence_capacity() - 1;
  g.time_shift = l.shift_of(FieldRole::kTime);
  g.worker_bits = (std::uint64_t{g.opt.worker.region} << l.shift_of(FieldRole::kRegion)) |
                  (std::uint64_t{g.opt.worker.host} << l.shift_of(FieldRole::kHost));
  g.epoch_ns = l.epoch_unix_ms() * kNsPerMs;
  g.unit_ns = l.unit_ms() * kNsPerMs;
  g.min_ns = std::max(g.epoch_ns,
                      g.opt.not_before ? g.opt.not_before->time_since_epoch().count() : g.epoch_ns);
  g.max_ticks = l.max_ticks();
  if (g.opt.not_after) {
    // The last tick starting before not_after (ids carry their tick's start).
    const std::int64_t until = g.opt.not_after->time_since_epoch().count() - g.epoch_ns;
    const std::int64_t ticks_before = until / g.unit_ns + (until % g.unit_ns != 0 ? 1 : 0);
    g.max_ticks = std::min(g.max_ticks, ticks_before - 1);
  }
  g.gate_ns = g.min_ns;
  if (g.opt.wait_until && g.opt.wait_until->time_since_epoch().count() > g.min_ns) {
    // Ids carry the start of their tick, so the first permitted tick is the
    // first one starting at or after wait_until. Past the layout's end of
    // life no tick is: the gate is then never reached (kOutOfRange).
    const std::int64_t since = g.opt.wait_until->time_since_epoch().count() - g.epoch_ns;
    g.wait_ticks = since / g.unit_ns + (since % g.unit_ns != 0 ? 1 : 0);
    g.gate_ns = g.wait_ticks > g.max_ticks ? INT64_MAX : g.epoch_ns + g.wait_ticks * g.unit_ns;
  }
  g.lease = g.opt.lease.get();
  g.backward_ticks = g.opt.max_backward.count() / g.unit_ns;
  g.borrow_ticks = g.opt.max_borrow.count() / g.unit_ns;
  g.window_ticks = ceil_div(g.opt.fence_window.count(), g.unit_ns);
  // A fence is stored window ahead of an issued tick, and an issued tick is at
  // most max_borrow ahead of the clock that issued it. A restarted clock
  // behind the fence by more than that plus max_backward went back for real.
  g.restart_backward_ticks = g.window_ticks + g.backward_ticks;
  g.max_wait = g.opt.max_wait > Duration::zero()
                   ? g.opt.max_wait
                   : g.opt.max_backward + std::chrono::milliseconds(50);

  std::int64_t initial = 0;
  if (g.opt.fence_store) {
    Result<std::optional<WallTime>> stored = g.opt.fence_store->load();
    if (!stored.is_ok()) return stored.status();
    g.fence_ticks.store(-1, std::memory_order_relaxed);
    if (stored.value().has_value()) {
      // The clock is judged against the fence as stored: a fence past this
      // generator's last tick (`not_after`, a later era's ids) is cut to it
      // only afterwards, so a clock behind such a fence is refused here as
      // any other, rather than starting a generator that can issue nothing.
      const std::int64_t stored_ticks = l.ticks_at(*stored.value());
      const std::int64_t fence = std::min(stored_ticks, g.max_ticks);
      const std::int64_t now_ticks = l.ticks_at(now);
      if (stored_ticks - now_ticks > g.restart_backward_ticks + g.borrow_ticks) {
        return Status(Code::kFailedPrecondition,
                      "the clock (" + format_iso8601(now) + ") is " +
                          std::to_string((stored_ticks - now_ticks) * l.unit_ms()) +
                          " ms behind the time fence stored before the last stop (" +
                          format_iso8601(*stored.value()) +
                          "), more than the fence window plus max_backward; ids up to the fence "
                          "may exist, so none will be issued until the clock is fixed");
      }
      if (fence >= 0) {
        initial = fence;
        g.fence_ticks.store(fence, std::memory_order_relaxed);
      }
    }
  }
  g.restart_floor = initial;
  if (g.opt.continue_after && *g.opt.continue_after > l.epoch()) {
    // Issued by this process already, exactly: the generator takes that tick
    // as its own last one, so a clock behind it gets max_backward, not the
    // fence window's allowance (restart_floor stays the fence's tick).
    initial = std::max(initial, std::min(l.ticks_at(*g.opt.continue_after), g.max_ticks));
  }
  // Start exhausted at the initial tick: nothing is issued in it or before it.
  g.state.store((static_cast<std::uint64_t>(initial) << g.seq_bits) | g.seq_mask,
                std::memory_order_release);
  return std::unique_ptr<Generator>(new Generator(std::move(impl)));
}

Generator::Generator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Generator::~Generator() = default;

IdResult Generator::next() noexcept {
  const IdBatch b = impl_->told(impl_->wait_for(1));
  return IdResult{b.first, b.code, b.retry_after};
}

IdResult Generator::try_next() noexcept {
  const IdBatch b = impl_->told(impl_->attempt(1));
  return IdResult{b.first, b.code, b.retry_after};
}

IdBatch Generator::reserve(std::uint32_t n) noexcept {
  if (n == 0) return Impl::fail(Code::kInvalidArgument);
  return impl_->told(impl_->wait_for(n));
}

IdBatch Generator::try_reserve(std::uint32_t n) noexcept {
  if (n == 0) return Impl::fail(Code::kInvalidArgument);
  return impl_->told(impl_->attempt(n));
}

Status Generator::close() {
  Impl& g = *impl_;
  const std::uint64_t prev = g.state.fetch_or(kStopped, std::memory_order_acq_rel);
  if (!g.opt.fence_store) return Status::ok();
  // Nothing can be issued any more, so the last tick is exact: record it
  // instead of the fence further ahead, so a restart waits no longer than needed.
  const auto last = static_cast<std::int64_t>((prev & ~kStopped) >> g.seq_bits);
  MutexLock lock(g.fence_mu);
  if (last >= g.fence_ticks.load(std::memory_order_relaxed)) return Status::ok();
  Status s = g.opt.fence_store->store(g.opt.layout.time_of_ticks(last));
  if (s.is_ok()) g.fence_ticks.store(last, std::memory_order_release);
  return s;
}

bool Generator::healthy() const noexcept {
  return !impl_->unhealthy.load(std::memory_order_acquire);
}

Status Generator::health() const { return impl_->health(); }

GeneratorStats Generator::stats() const noexcept {
  const auto& c = impl_->counters;
  auto get = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  return GeneratorStats{get(c.sequence_exhausted), get(c.clock_behind),
                        get(c.waits_gave_up),      get(c.borrowed_ticks),
                        get(c.fence_writes),       get(c.fence_write_failures),
                        get(c.refusals),           get(c.lease_refusals)};
}

const Layout& Generator::layout() const noexcept { return impl_->opt.layout; }
WorkerId Generator::worker() const noexcept { return impl_->opt.worker; }

std::int64_t Generator::last_ticks() const noexcept {
  const std::uint64_t s = impl_->state.load(std::memory_order_acquire) & ~kStopped;
  return static_cast<std::int64_t>(s >> impl_->seq_bits);
}

}  // namespace snowid
