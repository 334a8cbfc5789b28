// LeasedGenerator: a Generator per lease, replaced when the lease is lost.
//
// Callers reach the current lease through one atomic pointer to an immutable
// Incarnation (keeper + generator). A background thread swaps it after a
// loss. A caller may have loaded the old pointer just before the swap, so a
// retired Incarnation is never freed while the LeasedGenerator lives: it is
// kept in `incarnations` until destruction. That costs one small object per
// lost lease (a stopped keeper and a closed generator, a few hundred bytes),
// which is nothing at the rate leases are lost, and keeps the hot path free
// of reference counting.
#include "snowid/leased_generator.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace snowid {
namespace {

// The background thread re-reads the injected clock at least this often, so
// it follows a clock that does not run with real time.
constexpr Duration kMaxSleep = std::chrono::milliseconds(100);

std::string worker_text(WorkerId w) {
  return std::to_string(w.region) + "/" + std::to_string(w.host);
}

// One lease and the generator issuing under it. Only `retired` changes after
// the Incarnation is published.
struct Incarnation {
  std::unique_ptr<LeaseKeeper> keeper;
  std::unique_ptr<Generator> generator;
  // last_ticks() at creation. A generator starts exhausted at that tick, so
  // last_ticks() passes it only once an id has been issued.
  std::int64_t initial_ticks = 0;
  std::optional<WallTime> wait_until;
  // Lost; the background thread has closed the generator and is acquiring a
  // replacement.
  std::atomic<bool> retired{false};
};

}  // namespace

struct LeasedGenerator::Impl {
  Impl(const Clock& c, WorkerRegistry& r, LeasedGeneratorOptions o)
      : clock(c), registry(r), opt(std::move(o)) {}

  // Stops the background thread, then the keepers' threads; releases nothing.
  ~Impl() {
    stop_thread();
    // Keepers' callbacks take `mu`, so it must not be held while they stop.
    std::vector<std::unique_ptr<Incarnation>> all;
    {
      std::lock_guard<std::mutex> lock(mu);
      all.swap(incarnations);
    }
    all.clear();
  }

  const Clock& clock;
  WorkerRegistry& registry;
  const LeasedGeneratorOptions opt;

  std::atomic<Incarnation*> current{nullptr};
  std::atomic<bool> unhealthy{false};  // set on the thread that saw the clock go back
  std::atomic<bool> closed{false};
  std::atomic<std::uint64_t> reacquisitions{0};

  // Guards everything below. Never held while calling into a keeper (their
  // callbacks take it) or the registry.
  mutable std::mutex mu;
  std::condition_variable wake;
  std::vector<std::unique_ptr<Incarnation>> incarnations;  // every one ever published
  bool stop = false;
  bool lost_signal = false;        // a keeper reported LOST
  bool unhealthy_signal = false;   // the generator turned unhealthy
  bool unhealthy_handled = false;  // its lease released and the user told
  Status unhealthy_status;
  Status lost_status;
  std::thread background;

  void event(const std::string& what, const Status& status) const {
    if (opt.on_event) opt.on_event(what, status);
  }

  void on_keeper_state(LeaseState state, const Status& status) {
    if (state == LeaseState::kLost) {
      {
        std::lock_guard<std::mutex> lock(mu);
        lost_signal = true;
        lost_status = status;
      }
      wake.notify_all();
    }
    if (opt.lease.on_state) opt.lease.on_state(state, status);
  }

  // On the thread that saw the clock go back. The release and the user's
  // callback follow on the background thread.
  void on_generator_unhealthy(const Status& status) {
    unhealthy.store(true, std::memory_order_release);
    {
      std::lock_guard<std::mutex> lock(mu);
      unhealthy_signal = true;
      unhealthy_status = status;
    }
    wake.notify_all();
  }

  // Acquires a lease and builds its generator; the keeper's threads run.
  Result<std::unique_ptr<Incarnation>> make_incarnation() {
    LeaseKeeperOptions ko = opt.lease;
    ko.on_state = [this](LeaseState s, const Status& st) { on_keeper_state(s, st); };
    Result<std::unique_ptr<LeaseKeeper>> keeper = LeaseKeeper::acquire(clock, registry, ko);
    if (!keeper.is_ok()) return keeper.status();
    auto inc = std::make_unique<Incarnation>();
    inc->keeper = std::move(keeper).value();
    LeaseKeeper& k = *inc->keeper;

    GeneratorOptions go = opt.generator;
    go.worker = k.worker();
    go.lease = k.guard();
    // Past the previous holders' mark plus the allowed skew; the generator
    // starts at the first tick that begins at or after it.
    go.wait_until = k.wait_until();
    if (opt.fence_store_for) go.fence_store = opt.fence_store_for(go.worker);
    go.on_unhealthy = [this](const Status& s) { on_generator_unhealthy(s); };
    inc->wait_until = go.wait_until;
    Result<std::unique_ptr<Generator>> gen = Generator::create(clock, std::move(go));
    if (!gen.is_ok()) {
      // Nothing was issued; give the id back with the mark already recorded.
      (void)k.release(std::nullopt);
      return gen.status();
    }
    inc->generator = std::move(gen).value();
    inc->initial_ticks = inc->generator->last_ticks();
    k.start();
    return inc;
  }

  void publish(std::unique_ptr<Incarnation> inc) {
    Incarnation* raw = inc.get();
    {
      std::lock_guard<std::mutex> lock(mu);
      incarnations.push_back(std::move(inc));
    }
    current.store(raw, std::memory_order_release);
    event("acquired worker " + worker_text(raw->keeper->worker()), Status::ok());
  }

  // The exact instant of the last id `inc` issued; its generator must have
  // stopped. nullopt if it issued none.
  std::optional<WallTime> last_issued(const Incarnation& inc) const {
    const std::int64_t last = inc.generator->last_ticks();
    if (last <= inc.initial_ticks) return std::nullopt;
    return opt.generator.layout.time_of_ticks(last);
  }

  // Waits on the injected clock until `until`; false if stopping.
  bool sleep_until(std::unique_lock<std::mutex>& lock, MonoTime until) {
    while (!stop) {
      const Duration left = until - clock.mono_now();
      if (left <= Duration::zero()) return true;
      wake.wait_for(lock, std::min(left, kMaxSleep));
    }
    return false;
  }

  // The lease of `inc` is lost: stop it and acquire a fresh id, retrying
  // every reacquire_every until it works or the object is closed.
  void replace(Incarnation& inc, std::unique_lock<std::mutex>& lock) {
    const Status why = lost_status;
    lock.unlock();
    inc.retired.store(true, std::memory_order_release);
    // Already refusing (its guard is lost); closing records its exact last
    // tick in its fence store. A lost lease cannot be released.
    (void)inc.generator->close();
    event("lease lost on worker " + worker_text(inc.keeper->worker()), why);
    for (;;) {
      Result<std::unique_ptr<Incarnation>> next = make_incarnation();
      if (next.is_ok()) {
        publish(std::move(next).value());
        // Counted after publishing: whoever sees the count also sees the new
        // generator through `current`.
        reacquisitions.fetch_add(1, std::memory_order_acq_rel);
        lock.lock();
        return;
      }
      event("acquire failed", next.status());
      const MonoTime retry_at = clock.mono_now() + opt.reacquire_every;
      lock.lock();
      if (!sleep_until(lock, retry_at)) return;
      lock.unlock();
    }
  }

  // The clock went back beyond max_backward: give the id back (the generator
  // has stopped, so its last tick is exact) and stay unhealthy.
  void retire_unhealthy(Incarnation& inc, const Status& why) {
    Status s = Status::ok();
    const LeaseState state = inc.keeper->state();
    if (state == LeaseState::kHeld || state == LeaseState::kUncertain) {
      s = inc.keeper->release(last_issued(inc));
    }
    event("clock moved back: released worker " + worker_text(inc.keeper->worker()),
          s.is_ok() ? why : s);
    if (opt.generator.on_unhealthy) opt.generator.on_unhealthy(why);
  }

  void run() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stop) {
      Incarnation* inc = current.load(std::memory_order_acquire);
      if (unhealthy_signal && !unhealthy_handled) {
        unhealthy_handled = true;
        const Status why = unhealthy_status;
        lock.unlock();
        retire_unhealthy(*inc, why);
        lock.lock();
        continue;
      }
      if (!unhealthy_handled && !unhealthy.load(std::memory_order_acquire) &&
          inc->keeper->state() == LeaseState::kLost) {
        replace(*inc, lock);
        continue;
      }
      lost_signal = false;
      wake.wait_for(lock, kMaxSleep, [this] {
        return stop || lost_signal || (unhealthy_signal && !unhealthy_handled);
      });
    }
  }

  void stop_thread() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    wake.notify_all();
    if (background.joinable()) background.join();
  }

  // A refusal from a generator whose lease is being replaced reads as
  // "uncertain" (retry soon) rather than "lost" or "closed".
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
      if (b.code == Code::kOk || !replacing(*inc, b.code)) return b;
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
    impl->event("acquire failed", first.status());
    return first.status();
  }
  impl->publish(std::move(first).value());
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
  Incarnation& inc = *m.current.load(std::memory_order_acquire);
  {
    // Turned unhealthy just before the close, before the background thread
    // could handle it: handle it here.
    std::unique_lock<std::mutex> lock(m.mu);
    if (m.unhealthy_signal && !m.unhealthy_handled) {
      m.unhealthy_handled = true;
      const Status why = m.unhealthy_status;
      lock.unlock();
      m.retire_unhealthy(inc, why);
    }
  }
  const Status closed = inc.generator->close();
  Status released = Status::ok();
  const LeaseState state = inc.keeper->state();
  // LOST: nothing to give back. RELEASED: given back when the clock moved back.
  if (state == LeaseState::kHeld || state == LeaseState::kUncertain) {
    released = inc.keeper->release(m.last_issued(inc));
    m.event((released.is_ok() ? "released worker " : "release failed for worker ") +
                worker_text(inc.keeper->worker()),
            released);
  }
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
  return impl_->current.load(std::memory_order_acquire)->generator->health();
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
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (const auto& inc : impl_->incarnations) {
    const GeneratorStats s = inc->generator->stats();
    sum.sequence_exhausted += s.sequence_exhausted;
    sum.clock_behind += s.clock_behind;
    sum.waits_gave_up += s.waits_gave_up;
    sum.borrowed_ticks += s.borrowed_ticks;
    sum.fence_writes += s.fence_writes;
    sum.fence_write_failures += s.fence_write_failures;
    sum.refusals += s.refusals;
    sum.lease_refusals += s.lease_refusals;
  }
  return sum;
}

LeaseStats LeasedGenerator::lease_stats() const noexcept {
  LeaseStats sum;
  const Incarnation* cur = impl_->current.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(impl_->mu);
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

}  // namespace snowid
