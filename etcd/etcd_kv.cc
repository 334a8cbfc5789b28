#include "etcd_kv.h"

#include <utility>

#include "snowid/lease_rules.h"

namespace snowid::etcd {
namespace {

Status unavailable(std::string message) { return Status(Code::kUnavailable, std::move(message)); }

}  // namespace

Result<RangeReply> EtcdKv::range(const std::string& key, const std::string& end,
                                 const GatewayClient::CallOptions& call) {
  Result<std::string> body = client_.call("/v3/kv/range", range_body(key, end), call);
  if (!body.is_ok()) return body.status();
  Result<RangeReply> reply = parse_range(body.value());
  if (reply.is_ok() && observe_) observe_(reply->header);
  return reply;
}

Result<std::optional<KeyValue>> EtcdKv::get(const std::string& key,
                                            const GatewayClient::CallOptions& call) {
  Result<RangeReply> r = range(key, {}, call);
  if (!r.is_ok()) return r.status();
  if (r->kvs.empty()) return std::optional<KeyValue>();
  return std::optional<KeyValue>(r->kvs.front());
}

Result<TxnReply> EtcdKv::txn(const std::vector<Compare>& compares, const std::vector<Op>& success,
                             const std::vector<Op>& failure,
                             const GatewayClient::CallOptions& call) {
  Result<std::string> body = client_.call("/v3/kv/txn", txn_body(compares, success, failure), call);
  if (!body.is_ok()) return body.status();
  Result<TxnReply> reply = parse_txn(body.value());
  if (reply.is_ok() && observe_) observe_(reply->header);
  return reply;
}

Status EtcdKv::revoke(std::int64_t lease) {
  Result<std::string> body = client_.call("/v3/lease/revoke", lease_id_body(lease));
  if (!body.is_ok() && body.status().code() != Code::kNotFound) return body.status();
  return Status::ok();
}

Result<std::optional<KeyValue>> kv_of(const TxnReply& reply, std::size_t i) {
  if (reply.responses.size() <= i || reply.responses[i].kind != Op::Kind::kRange) {
    return unavailable("etcd gateway sent a txn reply without the expected range");
  }
  const std::vector<KeyValue>& kvs = reply.responses[i].kvs;
  if (kvs.empty()) return std::optional<KeyValue>();
  return std::optional<KeyValue>(kvs.front());
}

Result<MarkValue> mark_of(const std::optional<KeyValue>& kv) {
  if (!kv) return MarkValue{};
  return decode_mark(kv->value);
}

Status update_mark(EtcdKv& kv, const WorkerKeys& keys, const MarkUpdate& update,
                   std::optional<KeyValue> mark) {
  const std::string holder_key = keys.holder(update.worker);
  const std::string mark_key = keys.mark(update.worker);
  for (int round = 0; round < kMarkRounds; ++round) {
    Result<MarkValue> old_mark = mark_of(mark);
    if (!old_mark.is_ok()) return old_mark.status();
    const std::int64_t seen = mark ? mark->mod_revision : 0;
    std::vector<Op> success{Op::put(mark_key, update.next(old_mark.value()))};
    success.insert(success.end(), update.also.begin(), update.also.end());
    Result<TxnReply> reply =
        kv.txn({{Compare::Target::kCreate, holder_key, update.holder_revision},
                {Compare::Target::kMod, mark_key, seen}},
               success, {Op::range(holder_key), Op::range(mark_key)}, update.call);
    if (!reply.is_ok()) {
      if (!update.failed) return reply.status();
      if (std::optional<Status> end = update.failed(reply.status(), mark)) return *end;
      continue;
    }
    if (reply->succeeded) return Status::ok();
    Result<std::optional<KeyValue>> holder = kv_of(reply.value(), 0);
    if (!holder.is_ok()) return holder.status();
    Result<std::optional<KeyValue>> now_mark = kv_of(reply.value(), 1);
    if (std::optional<Status> end = update.refused(holder.value(), now_mark)) return *end;
    if (!now_mark.is_ok()) return now_mark.status();
    mark = std::move(now_mark).value();
  }
  return unavailable("the mark of worker " + to_string(update.worker) + " kept changing");
}

Status write_fence_release(EtcdKv& kv, const WorkerKeys& keys, WorkerId worker,
                           const Clock& clock) {
  // Start the quarantine: released_at = now, keeping the high-water mark.
  Result<std::optional<KeyValue>> mark = kv.get(keys.mark(worker));
  if (!mark.is_ok()) return mark.status();
  MarkUpdate update;
  update.worker = worker;
  update.holder_revision = 0;
  update.next = [&](const MarkValue& old) {
    MarkValue new_mark = old;
    new_mark.released_at = clock.wall_now();
    return encode_mark(new_mark);
  };
  update.refused = [](const std::optional<KeyValue>& now_holder,
                      const Result<std::optional<KeyValue>>&) -> std::optional<Status> {
    // Someone acquired the id since: the fenced holder is gone and the mark
    // belongs to the new one.
    if (now_holder) return Status::ok();
    return std::nullopt;
  };
  return update_mark(kv, keys, update, mark.value());
}

}  // namespace snowid::etcd
