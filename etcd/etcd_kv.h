// What the etcd registry (etcd_registry.cc) and the skew monitor's store
// (skew_store.cc) both do in etcd: linearizable ranges and transactions over
// the gateway, revoking a lease, the compare-and-set of a worker id's mark
// (docs/protocol.md, sections 6 and 11) and the mark a fence leaves behind
// (section 10). Internal to snowid_etcd; not installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway_client.h"
#include "gateway_json.h"
#include "snowid/layout.h"
#include "snowid/status.h"
#include "snowid/time.h"
#include "worker_keys.h"
#include "worker_values.h"

namespace snowid::etcd {

// Rounds of compare-and-set on a mark (or the store record) before renew,
// release or fence give up.
inline constexpr int kMarkRounds = 16;

// Ranges, transactions and lease revocation on one GatewayClient. Every
// range and transaction is linearizable (the gateway's default). Thread-safe
// as the client is.
class EtcdKv {
 public:
  // Sees the header of every range and transaction reply that parses (the
  // registry checks that no reply shows an earlier store than one already
  // seen). Called on the calling thread.
  using Observer = std::function<void(const Header&)>;

  // `client` must outlive this object. `observe` may be null.
  explicit EtcdKv(GatewayClient& client, Observer observe = nullptr)
      : client_(client), observe_(std::move(observe)) {}
  EtcdKv(const EtcdKv&) = delete;
  EtcdKv& operator=(const EtcdKv&) = delete;

  GatewayClient& client() noexcept { return client_; }

  // The keys in [key, end), or `key` alone when `end` is empty.
  Result<RangeReply> range(const std::string& key, const std::string& end = {},
                           const GatewayClient::CallOptions& call = {});
  // One key; none when it does not exist.
  Result<std::optional<KeyValue>> get(const std::string& key,
                                      const GatewayClient::CallOptions& call = {});
  Result<TxnReply> txn(const std::vector<Compare>& compares, const std::vector<Op>& success,
                       const std::vector<Op>& failure, const GatewayClient::CallOptions& call = {});
  // OK also when the lease is already gone (etcd's "lease not found").
  Status revoke(std::int64_t lease);

 private:
  GatewayClient& client_;
  const Observer observe_;
};

// The first kv of the i-th response of a transaction's branch, which must be
// a range (kUnavailable otherwise); none when the range found nothing.
Result<std::optional<KeyValue>> kv_of(const TxnReply& reply, std::size_t i);

// A mark key's value; no key reads as an empty mark. kDataLoss if unreadable.
Result<MarkValue> mark_of(const std::optional<KeyValue>& kv);

// One compare-and-set of a worker's mark, conditional on its holder key,
// tried up to kMarkRounds times against the mark each refusal reads back.
struct MarkUpdate {
  WorkerId worker;
  // The holder key's create revision the write requires (0: no holder).
  std::int64_t holder_revision = 0;
  // The encoded mark to write in place of `old`.
  std::function<std::string(const MarkValue& old)> next;
  // Applied with the mark's put.
  std::vector<Op> also;
  // After a refusal, given the holder key and the mark it read back (not
  // yet checked): a status ends the update with it, none tries again.
  std::function<std::optional<Status>(const std::optional<KeyValue>& holder,
                                      const Result<std::optional<KeyValue>>& mark)>
      refused;
  // After a transaction that failed: a status ends the update with it,
  // none tries again against `mark`, which it may read anew. Unset: end
  // with the failure.
  std::function<std::optional<Status>(const Status& failure, std::optional<KeyValue>& mark)> failed;
  GatewayClient::CallOptions call;
};

// Runs `update` from `mark`, the mark key as last read. OK when a write
// applied or `refused` or `failed` said so; kUnavailable when every round
// was refused.
Status update_mark(EtcdKv& kv, const WorkerKeys& keys, const MarkUpdate& update,
                   std::optional<KeyValue> mark);

// The second half of a fence (docs/protocol.md, section 10), once the holder
// key of `worker` is gone: sets the mark's released_at to `clock`'s now,
// keeping the rest as read (the quarantine starts), while no holder key
// exists. A new holder found on the way ends it with OK: the mark is the new
// holder's then.
Status write_fence_release(EtcdKv& kv, const WorkerKeys& keys, WorkerId worker, const Clock& clock);

// Runs `f`, ending any exception (only std::bad_alloc and the like can be
// thrown under it) at this boundary as kUnavailable "<who>: <what>": the
// registry's and the skew store's calls promise results, never exceptions.
template <typename R, typename F>
R guarded(std::string_view who, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return R(Status(Code::kUnavailable, std::string(who) + ": " + e.what()));
  } catch (...) {
    return R(Status(Code::kUnavailable, std::string(who) + ": unexpected failure"));
  }
}

}  // namespace snowid::etcd
