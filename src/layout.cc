#include "snowid/layout.h"

#include <string>

namespace snowid {
namespace {

constexpr std::int64_t kNsPerMs = 1'000'000;
// 2262-04-11T23:47:16.854Z: the last millisecond of 64-bit nanosecond time.
constexpr std::int64_t kMaxUnixMs = INT64_MAX / kNsPerMs;

Status invalid(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }

// A name as it may appear in a message: at most 32 bytes, control and
// non-ASCII bytes replaced, since names come from files and flags.
std::string printable(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 32)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

bool valid_field_name(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

}  // namespace

std::string_view role_name(FieldRole role) noexcept {
  switch (role) {
    case FieldRole::kTime:
      return "time";
    case FieldRole::kRegion:
      return "region";
    case FieldRole::kHost:
      return "host";
    case FieldRole::kSequence:
      return "sequence";
    case FieldRole::kOther:
      return "other";
  }
  return "other";
}

Result<FieldRole> parse_role(std::string_view name) {
  for (FieldRole r : {FieldRole::kTime, FieldRole::kRegion, FieldRole::kHost, FieldRole::kSequence,
                      FieldRole::kOther}) {
    if (role_name(r) == name) return r;
  }
  return invalid("unknown field role \"" + printable(name) +
                 "\" (expected time, region, host, sequence or other)");
}

Result<Layout> Layout::create(LayoutSpec spec) {
  Layout l;
  l.name_ = spec.name.empty() ? "custom" : std::move(spec.name);
  if (spec.unit_ms != 1 && spec.unit_ms != 10) {
    return invalid("time unit must be 1 or 10 ms, not " + std::to_string(spec.unit_ms));
  }
  if (spec.epoch_unix_ms < 0 || spec.epoch_unix_ms >= kMaxUnixMs) {
    return invalid("epoch must be between 1970-01-01 and 2262-04-11, not " +
                   std::to_string(spec.epoch_unix_ms) + " ms");
  }
  if (spec.fields.empty() || spec.fields.size() > kMaxFields) {
    return invalid("a layout has 1 to " + std::to_string(kMaxFields) + " fields, not " +
                   std::to_string(spec.fields.size()));
  }
  l.epoch_ms_ = spec.epoch_unix_ms;
  l.unit_ms_ = spec.unit_ms;
  l.decode_only_ = spec.decode_only;

  int total = 0;
  int role_count[5] = {};
  for (std::size_t i = 0; i < spec.fields.size(); ++i) {
    const FieldSpec& f = spec.fields[i];
    if (!valid_field_name(f.name)) {
      return invalid("field name \"" + printable(f.name) + "\" must be 1-32 of [a-z0-9_]");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (spec.fields[j].name == f.name) return invalid("field name \"" + f.name + "\" repeats");
    }
    if (f.width < 1 || f.width > 64) {
      return invalid("field \"" + f.name + "\" must be 1 to 64 bits wide, not " +
                     std::to_string(f.width) +
                     (f.width < 1 ? " (leave a field out instead of giving it 0 bits)" : ""));
    }
    const int r = static_cast<int>(f.role);
    if (r < 0 || r > 4) return invalid("field \"" + f.name + "\" has an unknown role");
    if (f.role != FieldRole::kOther && ++role_count[r] > 1) {
      return invalid("more than one " + std::string(role_name(f.role)) + " field");
    }
    total += f.width;
  }
  if (total > 64) return invalid("fields add up to " + std::to_string(total) + " bits, over 64");
  if (spec.fields[0].role != FieldRole::kTime) {
    return invalid(
        "the first (most significant) field must be the time field, so ids sort by time");
  }
  const int time_width = spec.fields[0].width;
  if (time_width > 61) return invalid("the time field may be at most 61 bits wide");
  // End of life must stay within 64-bit nanosecond time.
  // epoch + 2^width * unit must not pass kMaxUnixMs; compared without overflow.
  const std::int64_t room_ticks = (kMaxUnixMs - spec.epoch_unix_ms) / spec.unit_ms;
  if ((std::int64_t{1} << time_width) > room_ticks) {
    return invalid("a " + std::to_string(time_width) + "-bit time field of " +
                   std::to_string(spec.unit_ms) +
                   " ms outlives 2262-04-11, the limit of time here");
  }

  int shift = total;
  for (const FieldSpec& f : spec.fields) {
    shift -= f.width;
    l.fields_.push_back(FieldInfo{f.name, f.role, f.width, shift});
  }
  l.total_width_ = total;

  // snowid's own layouts: time, [region], [host], sequence in that order, 63 bits.
  bool generation_shape = total == kGenerationBits && role_count[3] == 1;
  int last_role = -1;
  for (const FieldInfo& f : l.fields_) {
    const int r = static_cast<int>(f.role);
    if (f.role == FieldRole::kOther || r <= last_role) generation_shape = false;
    last_role = r;
  }
  if (!spec.decode_only && !generation_shape) {
    return invalid(
        "a layout to generate with has the fields time, region, host, sequence in that order "
        "(region and host may be left out) and uses exactly 63 bits; this one uses " +
        std::to_string(total) + " (mark it decode-only to read foreign ids)");
  }
  l.can_generate_ = !spec.decode_only && generation_shape;
  return l;
}

const Layout& Layout::snowid_default() noexcept {
  static const Layout layout = [] {
    LayoutSpec spec;
    spec.name = "snowid";
    spec.epoch_unix_ms = kDefaultEpochUnixMs;
    spec.unit_ms = 1;
    spec.fields = {{"time", FieldRole::kTime, kDefaultTimeBits},
                   {"region", FieldRole::kRegion, kDefaultRegionBits},
                   {"host", FieldRole::kHost, kDefaultHostBits},
                   {"sequence", FieldRole::kSequence, kDefaultSequenceBits}};
    return Layout::create(std::move(spec)).value();
  }();
  return layout;
}

int Layout::index_of(FieldRole role) const noexcept {
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].role == role) return static_cast<int>(i);
  }
  return -1;
}

int Layout::width_of(FieldRole role) const noexcept {
  const int i = index_of(role);
  return i < 0 ? 0 : fields_[static_cast<std::size_t>(i)].width;
}

int Layout::shift_of(FieldRole role) const noexcept {
  const int i = index_of(role);
  return i < 0 ? 0 : fields_[static_cast<std::size_t>(i)].shift;
}

std::uint64_t Layout::max_id() const noexcept {
  return total_width_ == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << total_width_) - 1;
}

std::int64_t Layout::max_ticks() const noexcept {
  return static_cast<std::int64_t>(fields_[0].max_value());
}

std::int64_t Layout::end_of_life_unix_ms() const noexcept {
  return epoch_ms_ + (max_ticks() + 1) * unit_ms_;
}

std::int64_t Layout::ticks_at(WallTime t) const noexcept {
  // In whole milliseconds first, so that no instant overflows: flooring twice
  // equals flooring once because the epoch is a whole number of milliseconds.
  const std::int64_t ms = floor_div(t.time_since_epoch().count(), kNsPerMs);
  return floor_div(ms - epoch_ms_, unit_ms_);
}

WallTime Layout::time_of_ticks(std::int64_t ticks) const noexcept {
  return wall_from_unix_ms(epoch_ms_ + ticks * unit_ms_);
}

Result<std::uint64_t> Layout::encode(std::span<const std::uint64_t> values) const {
  if (values.size() != fields_.size()) {
    return invalid("layout " + name_ + " has " + std::to_string(fields_.size()) + " fields, got " +
                   std::to_string(values.size()) + " values");
  }
  std::uint64_t id = 0;
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (values[i] > fields_[i].max_value()) {
      return Status(Code::kOutOfRange, fields_[i].name + " " + std::to_string(values[i]) +
                                           " does not fit " + std::to_string(fields_[i].width) +
                                           " bits (max " + std::to_string(fields_[i].max_value()) +
                                           ")");
    }
    id |= values[i] << fields_[i].shift;
  }
  return id;
}

Result<std::uint64_t> Layout::encode(std::int64_t ticks, WorkerId worker,
                                     std::uint64_t sequence) const {
  if (ticks < 0) return Status(Code::kOutOfRange, "time is before the layout's epoch");
  if (ticks > max_ticks())
    return Status(Code::kOutOfRange, "time is past the layout's end of life");
  if (Status s = check_worker(worker); !s.is_ok()) return s;
  if (index_of(FieldRole::kSequence) < 0 && sequence != 0) {
    return invalid("layout " + name_ + " has no sequence field");
  }
  std::array<std::uint64_t, kMaxFields> values{};
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    switch (fields_[i].role) {
      case FieldRole::kTime:
        values[i] = static_cast<std::uint64_t>(ticks);
        break;
      case FieldRole::kRegion:
        values[i] = worker.region;
        break;
      case FieldRole::kHost:
        values[i] = worker.host;
        break;
      case FieldRole::kSequence:
        values[i] = sequence;
        break;
      case FieldRole::kOther:
        return invalid("layout " + name_ + " has a field without a role (" + fields_[i].name +
                       "); encode it value by value");
    }
  }
  return encode(std::span<const std::uint64_t>(values.data(), fields_.size()));
}

Result<DecodedId> Layout::decode(std::uint64_t id) const {
  if (id > max_id()) {
    return Status(Code::kOutOfRange, std::to_string(id) + " does not fit layout " + name_ + " (" +
                                         std::to_string(total_width_) + " bits, max " +
                                         std::to_string(max_id()) + ")");
  }
  DecodedId d;
  d.id = id;
  d.field_count = static_cast<int>(fields_.size());
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    d.values[i] = (id >> fields_[i].shift) & fields_[i].max_value();
  }
  d.ticks = static_cast<std::int64_t>(d.values[0]);
  d.time = time_of_ticks(d.ticks);
  return d;
}

Status Layout::check_worker(WorkerId worker) const {
  const std::uint64_t regions_max = regions() - 1;
  const std::uint64_t hosts_max = workers_per_region() - 1;
  if (worker.region > regions_max) {
    return Status(Code::kInvalidArgument, "region " + std::to_string(worker.region) +
                                              " does not fit layout " + name_ + " (max " +
                                              std::to_string(regions_max) + ")");
  }
  if (worker.host > hosts_max) {
    return Status(Code::kInvalidArgument, "host " + std::to_string(worker.host) +
                                              " does not fit layout " + name_ + " (max " +
                                              std::to_string(hosts_max) + ")");
  }
  return Status::ok();
}

Result<std::uint64_t> Layout::min_id_at(WallTime t) const {
  const std::int64_t ticks = ticks_at(t);
  if (ticks < 0) return Status(Code::kOutOfRange, format_iso8601(t) + " is before the epoch");
  if (ticks > max_ticks()) {
    return Status(Code::kOutOfRange, format_iso8601(t) + " is past the layout's end of life");
  }
  return static_cast<std::uint64_t>(ticks) << fields_[0].shift;
}

Result<std::uint64_t> Layout::max_id_at(WallTime t) const {
  Result<std::uint64_t> min = min_id_at(t);
  if (!min.is_ok()) return min;
  const int shift = fields_[0].shift;
  const std::uint64_t low = shift == 0 ? 0 : (~std::uint64_t{0} >> (64 - shift));
  return min.value() | low;
}

}  // namespace snowid
