// The skew monitor's state in etcd (docs/protocol.md, "The skew monitor"):
// who is in a region, the votes its observers cast, and the fence
// transaction. One SkewStore per monitor (a snowidd with etcd, or a
// `snowidd --monitor-only` agent); thread-safe.
//
// Keys, under the namespace <prefix>/<cluster>:
//   skew/<region>/agents/<host>          a monitor-only agent, under the store's lease
//   skew/<region>/votes/<target>/<voter> a vote (skew/vote_record.h), under the voter's lease
//   skew/<region>/fences/<target>        the last fence of a host, no lease
// Hosts are the `host` names of holder values; a host may hold several ids.
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
#include "snowid/layout.h"
#include "snowid/status.h"
#include "snowid/time.h"
#include "vote_record.h"

namespace snowid::etcd {

struct SkewStoreOptions {
  GatewayOptions gateway;
  std::string prefix = "/snowid";  // validated as the registry validates it
  std::string cluster = "default";
  std::uint32_t region = 0;
  std::string host;  // this monitor's host name: the voter name; 1..253 bytes, no '/'
  // Set for a monitor-only agent: its probe address, announced under
  // skew/<region>/agents/<host> so that peers probe it too. Empty: no key.
  std::string agent_address;
  // The TTL of the store's own lease, which the votes and the agent key are
  // attached to; kept alive by the store every third of it.
  Duration lease_ttl = std::chrono::seconds(10);
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
  // The address to probe: the holder value's `address` (the RESP listener,
  // "host:port"), or the agent key's. Empty when it has none: it is not
  // probed and cannot be judged by peers.
  std::string address;
  std::vector<HeldWorker> workers;  // sorted by worker
  bool agent = false;
  // The highest mod_revision among `workers`: what a vote records as
  // holder_revision, and what the fence compares (no key newer than it).
  std::int64_t holder_revision() const noexcept;
};

// A fence as recorded at skew/<region>/fences/<target>: JSON, written by
// the transaction that deletes the holder keys.
struct FenceRecord {
  std::string target;
  std::string fencer;
  WallTime at{};                      // on the fencer's clock
  std::vector<skew::CastVote> votes;  // the votes that were counted
  std::vector<WorkerId> workers;      // the ids whose holder keys were deleted
  std::string reason;                 // the explanation's log line
};

enum class FenceOutcome {
  kFenced,      // the holder keys are deleted and the record written
  kChanged,     // a compare failed: a vote was withdrawn or replaced, or a holder key is newer
  kNothingHeld  // the target holds no id now
};

class SkewStore {
 public:
  // Grants the lease, starts its keepalive and puts the agent key.
  // kUnavailable when etcd does not answer; kInvalidArgument for bad options.
  static Result<std::unique_ptr<SkewStore>> open(SkewStoreOptions options);
  // Revokes the lease: this monitor's votes and agent key go with it.
  virtual ~SkewStore() = default;

  // Every host of the region, from one linearizable range over its holder
  // keys and one over its agent keys; unreadable holder values are skipped.
  virtual Result<std::vector<FleetMember>> members() = 0;

  // Puts (or replaces) this monitor's vote against `target`, under the lease.
  virtual Status cast_vote(std::string_view target, const skew::VoteRecord& vote) = 0;
  // Deletes this monitor's vote against `target` (none: ok).
  virtual Status withdraw_vote(std::string_view target) = 0;

  // The votes against `target` that parse; `mod_revisions` (same order)
  // lets fence() compare that they are unchanged. Unparsable votes are
  // skipped and counted in `unreadable`.
  struct Votes {
    std::vector<skew::CastVote> votes;
    std::vector<std::int64_t> mod_revisions;
    std::size_t unreadable = 0;
  };
  virtual Result<Votes> votes(std::string_view target) = 0;

  // The fence transaction. Compares every counted vote key's mod_revision
  // (from votes()) and that no holder key of `target` has a mod_revision
  // above `holder_revision`; then deletes those holder keys and writes the
  // record. Afterwards revokes the leases and writes each mark's
  // released_at (docs/protocol.md, "Fence"). `counted` must be a subset of
  // `all` (by voter).
  virtual Result<FenceOutcome> fence(const FleetMember& target, const Votes& all,
                                     const std::vector<std::string>& counted_voters,
                                     const std::string& reason) = 0;

  // The last fence of each host of the region, newest first.
  virtual Result<std::vector<FenceRecord>> fences() = 0;
};

}  // namespace snowid::etcd
