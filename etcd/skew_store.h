// The skew monitor's state in etcd (docs/protocol.md, section 13, "The skew monitor"):
// who is in a region, the votes its observers cast, and the fence
// transaction. One SkewStore per monitor (a snowidd with etcd, or a
// `snowidd --monitor-only` agent); thread-safe.
//
// Keys, under the namespace <prefix>/<cluster> (the registry's, whose worker
// keys sit beside them under workers/), region in decimal (skew_keys.h):
//   skew/<region>/agents/<host>          a monitor-only agent, under the store's lease
//   skew/<region>/votes/<target>/<voter> a vote (skew/vote_record.h), under the voter's lease
//   skew/<region>/fences/<target>        the last fence of a host, no lease (skew_values.h)
// Hosts are the `host` names of holder values; a host may hold several ids.
// Only a host name of 1 to 253 bytes without '/' can be voted on or fenced.
// An interface, so that the monitor's rules can be tested on a simulated
// store; open() gives the one on etcd.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway_client.h"
#include "quorum.h"
#include "skew_values.h"
#include "snowid/layout.h"
#include "snowid/status.h"
#include "snowid/time.h"
#include "vote_record.h"

namespace snowid::etcd {

struct SkewStoreOptions {
  // Validated as make_etcd_registry validates the EtcdOptions it comes from
  // (etcd_registry_internal.h: gateway_options_for).
  GatewayOptions gateway;
  std::string prefix = "/snowid";  // validated as the registry validates it
  std::string cluster = "default";
  std::uint32_t region = 0;
  std::string host;  // this monitor's host name: the voter name; 1..253 bytes, no '/'
  // Set for a monitor-only agent: its probe address, announced under
  // skew/<region>/agents/<host> so that peers probe it too. Empty: no key.
  std::string agent_address;
  // The TTL of the store's own lease, which the votes and the agent key are
  // attached to; kept alive by the store every third of it. Whole seconds,
  // 2 s to 1 hour.
  Duration lease_ttl = std::chrono::seconds(10);
  // The fencer's clock: the fence record's `at` and the marks' released_at.
  // Null: system_clock(). Must outlive the store.
  const Clock* clock = nullptr;
};

// One id a host holds, as its holder key shows it.
struct HeldWorker {
  WorkerId worker;
  std::int64_t lease = 0;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
};

// A host of the region: every holder key whose value names it, and its agent
// key if it runs a monitor-only agent.
struct FleetMember {
  std::string host;
  // The address to probe: the agent key's, when it has one, else the
  // holder value's `address` (the RESP listener, "host:port") of its lowest
  // id that has one. Empty when it has none: it is not probed and cannot be
  // judged by peers.
  std::string address;
  std::vector<HeldWorker> workers;  // sorted by worker
  bool agent = false;
  // The highest mod_revision among `workers` (0 without any): what a vote
  // records as holder_revision. The fence compares each key's own.
  std::int64_t holder_revision() const noexcept;
};

enum class FenceOutcome {
  kFenced,      // the holder keys are deleted and the record written
  kChanged,     // a compare failed: a vote was withdrawn or replaced, or a holder key is newer
  kNothingHeld  // the target holds no id now (of those `target.workers` lists)
};

class SkewStore {
 public:
  // Grants the lease, starts its keepalive and puts the agent key.
  // kUnavailable when etcd does not answer; kInvalidArgument for bad options
  // (or a user or password etcd refuses); kFailedPrecondition when etcd
  // grants a shorter lease than asked for. A lease that etcd loses (a
  // keepalive finds it gone) is replaced at once by a fresh one, with the
  // agent key put on it again; the votes on the old one are gone and are
  // cast again by the monitor's next round.
  static Result<std::unique_ptr<SkewStore>> open(SkewStoreOptions options);
  // The store on etcd stops its keepalive and revokes the lease (one pass
  // over the members, within the request timeout): this monitor's votes and
  // agent key go with it.
  virtual ~SkewStore() = default;

  // Every host of the region, from one linearizable range over its holder
  // keys and one over its agent keys; unreadable holder values are skipped.
  virtual Result<std::vector<FleetMember>> members() = 0;

  // Puts (or replaces) this monitor's vote against `target`, under the lease.
  // kInvalidArgument for a target that is not a host name (1..253 bytes, no
  // '/') or a vote that skew::parse_vote would refuse; kUnavailable when the
  // lease was found gone (a fresh one is being granted: cast it again).
  virtual Status cast_vote(std::string_view target, const skew::VoteRecord& vote) = 0;
  // Deletes this monitor's vote against `target` (none: ok).
  virtual Status withdraw_vote(std::string_view target) = 0;

  // The votes against `target` that parse, sorted by voter, from one
  // linearizable range; `mod_revisions` (same order) lets fence() compare
  // that they are unchanged. Unparsable votes are skipped and counted in
  // `unreadable`; keys that are not a vote (a voter name with '/') are
  // skipped as foreign.
  struct Votes {
    std::vector<skew::CastVote> votes;
    std::vector<std::int64_t> mod_revisions;
    std::size_t unreadable = 0;
  };
  virtual Result<Votes> votes(std::string_view target) = 0;

  // The fence transaction (docs/protocol.md, "The skew monitor"). Compares
  // every counted vote key's mod_revision (from votes()) and every holder
  // key of `target.workers` against the mod_revision listed there (EQUAL:
  // the gateway's compares here are EQUAL only, so no key may be newer than
  // members() saw, and none may be gone); then deletes those holder keys and
  // writes the record, with this store's host as the fencer, the clock's
  // now and the counted votes. Afterwards revokes the holders' leases and
  // writes each mark's released_at as `snowid workers fence` does
  // (docs/protocol.md, section 10), best effort: the fence has happened
  // whatever they return. kNothingHeld without a transaction when
  // `target.workers` is empty, or when the compares failed and none of those
  // holder keys exists any more; kChanged when they failed otherwise.
  // kInvalidArgument (nothing sent) when `counted_voters` is not a subset of
  // `all` by voter or names a voter twice, when `all`'s two vectors differ
  // in length, when the target is not a host name, or when a worker is
  // outside the store's region or listed twice. No counted voter (a host
  // recording its own fence) compares the holder keys only. The compares
  // (votes plus holder keys) must stay within etcd's --max-txn-ops (128 by
  // default). kUnavailable with an unknown outcome: the record is read back
  // once, and finding the one sent completes the fence.
  virtual Result<FenceOutcome> fence(const FleetMember& target, const Votes& all,
                                     const std::vector<std::string>& counted_voters,
                                     const std::string& reason) = 0;

  // The last fence of each host of the region, newest first (ties by
  // target), from one linearizable range. kDataLoss naming the key when a
  // record is unreadable or names another target than its key: the
  // blast-radius cap counts these, so none is skipped (an operator deletes
  // the key with etcdctl).
  virtual Result<std::vector<FenceRecord>> fences() = 0;
};

}  // namespace snowid::etcd
