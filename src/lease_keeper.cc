// The lease timeline (defaults): a renewal is sent every 3 s; a renewal that
// succeeds lets the guard permit issuing until its SEND time plus 8 s; the
// registry drops a lease 10 s after it last received a renewal. So with
// renewals failing, issuing stops at send + 8 s (state UNCERTAIN), and at
// send + 10 s the lease has expired (state LOST).
//
// The timeline advances on the clock alone, even while a renewal call is
// blocked (a registry that stopped answering): a thread of its own moves the
// state to UNCERTAIN at the guard's deadline and to LOST at send + TTL. Each
// renewal call is also bounded by the time left until then, so that it never
// outlives the lease it extends.
//
// Locks: renew_mu (renewals and the release, held across registry calls),
// then timeline_mu (the last good send, the timeline's verdicts and the
// guard's extensions, never held across a registry call), then callback_mu,
// then mu.
#include "snowid/lease_keeper.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "mutex.h"
#include "snowid/lease_rules.h"

namespace snowid {

using internal::CondVar;
using internal::Mutex;
using internal::MutexLock;
namespace {

// The threads re-read the injected clock at least this often, so they follow
// a clock that does not run with real time (a simulated clock, a suspend).
constexpr Duration kMaxSleep = std::chrono::milliseconds(100);
// How long one wait_lost() call of the watcher lasts before it asks again.
// Stopping does not wait it out (wake_waiters()), so it can be long: each
// call may cost the registry a new watch.
constexpr Duration kWatchSlice = std::chrono::seconds(30);
// How often stop_threads() repeats wake_waiters() until the watcher is out:
// a wake can land just before the watcher enters its next call.
constexpr Duration kWakeRepeat = std::chrono::milliseconds(5);
constexpr MonoTime kNever = MonoTime::max();

bool terminal(LeaseState s) { return s == LeaseState::kLost || s == LeaseState::kReleased; }

}  // namespace

struct LeaseKeeper::Impl {
  Impl(const Clock& c, WorkerRegistry& r, LeaseKeeperOptions o)
      : clock(c), registry(r), opt(std::move(o)), guard(std::make_shared<LeaseGuard>()) {}

  const Clock& clock;
  WorkerRegistry& registry;
  const LeaseKeeperOptions opt;
  const std::shared_ptr<LeaseGuard> guard;
  LeaseGrant grant;                    // fixed after acquire
  std::optional<WallTime> wait_until;  // fixed after acquire

  // Serialises renewals and the release; held across registry calls, so
  // nothing else (state(), stats(), the watcher, the timeline) ever takes it.
  Mutex renew_mu;
  MonoTime next_due GUARDED_BY(renew_mu){};
  // Whether the last renewal attempt failed.
  bool last_attempt_failed GUARDED_BY(renew_mu) = false;

  // Orders the timeline's verdicts (UNCERTAIN, LOST) with the renewals that
  // succeed: a renewal that returns after the lease was declared lost
  // extends nothing, and one that extends the guard is never followed by a
  // verdict computed from the deadline before it.
  Mutex timeline_mu;
  // Send time of the last renewal (or the acquire) that succeeded.
  MonoTime last_ok_send GUARDED_BY(timeline_mu){};
  // Of the renewals since then, if one failed.
  Status last_failure GUARDED_BY(timeline_mu);

  // Serialises state changes with their on_state calls, so that callbacks
  // from different threads arrive in the order of the changes.
  Mutex callback_mu;
  // Guards `state_value` transitions and stats. Never held across a registry
  // call or a callback.
  mutable Mutex mu;
  std::atomic<LeaseState> state_value{LeaseState::kHeld};
  LeaseStats stats GUARDED_BY(mu);

  // The threads.
  Mutex thread_mu;
  CondVar wake;  // with thread_mu: stop requested
  bool stop GUARDED_BY(thread_mu) = false;
  bool started GUARDED_BY(thread_mu) = false;
  bool watcher_running GUARDED_BY(thread_mu) = false;
  // Started by start() under thread_mu unless stop is set; joined by
  // stop_threads() after it set stop, so never both at once.
  std::thread renewer;
  std::thread watcher;
  std::thread timeline;

  // Set by the first abandon(): the registry is asked once per keeper.
  std::atomic<bool> abandoned{false};

  // Moves to `next` unless the state is terminal (LOST and RELEASED never
  // change) or already `next`, then tells on_state.
  void set_state(LeaseState next, const Status& why) {
    MutexLock order(callback_mu);
    {
      MutexLock lock(mu);
      const LeaseState cur = state_value.load(std::memory_order_acquire);
      if (cur == next || terminal(cur)) return;
      state_value.store(next, std::memory_order_release);
    }
    if (opt.on_state) opt.on_state(next, why);
  }

  // Lets the registry drop what it holds for a lease this keeper will not
  // use again (a file lock, a lease that has not expired yet). At most once.
  // The registry call is brief: callers may hold renew_mu, which only
  // renewals and the release take, and which they hold across registry calls
  // anyway, but none of the locks state(), stats() or stop_threads() take.
  void abandon() noexcept {
    if (!abandoned.exchange(true, std::memory_order_acq_rel)) registry.abandon(grant);
  }

  // The lease is gone: stop issuing, let the registry drop it, then tell.
  // Abandoning before on_state lets a LeasedGenerator that re-acquires on
  // hearing of the loss find the id already free.
  void lose(const Status& why) {
    guard->mark_lost();
    abandon();
    set_state(LeaseState::kLost, why);
  }

  // The state the clock alone implies, given no renewal succeeded since
  // last_ok_send: HELD before the guard's deadline, UNCERTAIN until the
  // lease has certainly expired, LOST after. Returns the next instant at which
  // that changes (kNever once lost or released). Any thread, without
  // timeline_mu; the renewal thread and the timeline thread call it.
  MonoTime apply_timeline(MonoTime now) {
    std::optional<Status> lost;
    MonoTime next = kNever;
    {
      MutexLock lock(timeline_mu);
      if (guard->lost() || terminal(state_value.load(std::memory_order_acquire))) return kNever;
      const MonoTime expiry = last_ok_send + opt.timing.ttl;
      const MonoTime deadline = guard->deadline();
      if (now >= expiry) {
        // Stop at once, under the lock, so that no renewal extends the guard
        // past this verdict; the rest follows outside it.
        guard->mark_lost();
        lost = Status(Code::kLeaseLost,
                      "lease on worker " + to_string(grant.worker) +
                          " expired: no renewal succeeded for " +
                          std::to_string(opt.timing.ttl.count() / 1'000'000) + " ms" +
                          (last_failure.is_ok() ? "" : " (" + last_failure.to_string() + ")"));
      } else if (now >= deadline) {
        set_state(LeaseState::kUncertain, last_failure.is_ok()
                                              ? Status(Code::kLeaseUncertain, "renewal overdue")
                                              : last_failure);
        next = expiry;
      } else {
        next = deadline;
      }
    }
    if (lost) lose(*lost);
    return next;
  }

  // How long the lease may still live at `now`, counted from the last
  // successful send: what a renewal call may take at most.
  Duration time_left(MonoTime now) {
    MutexLock lock(timeline_mu);
    return last_ok_send + opt.timing.ttl - now;
  }

  // Whether the wall clock has used up more of the mark than it does between
  // two renewals on schedule (stop_after - renew_every is left of it then): it
  // was stepped forward since the last renewal that succeeded, or runs fast.
  // Ids past the mark are refused until a renewal raises it, so the next one
  // is due at once rather than at its time on the monotonic clock (issue 12:
  // a 10 s step left a daemon refusing for 2.6 s). Not after a failed
  // attempt: retries keep to retry_every.
  bool mark_running_out() const REQUIRES(renew_mu) {
    if (last_attempt_failed) return false;
    return clock.wall_now() >
           guard->high_water() - (opt.timing.stop_after - opt.timing.renew_every);
  }

  MonoTime renew_if_due() {
    MutexLock lock(renew_mu);
    if (terminal(state_value.load(std::memory_order_acquire))) return kNever;
    const MonoTime now = clock.mono_now();
    // Also pointless to ask once the lease has certainly expired.
    const MonoTime change = apply_timeline(now);
    if (change == kNever) return kNever;
    if (now < next_due && !mark_running_out()) return std::min(next_due, change);

    const MonoTime send = clock.mono_now();
    const WallTime high_water = clock.wall_now() + opt.timing.stop_after;
    // Bounded by the time left: a reply after the lease could have expired
    // is worth nothing, and the timeline declares it lost then anyway.
    const Status s = registry.renew(grant, high_water, time_left(send));
    const MonoTime reply = clock.mono_now();
    last_attempt_failed = !s.is_ok();
    if (s.is_ok()) {
      {
        MutexLock stats_lock(mu);
        ++stats.renewals;
        stats.last_renewal_latency = reply - send;
        stats.max_renewal_latency = std::max(stats.max_renewal_latency, reply - send);
      }
      {
        MutexLock timeline_lock(timeline_mu);
        // Declared lost while the call was under way: it changes nothing.
        if (guard->lost()) return kNever;
        // The deadline counts from the send time: the registry may have
        // taken the renewal at any moment after it.
        guard->extend(send + opt.timing.stop_after, high_water);
        last_ok_send = std::max(last_ok_send, send);
        last_failure = Status::ok();
        if (reply < guard->deadline()) set_state(LeaseState::kHeld, Status::ok());
      }
      next_due = send + opt.timing.renew_every;
      const MonoTime after = apply_timeline(reply);
      return after == kNever ? kNever : std::min(next_due, after);
    }
    {
      MutexLock stats_lock(mu);
      ++stats.renewal_failures;
    }
    if (s.code() == Code::kLeaseLost) {
      lose(s);
      return kNever;
    }
    {
      MutexLock timeline_lock(timeline_mu);
      last_failure = s;
    }
    next_due = send + opt.retry_every;
    const MonoTime after = apply_timeline(reply);
    return after == kNever ? kNever : std::min(next_due, after);
  }

  // The timeline thread: applies the timeline at each change, so that the
  // state moves on while a renewal call is blocked.
  void timeline_loop() {
    run_until_stopped([this] { return apply_timeline(clock.mono_now()); });
  }

  void renew_loop() {
    run_until_stopped([this] { return renew_if_due(); });
  }

  // Calls `step` (without thread_mu) until stop is set or it returns kNever,
  // sleeping until the instant it returns, kMaxSleep at most at a time.
  template <typename Step>
  void run_until_stopped(Step step) {
    MutexLock lock(thread_mu);
    while (!stop) {
      lock.unlock();
      const MonoTime next = step();
      lock.lock();
      if (next == kNever) return;
      const Duration left = next - clock.mono_now();
      if (left > Duration::zero()) wake.wait_for(thread_mu, std::min(left, kMaxSleep));
    }
  }

  void watch_loop() {
    MutexLock lock(thread_mu);
    watch_rounds();
    watcher_running = false;
    wake.notify_all();
  }

  // Returns with thread_mu held, though it lets go of it while it waits.
  void watch_rounds() REQUIRES(thread_mu) {
    while (!stop && !terminal(state_value.load(std::memory_order_acquire))) {
      thread_mu.unlock();
      const Result<bool> lost = registry.wait_lost(grant, kWatchSlice);
      thread_mu.lock();
      if (stop) return;
      if (lost.is_ok() && lost.value()) {
        thread_mu.unlock();
        lose(Status(Code::kLeaseLost,
                    "lease on worker " + to_string(grant.worker) + " was revoked or expired"));
        thread_mu.lock();
        return;
      }
      // The registry cannot say: ask again a little later, not in a tight loop.
      if (!lost.is_ok()) wake.wait_for(thread_mu, std::min(opt.retry_every, kMaxSleep));
    }
  }

  void stop_threads() {
    {
      MutexLock lock(thread_mu);
      stop = true;
      wake.notify_all();
      while (watcher_running) {
        registry.wake_waiters();
        wake.wait_for(thread_mu, kWakeRepeat);
      }
    }
    if (renewer.joinable()) renewer.join();
    if (watcher.joinable()) watcher.join();
    if (timeline.joinable()) timeline.join();
  }
};

Result<std::unique_ptr<LeaseKeeper>> LeaseKeeper::acquire(const Clock& clock,
                                                          WorkerRegistry& registry,
                                                          LeaseKeeperOptions options) {
  if (Status s = validate(options.timing); !s.is_ok()) return s;
  if (options.retry_every <= Duration::zero() || options.retry_every > options.timing.renew_every) {
    return Status(Code::kInvalidArgument,
                  "retry_every must be more than 0 and at most renew_every");
  }
  auto impl = std::make_unique<Impl>(clock, registry, std::move(options));
  Impl& k = *impl;
  LeaseRequest request;
  request.region = k.opt.region;
  request.host = k.opt.host;
  request.holder = k.opt.holder;
  request.timing = k.opt.timing;
  const MonoTime send = clock.mono_now();
  request.high_water = clock.wall_now() + k.opt.timing.stop_after;
  Result<LeaseGrant> grant = registry.acquire(request);
  if (!grant.is_ok()) return grant.status();
  k.grant = std::move(grant).value();
  k.guard->extend(send + k.opt.timing.stop_after, request.high_water);
  // No thread of the keeper runs yet; the locks are for the analysis.
  {
    MutexLock lock(k.timeline_mu);
    k.last_ok_send = send;
  }
  {
    MutexLock lock(k.renew_mu);
    k.next_due = send + k.opt.timing.renew_every;
  }
  if (k.grant.previous_high_water) {
    k.wait_until = *k.grant.previous_high_water +
                   std::max<Duration>(k.opt.timing.max_clock_skew, std::chrono::milliseconds(1));
  }
  return std::unique_ptr<LeaseKeeper>(new LeaseKeeper(std::move(impl)));
}

LeaseKeeper::LeaseKeeper(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LeaseKeeper::~LeaseKeeper() {
  Impl& k = *impl_;
  k.stop_threads();
  // Like a crash for the mark, which stays; but local resources (a file
  // lock) must not outlive the keeper.
  k.guard->mark_lost();
  if (k.state_value.load(std::memory_order_acquire) != LeaseState::kReleased) k.abandon();
}

const LeaseGrant& LeaseKeeper::grant() const noexcept { return impl_->grant; }
WorkerId LeaseKeeper::worker() const noexcept { return impl_->grant.worker; }
std::shared_ptr<const LeaseGuard> LeaseKeeper::guard() const noexcept { return impl_->guard; }
std::optional<WallTime> LeaseKeeper::wait_until() const noexcept { return impl_->wait_until; }

MonoTime LeaseKeeper::renew_if_due() { return impl_->renew_if_due(); }

void LeaseKeeper::start() {
  Impl& k = *impl_;
  MutexLock lock(k.thread_mu);
  if (k.started || k.stop) return;
  k.started = true;
  k.watcher_running = true;
  k.renewer = std::thread([&k] { k.renew_loop(); });
  k.watcher = std::thread([&k] { k.watch_loop(); });
  k.timeline = std::thread([&k] { k.timeline_loop(); });
}

Status LeaseKeeper::release(std::optional<WallTime> last_issued) {
  Impl& k = *impl_;
  k.stop_threads();
  MutexLock lock(k.renew_mu);
  // Whatever happens below, this holder issues nothing more.
  const WallTime current_mark = k.guard->high_water();
  k.guard->mark_lost();
  const LeaseState st = k.state_value.load(std::memory_order_acquire);
  if (st == LeaseState::kReleased) return Status(Code::kFailedPrecondition, "already released");
  if (st == LeaseState::kLost) {
    k.abandon();  // done already by whoever declared it lost
    return Status(Code::kLeaseLost,
                  "lease on worker " + to_string(k.grant.worker) + " is lost: nothing to release");
  }
  // The exact last instant lets a successor start sooner than the renewed
  // mark would; never below the previous holders' mark.
  WallTime mark = current_mark;
  if (last_issued) {
    mark = k.grant.previous_high_water ? std::max(*k.grant.previous_high_water, *last_issued)
                                       : *last_issued;
  }
  const Status s = k.registry.release(k.grant, mark);
  if (s.is_ok()) {
    k.set_state(LeaseState::kReleased, Status::ok());
  } else {
    // Not given back: the lease will expire on its own, with the mark the
    // registry already has, unless abandoning revokes it sooner. This holder
    // has stopped for good either way.
    k.abandon();
    k.set_state(LeaseState::kLost, s);
  }
  return s;
}

LeaseState LeaseKeeper::state() const noexcept {
  return impl_->state_value.load(std::memory_order_acquire);
}

LeaseStats LeaseKeeper::stats() const noexcept {
  MutexLock lock(impl_->mu);
  return impl_->stats;
}

}  // namespace snowid
