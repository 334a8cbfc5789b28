// The etcd worker-id registry: the WorkerRegistry contract (lease.h) kept
// with etcd transactions, through the JSON gateway.
//
// Each worker id has two keys (worker_keys.h): `holder`, attached to the
// holder's lease so that etcd deletes it when the lease is revoked or
// expires, and `mark`, without a lease, which outlives every holder. Every
// write to the mark is conditional on the holder key being the one the writer
// created (or absent, for acquire and fence), so a holder that lost its lease
// can never move the mark after a successor has read it.
//
// Wall time (release times, quarantine) comes only from the injected Clock.
// Network deadlines (wait_lost's timeout, the per-request timeout) are real
// elapsed time on the steady clock: they bound waits on sockets.
#include "snowid/etcd_registry.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "etcd_kv.h"
#include "etcd_registry_internal.h"
#include "gateway_client.h"
#include "gateway_json.h"
#include "mutex.h"
#include "snowid/lease_rules.h"
#include "store_history.h"
#include "worker_keys.h"
#include "worker_values.h"

namespace snowid {

using internal::CondVar;
using internal::Mutex;
using internal::MutexLock;
namespace etcd {
namespace {

// Rounds of read-then-transact before acquire gives up on a contended block.
// Each lost round means another acquirer won an id, so this also bounds how
// many ids can be taken under an acquirer's feet: more than a small block.
constexpr int kAcquireRounds = 64;
// abandon() waits at most this long (or request_timeout, if shorter) in all,
// over every member it tries: it runs on a holder's way out (and before a
// keeper reports the lease lost) and must not hold it up.
constexpr auto kAbandonTimeout = std::chrono::milliseconds(500);
// wait_lost() pauses this long after a whole round of members failed to keep
// a watch, so that a cluster that is down is not hammered.
constexpr auto kBrokenRoundPause = std::chrono::milliseconds(100);
// wait_lost() ends each watch after this long without a loss and reads the
// holder key itself (the gateway's watch has no idle timer, so the bound is
// on the whole stream, events or none). A member can accept a watch while it
// still believes in a leader it has lost (just resumed from a pause, say) and
// then never deliver the events the new leader commits; the read goes
// through every member and bounds how long such a stream can hide a fence.
constexpr auto kQuietWatchRecheck = std::chrono::seconds(5);

std::string at_ms(WallTime t) { return format_iso8601(t); }

Status unavailable(std::string message) { return Status(Code::kUnavailable, std::move(message)); }

// The larger of two optional instants.
// One worker id's keys as read from etcd.
struct Slot {
  std::optional<KeyValue> holder;
  std::optional<KeyValue> mark;
};

class EtcdRegistry final : public WorkerRegistry {
 public:
  EtcdRegistry(const Clock& clock, EtcdOptions options, GatewayOptions gateway, FaultHook hook)
      : clock_(clock),
        options_(std::move(options)),
        keys_(options_.prefix, options_.cluster),
        client_(std::move(gateway), std::move(hook)),
        kv_(client_, [this](const Header& header) { observe(header); }),
        rng_(std::random_device{}()) {}

  ~EtcdRegistry() override {
    closing_.store(true);
    wake_waiters();
  }

  Status connect() { return client_.connect(); }

  // Exceptions (only std::bad_alloc and the like can be thrown here) end
  // at this boundary as kUnavailable.
  Result<LeaseGrant> acquire(const LeaseRequest& request) override {
    return guarded<Result<LeaseGrant>>([&] { return acquire_impl(request); });
  }
  using WorkerRegistry::renew;
  // Each request of the renewal is bounded by min(request_timeout, what is
  // left of `time_left`).
  Status renew(const LeaseGrant& grant, WallTime high_water, Duration time_left) override {
    return guarded<Status>([&] { return renew_impl(grant, high_water, time_left); });
  }
  Status release(const LeaseGrant& grant, WallTime high_water) override {
    return guarded<Status>([&] { return release_impl(grant, high_water); });
  }
  // Revokes the lease and nothing else: etcd deletes the holder key with
  // it, and the mark stays as last written. At most one pass over the
  // members, within a short time in all; every failure is swallowed (the
  // lease then expires after its TTL, as it would have anyway).
  void abandon(const LeaseGrant& grant) noexcept override {
    try {
      const Result<GrantToken> token = decode_token(grant.token);
      if (!token.is_ok()) return;
      GatewayClient::CallOptions brief;
      const Duration limit = std::min<Duration>(options_.request_timeout, kAbandonTimeout);
      brief.timeout = limit;
      brief.deadline = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(limit);
      (void)client_.call("/v3/lease/revoke", lease_id_body(token->lease), brief);
    } catch (...) {
      // Best effort: nothing to report and nowhere to report it.
    }
  }
  Result<bool> wait_lost(const LeaseGrant& grant, Duration timeout) override {
    return guarded<Result<bool>>([&] { return wait_lost_impl(grant, timeout); });
  }
  void wake_waiters() noexcept override {
    {
      MutexLock lock(waiters_mu_);
      for (std::atomic<bool>* w : waiters_) w->store(true);
    }
    waiters_cv_.notify_all();
  }
  Result<std::vector<WorkerRecord>> list(std::optional<std::uint32_t> region) override {
    return guarded<Result<std::vector<WorkerRecord>>>([&] { return list_impl(region); });
  }
  Status fence(WorkerId worker) override {
    return guarded<Status>([&] { return fence_impl(worker); });
  }

  // See initialize_etcd_namespace and declare_etcd_data_lost.
  Status initialize_store() {
    return guarded<Status>([&] { return initialize_store_impl(); });
  }
  Result<StoreValue> declare_lost(Duration in_flight, const std::string& reason) {
    return guarded<Result<StoreValue>>([&]() -> Result<StoreValue> {
      history_.set_pending(reason);
      return check_store(in_flight);
    });
  }

 private:
  template <typename R, typename F>
  static R guarded(F&& f) {
    return etcd::guarded<R>("etcd registry", std::forward<F>(f));
  }

  Result<LeaseGrant> acquire_impl(const LeaseRequest& request);
  Status renew_impl(const LeaseGrant& grant, WallTime high_water, Duration time_left);
  Status release_impl(const LeaseGrant& grant, WallTime high_water);
  Result<bool> wait_lost_impl(const LeaseGrant& grant, Duration timeout);
  Result<std::vector<WorkerRecord>> list_impl(std::optional<std::uint32_t> region);
  Status fence_impl(WorkerId worker);
  Status initialize_store_impl();

  // update_mark (etcd_kv.h) on this registry's keys.
  Status update_mark(const MarkUpdate& update, std::optional<KeyValue> mark) {
    return etcd::update_mark(kv_, keys_, update, std::move(mark));
  }

  // Reads the namespace's store record and returns it, first writing it
  // anew when the store is found new, lost or rolled back: then every id
  // counts as marked at the clock's now plus `in_flight` (stop_after: every
  // holder under the old store renewed before the loss, so none issues
  // later, within the allowed skew), or at the record's own, if later.
  Result<StoreValue> check_store(Duration in_flight);
  // How long a holder of a lost store may go on issuing, as far as this
  // process can know: the longest stop_after of the leases acquired here,
  // and at least the default's (other processes' timings are not known).
  Duration in_flight() const {
    return std::max<Duration>(std::chrono::nanoseconds(max_stop_after_ns_.load()),
                              LeaseTiming{}.stop_after);
  }
  std::string new_incarnation();

  struct Choice {
    std::uint32_t host = 0;
    Slot slot;
  };

  // Through kv_, which hands every header to observe().
  Result<RangeReply> range(const std::string& key, const std::string& end = {},
                           const GatewayClient::CallOptions& call = {}) {
    return kv_.range(key, end, call);
  }
  Result<std::optional<KeyValue>> get(const std::string& key,
                                      const GatewayClient::CallOptions& call = {}) {
    return kv_.get(key, call);
  }
  Result<TxnReply> txn(const std::vector<Compare>& compares, const std::vector<Op>& success,
                       const std::vector<Op>& failure,
                       const GatewayClient::CallOptions& call = {}) {
    return kv_.txn(compares, success, failure, call);
  }

  // Every range and transaction is linearizable, so none may show an
  // earlier store than one already seen: if it does, etcd lost writes.
  void observe(const Header& header) {
    if (std::optional<std::string> why = history_.observe(header)) {
      history_.set_pending(std::move(*why));
    }
  }

  // OK also when the lease is already gone.
  Status revoke(std::int64_t lease) { return kv_.revoke(lease); }

  Status check_worker(WorkerId w) const {
    if (w.region >= options_.layout.regions()) {
      return Status(Code::kInvalidArgument,
                    "region " + std::to_string(w.region) + " is outside the layout's " +
                        std::to_string(options_.layout.regions()) + " regions");
    }
    if (w.host >= options_.layout.workers_per_region()) {
      return Status(Code::kInvalidArgument,
                    "host " + std::to_string(w.host) + " is outside the layout's " +
                        std::to_string(options_.layout.workers_per_region()) + " hosts per region");
    }
    return Status::ok();
  }

  Result<LeaseGrant> try_acquire(const LeaseRequest& request, std::int64_t lease);
  Result<Choice> choose(const LeaseRequest& request, const RangeReply& region,
                        std::optional<std::uint32_t> prefer);

  const Clock& clock_;
  const EtcdOptions options_;
  const WorkerKeys keys_;
  GatewayClient client_;
  EtcdKv kv_;
  Mutex rng_mu_;
  std::mt19937_64 rng_ GUARDED_BY(rng_mu_);
  StoreHistory history_;
  std::atomic<std::int64_t> max_stop_after_ns_{0};
  std::atomic<bool> closing_{false};
  // The cancel flags of the wait_lost() calls in progress, and what their
  // pauses between broken streams wait on.
  Mutex waiters_mu_;
  std::set<std::atomic<bool>*> waiters_ GUARDED_BY(waiters_mu_);
  CondVar waiters_cv_;

  // Registers a wait_lost() call's cancel flag for as long as it lives.
  class Waiter {
   public:
    explicit Waiter(EtcdRegistry& r) : r_(r) {
      MutexLock lock(r_.waiters_mu_);
      r_.waiters_.insert(&woken);
      if (r_.closing_.load()) woken.store(true);
    }
    ~Waiter() {
      MutexLock lock(r_.waiters_mu_);
      r_.waiters_.erase(&woken);
    }
    Waiter(const Waiter&) = delete;
    Waiter& operator=(const Waiter&) = delete;
    // Sleeps for `d`, or until woken if that comes first.
    void pause(Duration d) {
      MutexLock lock(r_.waiters_mu_);
      const auto until = std::chrono::steady_clock::now() + d;
      while (!woken.load()) {
        if (r_.waiters_cv_.wait_until(r_.waiters_mu_, until) == std::cv_status::timeout) break;
      }
    }
    std::atomic<bool> woken{false};

   private:
    EtcdRegistry& r_;
  };
};

Result<LeaseGrant> EtcdRegistry::acquire_impl(const LeaseRequest& request) {
  if (const Status s = check_worker({request.region, request.host.value_or(0)}); !s.is_ok()) {
    return s;
  }
  if (const Status s = validate(request.timing); !s.is_ok()) return s;
  const auto ttl = std::chrono::duration_cast<std::chrono::seconds>(request.timing.ttl).count();
  Result<std::string> granted = client_.call("/v3/lease/grant", lease_grant_body(ttl));
  if (!granted.is_ok()) return granted.status();
  Result<LeaseGrantReply> lease = parse_lease_grant(granted.value());
  if (!lease.is_ok()) return lease.status();
  if (lease->ttl < ttl) {
    // The holder stops issuing stop_after past a renewal on the promise that
    // the lease lasts ttl; a shorter one could expire while it still issues.
    (void)revoke(lease->id);
    return Status(Code::kFailedPrecondition, "etcd granted a " + std::to_string(lease->ttl) +
                                                 " s lease instead of " + std::to_string(ttl) +
                                                 " s");
  }

  Result<LeaseGrant> grant = try_acquire(request, lease->id);
  if (!grant.is_ok()) {
    // Revoking also deletes a holder key that a transaction with an unknown
    // outcome may have written: nothing of this attempt stays behind. If the
    // revoke fails too, the lease expires after its TTL.
    (void)revoke(lease->id);
  }
  return grant;
}

Result<EtcdRegistry::Choice> EtcdRegistry::choose(const LeaseRequest& request,
                                                  const RangeReply& region,
                                                  std::optional<std::uint32_t> prefer) {
  std::map<std::uint32_t, Slot> slots;
  for (const KeyValue& kv : region.kvs) {
    const std::optional<WorkerKeys::Parsed> p = keys_.parse(kv.key);
    if (!p || p->worker.region != request.region) continue;
    Slot& slot = slots[p->worker.host];
    (p->is_holder ? slot.holder : slot.mark) = kv;
  }
  const std::uint64_t block = options_.layout.workers_per_region();
  const WallTime now = clock_.wall_now();
  std::uint64_t held = 0;
  std::uint64_t quarantined = 0;
  std::uint64_t unreadable = 0;
  std::optional<WallTime> next_free;
  // Why a slot cannot be taken now, or nullopt if it can.
  auto refusal = [&](const Slot& slot) -> std::optional<std::string> {
    if (slot.holder) {
      ++held;
      Result<HolderValue> h = decode_holder(slot.holder->value);
      return "held by " + (h.is_ok() ? h->info.host + " (pid " + std::to_string(h->info.pid) + ")"
                                     : std::string("an unreadable holder"));
    }
    Result<MarkValue> mark = mark_of(slot.mark);
    if (!mark.is_ok()) {
      ++unreadable;
      return "its mark is unreadable: " + mark.status().message();
    }
    const std::optional<WallTime> from = free_from(mark.value(), options_.quarantine);
    if (from && now < *from) {
      ++quarantined;
      next_free = next_free ? std::min(*next_free, *from) : *from;
      return "quarantined until " + at_ms(*from);
    }
    return std::nullopt;
  };

  if (request.host) {
    const std::uint32_t host = *request.host;
    const Slot slot = slots.count(host) ? slots[host] : Slot{};
    if (std::optional<std::string> why = refusal(slot)) {
      return Status(Code::kResourceExhausted,
                    "worker " + to_string({request.region, host}) + " is " + *why);
    }
    return Choice{host, slot};
  }

  std::vector<std::uint32_t> free;
  for (std::uint64_t h = 0; h < block; ++h) {
    const auto host = static_cast<std::uint32_t>(h);
    const auto it = slots.find(host);
    if (!refusal(it == slots.end() ? Slot{} : it->second)) free.push_back(host);
  }
  if (free.empty()) {
    std::string message = "no free worker id in region " + std::to_string(request.region) +
                          ": all " + std::to_string(block) + " are taken (" + std::to_string(held) +
                          " held, " + std::to_string(quarantined) + " quarantined";
    if (unreadable > 0) message += ", " + std::to_string(unreadable) + " with unreadable marks";
    message += ")";
    if (next_free) message += "; the next leaves quarantine at " + at_ms(*next_free);
    return Status(Code::kResourceExhausted, message);
  }
  std::uint32_t host = 0;
  if (prefer && std::find(free.begin(), free.end(), *prefer) != free.end()) {
    host = *prefer;
  } else {
    MutexLock lock(rng_mu_);
    host = free[std::uniform_int_distribution<std::size_t>(0, free.size() - 1)(rng_)];
  }
  const auto it = slots.find(host);
  return Choice{host, it == slots.end() ? Slot{} : it->second};
}

Result<LeaseGrant> EtcdRegistry::try_acquire(const LeaseRequest& request, std::int64_t lease) {
  const std::string region_key = keys_.region(request.region);
  const std::string holder_value = encode_holder(request.holder, lease);
  // After a transaction whose outcome is unknown: its id, tried first again,
  // and the mark it saw (the previous holders' high-water mark).
  std::optional<std::uint32_t> pending_host;
  std::optional<WallTime> pending_previous;
  // A store found new, lost or rolled back marks every id at once.
  const std::int64_t stop_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(request.timing.stop_after).count();
  for (std::int64_t seen = max_stop_after_ns_.load();
       seen < stop_ns && !max_stop_after_ns_.compare_exchange_weak(seen, stop_ns);) {
  }
  Result<StoreValue> store = check_store(in_flight());
  if (!store.is_ok()) return store.status();
  const std::optional<WallTime> store_high_water = store->high_water;

  auto granted = [&](WorkerId worker, std::int64_t create_revision,
                     std::optional<WallTime> previous) {
    LeaseGrant g;
    g.worker = worker;
    g.token = encode_token(GrantToken{lease, create_revision, worker});
    g.previous_high_water = grant_previous_high_water(previous, store_high_water);
    return g;
  };

  for (int round = 0; round < kAcquireRounds; ++round) {
    Result<RangeReply> region = range(region_key, prefix_end(region_key));
    if (!region.is_ok()) return region.status();
    // A holder key on our lease: a transaction whose reply was lost did
    // succeed. Its mark now includes our own request, so the previous mark
    // is the one that transaction saw when it is known, else (conservative)
    // the current one.
    for (const KeyValue& kv : region->kvs) {
      const std::optional<WorkerKeys::Parsed> p = keys_.parse(kv.key);
      if (!p || !p->is_holder || kv.lease != lease) continue;
      std::optional<WallTime> previous = pending_previous;
      if (!pending_host || *pending_host != p->worker.host) {
        Result<std::optional<KeyValue>> mark = get(keys_.mark(p->worker));
        if (!mark.is_ok()) return mark.status();
        Result<MarkValue> m = mark_of(mark.value());
        if (!m.is_ok()) return m.status();
        previous = m->high_water;
      }
      return granted(p->worker, kv.create_revision, previous);
    }

    Result<Choice> choice = choose(request, region.value(), pending_host);
    if (!choice.is_ok()) return choice.status();
    const WorkerId worker{request.region, choice->host};
    const Result<MarkValue> old_mark = mark_of(choice->slot.mark);
    if (!old_mark.is_ok()) return old_mark.status();
    MarkValue new_mark = old_mark.value();
    new_mark.high_water = later(old_mark->high_water, request.high_water);

    const std::string holder_key = keys_.holder(worker);
    const std::string mark_key = keys_.mark(worker);
    const std::int64_t seen_mark = choice->slot.mark ? choice->slot.mark->mod_revision : 0;
    Result<TxnReply> reply = txn(
        {{Compare::Target::kCreate, holder_key, 0}, {Compare::Target::kMod, mark_key, seen_mark}},
        {Op::put(holder_key, holder_value, lease), Op::put(mark_key, encode_mark(new_mark))},
        {Op::range(holder_key)});
    if (!reply.is_ok()) {
      if (reply.status().code() == Code::kNotFound) {
        return unavailable("the lease expired while acquiring: " + reply.status().message());
      }
      if (reply.status().code() != Code::kUnavailable) return reply.status();
      // Unknown outcome: ask who holds the id before trying again.
      Result<std::optional<KeyValue>> holder = get(holder_key);
      if (!holder.is_ok()) {
        return unavailable(
            "acquiring " + to_string(worker) +
            ": the outcome is unknown and could not be checked: " + reply.status().message());
      }
      if (holder.value() && holder.value()->lease == lease) {
        return granted(worker, holder.value()->create_revision, old_mark->high_water);
      }
      // Not applied (yet): try the same id again, so that a late arrival of
      // the first transaction cannot leave a second id on our lease.
      pending_host = choice->host;
      pending_previous = old_mark->high_water;
      continue;
    }
    if (reply->succeeded) {
      // Both puts happened at the transaction's revision: the holder key's
      // create revision.
      return granted(worker, reply->header.revision, old_mark->high_water);
    }
    Result<std::optional<KeyValue>> holder = kv_of(reply.value(), 0);
    if (!holder.is_ok()) return holder.status();
    if (holder.value() && holder.value()->lease == lease) {
      // An earlier transaction of ours did succeed.
      return granted(worker, holder.value()->create_revision,
                     pending_host == choice->host ? pending_previous : old_mark->high_water);
    }
    // Lost the race for this id (or its mark moved): read again.
    if (pending_host == choice->host && holder.value()) {
      pending_host.reset();  // someone else holds it: our earlier try can never land
      pending_previous.reset();
    }
  }
  return unavailable("no worker id in region " + std::to_string(request.region) + " after " +
                     std::to_string(kAcquireRounds) + " rounds: too many concurrent acquirers");
}

Status EtcdRegistry::renew_impl(const LeaseGrant& grant, WallTime high_water, Duration time_left) {
  Result<GrantToken> token = decode_token(grant.token);
  if (!token.is_ok()) return token.status();
  GatewayClient::CallOptions bounded;
  // Real elapsed time, as every network deadline here. A bound beyond a day
  // is none (and would overflow the steady clock's time point).
  if (time_left <= Duration::zero()) {
    return unavailable("no time left to renew the lease of worker " + to_string(token->worker));
  }
  if (time_left < std::chrono::hours(24)) {
    bounded.deadline = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(time_left);
  }
  Result<std::string> body =
      client_.call("/v3/lease/keepalive", lease_id_body(token->lease), bounded);
  if (!body.is_ok()) {
    if (body.status().code() == Code::kNotFound) {
      return Status(Code::kLeaseLost, "lease of worker " + to_string(token->worker) +
                                          " is gone: " + body.status().message());
    }
    return body.status();
  }
  Result<KeepAliveReply> ka = parse_keepalive(body.value());
  if (!ka.is_ok()) return ka.status();
  if (ka->ttl <= 0) {
    return Status(Code::kLeaseLost,
                  "lease of worker " + to_string(token->worker) + " was revoked or expired");
  }

  Result<std::optional<KeyValue>> mark = get(keys_.mark(token->worker), bounded);
  if (!mark.is_ok()) return mark.status();
  MarkUpdate update;
  update.worker = token->worker;
  update.holder_revision = token->create_revision;
  std::optional<WallTime> written;
  update.next = [&](const MarkValue& old) {
    // Every mark read, the one read back after a lost compare included: a
    // rolled-back mark seen only there would otherwise be written over.
    if (std::optional<std::string> why = history_.check_mark(grant.token, old.high_water)) {
      history_.set_pending(std::move(*why));
    }
    MarkValue new_mark = old;
    new_mark.high_water = later(old.high_water, high_water);
    written = new_mark.high_water;
    return encode_mark(new_mark);
  };
  update.refused = [&](const std::optional<KeyValue>& holder,
                       const Result<std::optional<KeyValue>>&) -> std::optional<Status> {
    if (!holder || holder->create_revision != token->create_revision) {
      return Status(Code::kLeaseLost,
                    "worker " + to_string(token->worker) + " is no longer held by this lease");
    }
    return std::nullopt;
  };
  update.call = bounded;
  if (const Status s = update_mark(update, mark.value()); !s.is_ok()) return s;
  history_.stored_mark(grant.token, *written);
  // This lease survived whatever the store lost (a restore from a snapshot
  // that holds it): the holder goes on, and the record tells every acquirer
  // to wait past what the others may have issued. A failure here is retried
  // by the next call, not the renewal's.
  if (history_.has_pending()) (void)check_store(in_flight());
  return Status::ok();
}

Status EtcdRegistry::release_impl(const LeaseGrant& grant, WallTime high_water) {
  Result<GrantToken> token = decode_token(grant.token);
  if (!token.is_ok()) return token.status();
  history_.forget(grant.token);
  const std::string holder_key = keys_.holder(token->worker);
  const std::string mark_key = keys_.mark(token->worker);
  Result<std::optional<KeyValue>> mark = get(mark_key);
  if (!mark.is_ok()) return mark.status();
  // Every mark value a transaction of this call carried. Any of them may
  // have been applied without our hearing of it: a reply lost on the way
  // back, either to this function or inside call(), which then sends the
  // same transaction to the next member. Finding one in place once our
  // holder key is gone means this call released the id: the value pins both
  // the high-water mark and a release time read from our clock here.
  std::vector<std::string> sent;
  auto ours = [&](const std::optional<KeyValue>& kv) {
    return kv && std::find(sent.begin(), sent.end(), kv->value) != sent.end();
  };
  bool retried = false;  // after a transaction with an unknown outcome
  MarkUpdate update;
  update.worker = token->worker;
  update.holder_revision = token->create_revision;
  update.next = [&](const MarkValue& old) {
    MarkValue new_mark = old;
    // The exact last instant, never below the previous holders' mark (the
    // grant carries it), and not the larger of it and this holder's own
    // renewal marks: those cap ids it can no longer issue, and a successor
    // counting from them would wait up to stop_after for nothing (issue 12).
    // Only this holder has written the mark since it was granted: every
    // write checks who holds the id.
    new_mark.high_water = later(grant.previous_high_water, high_water);
    new_mark.released_at = clock_.wall_now();
    new_mark.clean_release = new_mark.high_water;
    sent.push_back(encode_mark(new_mark));
    return sent.back();
  };
  update.also = {Op::remove(holder_key)};
  update.failed = [&](const Status& failure,
                      std::optional<KeyValue>& now_mark) -> std::optional<Status> {
    if (failure.code() != Code::kUnavailable || retried) return failure;
    retried = true;  // try once more; the reread tells whether it landed
    Result<std::optional<KeyValue>> again = get(mark_key);
    if (!again.is_ok()) return failure;
    now_mark = std::move(again).value();
    if (ours(now_mark)) return Status::ok();
    return std::nullopt;
  };
  update.refused = [&](const std::optional<KeyValue>& holder,
                       const Result<std::optional<KeyValue>>& now_mark) -> std::optional<Status> {
    if (!now_mark.is_ok()) return now_mark.status();
    if (holder && holder->create_revision == token->create_revision) return std::nullopt;
    // Gone: by our own hand if the mark is one we sent (a successor may
    // have taken the id since; acquire keeps released_at), else fenced.
    if (ours(now_mark.value())) return Status::ok();
    return Status(Code::kLeaseLost,
                  "worker " + to_string(token->worker) + " was no longer held by this lease");
  };
  const Status result = update_mark(update, mark.value());
  if (result.is_ok() || result.code() == Code::kLeaseLost) {
    // The holder key is gone; the lease has nothing left to keep.
    (void)revoke(token->lease);
  }
  return result;
}

Result<bool> EtcdRegistry::wait_lost_impl(const LeaseGrant& grant, Duration timeout) {
  using Steady = std::chrono::steady_clock;
  Result<GrantToken> token = decode_token(grant.token);
  if (!token.is_ok()) return token.status();
  const std::string holder_key = keys_.holder(token->worker);
  const auto deadline = Steady::now() + timeout;
  // Events before this revision have been seen. The holder key was created
  // at create_revision, so anything after it is news.
  std::int64_t next_revision = token->create_revision + 1;
  std::size_t endpoint = client_.preferred_endpoint();
  std::size_t broken_in_a_row = 0;
  Waiter waiter(*this);
  // The few unary calls made here give up as soon as wake_waiters() is called.
  GatewayClient::CallOptions wakeable;
  wakeable.cancel = &waiter.woken;

  while (!waiter.woken.load()) {
    const auto now = Steady::now();
    if (now >= deadline) return false;
    bool lost = false;
    bool recheck = false;  // the watch cannot replay history: read the key instead
    bool quiet = false;    // the watch ran kQuietWatchRecheck without a loss
    bool reauth = false;
    bool watching = false;   // the member accepted the watch
    bool delivered = false;  // and sent events: it follows the leader
    const std::string stale_token = client_.token();
    auto on_line = [&](std::string_view line) {
      // An error ends the stream: a member that has no leader (the watch
      // requires one), is shutting down, or refuses the token.
      if (const std::optional<GatewayError> e = parse_error(line)) {
        if (e->code == kGrpcUnauthenticated) reauth = true;
        return false;
      }
      Result<WatchMessage> m = parse_watch_message(line);
      if (!m.is_ok()) return false;
      if (m->canceled) {
        if (m->compact_revision > 0) {
          recheck = true;
        } else if (m->cancel_reason.find("auth") != std::string::npos ||
                   m->cancel_reason.find("Unauthenticated") != std::string::npos) {
          reauth = true;
        }
        return false;
      }
      watching = true;
      if (!m->events.empty()) delivered = true;
      for (const WatchEvent& e : m->events) {
        next_revision = std::max(next_revision, e.kv.mod_revision + 1);
        if (e.is_delete || e.kv.create_revision != token->create_revision ||
            e.kv.lease != token->lease) {
          lost = true;
          return false;
        }
      }
      return true;
    };
    const Duration left = deadline - now;
    const bool bounded = left > kQuietWatchRecheck;
    const GatewayClient::StreamResult r =
        client_.stream(endpoint, "/v3/watch", watch_create_body(holder_key, next_revision),
                       bounded ? Duration(kQuietWatchRecheck) : left, on_line, &waiter.woken);
    if (delivered) client_.prefer(endpoint);
    if (lost) return true;
    if (r.end == GatewayClient::StreamEnd::kCanceled || waiter.woken.load()) return false;
    if (r.end == GatewayClient::StreamEnd::kTimedOut) {
      if (!bounded) return false;
      // kQuietWatchRecheck without a loss: read the key, then watch again on
      // the next member (this one may be the stale one).
      recheck = true;
      quiet = true;
    }
    // Only a watch that was running counts as progress: one refused at once
    // every time must not spin without a pause.
    if (watching) broken_in_a_row = 0;
    if (reauth) {
      const Status s = client_.refresh_token(stale_token, wakeable);
      if (s.code() == Code::kInvalidArgument) return s;
    }
    if (recheck && !waiter.woken.load()) {
      Result<std::string> body = client_.call("/v3/kv/range", range_body(holder_key, {}), wakeable);
      Result<RangeReply> now_holder =
          body.is_ok() ? parse_range(body.value()) : Result<RangeReply>(body.status());
      if (now_holder.is_ok()) {
        if (now_holder->kvs.empty() ||
            now_holder->kvs.front().create_revision != token->create_revision) {
          return true;
        }
        next_revision = now_holder->header.revision + 1;
        if (quiet) endpoint = (endpoint + 1) % client_.endpoint_count();
        continue;
      }
    }
    // Anything else is a broken stream (member gone, restarted, not
    // answering, without a leader, or ending the watch): the next member.
    // After a whole round of failures, pause briefly so that a cluster that
    // is down is not hammered; wake_waiters() cuts the pause short.
    endpoint = (endpoint + 1) % client_.endpoint_count();
    if (++broken_in_a_row % client_.endpoint_count() == 0) {
      const auto until_deadline = deadline - Steady::now();
      if (until_deadline > Duration::zero()) {
        waiter.pause(std::min<Duration>(kBrokenRoundPause, until_deadline));
      }
    }
  }
  return false;
}

Result<std::vector<WorkerRecord>> EtcdRegistry::list_impl(std::optional<std::uint32_t> region) {
  if (region) {
    if (const Status s = check_worker({*region, 0}); !s.is_ok()) return s;
  }
  const std::string key = region ? keys_.region(*region) : keys_.all();
  Result<RangeReply> r = range(key, prefix_end(key));
  if (!r.is_ok()) return r.status();
  std::map<std::pair<std::uint32_t, std::uint32_t>, Slot> slots;
  for (const KeyValue& kv : r->kvs) {
    const std::optional<WorkerKeys::Parsed> p = keys_.parse(kv.key);
    if (!p) continue;
    Slot& slot = slots[{p->worker.region, p->worker.host}];
    (p->is_holder ? slot.holder : slot.mark) = kv;
  }
  const WallTime now = clock_.wall_now();
  std::vector<WorkerRecord> out;
  for (const auto& [id, slot] : slots) {
    WorkerRecord rec;
    rec.worker = WorkerId{id.first, id.second};
    Result<MarkValue> mark = mark_of(slot.mark);
    if (!mark.is_ok()) {
      return Status(Code::kDataLoss,
                    "worker " + to_string(rec.worker) + ": " + mark.status().message());
    }
    rec.high_water = mark->high_water;
    rec.released_at = mark->released_at;
    if (slot.holder) {
      Result<HolderValue> holder = decode_holder(slot.holder->value);
      if (!holder.is_ok()) {
        return Status(Code::kDataLoss,
                      "worker " + to_string(rec.worker) + ": " + holder.status().message());
      }
      rec.holder = holder->info;
      // What is left of the lease, when etcd says (best effort: a record
      // without it is still worth showing).
      Result<std::string> ttl =
          client_.call("/v3/lease/timetolive", time_to_live_body(slot.holder->lease));
      if (ttl.is_ok()) {
        Result<TimeToLiveReply> t = parse_time_to_live(ttl.value());
        if (t.is_ok() && t->ttl >= 0) rec.ttl_left = std::chrono::seconds(t->ttl);
      }
    } else if (const std::optional<WallTime> from = free_from(mark.value(), options_.quarantine);
               from && now < *from) {
      rec.quarantined_until = *from;
    }
    out.push_back(std::move(rec));
  }
  return out;
}

Status EtcdRegistry::fence_impl(WorkerId worker) {
  if (const Status s = check_worker(worker); !s.is_ok()) return s;
  const std::string holder_key = keys_.holder(worker);
  Result<std::optional<KeyValue>> holder = get(holder_key);
  if (!holder.is_ok()) return holder.status();
  if (!holder.value()) {
    return Status(Code::kNotFound, "worker " + to_string(worker) + " is not held");
  }
  const KeyValue& held = *holder.value();
  if (held.lease != 0) {
    if (const Status s = revoke(held.lease); !s.is_ok()) return s;
  } else {
    // Not written by this registry (every holder key has a lease): delete it
    // if it is still the same key.
    Result<TxnReply> del = txn({{Compare::Target::kCreate, holder_key, held.create_revision}},
                               {Op::remove(holder_key)}, {});
    if (!del.is_ok()) return del.status();
  }

  // Start the quarantine (the part the skew monitor's fence shares).
  return write_fence_release(kv_, keys_, worker, clock_);
}

// --- The store record -----------------------------------------------------------

std::string EtcdRegistry::new_incarnation() {
  std::uint64_t v = 0;
  {
    MutexLock lock(rng_mu_);
    v = rng_();
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<std::size_t>(i)] = kDigits[v & 0xf];
  return out;
}

Result<StoreValue> EtcdRegistry::check_store(Duration in_flight) {
  const std::string& key = keys_.store();
  for (int round = 0; round < kMarkRounds; ++round) {
    Result<std::optional<KeyValue>> kv = get(key);
    if (!kv.is_ok()) return kv.status();
    std::optional<std::string> why = history_.take_pending();
    std::optional<StoreValue> old;
    std::string reason;
    if (kv.value()) {
      Result<StoreValue> v = decode_store(kv.value()->value);
      if (!v.is_ok()) return v.status();
      old = std::move(v).value();
      const std::string known = history_.incarnation();
      // Without news, or when the record was written anew since this
      // process last read it (another holder recorded the same loss, or an
      // operator declared it), the record stands.
      if (!why || (!known.empty() && known != old->incarnation)) {
        history_.adopt(old->incarnation);
        return *old;
      }
    } else if (!why) {
      if (!history_.incarnation().empty()) {
        why = "the store record vanished";
      } else {
        // A namespace whose worker keys predate store records gets one
        // without a mark of its own; an empty one may be new or may have
        // been lost, and the two look alike.
        Result<RangeReply> all = range(keys_.all(), prefix_end(keys_.all()));
        if (!all.is_ok()) return all.status();
        if (all->kvs.empty()) {
          why = "no store record and no worker keys: a new namespace, or etcd lost its data";
        } else {
          reason = "first written for worker keys that predate store records";
        }
      }
    }
    StoreValue next;
    next.incarnation = new_incarnation();
    next.high_water = old ? old->high_water : std::nullopt;
    if (why) {
      next.high_water = later(next.high_water, clock_.wall_now() + in_flight);
      reason = *why;
    }
    next.reason = reason;
    next.written_at = clock_.wall_now();
    const std::int64_t seen = kv.value() ? kv.value()->mod_revision : 0;
    Result<TxnReply> reply =
        txn({{Compare::Target::kMod, key, seen}}, {Op::put(key, encode_store(next))}, {});
    if (!reply.is_ok()) {
      if (why) history_.set_pending(*why);
      return reply.status();
    }
    if (reply->succeeded) {
      history_.adopt(next.incarnation);
      return next;
    }
    // The record changed under us: read it again, still carrying the news.
    if (why) history_.set_pending(*why);
  }
  return unavailable("the store record of " + keys_.store() + " kept changing");
}

Status EtcdRegistry::initialize_store_impl() {
  const std::string& key = keys_.store();
  StoreValue v;
  v.incarnation = new_incarnation();
  v.reason = "initialized as a new namespace";
  v.written_at = clock_.wall_now();
  Result<TxnReply> reply =
      txn({{Compare::Target::kCreate, key, 0}}, {Op::put(key, encode_store(v))}, {});
  if (!reply.is_ok()) return reply.status();
  if (!reply->succeeded) {
    return Status(Code::kAlreadyExists, key + " already has a store record");
  }
  history_.adopt(v.incarnation);
  return Status::ok();
}

// --- Options ------------------------------------------------------------------

Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

bool valid_cluster_name(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

Result<GatewayOptions> check_options(EtcdOptions& o) {
  if (o.endpoints.empty()) return invalid("etcd: at least one endpoint is needed");
  GatewayOptions g;
  for (const std::string& e : o.endpoints) {
    Result<std::vector<std::string>> parsed = parse_etcd_endpoints(e);
    if (!parsed.is_ok()) return parsed.status();
    if (parsed->size() != 1) return invalid("etcd: one URL per endpoint, not \"" + e + "\"");
    g.endpoints.push_back(parsed->front());
  }
  if (o.prefix.empty() || o.prefix.front() != '/' || o.prefix.back() == '/' ||
      o.prefix.find("//") != std::string::npos) {
    return invalid("etcd: the key prefix must start with '/' and not end with one, not \"" +
                   o.prefix + "\"");
  }
  if (!valid_cluster_name(o.cluster)) {
    return invalid("etcd: the cluster name must be letters, digits, '-', '_' or '.', not \"" +
                   o.cluster + "\"");
  }
  if (!o.layout.can_generate()) {
    return invalid("etcd: layout \"" + o.layout.name() + "\" cannot generate ids");
  }
  if (o.quarantine < Duration::zero() || o.quarantine > std::chrono::hours(1)) {
    return invalid("etcd: quarantine must be from 0 to 1 hour");
  }
  if (o.request_timeout < std::chrono::milliseconds(1) ||
      o.request_timeout > std::chrono::minutes(1)) {
    return invalid("etcd: request_timeout must be from 1 ms to 1 minute");
  }
  if (!o.key_file.empty() && o.cert_file.empty()) {
    return invalid("etcd: a client key needs a client certificate");
  }
  if (o.user.empty() && !o.password.empty()) return invalid("etcd: a password needs a user");
  g.request_timeout = o.request_timeout;
  g.ca_file = o.ca_file;
  g.cert_file = o.cert_file;
  g.key_file = o.key_file;
  g.user = o.user;
  g.password = o.password;
  o.endpoints = g.endpoints;
  return g;
}

}  // namespace

Result<std::unique_ptr<WorkerRegistry>> make_etcd_registry_with_faults(const Clock& clock,
                                                                       EtcdOptions options,
                                                                       FaultHook fault_hook) {
  try {
    Result<GatewayOptions> gateway = check_options(options);
    if (!gateway.is_ok()) return gateway.status();
    auto registry = std::make_unique<EtcdRegistry>(
        clock, std::move(options), std::move(gateway).value(), std::move(fault_hook));
    if (const Status s = registry->connect(); !s.is_ok()) return s;
    return std::unique_ptr<WorkerRegistry>(std::move(registry));
  } catch (const std::exception& e) {
    return unavailable(std::string("etcd registry: ") + e.what());
  }
}

Result<GatewayOptions> gateway_options_for(EtcdOptions options) {
  try {
    return check_options(options);
  } catch (const std::exception& e) {
    return unavailable(std::string("etcd registry: ") + e.what());
  }
}

namespace {

Result<std::unique_ptr<EtcdRegistry>> connected(const Clock& clock, EtcdOptions options) {
  Result<GatewayOptions> gateway = check_options(options);
  if (!gateway.is_ok()) return gateway.status();
  auto registry = std::make_unique<EtcdRegistry>(clock, std::move(options),
                                                 std::move(gateway).value(), nullptr);
  if (const Status s = registry->connect(); !s.is_ok()) return s;
  return registry;
}

}  // namespace

}  // namespace etcd

Status validate_etcd_options(EtcdOptions options) {
  try {
    Result<etcd::GatewayOptions> checked = etcd::check_options(options);
    return checked.is_ok() ? Status::ok() : checked.status();
  } catch (const std::exception& e) {
    return etcd::unavailable(std::string("etcd registry: ") + e.what());
  }
}

Result<std::unique_ptr<WorkerRegistry>> make_etcd_registry(const Clock& clock,
                                                           EtcdOptions options) {
  return etcd::make_etcd_registry_with_faults(clock, std::move(options), nullptr);
}

Status initialize_etcd_namespace(const Clock& clock, EtcdOptions options) {
  try {
    Result<std::unique_ptr<etcd::EtcdRegistry>> r = etcd::connected(clock, std::move(options));
    if (!r.is_ok()) return r.status();
    return r.value()->initialize_store();
  } catch (const std::exception& e) {
    return etcd::unavailable(std::string("etcd registry: ") + e.what());
  }
}

Result<WallTime> declare_etcd_data_lost(const Clock& clock, EtcdOptions options,
                                        Duration in_flight) {
  if (in_flight < Duration::zero() || in_flight > std::chrono::hours(1)) {
    return Status(Code::kInvalidArgument, "the in-flight time must be from 0 to 1 hour");
  }
  try {
    Result<std::unique_ptr<etcd::EtcdRegistry>> r = etcd::connected(clock, std::move(options));
    if (!r.is_ok()) return r.status();
    Result<etcd::StoreValue> v = r.value()->declare_lost(
        in_flight, "declared by an operator: etcd's data was restored or lost");
    if (!v.is_ok()) return v.status();
    return *v->high_water;
  } catch (const std::exception& e) {
    return etcd::unavailable(std::string("etcd registry: ") + e.what());
  }
}

}  // namespace snowid
