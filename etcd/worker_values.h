// The values the registry stores for each worker id, as JSON that operators
// can read with etcdctl:
//   holder  {"host":"web-1","pid":4242,"started":"2026-03-01T10:00:00.000Z",
//            "address":"10.0.0.5:7000","lease":"694d7f3a1c2b9e05"}
//           (lease in hexadecimal, as etcdctl prints lease ids)
//   mark    {"high_water_ms":1772359200123,"released_at_ms":1772359200150,
//            "clean_release_ms":1772359200123}
//           (Unix milliseconds; released_at_ms absent until a release or fence;
//           clean_release_ms written by a clean release only, see MarkValue)
//   store   {"incarnation":"3f9c0a7d5e2b4c18","high_water_ms":1772359208123,
//            "reason":"new or lost store","written_ms":1772359200123}
//           (one per <prefix>/<cluster>; high_water_ms absent when none)
// And the grant token handed to the holder: "etcd:<lease hex>:<holder create
// revision>:<region>:<host>".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "snowid/layout.h"
#include "snowid/lease.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::etcd {

struct HolderValue {
  HolderInfo info;
  std::int64_t lease = 0;
};

std::string encode_holder(const HolderInfo& info, std::int64_t lease);
// kDataLoss if `text` is not a holder value.
Result<HolderValue> decode_holder(std::string_view text);

struct MarkValue {
  // Stored rounded up to the millisecond: a later holder waits past it, so
  // rounding up can only make it wait longer.
  std::optional<WallTime> high_water;
  std::optional<WallTime> released_at;
  // Written by a clean release: the high water it recorded, which is exact
  // (the holder had stopped, and it is its last instant or an earlier
  // holder's mark if that is later). It vouches for the mark only while
  // high_water still equals it: a later holder's acquire always raises the
  // mark past it, and writers that do not know it (an older version, acquire
  // and renew copying the value) may leave it behind stale. Absent in values
  // written before it existed: those read as not clean.
  std::optional<WallTime> clean_release;
};

// Whether the mark was last set by a clean release (see
// MarkValue::clean_release) and records when: the id then needs no quarantine
// beyond its release time and its exact last instant.
bool released_clean(const MarkValue& mark);

// The instant an id that is not held becomes free, on the acquirer's clock:
// `quarantine` after the later of its release time and its high-water mark,
// or that instant itself after a clean release (docs/protocol.md,
// "Quarantine"). nullopt: free since forever (no mark, or one without
// either instant).
std::optional<WallTime> free_from(const MarkValue& mark, Duration quarantine);

// The previous high-water mark a grant carries: the later of the mark the
// acquire transaction saw and the store record's store-wide mark.
std::optional<WallTime> grant_previous_high_water(std::optional<WallTime> mark,
                                                  std::optional<WallTime> store);

std::string encode_mark(const MarkValue& mark);
// kDataLoss if `text` is not a mark value.
Result<MarkValue> decode_mark(std::string_view text);

// The namespace's store record (docs/leases.md, "When etcd loses data").
struct StoreValue {
  // 16 lower-case hex digits, drawn anew each time the record is written
  // because the store was found new, lost or restored.
  std::string incarnation;
  // Every id counts as marked at least at this instant: nothing issued under
  // a lost store can be later. Rounded up to the millisecond.
  std::optional<WallTime> high_water;
  // Why the record was last written, for operators.
  std::string reason;
  WallTime written_at{};
};

std::string encode_store(const StoreValue& store);
// kDataLoss if `text` is not a store record.
Result<StoreValue> decode_store(std::string_view text);

struct GrantToken {
  std::int64_t lease = 0;
  std::int64_t create_revision = 0;  // of the holder key
  WorkerId worker;
};

std::string encode_token(const GrantToken& token);
// kInvalidArgument if `text` is not a token this registry made.
Result<GrantToken> decode_token(std::string_view text);

}  // namespace snowid::etcd
