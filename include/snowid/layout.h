// The id layout: which bits of a 64-bit id hold time, region, host and
// sequence. A layout is a persistent format (docs/id-format.md): ids already
// stored must keep decoding, so a layout that has issued ids never changes;
// a new one is added to a LayoutHistory instead.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid {

// What a field means. Values are stable (they appear in layout files).
enum class FieldRole : std::uint8_t {
  kTime = 0,      // ticks of `unit` since `epoch`; must be the most significant field
  kRegion = 1,    // high part of the worker id: a block of workers per region
  kHost = 2,      // low part of the worker id: one generator within the region
  kSequence = 3,  // counter within one tick
  kOther = 4,     // decode-only fields of foreign layouts (e.g. a process id)
};
std::string_view role_name(FieldRole role) noexcept;
// Parses "time", "region", "host", "sequence" or "other".
Result<FieldRole> parse_role(std::string_view name);

// 2026-01-01T00:00:00Z, the default epoch of snowid's own layout.
inline constexpr std::int64_t kDefaultEpochUnixMs = 1767225600000;
inline constexpr int kMaxFields = 8;
// Every layout snowid generates with uses exactly this many bits; the sign bit stays 0.
inline constexpr int kGenerationBits = 63;

// The default layout's widths. Changing any of them changes the format.
inline constexpr int kDefaultTimeBits = 41;
inline constexpr int kDefaultRegionBits = 2;
inline constexpr int kDefaultHostBits = 8;
inline constexpr int kDefaultSequenceBits = 12;
static_assert(kDefaultTimeBits + kDefaultRegionBits + kDefaultHostBits + kDefaultSequenceBits ==
                  kGenerationBits,
              "the default layout must use exactly 63 bits, leaving the sign bit 0");
static_assert(kDefaultRegionBits + kDefaultHostBits == 10, "1,024 workers");

struct FieldSpec {
  std::string name;  // [a-z0-9_]+, unique within the layout
  FieldRole role = FieldRole::kOther;
  int width = 0;  // bits; at least 1
};

struct LayoutSpec {
  std::string name;  // for humans and `decode` output
  std::int64_t epoch_unix_ms = kDefaultEpochUnixMs;
  std::int64_t unit_ms = 1;  // 1 or 10
  // From the most significant bit down. Snowid's layouts: time, region, host,
  // sequence (region and host may be left out), 63 bits in all.
  std::vector<FieldSpec> fields;
  // Foreign layouts (twitter, discord, ...) are read, never generated with.
  bool decode_only = false;
};

struct FieldInfo {
  std::string name;
  FieldRole role = FieldRole::kOther;
  int width = 0;
  int shift = 0;  // position of the field's least significant bit
  std::uint64_t max_value() const noexcept { return (std::uint64_t{1} << width) - 1; }
};

// The generator's identity: a region block and a host within it.
struct WorkerId {
  std::uint32_t region = 0;
  std::uint32_t host = 0;
  friend bool operator==(const WorkerId&, const WorkerId&) = default;
};

struct DecodedId {
  std::uint64_t id = 0;
  std::int64_t ticks = 0;  // value of the time field
  WallTime time;           // start of that tick
  int field_count = 0;
  std::array<std::uint64_t, kMaxFields> values{};  // in the layout's field order
};

// An immutable, validated layout. Cheap to copy.
class Layout {
 public:
  // Validates the structure: widths, names, roles, epoch, unit. Does not look
  // at the current time; see check_layout for that.
  static Result<Layout> create(LayoutSpec spec);
  // 1 sign · 41 time · 2 region · 8 host · 12 sequence, epoch 2026-01-01, 1 ms.
  static const Layout& snowid_default() noexcept;

  const std::string& name() const noexcept { return name_; }
  std::int64_t epoch_unix_ms() const noexcept { return epoch_ms_; }
  WallTime epoch() const noexcept { return wall_from_unix_ms(epoch_ms_); }
  std::int64_t unit_ms() const noexcept { return unit_ms_; }
  std::span<const FieldInfo> fields() const noexcept { return fields_; }
  bool decode_only() const noexcept { return decode_only_; }
  // True for snowid's own generation layouts: time, [region], [host],
  // sequence, 63 bits, not decode-only.
  bool can_generate() const noexcept { return can_generate_; }
  int total_width() const noexcept { return total_width_; }

  // Index into fields() of the field with that role, or -1.
  int index_of(FieldRole role) const noexcept;
  int width_of(FieldRole role) const noexcept;
  int shift_of(FieldRole role) const noexcept;

  std::uint64_t max_id() const noexcept;  // all total_width() bits set
  std::int64_t max_ticks() const noexcept;
  std::uint64_t regions() const noexcept {
    return std::uint64_t{1} << width_of(FieldRole::kRegion);
  }
  std::uint64_t workers_per_region() const noexcept {
    return std::uint64_t{1} << width_of(FieldRole::kHost);
  }
  std::uint64_t sequence_capacity() const noexcept {
    return std::uint64_t{1} << width_of(FieldRole::kSequence);
  }
  // The first instant whose tick no longer fits the time field, in Unix ms.
  std::int64_t end_of_life_unix_ms() const noexcept;

  // Tick containing `t`, floor((t - epoch) / unit); may be negative or past max_ticks().
  std::int64_t ticks_at(WallTime t) const noexcept;
  WallTime time_of_ticks(std::int64_t ticks) const noexcept;

  // Composes an id from one value per field, in field order; each must fit.
  Result<std::uint64_t> encode(std::span<const std::uint64_t> values) const;
  // Composes an id of a layout with time, region, host and sequence roles.
  Result<std::uint64_t> encode(std::int64_t ticks, WorkerId worker, std::uint64_t sequence) const;
  // Splits an id. Refuses ids that use bits beyond total_width().
  Result<DecodedId> decode(std::uint64_t id) const;
  Status check_worker(WorkerId worker) const;

  // Smallest and largest id any worker of this layout can produce during the
  // tick that contains `t`: bounds for time-range queries and partitions.
  Result<std::uint64_t> min_id_at(WallTime t) const;
  Result<std::uint64_t> max_id_at(WallTime t) const;

 private:
  Layout() = default;

  std::string name_;
  std::int64_t epoch_ms_ = 0;
  std::int64_t unit_ms_ = 1;
  std::vector<FieldInfo> fields_;
  bool decode_only_ = false;
  bool can_generate_ = false;
  int total_width_ = 0;
};

// What depends on the current time: the epoch must not be in the future, and
// the layout should have years left.
struct LayoutReport {
  std::int64_t end_of_life_unix_ms = 0;
  double years_remaining = 0;
  std::uint64_t regions = 0;
  std::uint64_t workers_per_region = 0;
  std::uint64_t ids_per_worker_per_unit = 0;
  std::vector<std::string> warnings;  // e.g. fewer than 10 years left
};
inline constexpr double kEndOfLifeWarningYears = 10.0;
Result<LayoutReport> check_layout(const Layout& layout, WallTime now);

// Decode presets for ids people already have. "snowid" is the default
// generation layout; "twitter", "discord", "instagram" and "sonyflake" are
// decode-only with each scheme's own field names.
Result<Layout> preset(std::string_view name);
std::span<const std::string_view> preset_names() noexcept;

// A shard in [0, shards) for an id, from a fixed 64-bit mixing function, so
// that time-ordered ids spread evenly over shards (never shard by id range).
// The mapping is part of the format and never changes. `shards` must be > 0.
std::uint32_t shard_of(std::uint64_t id, std::uint32_t shards) noexcept;

}  // namespace snowid
