#include "snowid/testing/memory_registry.h"

#include <algorithm>
#include <chrono>

#include "snowid/lease_rules.h"

namespace snowid::testing {
namespace {

Status unavailable() { return Status(Code::kUnavailable, "registry unavailable (injected)"); }

}  // namespace

MemoryRegistry::MemoryRegistry(const Clock& clock, Layout layout, Duration quarantine,
                               std::uint64_t seed)
    : clock_(clock), layout_(std::move(layout)), quarantine_(quarantine), rng_(seed) {}

const MemoryRegistry::Holder* MemoryRegistry::live_holder(const Entry& e, MonoTime now) const {
  if (!e.holder || now >= e.holder->expires) return nullptr;
  return &*e.holder;
}

MemoryRegistry::Entry* MemoryRegistry::held_by(const LeaseGrant& grant, MonoTime now) {
  const auto it = entries_.find({grant.worker.region, grant.worker.host});
  if (it == entries_.end()) return nullptr;
  const Holder* h = live_holder(it->second, now);
  if (h == nullptr || h->token != grant.token) return nullptr;
  return &it->second;
}

std::optional<WallTime> MemoryRegistry::quarantine_end(const Entry& e) const {
  return snowid::quarantine_end(e.released_at, e.high_water, quarantine_);
}

Status MemoryRegistry::lost_reply_or_ok() const {
  if (lose_reply_) return Status(Code::kUnavailable, "reply lost (injected); outcome unknown");
  return Status::ok();
}

Result<LeaseGrant> MemoryRegistry::acquire(const LeaseRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (unavailable_) return unavailable();
  if (request.region >= layout_.regions()) {
    return Status(Code::kInvalidArgument, "region " + std::to_string(request.region) +
                                              " is outside the layout's " +
                                              std::to_string(layout_.regions()) + " regions");
  }
  if (request.host && *request.host >= layout_.workers_per_region()) {
    return Status(Code::kInvalidArgument, "host " + std::to_string(*request.host) +
                                              " is outside the region's block of " +
                                              std::to_string(layout_.workers_per_region()));
  }
  if (request.timing.ttl <= Duration::zero()) {
    return Status(Code::kInvalidArgument, "lease ttl must be positive");
  }
  const MonoTime mono = clock_.mono_now();
  const WallTime wall = clock_.wall_now();
  auto eligible = [&](std::uint32_t host) {
    const auto it = entries_.find({request.region, host});
    if (it == entries_.end()) return true;
    if (live_holder(it->second, mono) != nullptr) return false;
    const std::optional<WallTime> end = quarantine_end(it->second);
    return !end || wall >= *end;
  };
  std::uint32_t host = 0;
  if (request.host) {
    host = *request.host;
    if (!eligible(host)) {
      return Status(Code::kResourceExhausted,
                    "worker " + to_string({request.region, host}) + " is held or quarantined");
    }
  } else {
    std::vector<std::uint32_t> free;
    const auto n = static_cast<std::uint32_t>(layout_.workers_per_region());
    for (std::uint32_t h = 0; h < n; ++h) {
      if (eligible(h)) free.push_back(h);
    }
    if (free.empty()) {
      return Status(Code::kResourceExhausted, "no free worker id in region " +
                                                  std::to_string(request.region) +
                                                  " (all held or quarantined)");
    }
    std::uniform_int_distribution<std::size_t> pick(0, free.size() - 1);
    host = free[pick(rng_)];
  }
  Entry& e = entries_[{request.region, host}];
  Holder h;
  h.token = "mem-" + std::to_string(next_token_++);
  h.info = request.holder;
  h.ttl = request.timing.ttl;
  h.expires = mono + request.timing.ttl;
  h.previous_high_water = e.high_water;
  e.holder = std::move(h);
  e.high_water = later(e.high_water, request.high_water);
  ++acquires_;
  changed_.notify_all();
  if (Status s = lost_reply_or_ok(); !s.is_ok()) return s;
  return LeaseGrant{WorkerId{request.region, host}, e.holder->token, e.holder->previous_high_water};
}

Status MemoryRegistry::renew(const LeaseGrant& grant, WallTime high_water, Duration time_left) {
  RenewHook hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hook = renew_hook_;
    last_renew_time_left_ = time_left;
  }
  if (hook) hook(grant, high_water);
  std::lock_guard<std::mutex> lock(mu_);
  if (unavailable_) return unavailable();
  const MonoTime now = clock_.mono_now();
  Entry* e = held_by(grant, now);
  if (e == nullptr) {
    return Status(Code::kLeaseLost, "worker " + to_string(grant.worker) + " is no longer held");
  }
  e->holder->expires = now + e->holder->ttl;
  e->high_water = later(e->high_water, high_water);
  ++renewals_;
  changed_.notify_all();
  return lost_reply_or_ok();
}

Status MemoryRegistry::release(const LeaseGrant& grant, WallTime high_water) {
  std::lock_guard<std::mutex> lock(mu_);
  if (unavailable_) return unavailable();
  Entry* e = held_by(grant, clock_.mono_now());
  if (e == nullptr) {
    return Status(Code::kLeaseLost, "worker " + to_string(grant.worker) + " is no longer held");
  }
  e->high_water = later(e->holder->previous_high_water, high_water);
  e->released_at = clock_.wall_now();
  e->holder.reset();
  ++releases_;
  changed_.notify_all();
  return lost_reply_or_ok();
}

void MemoryRegistry::abandon(const LeaseGrant& grant) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  ++abandons_;
  if (unavailable_) return;
  const auto it = entries_.find({grant.worker.region, grant.worker.host});
  if (it == entries_.end() || !it->second.holder || it->second.holder->token != grant.token) {
    return;  // released, fenced or taken by someone else since: nothing of ours is left
  }
  it->second.holder.reset();
  changed_.notify_all();
}

Result<bool> MemoryRegistry::wait_lost(const LeaseGrant& grant, Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  const std::uint64_t wakes = wakes_;
  for (;;) {
    if (unavailable_) return unavailable();
    if (wakes_ != wakes) return false;
    const MonoTime now = clock_.mono_now();
    const Entry* e = held_by(grant, now);
    if (e == nullptr) return true;
    const auto real_now = std::chrono::steady_clock::now();
    if (real_now >= give_up) return false;
    // Wake at the expiry by the injected clock if that comes first; with a
    // simulated clock it rarely does, and the timeout bounds the wait.
    const Duration until_expiry = e->holder->expires - now;
    const Duration wait = std::min<Duration>(until_expiry, give_up - real_now);
    changed_.wait_for(lock, wait);
  }
}

void MemoryRegistry::wake_waiters() noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++wakes_;
  }
  changed_.notify_all();
}

WorkerRecord MemoryRegistry::make_record(WorkerId worker, const Entry& e, MonoTime mono,
                                         WallTime wall) const {
  WorkerRecord r;
  r.worker = worker;
  r.high_water = e.high_water;
  r.released_at = e.released_at;
  if (const Holder* h = live_holder(e, mono)) {
    r.holder = h->info;
    r.ttl_left = h->expires - mono;
  } else if (const std::optional<WallTime> end = quarantine_end(e); end && wall < *end) {
    r.quarantined_until = end;
  }
  return r;
}

Result<std::vector<WorkerRecord>> MemoryRegistry::list(std::optional<std::uint32_t> region) {
  std::lock_guard<std::mutex> lock(mu_);
  if (unavailable_) return unavailable();
  const MonoTime mono = clock_.mono_now();
  const WallTime wall = clock_.wall_now();
  std::vector<WorkerRecord> out;
  for (const auto& [key, e] : entries_) {
    if (region && key.first != *region) continue;
    out.push_back(make_record(WorkerId{key.first, key.second}, e, mono, wall));
  }
  return out;
}

Status MemoryRegistry::fence(WorkerId worker) {
  std::lock_guard<std::mutex> lock(mu_);
  if (unavailable_) return unavailable();
  const auto it = entries_.find({worker.region, worker.host});
  if (it == entries_.end() || live_holder(it->second, clock_.mono_now()) == nullptr) {
    return Status(Code::kNotFound, "worker " + to_string(worker) + " is not held");
  }
  it->second.holder.reset();
  it->second.released_at = clock_.wall_now();
  ++fences_;
  changed_.notify_all();
  return lost_reply_or_ok();
}

void MemoryRegistry::set_unavailable(bool unavailable) {
  std::lock_guard<std::mutex> lock(mu_);
  unavailable_ = unavailable;
  changed_.notify_all();
}

void MemoryRegistry::set_lose_reply(bool lose_reply) {
  std::lock_guard<std::mutex> lock(mu_);
  lose_reply_ = lose_reply;
}

void MemoryRegistry::set_renew_hook(RenewHook hook) {
  std::lock_guard<std::mutex> lock(mu_);
  renew_hook_ = std::move(hook);
}

void MemoryRegistry::set_seed(std::uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  rng_.seed(seed);
}

std::optional<WorkerRecord> MemoryRegistry::record(WorkerId worker) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = entries_.find({worker.region, worker.host});
  if (it == entries_.end()) return std::nullopt;
  return make_record(worker, it->second, clock_.mono_now(), clock_.wall_now());
}

bool MemoryRegistry::held(WorkerId worker) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = entries_.find({worker.region, worker.host});
  return it != entries_.end() && live_holder(it->second, clock_.mono_now()) != nullptr;
}

std::uint64_t MemoryRegistry::acquires() const {
  std::lock_guard<std::mutex> lock(mu_);
  return acquires_;
}

std::uint64_t MemoryRegistry::renewals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return renewals_;
}

std::optional<Duration> MemoryRegistry::last_renew_time_left() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_renew_time_left_;
}

std::uint64_t MemoryRegistry::releases() const {
  std::lock_guard<std::mutex> lock(mu_);
  return releases_;
}

std::uint64_t MemoryRegistry::fences() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fences_;
}

std::uint64_t MemoryRegistry::abandons() const {
  std::lock_guard<std::mutex> lock(mu_);
  return abandons_;
}

}  // namespace snowid::testing
