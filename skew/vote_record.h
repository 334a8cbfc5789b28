// The vote an observer writes to etcd against a clock it finds beyond the
// fence, at <prefix>/<cluster>/skew/<region>/votes/<target>/<voter> under the
// voter's own lease (docs/skew.md, "The vote record"; docs/protocol.md, "The
// skew monitor"). A persistent format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "measurement.h"
#include "snowid/status.h"
#include "snowid/time.h"
#include "state.h"

namespace snowid::skew {

// Which evidence the vote rests on.
enum class VoteBasis : std::uint8_t { kPeers, kReference, kBoth };

struct VoteRecord {
  // The voter's held measurement of the target: target minus voter.
  Reading offset;
  Duration delay{};
  // When the voter took it, on the voter's clock.
  WallTime measured_at{};
  // The reference's offset from the voter (reference minus voter), if it has one.
  std::optional<Reading> reference;
  // The target's deviation the vote rests on (from the median band, or from
  // the reference), which the fencer checks against its own fence limit.
  Reading deviation;
  VoteBasis basis = VoteBasis::kPeers;
  // The voter's own state when it voted (ok or alert).
  State voter_state = State::kOk;
  // The mod_revision of the target's holder key that the voter saw: the fence
  // transaction compares it, so a vote never fences a later holder.
  std::int64_t holder_revision = 0;
};

// The record as one line of JSON, keys in a fixed order:
// {"v":1,"offset_ns":..,"uncertainty_ns":..,"delay_ns":..,"measured_at_ns":..,
//  "reference_offset_ns":..|null,"reference_uncertainty_ns":..|null,
//  "deviation_ns":..,"deviation_uncertainty_ns":..,"basis":"peers",
//  "voter_state":"ok","holder_revision":..}
std::string encode_vote(const VoteRecord& record);

// The strict reader: one JSON object with exactly the keys above (any order,
// each once), integers in int64 range without fraction or exponent, the two
// reference fields both null or both integers, "v" 1, uncertainties and the
// delay >= 0, a revision > 0, basis one of "peers" | "reference" | "both",
// voter_state "ok" or "alert", at most 1024 bytes. Anything else is
// kInvalidArgument (kDataLoss is not used: a bad vote is ignored, not
// repaired), with a message naming the key.
Result<VoteRecord> parse_vote(std::string_view text);

// <namespace>/skew/<region>/votes/<target>/<voter>, where the namespace is
// the registry's "<prefix>/<cluster>" (no trailing "/"). Target and voter are
// host names without '/' (etcd/skew_keys.h checks them).
std::string vote_key(std::string_view ns, std::uint32_t region, std::string_view target,
                     std::string_view voter);

std::string_view basis_name(VoteBasis basis) noexcept;

}  // namespace snowid::skew
