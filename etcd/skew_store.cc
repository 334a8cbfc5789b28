// The skew monitor's store on etcd (skew_store.h; docs/protocol.md, "The
// skew monitor"), through the registry's gateway client and key helpers.
//
// Network deadlines (the keepalive period, request timeouts) are real
// elapsed time on the steady clock; the instants it records (the fence
// record's `at`, the marks' released_at) come from the injected Clock.
#include "skew_store.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "etcd_kv.h"
#include "etcd_registry_internal.h"
#include "gateway_json.h"
#include "mutex.h"
#include "skew_keys.h"
#include "snowid/etcd_registry.h"
#include "snowid/lease_rules.h"
#include "worker_keys.h"
#include "worker_values.h"

namespace snowid::etcd {

using internal::CondVar;
using internal::Mutex;
using internal::MutexLock;

std::int64_t FleetMember::holder_revision() const noexcept {
  std::int64_t top = 0;
  for (const HeldWorker& w : workers) top = std::max(top, w.mod_revision);
  return top;
}

namespace {

using Steady = std::chrono::steady_clock;

// After a failed keepalive or grant, the next try comes this soon (or a
// third of the TTL, if sooner), not a whole period later: the lease must not
// expire over one lost reply.
constexpr auto kRetryEvery = std::chrono::milliseconds(500);

Status unavailable(std::string message) { return Status(Code::kUnavailable, std::move(message)); }
Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

Steady::time_point steady_after(Duration d) {
  return Steady::now() + std::chrono::duration_cast<Steady::duration>(d);
}

class EtcdSkewStore final : public SkewStore {
 public:
  EtcdSkewStore(SkewStoreOptions options, GatewayOptions gateway, const Clock& clock)
      : options_(std::move(options)),
        clock_(clock),
        worker_keys_(options_.prefix, options_.cluster),
        keys_(options_.prefix, options_.cluster, options_.region),
        client_(std::move(gateway)),
        kv_(client_) {}

  ~EtcdSkewStore() override {
    {
      MutexLock lock(mu_);
      stopping_ = true;
    }
    cancel_.store(true);
    cv_.notify_all();
    if (keeper_.joinable()) keeper_.join();
    try {
      const std::int64_t lease = lease_.load();
      if (lease != 0) {
        GatewayClient::CallOptions bounded;
        bounded.deadline = steady_after(options_.gateway.request_timeout);
        (void)client_.call("/v3/lease/revoke", lease_id_body(lease), bounded);
      }
    } catch (...) {
      // Best effort: the lease then expires after its TTL, and the votes and
      // the agent key with it.
    }
  }

  // Connects, grants the lease, puts the agent key and starts the keepalive.
  Status start() {
    return guarded<Status>([&]() -> Status {
      if (const Status s = client_.connect(); !s.is_ok()) return s;
      Result<std::int64_t> lease = grant();
      if (!lease.is_ok()) return lease.status();
      lease_.store(lease.value());
      if (const Status s = put_agent(lease.value()); !s.is_ok()) {
        (void)kv_.revoke(lease.value());
        lease_.store(0);
        return s;
      }
      keeper_ = std::thread([this] { keep_alive(); });
      return Status::ok();
    });
  }

  Result<std::vector<FleetMember>> members() override {
    return guarded<Result<std::vector<FleetMember>>>([&] { return members_impl(); });
  }
  Status cast_vote(std::string_view target, const skew::VoteRecord& vote) override {
    return guarded<Status>([&] { return cast_vote_impl(target, vote); });
  }
  Status withdraw_vote(std::string_view target) override {
    return guarded<Status>([&]() -> Status {
      if (!valid_host_name(target)) return bad_target(target);
      Result<TxnReply> reply = kv_.txn({}, {Op::remove(keys_.vote(target, options_.host))}, {});
      return reply.is_ok() ? Status::ok() : reply.status();
    });
  }
  Result<Votes> votes(std::string_view target) override {
    return guarded<Result<Votes>>([&] { return votes_impl(target); });
  }
  Result<FenceOutcome> fence(const FleetMember& target, const Votes& all,
                             const std::vector<std::string>& counted_voters,
                             const std::string& reason) override {
    return guarded<Result<FenceOutcome>>(
        [&] { return fence_impl(target, all, counted_voters, reason); });
  }
  Result<std::vector<FenceRecord>> fences() override {
    return guarded<Result<std::vector<FenceRecord>>>([&] { return fences_impl(); });
  }

 private:
  template <typename R, typename F>
  static R guarded(F&& f) {
    return etcd::guarded<R>("skew store", std::forward<F>(f));
  }

  static Status bad_target(std::string_view target) {
    return invalid("skew store: \"" + std::string(target.substr(0, 80)) +
                   "\" is not a host name the skew keys can carry (1 to 253 bytes, no '/')");
  }

  Result<std::vector<FleetMember>> members_impl();
  Status cast_vote_impl(std::string_view target, const skew::VoteRecord& vote);
  Result<Votes> votes_impl(std::string_view target);
  Result<FenceOutcome> fence_impl(const FleetMember& target, const Votes& all,
                                  const std::vector<std::string>& counted_voters,
                                  const std::string& reason);
  Result<std::vector<FenceRecord>> fences_impl();

  // A lease of lease_ttl; kFailedPrecondition (after revoking it) when etcd
  // grants less.
  Result<std::int64_t> grant();
  // Puts the agent key on `lease`, when this store is an agent.
  Status put_agent(std::int64_t lease);
  // The keepalive thread: every third of the TTL, or kRetryEvery after a
  // failure, until the destructor stops it.
  void keep_alive();
  // One keepalive of the current lease; a lease found gone is replaced.
  Status keep_alive_once();
  // Grants a fresh lease in place of the current one, which etcd lost, and
  // has the agent key put on it. Only the keepalive thread calls it.
  Status replace_lease();
  // Asks the keepalive thread to replace `lost` now (a write found it gone).
  void lease_lost(std::int64_t lost) {
    {
      MutexLock lock(mu_);
      lost_ = lost;
    }
    cv_.notify_all();
  }

  const SkewStoreOptions options_;
  const Clock& clock_;
  const WorkerKeys worker_keys_;
  const SkewKeys keys_;
  GatewayClient client_;
  EtcdKv kv_;
  // The lease the votes and the agent key go on; replaced by the keepalive
  // thread when etcd loses it.
  std::atomic<std::int64_t> lease_{0};
  // Set by the destructor: ends the keepalive thread's calls within ~20 ms.
  std::atomic<bool> cancel_{false};
  Mutex mu_;
  CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::int64_t lost_ GUARDED_BY(mu_) = 0;  // a lease a write found gone
  // Whether the agent key still has to be put on the current lease (only the
  // keepalive thread touches it once started).
  bool agent_pending_ = false;
  std::thread keeper_;
};

Result<std::int64_t> EtcdSkewStore::grant() {
  const auto ttl = std::chrono::duration_cast<std::chrono::seconds>(options_.lease_ttl).count();
  GatewayClient::CallOptions call;
  call.cancel = &cancel_;
  Result<std::string> granted = client_.call("/v3/lease/grant", lease_grant_body(ttl), call);
  if (!granted.is_ok()) return granted.status();
  Result<LeaseGrantReply> lease = parse_lease_grant(granted.value());
  if (!lease.is_ok()) return lease.status();
  if (lease->ttl < ttl) {
    (void)kv_.revoke(lease->id);
    return Status(Code::kFailedPrecondition, "etcd granted a " + std::to_string(lease->ttl) +
                                                 " s lease instead of " + std::to_string(ttl) +
                                                 " s");
  }
  return lease->id;
}

Status EtcdSkewStore::put_agent(std::int64_t lease) {
  if (options_.agent_address.empty()) return Status::ok();
  GatewayClient::CallOptions call;
  call.cancel = &cancel_;
  Result<TxnReply> reply =
      kv_.txn({},
              {Op::put(keys_.agent(options_.host), encode_agent(AgentValue{options_.agent_address}),
                       lease)},
              {}, call);
  return reply.is_ok() ? Status::ok() : reply.status();
}

void EtcdSkewStore::keep_alive() {
  const Duration every = options_.lease_ttl / 3;
  const Duration retry = std::min<Duration>(every, kRetryEvery);
  Duration wait = every;
  while (true) {
    std::int64_t lost = 0;
    {
      MutexLock lock(mu_);
      const Steady::time_point until = steady_after(wait);
      while (!stopping_ && lost_ == 0) {
        if (cv_.wait_until(mu_, until) == std::cv_status::timeout) break;
      }
      if (stopping_) return;
      std::swap(lost, lost_);
    }
    Status s;
    try {
      if (lost != 0) {
        s = lost == lease_.load() ? replace_lease() : Status::ok();
      } else {
        s = keep_alive_once();
      }
      if (s.is_ok() && agent_pending_) {
        s = put_agent(lease_.load());
        if (s.is_ok()) agent_pending_ = false;
      }
    } catch (const std::exception& e) {
      s = unavailable(e.what());
    }
    wait = s.is_ok() ? every : retry;
  }
}

Status EtcdSkewStore::keep_alive_once() {
  const std::int64_t lease = lease_.load();
  GatewayClient::CallOptions call;
  call.cancel = &cancel_;
  Result<std::string> body = client_.call("/v3/lease/keepalive", lease_id_body(lease), call);
  if (!body.is_ok()) {
    if (body.status().code() == Code::kNotFound) return replace_lease();
    return body.status();
  }
  Result<KeepAliveReply> reply = parse_keepalive(body.value());
  if (!reply.is_ok()) return reply.status();
  if (reply->ttl <= 0) return replace_lease();
  return Status::ok();
}

Status EtcdSkewStore::replace_lease() {
  Result<std::int64_t> fresh = grant();
  if (!fresh.is_ok()) return fresh.status();
  lease_.store(fresh.value());
  agent_pending_ = !options_.agent_address.empty();
  return Status::ok();
}

Result<std::vector<FleetMember>> EtcdSkewStore::members_impl() {
  const std::string region = worker_keys_.region(options_.region);
  Result<RangeReply> holders = kv_.range(region, prefix_end(region));
  if (!holders.is_ok()) return holders.status();
  // Each host's ids with the address its holder value names.
  std::map<std::string, std::vector<std::pair<HeldWorker, std::string>>> held;
  for (const KeyValue& kv : holders->kvs) {
    const std::optional<WorkerKeys::Parsed> p = worker_keys_.parse(kv.key);
    if (!p || !p->is_holder || p->worker.region != options_.region) continue;
    Result<HolderValue> holder = decode_holder(kv.value);
    if (!holder.is_ok()) continue;
    held[holder->info.host].push_back(
        {HeldWorker{p->worker, kv.lease, kv.create_revision, kv.mod_revision},
         holder->info.address});
  }
  std::map<std::string, FleetMember> by_host;
  for (auto& [host, workers] : held) {
    std::sort(workers.begin(), workers.end(), [](const auto& a, const auto& b) {
      return a.first.worker.host < b.first.worker.host;
    });
    FleetMember& m = by_host[host];
    m.host = host;
    for (const auto& [worker, address] : workers) {
      m.workers.push_back(worker);
      if (m.address.empty()) m.address = address;  // the lowest id's that has one
    }
  }

  const std::string agents = keys_.agents();
  Result<RangeReply> announced = kv_.range(agents, prefix_end(agents));
  if (!announced.is_ok()) return announced.status();
  for (const KeyValue& kv : announced->kvs) {
    const std::optional<std::string> host = keys_.agent_of(kv.key);
    if (!host) continue;
    Result<AgentValue> agent = decode_agent(kv.value);
    if (!agent.is_ok()) continue;
    FleetMember& m = by_host[*host];
    m.host = *host;
    m.agent = true;
    // The agent answers probes on the address it announces.
    if (!agent->address.empty()) m.address = agent->address;
  }

  std::vector<FleetMember> out;
  out.reserve(by_host.size());
  for (auto& [host, member] : by_host) out.push_back(std::move(member));
  return out;
}

Status EtcdSkewStore::cast_vote_impl(std::string_view target, const skew::VoteRecord& vote) {
  if (!valid_host_name(target)) return bad_target(target);
  const std::string text = skew::encode_vote(vote);
  // What peers would skip as unreadable is refused here.
  if (const Result<skew::VoteRecord> back = skew::parse_vote(text); !back.is_ok()) {
    return invalid("skew store: not a valid vote: " + back.status().message());
  }
  const std::int64_t lease = lease_.load();
  Result<TxnReply> reply =
      kv_.txn({}, {Op::put(keys_.vote(target, options_.host), text, lease)}, {});
  if (!reply.is_ok()) {
    if (reply.status().code() == Code::kNotFound) {
      lease_lost(lease);
      return unavailable(
          "skew store: the lease the votes go on is gone (a fresh one is being "
          "granted): " +
          reply.status().message());
    }
    return reply.status();
  }
  return Status::ok();
}

Result<SkewStore::Votes> EtcdSkewStore::votes_impl(std::string_view target) {
  if (!valid_host_name(target)) return bad_target(target);
  const std::string prefix = keys_.votes(target);
  Result<RangeReply> range = kv_.range(prefix, prefix_end(prefix));
  if (!range.is_ok()) return range.status();
  Votes out;
  // A range's keys come sorted by their bytes: by voter here.
  for (const KeyValue& kv : range->kvs) {
    std::optional<std::string> voter = keys_.voter_of(target, kv.key);
    if (!voter) continue;
    Result<skew::VoteRecord> record = skew::parse_vote(kv.value);
    if (!record.is_ok()) {
      ++out.unreadable;
      continue;
    }
    out.votes.push_back(skew::CastVote{std::move(*voter), std::move(record).value()});
    out.mod_revisions.push_back(kv.mod_revision);
  }
  return out;
}

Result<FenceOutcome> EtcdSkewStore::fence_impl(const FleetMember& target, const Votes& all,
                                               const std::vector<std::string>& counted_voters,
                                               const std::string& reason) {
  if (!valid_host_name(target.host)) return bad_target(target.host);
  if (all.votes.size() != all.mod_revisions.size()) {
    return invalid("skew store: " + std::to_string(all.votes.size()) + " votes with " +
                   std::to_string(all.mod_revisions.size()) + " revisions");
  }
  std::set<std::uint32_t> hosts;
  for (const HeldWorker& w : target.workers) {
    if (w.worker.region != options_.region) {
      return invalid("skew store: worker " + to_string(w.worker) + " is outside region " +
                     std::to_string(options_.region));
    }
    if (!hosts.insert(w.worker.host).second) {
      return invalid("skew store: worker " + to_string(w.worker) + " is listed twice");
    }
  }
  // The counted votes, as votes() read them.
  std::vector<std::size_t> counted;
  for (const std::string& voter : counted_voters) {
    const auto it = std::find_if(all.votes.begin(), all.votes.end(),
                                 [&](const skew::CastVote& v) { return v.voter == voter; });
    if (it == all.votes.end()) {
      return invalid("skew store: counted voter \"" + voter + "\" cast none of the votes read");
    }
    const auto i = static_cast<std::size_t>(it - all.votes.begin());
    if (std::find(counted.begin(), counted.end(), i) != counted.end()) {
      return invalid("skew store: voter \"" + voter + "\" is counted twice");
    }
    counted.push_back(i);
  }
  if (target.workers.empty()) return FenceOutcome::kNothingHeld;

  FenceRecord record;
  record.target = target.host;
  record.fencer = options_.host;
  record.at = clock_.wall_now();
  for (const std::size_t i : counted) record.votes.push_back(all.votes[i]);
  for (const HeldWorker& w : target.workers) record.workers.push_back(w.worker);
  record.reason = reason;
  const std::string text = encode_fence_record(record);
  const std::string fence_key = keys_.fence(target.host);

  std::vector<Compare> compares;
  for (const std::size_t i : counted) {
    compares.push_back(
        {Compare::Target::kMod, keys_.vote(target.host, all.votes[i].voter), all.mod_revisions[i]});
  }
  std::vector<Op> success;
  std::vector<Op> failure;
  for (const HeldWorker& w : target.workers) {
    const std::string holder = worker_keys_.holder(w.worker);
    compares.push_back({Compare::Target::kMod, holder, w.mod_revision});
    success.push_back(Op::remove(holder));
    failure.push_back(Op::range(holder));
  }
  success.push_back(Op::put(fence_key, text));

  Result<TxnReply> reply = kv_.txn(compares, success, failure);
  if (!reply.is_ok()) {
    if (reply.status().code() != Code::kUnavailable) return reply.status();
    // Unknown outcome: the record carries this call's own instant, so
    // finding it in place means the transaction applied.
    Result<std::optional<KeyValue>> now = kv_.get(fence_key);
    if (!now.is_ok() || !now.value() || now.value()->value != text) return reply.status();
  } else if (!reply->succeeded) {
    for (std::size_t i = 0; i < target.workers.size(); ++i) {
      Result<std::optional<KeyValue>> holder = kv_of(reply.value(), i);
      if (!holder.is_ok()) return holder.status();
      if (holder.value()) return FenceOutcome::kChanged;
    }
    return FenceOutcome::kNothingHeld;
  }

  // The holder keys are gone, and their watches have fired. Now as
  // `snowid workers fence` does: end the leases, then start each id's
  // quarantine at now. Best effort: a lease left alive is abandoned by its
  // holder once it sees the deletion (or expires), and a mark left as it
  // was still holds the id until its high-water mark plus the quarantine.
  std::set<std::int64_t> leases;
  for (const HeldWorker& w : target.workers) {
    if (w.lease != 0) leases.insert(w.lease);
  }
  for (const std::int64_t lease : leases) (void)kv_.revoke(lease);
  for (const HeldWorker& w : target.workers) {
    (void)write_fence_release(kv_, worker_keys_, w.worker, clock_);
  }
  return FenceOutcome::kFenced;
}

Result<std::vector<FenceRecord>> EtcdSkewStore::fences_impl() {
  const std::string prefix = keys_.fences();
  Result<RangeReply> range = kv_.range(prefix, prefix_end(prefix));
  if (!range.is_ok()) return range.status();
  std::vector<FenceRecord> out;
  for (const KeyValue& kv : range->kvs) {
    const std::optional<std::string> target = keys_.fence_of(kv.key);
    if (!target) continue;
    Result<FenceRecord> record = decode_fence_record(kv.value);
    if (!record.is_ok()) {
      return Status(Code::kDataLoss, kv.key + ": " + record.status().message());
    }
    if (record->target != *target) {
      return Status(Code::kDataLoss,
                    kv.key + ": the record names another target, \"" + record->target + "\"");
    }
    out.push_back(std::move(record).value());
  }
  std::sort(out.begin(), out.end(), [](const FenceRecord& a, const FenceRecord& b) {
    if (a.at != b.at) return a.at > b.at;
    return a.target < b.target;
  });
  return out;
}

}  // namespace

Result<std::unique_ptr<SkewStore>> SkewStore::open(SkewStoreOptions options) {
  try {
    // The registry's checks, with its messages, on what the store shares
    // with it: endpoints, namespace, timeouts, TLS and user.
    EtcdOptions etcd;
    etcd.endpoints = options.gateway.endpoints;
    etcd.prefix = options.prefix;
    etcd.cluster = options.cluster;
    etcd.request_timeout = options.gateway.request_timeout;
    etcd.ca_file = options.gateway.ca_file;
    etcd.cert_file = options.gateway.cert_file;
    etcd.key_file = options.gateway.key_file;
    etcd.user = options.gateway.user;
    etcd.password = options.gateway.password;
    Result<GatewayOptions> gateway = gateway_options_for(std::move(etcd));
    if (!gateway.is_ok()) return gateway.status();
    if (!valid_host_name(options.host)) {
      return invalid("skew store: the host name must be 1 to 253 bytes without '/', not \"" +
                     options.host.substr(0, 80) + "\"");
    }
    if (options.lease_ttl < std::chrono::seconds(2) || options.lease_ttl > std::chrono::hours(1) ||
        options.lease_ttl % std::chrono::seconds(1) != Duration::zero()) {
      return invalid("skew store: lease_ttl must be whole seconds from 2 s to 1 hour");
    }
    const Clock& clock = options.clock != nullptr ? *options.clock : system_clock();
    auto store =
        std::make_unique<EtcdSkewStore>(std::move(options), std::move(gateway).value(), clock);
    if (const Status s = store->start(); !s.is_ok()) return s;
    return std::unique_ptr<SkewStore>(std::move(store));
  } catch (const std::exception& e) {
    return unavailable(std::string("skew store: ") + e.what());
  }
}

}  // namespace snowid::etcd
