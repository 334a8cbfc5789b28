// LeasedGenerator: a Generator per lease, replaced when the lease is lost.
//
// Callers reach the current lease through one atomic pointer to an immutable
// Incarnation (keeper + generator). A background thread swaps it after a
// loss. A caller may have loaded the old pointer just before the swap, so a
// retired Incarnation is never freed while the LeasedGenerator lives: it is
// kept in `incarnations` until destruction. That costs one small object per
// lost lease (a stopped keeper and a closed generator, a few hundred bytes),
// which is nothing at the rate leases are lost, and keeps the hot path free
// of reference counting. The retired keeper's threads are joined when it is
// retired, not at destruction: a finished thread that is not joined keeps its
// whole stack mapped (about 8 MB each, two per keeper).
//
// The clock going back is reported by one generator, which may no longer be
// the current one by the time the report is handled: the report names its
// incarnation, and a replacement is published only if no report has landed.
#include "snowid/leased_generator.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mutex.h"
#include "snowid/lease_rules.h"

namespace snowid {

using internal::CondVar;
using internal::Mutex;
using internal::MutexLock;
namespace {

// The background thread re-reads the injected clock at least this often, so
// it follows a clock that does not run with real time.
constexpr Duration kMaxSleep = std::chrono::milliseconds(100);
// After each failed re-acquisition the wait before the next one doubles, from
// reacquire_every up to this (or reacquire_every, if that is longer): a
// registry that keeps refusing is not asked in a tight loop.
constexpr Duration kMaxReacquireDelay = std::chrono::seconds(30);

// One lease and the generator issuing under it. Only `retired`, `stopped`
// and `close_status` change after the Incarnation is published.
struct Incarnation {
  std::unique_ptr<LeaseKeeper> keeper;
  std::unique_ptr<Generator> generator;
  // last_ticks() at creation. A generator starts exhausted at that tick, so
  // last_ticks() passes it only once an id has been issued.
  std::int64_t initial_ticks = 0;
  std::optional<WallTime> wait_until;
  // Lost (a replacement is being acquired) or given back: not to issue from.
  std::atomic<bool> retired{false};
  // Whether the generator was closed, and what close() answered. Only the
  // thread that retires incarnations touches them: the background thread,
  // then close() once that thread has stopped.
  bool stopped = false;
  Status close_status;
};

}  // namespace

struct LeasedGenerator::Impl {
  Impl(const Clock& c, WorkerRegistry& r, LeasedGeneratorOptions o)
      : clock(c), registry(r), opt(std::move(o)), reacquire_delay(opt.reacquire_every) {}

  // Stops the background thread, then the keepers' threads; releases nothing.
  ~Impl() {
    stop_thread();
    // Keepers' callbacks take `mu`, so it must not be held while they stop.
    std::vector<std::unique_ptr<Incarnation>> all;
    {
      MutexLock lock(mu);
      all.swap(incarnations);
    }
    all.clear();
  }

  const Clock& clock;
  WorkerRegistry& registry;
  const LeasedGeneratorOptions opt;

  std::atomic<Incarnation*> current{nullptr};
  // Set on the thread that saw the clock go back, once unhealthy_status is.
  std::atomic<bool> unhealthy{false};
  std::atomic<bool> closed{false};
  std::atomic<std::uint64_t> reacquisitions{0};
  // The wait after the next failed re-acquisition. Background thread only.
  Duration reacquire_delay;
  // The time of the last id any retired generator of this object issued:
  // each replacement starts past it (GeneratorOptions::continue_after), so
  // that ids keep increasing across lost leases. Written by the background
  // thread only, read by make_incarnation(), which runs on it (or in
  // create(), before it starts).
  std::optional<WallTime> issued_through;

  // Guards everything below. Never held while calling into a keeper (their
  // callbacks take it) or the registry.
  mutable Mutex mu;
  CondVar wake;
  // Every one ever published.
  std::vector<std::unique_ptr<Incarnation>> incarnations GUARDED_BY(mu);
  bool stop GUARDED_BY(mu) = false;
  bool lost_signal GUARDED_BY(mu) = false;        // a keeper reported LOST
  bool unhealthy_signal GUARDED_BY(mu) = false;   // a generator turned unhealthy
  bool unhealthy_handled GUARDED_BY(mu) = false;  // its lease released and the user told
  // The incarnation whose generator reported first; the status it reported.
  Incarnation* unhealthy_reporter GUARDED_BY(mu) = nullptr;
  Status unhealthy_status GUARDED_BY(mu);
  Status lost_status GUARDED_BY(mu);
  // Started by create() before any other thread can see this object, joined
  // by stop_thread().
  std::thread background;

  void event(LeaseEvent::Kind kind, std::optional<WorkerId> worker, const Status& status,
             bool given_back = false) const {
    if (opt.on_event) opt.on_event(LeaseEvent{kind, worker, status, given_back});
  }

  void on_keeper_state(LeaseState state, const Status& status) {
    if (state == LeaseState::kLost) {
      {
        MutexLock lock(mu);
        lost_signal = true;
        lost_status = status;
      }
      wake.notify_all();
    }
    if (opt.lease.on_state) opt.lease.on_state(state, status);
  }

  // On the thread that saw the clock go back, in `reporter`'s generator. The
  // release and the user's callback follow on the background thread.
  void on_generator_unhealthy(Incarnation* reporter, const Status& status) {
    {
      MutexLock lock(mu);
      if (!unhealthy_signal) {
        unhealthy_signal = true;
        unhealthy_reporter = reporter;
        unhealthy_status = status;
      }
    }
    unhealthy.store(true, std::memory_order_release);
    wake.notify_all();
  }

  // The mark to release an id with when nothing was issued under it: the
  // previous holders' mark, or the epoch (no id is older) for an id never
  // used. Not the mark just recorded for the holder, which would keep the id
  // out of reach stop_after longer than needed.
  WallTime nothing_issued(const LeaseKeeper& k) const {
    return k.grant().previous_high_water.value_or(opt.generator.layout.epoch());
  }

  // Acquires a lease and builds its generator; the keeper's threads run.
  Result<std::unique_ptr<Incarnation>> make_incarnation() {
    LeaseKeeperOptions ko = opt.lease;
    ko.on_state = [this](LeaseState s, const Status& st) { on_keeper_state(s, st); };
    Result<std::unique_ptr<LeaseKeeper>> keeper = LeaseKeeper::acquire(clock, registry, ko);
    if (!keeper.is_ok()) return keeper.status();
    auto inc = std::make_unique<Incarnation>();
    Incarnation* raw = inc.get();
    inc->keeper = std::move(keeper).value();
    LeaseKeeper& k = *inc->keeper;

    GeneratorOptions go = opt.generator;
    go.worker = k.worker();
    go.lease = k.guard();
    // Past the previous holders' mark plus the allowed skew; the generator
    // starts at the first tick that begins at or after it.
    go.wait_until = k.wait_until();
    // And past every id this object issued before, on any worker id (issue
    // 12: a replacement that started from a clock being waited out served
    // ids below those already served).
    go.continue_after = issued_through;
    if (opt.fence_store_for) go.fence_store = opt.fence_store_for(go.worker);
    // The report names this incarnation: by the time it is handled, another
    // one may be current.
    go.on_unhealthy = [this, raw](const Status& s) { on_generator_unhealthy(raw, s); };
    inc->wait_until = go.wait_until;
    Result<std::unique_ptr<Generator>> gen = Generator::create(clock, std::move(go));
    if (!gen.is_ok()) {
      // Nothing was issued (an unreadable fence, say). Released with the
      // renewal mark, every failed retry would quarantine one more id of the
      // block for stop_after longer.
      (void)k.release(nothing_issued(k));
      return gen.status();
    }
    inc->generator = std::move(gen).value();
    inc->initial_ticks = inc->generator->last_ticks();
    k.start();
    return inc;
  }

  // Makes `inc` the one callers issue from.
  void publish_locked(std::unique_ptr<Incarnation> inc) REQUIRES(mu) {
    Incarnation* raw = inc.get();
    incarnations.push_back(std::move(inc));
    current.store(raw, std::memory_order_release);
  }

  // Closes the generator of `inc` once; later calls return the first answer.
  Status stop_generator(Incarnation& inc) {
    if (!inc.stopped) {
      inc.stopped = true;
      inc.close_status = inc.generator->close();
    }
    return inc.close_status;
  }

  // The exact instant of the last id `inc` issued; nullopt if it issued none.
  // Only exact once its generator has stopped: call stop_generator() first.
  std::optional<WallTime> last_issued(const Incarnation& inc) const {
    const std::int64_t last = inc.generator->last_ticks();
    if (last <= inc.initial_ticks) return std::nullopt;
    return opt.generator.layout.time_of_ticks(last);
  }

  // Stops the generator of `inc`, then releases its lease with the exact last
  // instant issued. On a lease already lost or released this only stops the
  // keeper's threads, and answers kLeaseLost or kFailedPrecondition.
  Status give_back(Incarnation& inc) {
    inc.retired.store(true, std::memory_order_release);
    (void)stop_generator(inc);
    return inc.keeper->release(last_issued(inc));
  }

  // Gives back the lease of an incarnation that was never published, so
  // nothing was issued under it.
  void discard(std::unique_ptr<Incarnation> inc) {
    inc->retired.store(true, std::memory_order_release);
    (void)stop_generator(*inc);
    const Status s = inc->keeper->release(nothing_issued(*inc->keeper));
    event(LeaseEvent::Kind::kReleasedUnused, inc->keeper->worker(), s, s.is_ok());
  }

  // Waits on the injected clock until `until`; false if stopping or the
  // clock went back meanwhile.
  bool sleep_until(MonoTime until) REQUIRES(mu) {
    while (!stop && !unhealthy_signal) {
      const Duration left = until - clock.mono_now();
      if (left <= Duration::zero()) return true;
      wake.wait_for(mu, std::min(left, kMaxSleep));
    }
    return false;
  }

  // The lease of `inc` is lost: stop it and acquire a fresh id, retrying
  // with a growing delay until it works, the object is closed or a generator
  // reports the clock gone back (a host whose clock cannot be trusted takes
  // no new id). Releases mu meanwhile; returns with it held.
  void replace(Incarnation& inc) REQUIRES(mu) {
    const Status why = lost_status;
    mu.unlock();
    inc.retired.store(true, std::memory_order_release);
    event(LeaseEvent::Kind::kLost, inc.keeper->worker(), why);
    // Already refusing (its guard is lost); closing records its exact last
    // tick in its fence store. A lost lease cannot be released: this only
    // joins the keeper's finished threads.
    (void)stop_generator(inc);
    (void)inc.keeper->release(std::nullopt);
    // Exact now that it has stopped. One that issued nothing leaves the
    // floor it was given, which is still the latest.
    if (const std::optional<WallTime> last = last_issued(inc)) {
      issued_through = issued_through ? std::max(*issued_through, *last) : *last;
    }
    for (;;) {
      mu.lock();
      if (stop || unhealthy_signal) return;
      mu.unlock();
      const Status allowed = opt.may_acquire ? opt.may_acquire() : Status::ok();
      Result<std::unique_ptr<Incarnation>> next =
          allowed.is_ok() ? make_incarnation() : Result<std::unique_ptr<Incarnation>>(allowed);
      if (next.is_ok()) {
        std::unique_ptr<Incarnation> fresh = std::move(next).value();
        const WorkerId worker = fresh->keeper->worker();
        mu.lock();
        // Checked again under mu: a report that landed while acquiring must
        // not be followed by a new generator, and run() handles it next.
        if (stop || unhealthy_signal) {
          mu.unlock();
          discard(std::move(fresh));
          mu.lock();
          return;
        }
        publish_locked(std::move(fresh));
        reacquire_delay = opt.reacquire_every;
        mu.unlock();
        event(LeaseEvent::Kind::kAcquired, worker, Status::ok());
        // Counted after publishing: whoever sees the count also sees the new
        // generator through `current`, and the event.
        reacquisitions.fetch_add(1, std::memory_order_acq_rel);
        mu.lock();
        return;
      }
      // Counted from the failure, before telling of it. A hold is asked
      // again every reacquire_every: it is not a registry under strain.
      const MonoTime retry_at =
          clock.mono_now() + (allowed.is_ok() ? reacquire_delay : opt.reacquire_every);
      const Duration cap = std::max(kMaxReacquireDelay, opt.reacquire_every);
      if (allowed.is_ok()) reacquire_delay = reacquire_delay >= cap / 2 ? cap : reacquire_delay * 2;
      event(LeaseEvent::Kind::kAcquireFailed, std::nullopt, next.status());
      mu.lock();
      if (!sleep_until(retry_at)) return;
      mu.unlock();
    }
  }

  // The clock went back beyond max_backward in `reporter`'s generator: give
  // its id back (the generator has stopped, so its last tick is exact) and
  // stay unhealthy. If a replacement was published before the report landed,
  // it is given back too: a host whose clock cannot be trusted holds no id.
  // Runs on the background thread, or in close() once that has stopped.
  void retire_unhealthy(Incarnation& reporter, const Status& why) {
    auto tell = [&](Incarnation& inc, const Status& s) {
      event(LeaseEvent::Kind::kClockMovedBack, inc.keeper->worker(), s.is_ok() ? why : s,
            s.is_ok());
    };
    tell(reporter, give_back(reporter));
    Incarnation& cur = *current.load(std::memory_order_acquire);
    if (&cur != &reporter) tell(cur, give_back(cur));
    if (opt.generator.on_unhealthy) opt.generator.on_unhealthy(why);
  }

  void run() {
    MutexLock lock(mu);
    while (!stop) {
      if (unhealthy_signal && !unhealthy_handled) {
        unhealthy_handled = true;
        Incarnation* reporter = unhealthy_reporter;
        const Status why = unhealthy_status;
        lock.unlock();
        retire_unhealthy(*reporter, why);
        lock.lock();
        continue;
      }
      Incarnation* inc = current.load(std::memory_order_acquire);
      if (!unhealthy_signal && inc->keeper->state() == LeaseState::kLost) {
        replace(*inc);
        continue;
      }
      lost_signal = false;
      const auto until = std::chrono::steady_clock::now() + kMaxSleep;
      while (!stop && !lost_signal && !(unhealthy_signal && !unhealthy_handled)) {
        if (wake.wait_until(mu, until) == std::cv_status::timeout) break;
      }
    }
  }

  void stop_thread() {
    {
      MutexLock lock(mu);
      stop = true;
    }
    wake.notify_all();
    if (background.joinable()) background.join();
  }

  // A refusal from a generator whose lease is being replaced reads as
  // "uncertain" (retry soon) rather than "lost" or "closed"; one from a
  // generator given back because another saw the clock go back, as
  // "unhealthy".
  Code answer(const Incarnation& inc, Code code) const noexcept {
    if (code == Code::kFailedPrecondition && inc.retired.load(std::memory_order_acquire) &&
        unhealthy.load(std::memory_order_acquire) && !closed.load(std::memory_order_acquire)) {
      return Code::kUnhealthy;
    }
    return code;
  }

  bool replacing(const Incarnation& inc, Code code) const noexcept {
    if (closed.load(std::memory_order_acquire) || unhealthy.load(std::memory_order_acquire)) {
      return false;
    }
    return code == Code::kLeaseLost ||
           (code == Code::kFailedPrecondition && inc.retired.load(std::memory_order_acquire));
  }

  Duration retry_hint() const noexcept {
    return std::min<Duration>(opt.reacquire_every, std::chrono::milliseconds(10));
  }

  // Calls `issue` on the current generator; if that generator's lease was
  // lost and a newer one is published meanwhile, tries the newer one.
  template <typename Batch, typename Issue>
  Batch call(Issue issue) noexcept {
    Incarnation* inc = current.load(std::memory_order_acquire);
    for (int attempt = 0;; ++attempt) {
      Batch b = issue(*inc->generator);
      if (b.code == Code::kOk) return b;
      if (!replacing(*inc, b.code)) {
        b.code = answer(*inc, b.code);
        return b;
      }
      Incarnation* now = current.load(std::memory_order_acquire);
      if (now != inc && attempt < 2) {
        inc = now;
        continue;
      }
      b.code = Code::kLeaseUncertain;
      b.retry_after = retry_hint();
      return b;
    }
  }
};

Result<std::unique_ptr<LeasedGenerator>> LeasedGenerator::create(const Clock& clock,
                                                                 WorkerRegistry& registry,
                                                                 LeasedGeneratorOptions options) {
  if (options.reacquire_every <= Duration::zero()) {
    return Status(Code::kInvalidArgument, "reacquire_every must be more than 0");
  }
  auto impl = std::make_unique<Impl>(clock, registry, std::move(options));
  Result<std::unique_ptr<Incarnation>> first = impl->make_incarnation();
  if (!first.is_ok()) {
    impl->event(LeaseEvent::Kind::kAcquireFailed, std::nullopt, first.status());
    return first.status();
  }
  const WorkerId worker = first.value()->keeper->worker();
  {
    MutexLock lock(impl->mu);
    impl->publish_locked(std::move(first).value());
  }
  impl->event(LeaseEvent::Kind::kAcquired, worker, Status::ok());
  Impl* raw = impl.get();
  impl->background = std::thread([raw] { raw->run(); });
  return std::unique_ptr<LeasedGenerator>(new LeasedGenerator(std::move(impl)));
}

LeasedGenerator::LeasedGenerator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LeasedGenerator::~LeasedGenerator() = default;

IdResult LeasedGenerator::next() noexcept {
  return impl_->call<IdResult>([](Generator& g) { return g.next(); });
}

IdResult LeasedGenerator::try_next() noexcept {
  return impl_->call<IdResult>([](Generator& g) { return g.try_next(); });
}

IdBatch LeasedGenerator::reserve(std::uint32_t n) noexcept {
  return impl_->call<IdBatch>([n](Generator& g) { return g.reserve(n); });
}

IdBatch LeasedGenerator::try_reserve(std::uint32_t n) noexcept {
  return impl_->call<IdBatch>([n](Generator& g) { return g.try_reserve(n); });
}

Status LeasedGenerator::close() {
  Impl& m = *impl_;
  if (m.closed.exchange(true, std::memory_order_acq_rel)) {
    return Status(Code::kFailedPrecondition, "already closed");
  }
  m.stop_thread();
  {
    // Turned unhealthy just before the close, before the background thread
    // could handle it: handle it here.
    MutexLock lock(m.mu);
    if (m.unhealthy_signal && !m.unhealthy_handled) {
      m.unhealthy_handled = true;
      Incarnation* reporter = m.unhealthy_reporter;
      const Status why = m.unhealthy_status;
      lock.unlock();
      m.retire_unhealthy(*reporter, why);
    }
  }
  Incarnation& inc = *m.current.load(std::memory_order_acquire);
  const LeaseState state = inc.keeper->state();
  const Status closed = m.stop_generator(inc);
  // Also joins the keeper's threads. LOST: nothing to give back. RELEASED:
  // given back when the clock moved back.
  const Status released = inc.keeper->release(m.last_issued(inc));
  if (state != LeaseState::kHeld && state != LeaseState::kUncertain) return closed;
  m.event(LeaseEvent::Kind::kReleased, inc.keeper->worker(), released, released.is_ok());
  return closed.is_ok() ? released : closed;
}

bool LeasedGenerator::ready() const noexcept {
  const Impl& m = *impl_;
  if (m.closed.load(std::memory_order_acquire) || m.unhealthy.load(std::memory_order_acquire)) {
    return false;
  }
  const Incarnation& inc = *m.current.load(std::memory_order_acquire);
  if (inc.retired.load(std::memory_order_acquire) || !inc.generator->healthy() ||
      inc.keeper->state() != LeaseState::kHeld) {
    return false;
  }
  if (m.clock.mono_now() >= inc.keeper->guard()->deadline()) return false;
  return !inc.wait_until || m.clock.wall_now() >= *inc.wait_until;
}

Status LeasedGenerator::health() const {
  const Impl& m = *impl_;
  if (m.unhealthy.load(std::memory_order_acquire)) {
    // Whichever generator reported: the current one may have been given back
    // healthy because of it.
    MutexLock lock(m.mu);
    return m.unhealthy_status;
  }
  return m.current.load(std::memory_order_acquire)->generator->health();
}

WorkerId LeasedGenerator::worker() const noexcept {
  return impl_->current.load(std::memory_order_acquire)->keeper->worker();
}

const Layout& LeasedGenerator::layout() const noexcept { return impl_->opt.generator.layout; }

LeaseState LeasedGenerator::lease_state() const noexcept {
  return impl_->current.load(std::memory_order_acquire)->keeper->state();
}

GeneratorStats LeasedGenerator::stats() const noexcept {
  GeneratorStats sum;
  MutexLock lock(impl_->mu);
  for (const auto& inc : impl_->incarnations) {
    sum += inc->generator->stats();
  }
  return sum;
}

LeaseStats LeasedGenerator::lease_stats() const noexcept {
  LeaseStats sum;
  const Incarnation* cur = impl_->current.load(std::memory_order_acquire);
  MutexLock lock(impl_->mu);
  for (const auto& inc : impl_->incarnations) {
    const LeaseStats s = inc->keeper->stats();
    sum.renewals += s.renewals;
    sum.renewal_failures += s.renewal_failures;
    sum.max_renewal_latency = std::max(sum.max_renewal_latency, s.max_renewal_latency);
    if (inc.get() == cur) sum.last_renewal_latency = s.last_renewal_latency;
  }
  return sum;
}

std::uint64_t LeasedGenerator::reacquisitions() const noexcept {
  return impl_->reacquisitions.load(std::memory_order_acquire);
}

std::string to_string(const LeaseEvent& e) {
  const std::string worker = e.worker ? to_string(*e.worker) : "";
  switch (e.kind) {
    case LeaseEvent::Kind::kAcquired:
      return "acquired worker " + worker;
    case LeaseEvent::Kind::kAcquireFailed:
      return "acquire failed";
    case LeaseEvent::Kind::kLost:
      return "lease lost on worker " + worker;
    case LeaseEvent::Kind::kReleased:
      return (e.given_back ? "released worker " : "release failed for worker ") + worker;
    case LeaseEvent::Kind::kReleasedUnused:
      return (e.given_back ? "released unused worker " : "release failed for unused worker ") +
             worker;
    case LeaseEvent::Kind::kClockMovedBack:
      return (e.given_back ? "clock moved back: released worker "
                           : "clock moved back: did not release worker ") +
             worker;
  }
  return "lease event";
}

}  // namespace snowid
