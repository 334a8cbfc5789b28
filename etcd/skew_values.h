// The skew monitor's values in etcd (docs/protocol.md, "The skew monitor").
// Persistent formats, compact JSON with the members sorted by name:
//
// The fence record, at <prefix>/<cluster>/skew/<region>/fences/<target>,
// without a lease, written by the fence transaction itself:
//   {"at_ns":1800000000123456789,"fencer":"h1","reason":"skew decision=fence ...",
//    "target":"h3","v":1,"votes":[{"vote":{<vote record>},"voter":"h2"}],
//    "workers":[{"host":17,"region":1}]}
// where each vote is the voter's vote record (skew/vote_record.h) as an
// object, its members sorted by name too.
//
// The agent value, at <prefix>/<cluster>/skew/<region>/agents/<host>, under
// the agent's lease: {"address":"10.0.0.5:7000"}.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "quorum.h"
#include "snowid/layout.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::etcd {

// A fence as recorded at skew/<region>/fences/<target>.
struct FenceRecord {
  std::string target;
  std::string fencer;
  WallTime at{};                      // on the fencer's clock
  std::vector<skew::CastVote> votes;  // the votes that were counted
  std::vector<WorkerId> workers;      // the ids whose holder keys were deleted
  std::string reason;                 // the explanation's log line
};

// Strings that are not UTF-8 are written with replacement characters.
std::string encode_fence_record(const FenceRecord& record);

// Reads a record as docs/protocol.md says: a JSON object with "v" 1, a
// string "target" and an integer "at_ns" (int64 nanoseconds since the Unix
// epoch); "fencer" and "reason" strings, "votes" an array of {"voter":
// string, "vote": a vote record that skew::parse_vote accepts}, "workers" an
// array of {"region","host"} integers within 32 bits unsigned. Those four
// may be absent or null (empty). Members it does not know are ignored.
// Anything else is kDataLoss naming what is wrong. Never throws.
Result<FenceRecord> decode_fence_record(std::string_view text);

// A monitor-only agent's announcement.
struct AgentValue {
  std::string address;  // where peers probe it, "host:port"
};

std::string encode_agent(const AgentValue& agent);
// A JSON object; "address" a string, absent or null: empty. Members it does
// not know are ignored. Anything else is kDataLoss. Never throws.
Result<AgentValue> decode_agent(std::string_view text);

}  // namespace snowid::etcd
