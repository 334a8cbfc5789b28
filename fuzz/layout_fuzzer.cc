// Layout::create from fuzzed specs: it must accept exactly the specs that the
// documented rules allow, and an accepted layout's fields must tile its
// total_width bits without overlap, encode and decode must invert each other,
// and time bounds, layout checks and two-era histories must agree with a
// model computed here.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "snowid/snowid.h"

namespace {

using snowid::Code;
using snowid::Duration;
using snowid::FieldRole;
using snowid::FieldSpec;
using snowid::Layout;
using snowid::LayoutSpec;
using snowid::WallTime;

constexpr std::int64_t kNsPerMs = 1'000'000;
// The last millisecond that 64-bit nanoseconds since 1970 can hold.
constexpr std::int64_t kMaxUnixMs = INT64_MAX / kNsPerMs;

// --- Spec generation -------------------------------------------------------

std::string pick_name(FuzzedDataProvider& in, const char* usual) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0:
      return in.ConsumeRandomLengthString(40);
    case 1:
      return "f" + std::to_string(in.ConsumeIntegralInRange(0, 9));
    default:
      return usual;
  }
}

std::int64_t pick_epoch(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 4)) {
    case 0:
      return in.ConsumeIntegral<std::int64_t>();
    case 1:
      return kMaxUnixMs - in.ConsumeIntegralInRange<std::int64_t>(-2, 1 << 20);
    case 2:
      return in.ConsumeIntegralInRange<std::int64_t>(-2, kMaxUnixMs + 2);
    default:
      return snowid::kDefaultEpochUnixMs +
             in.ConsumeIntegralInRange<std::int64_t>(-1 << 30, 1 << 30);
  }
}

std::int64_t pick_unit(FuzzedDataProvider& in) {
  constexpr std::array<std::int64_t, 6> kUnits = {1, 10, 0, -1, 5, 1000};
  const std::size_t i = in.ConsumeIntegralInRange<std::size_t>(0, kUnits.size());
  return i < kUnits.size() ? kUnits[i] : in.ConsumeIntegral<std::int64_t>();
}

// Free form: any number of fields with any role (including undefined role
// values) and any width.
void free_fields(FuzzedDataProvider& in, LayoutSpec& spec) {
  const int n = in.ConsumeIntegralInRange(0, 9);
  for (int i = 0; i < n; ++i) {
    const auto role = static_cast<FieldRole>(in.ConsumeIntegralInRange<std::uint8_t>(0, 6));
    const int width = in.ConsumeIntegralInRange(-1, 66);
    spec.fields.push_back(FieldSpec{pick_name(in, ("f" + std::to_string(i)).c_str()), role, width});
  }
}

// Shaped like snowid's own layouts: time, [region], [host], sequence, 63 bits
// (give or take a few when the fuzzer asks).
void generation_fields(FuzzedDataProvider& in, LayoutSpec& spec) {
  const int total = 63 + in.ConsumeIntegralInRange(-2, 2) * in.ConsumeIntegralInRange(0, 1);
  const int time = in.ConsumeIntegralInRange(1, 44);
  const bool region = in.ConsumeBool();
  const bool host = in.ConsumeBool();
  int left = total - time;
  spec.fields.push_back(FieldSpec{"time", FieldRole::kTime, time});
  if (region && left > 2) {
    const int w = in.ConsumeIntegralInRange(1, std::min(left - 2, 32));
    spec.fields.push_back(FieldSpec{"region", FieldRole::kRegion, w});
    left -= w;
  }
  if (host && left > 1) {
    const int w = in.ConsumeIntegralInRange(1, std::min(left - 1, 32));
    spec.fields.push_back(FieldSpec{"host", FieldRole::kHost, w});
    left -= w;
  }
  spec.fields.push_back(FieldSpec{"sequence", FieldRole::kSequence, left});
}

// Shaped like foreign layouts: time on top, then fields of any role, at most
// 64 bits.
void foreign_fields(FuzzedDataProvider& in, LayoutSpec& spec) {
  int left = 64 - in.ConsumeIntegralInRange(0, 20);
  const int time = in.ConsumeIntegralInRange(1, std::min(left, 45));
  spec.fields.push_back(FieldSpec{"time", FieldRole::kTime, time});
  left -= time;
  const int n = in.ConsumeIntegralInRange(0, 7);
  for (int i = 0; i < n && left > 0; ++i) {
    const int w = in.ConsumeIntegralInRange(1, left);
    const auto role = static_cast<FieldRole>(in.ConsumeIntegralInRange<std::uint8_t>(1, 4));
    spec.fields.push_back(FieldSpec{pick_name(in, ("x" + std::to_string(i)).c_str()), role, w});
    left -= w;
  }
}

// --- The documented rules, restated ---------------------------------------

bool valid_field_name(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool should_accept(const LayoutSpec& s) {
  if (s.unit_ms != 1 && s.unit_ms != 10) return false;
  if (s.epoch_unix_ms < 0 || s.epoch_unix_ms >= kMaxUnixMs) return false;
  if (s.fields.empty() || s.fields.size() > 8) return false;
  std::set<std::string> names;
  std::set<int> roles;
  int total = 0;
  for (const FieldSpec& f : s.fields) {
    if (!valid_field_name(f.name) || !names.insert(f.name).second) return false;
    if (f.width < 1 || f.width > 64) return false;
    const int role = static_cast<int>(f.role);
    if (role > 4) return false;
    if (f.role != FieldRole::kOther && !roles.insert(role).second) return false;
    total += f.width;
  }
  if (total > 64) return false;
  if (s.fields[0].role != FieldRole::kTime) return false;
  // The layout's end of life, epoch + 2^width units, must be representable.
  const int time_width = s.fields[0].width;
  if (time_width > 61) return false;
  if ((std::int64_t{1} << time_width) > (kMaxUnixMs - s.epoch_unix_ms) / s.unit_ms) return false;
  if (!s.decode_only) {
    if (total != 63 || s.fields.back().role != FieldRole::kSequence) return false;
    for (std::size_t i = 1; i < s.fields.size(); ++i) {
      if (s.fields[i].role == FieldRole::kOther || s.fields[i].role <= s.fields[i - 1].role) {
        return false;
      }
    }
  }
  return true;
}

// The tick of instant `ns` in `l`, or -1 for any instant before the epoch;
// computed without overflow for every 64-bit instant.
std::int64_t tick_of(const Layout& l, std::int64_t ns) {
  const std::int64_t epoch_ns = l.epoch_unix_ms() * kNsPerMs;
  const std::int64_t unit_ns = l.unit_ms() * kNsPerMs;
  if (ns < epoch_ns) return -1;
  return (ns - epoch_ns) / unit_ns;
}

bool in_lifetime(const Layout& l, std::int64_t ns) {
  const std::int64_t t = tick_of(l, ns);
  return t >= 0 && t <= l.max_ticks();
}

std::int64_t end_ns(const Layout& l) { return l.end_of_life_unix_ms() * kNsPerMs; }

std::uint64_t low_bits(int n) { return n == 0 ? 0 : ~std::uint64_t{0} >> (64 - n); }

// --- Checks of an accepted layout -----------------------------------------

void check_structure(const LayoutSpec& spec, const Layout& l) {
  FUZZ_CHECK(l.name() == (spec.name.empty() ? "custom" : spec.name));
  FUZZ_CHECK(l.epoch_unix_ms() == spec.epoch_unix_ms && l.unit_ms() == spec.unit_ms);
  FUZZ_CHECK(l.decode_only() == spec.decode_only);
  FUZZ_CHECK(l.can_generate() == !spec.decode_only);
  FUZZ_CHECK(l.fields().size() == spec.fields.size());

  // The fields tile the low total_width bits, from the top down, without overlap.
  int shift = l.total_width();
  std::uint64_t covered = 0;
  for (std::size_t i = 0; i < l.fields().size(); ++i) {
    const snowid::FieldInfo& f = l.fields()[i];
    FUZZ_CHECK(f.name == spec.fields[i].name && f.role == spec.fields[i].role);
    FUZZ_CHECK(f.width == spec.fields[i].width);
    shift -= f.width;
    FUZZ_CHECK(f.shift == shift);
    FUZZ_CHECK(f.max_value() == low_bits(f.width));
    const std::uint64_t mask = f.max_value() << f.shift;
    FUZZ_CHECK((covered & mask) == 0);
    covered |= mask;
    if (f.role != FieldRole::kOther) {
      FUZZ_CHECK(l.index_of(f.role) == static_cast<int>(i));
      FUZZ_CHECK(l.width_of(f.role) == f.width && l.shift_of(f.role) == f.shift);
    }
  }
  FUZZ_CHECK(shift == 0);
  FUZZ_CHECK(l.total_width() >= 1 && l.total_width() <= 64);
  FUZZ_CHECK(covered == l.max_id() && l.max_id() == low_bits(l.total_width()));

  FUZZ_CHECK(l.max_ticks() == static_cast<std::int64_t>(l.fields()[0].max_value()));
  FUZZ_CHECK(l.end_of_life_unix_ms() == l.epoch_unix_ms() + (l.max_ticks() + 1) * l.unit_ms());
  FUZZ_CHECK(l.end_of_life_unix_ms() <= kMaxUnixMs);
  FUZZ_CHECK(l.regions() == std::uint64_t{1} << l.width_of(FieldRole::kRegion));
  FUZZ_CHECK(l.workers_per_region() == std::uint64_t{1} << l.width_of(FieldRole::kHost));
  FUZZ_CHECK(l.sequence_capacity() == std::uint64_t{1} << l.width_of(FieldRole::kSequence));
}

void check_round_trip(FuzzedDataProvider& in, const Layout& l) {
  const std::uint64_t id = in.ConsumeIntegral<std::uint64_t>() & l.max_id();
  snowid::Result<snowid::DecodedId> d = l.decode(id);
  FUZZ_CHECK(d.is_ok());
  const std::span<const std::uint64_t> values(d->values.data(), l.fields().size());
  snowid::Result<std::uint64_t> again = l.encode(values);
  FUZZ_CHECK(again.is_ok() && again.value() == id);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const snowid::FieldInfo& f = l.fields()[i];
    FUZZ_CHECK(values[i] == ((id >> f.shift) & f.max_value()));
  }
  FUZZ_CHECK(d->ticks == static_cast<std::int64_t>(values[0]));
  FUZZ_CHECK(d->time == snowid::wall_from_unix_ms(l.epoch_unix_ms() + d->ticks * l.unit_ms()));
  FUZZ_CHECK(l.ticks_at(d->time) == d->ticks);
  snowid::Result<std::uint64_t> lo = l.min_id_at(d->time);
  snowid::Result<std::uint64_t> hi = l.max_id_at(d->time);
  FUZZ_CHECK(lo.is_ok() && hi.is_ok() && lo.value() <= id && id <= hi.value());
  if (l.total_width() < 64) {
    snowid::Result<snowid::DecodedId> over = l.decode(id | (std::uint64_t{1} << l.total_width()));
    FUZZ_CHECK(!over.is_ok() && over.status().code() == Code::kOutOfRange);
  }

  // A value one past its field's maximum is refused.
  const std::size_t i = in.ConsumeIntegralInRange<std::size_t>(0, values.size() - 1);
  if (l.fields()[i].width < 64) {
    std::vector<std::uint64_t> too_big(values.begin(), values.end());
    too_big[i] = l.fields()[i].max_value() + 1;
    snowid::Result<std::uint64_t> refused = l.encode(too_big);
    FUZZ_CHECK(!refused.is_ok() && refused.status().code() == Code::kOutOfRange);
  }

  // Layouts without role-less fields also compose from (ticks, worker, sequence).
  if (l.index_of(FieldRole::kOther) < 0) {
    auto value_of = [&](FieldRole role) -> std::uint64_t {
      const int k = l.index_of(role);
      return k < 0 ? 0 : values[static_cast<std::size_t>(k)];
    };
    const std::uint64_t region = value_of(FieldRole::kRegion);
    const std::uint64_t host = value_of(FieldRole::kHost);
    if (region <= UINT32_MAX && host <= UINT32_MAX) {
      const snowid::WorkerId worker{static_cast<std::uint32_t>(region),
                                    static_cast<std::uint32_t>(host)};
      FUZZ_CHECK(l.check_worker(worker).is_ok());
      snowid::Result<std::uint64_t> composed =
          l.encode(d->ticks, worker, value_of(FieldRole::kSequence));
      FUZZ_CHECK(composed.is_ok() && composed.value() == id);
    }
  }
}

// Any instant, not only the layout's lifetime: bounds refuse what is outside.
void check_instant(FuzzedDataProvider& in, const Layout& l) {
  // Mostly around the lifetime, where the answers are interesting.
  const std::int64_t epoch_ns = l.epoch_unix_ms() * kNsPerMs;
  const std::int64_t ns = in.ConsumeBool()
                              ? in.ConsumeIntegral<std::int64_t>()
                              : in.ConsumeIntegralInRange<std::int64_t>(
                                    epoch_ns - kNsPerMs * 20,
                                    end_ns(l) + std::min(kNsPerMs * 20, INT64_MAX - end_ns(l)));
  const WallTime t{Duration(ns)};

  // check_layout at that instant: the epoch has come and the end has not.
  const std::int64_t now_ms = snowid::unix_ms(t);
  snowid::Result<snowid::LayoutReport> report = snowid::check_layout(l, t);
  if (l.epoch_unix_ms() > now_ms) {
    FUZZ_CHECK(!report.is_ok() && report.status().code() == Code::kInvalidArgument);
  } else if (l.end_of_life_unix_ms() <= now_ms) {
    FUZZ_CHECK(!report.is_ok() && report.status().code() == Code::kOutOfRange);
  } else {
    FUZZ_CHECK(report.is_ok());
    FUZZ_CHECK(report->end_of_life_unix_ms == l.end_of_life_unix_ms());
    FUZZ_CHECK(report->years_remaining > 0);
    FUZZ_CHECK(report->warnings.empty() ==
               (report->years_remaining >= snowid::kEndOfLifeWarningYears));
  }

  // Id bounds of the tick containing it.
  snowid::Result<std::uint64_t> lo = l.min_id_at(t);
  snowid::Result<std::uint64_t> hi = l.max_id_at(t);
  if (!in_lifetime(l, ns)) {
    FUZZ_CHECK(!lo.is_ok() && lo.status().code() == Code::kOutOfRange);
    FUZZ_CHECK(!hi.is_ok() && hi.status().code() == Code::kOutOfRange);
    return;
  }
  const std::int64_t ticks = tick_of(l, ns);
  FUZZ_CHECK(l.ticks_at(t) == ticks);
  const int shift = l.fields()[0].shift;
  FUZZ_CHECK(lo.is_ok() && lo.value() == static_cast<std::uint64_t>(ticks) << shift);
  FUZZ_CHECK(hi.is_ok() && hi.value() == (lo.value() | low_bits(shift)));
}

// An instant in [from_ns, to_ns) chosen by the input.
std::int64_t instant_between(FuzzedDataProvider& in, std::int64_t from_ns, std::int64_t to_ns) {
  return in.ConsumeIntegralInRange<std::int64_t>(from_ns, to_ns - 1);
}

// Two eras, the fuzzed layout and the default one in either order, with
// fuzzed cut-overs. Accepted exactly when the documented proof holds, and then
// every id either era can issue in its own time decodes with that era.
void check_history(FuzzedDataProvider& in, const Layout& fuzzed) {
  const bool fuzzed_first = in.ConsumeBool();
  const Layout& a = fuzzed_first ? fuzzed : Layout::snowid_default();
  const Layout& b = fuzzed_first ? Layout::snowid_default() : fuzzed;
  // Cut-overs mostly inside each layout's lifetime, sometimes just outside.
  auto cutover_ns = [&](const Layout& l) {
    const std::int64_t epoch_ns = l.epoch_unix_ms() * kNsPerMs;
    const std::int64_t margin = (end_ns(l) - epoch_ns) / 8;
    return in.ConsumeIntegralInRange<std::int64_t>(
        epoch_ns - margin, end_ns(l) + std::min(margin, INT64_MAX - end_ns(l)));
  };
  const std::int64_t ca = cutover_ns(a);
  // The second cut-over: like the first, up to a second after it, or
  // anywhere after it in b's lifetime.
  constexpr std::int64_t kSecondNs = 1'000'000'000;
  const std::int64_t room = ca > INT64_MAX - kSecondNs ? INT64_MAX - ca : kSecondNs;
  std::int64_t cb = 0;
  switch (in.ConsumeIntegralInRange(0, 2)) {
    case 0:
      cb = cutover_ns(b);
      break;
    case 1:
      cb = ca + in.ConsumeIntegralInRange<std::int64_t>(-5, room);
      break;
    default:  // anywhere in b's lifetime after ca
      cb = in.ConsumeIntegralInRange<std::int64_t>(std::max(ca, b.epoch_unix_ms() * kNsPerMs),
                                                   std::max(ca, end_ns(b) - 1));
  }

  bool valid = in_lifetime(a, ca) && in_lifetime(b, cb) && cb > ca;
  if (valid) {
    const std::uint64_t first_b = static_cast<std::uint64_t>(tick_of(b, cb)) << b.fields()[0].shift;
    const std::int64_t last_a_tick = tick_of(a, cb - 1);
    const int shift_a = a.fields()[0].shift;
    const std::uint64_t last_a =
        last_a_tick > a.max_ticks()
            ? a.max_id()
            : (static_cast<std::uint64_t>(last_a_tick) << shift_a) | low_bits(shift_a);
    valid = first_b > last_a;
  }
  snowid::Result<snowid::LayoutHistory> h =
      snowid::LayoutHistory::create({{a, WallTime{Duration(ca)}}, {b, WallTime{Duration(cb)}}});
  FUZZ_CHECK(h.is_ok() == valid);
  if (!h.is_ok()) {
    FUZZ_CHECK(h.status().code() == Code::kInvalidArgument);
    return;
  }
  // An id era a issued before the cut-over, and one era b issued after it.
  const std::int64_t ta = instant_between(in, ca, std::min(cb, end_ns(a)));
  const std::int64_t tb = instant_between(in, cb, end_ns(b));
  const std::array<std::pair<const Layout*, std::int64_t>, 2> issued = {{{&a, ta}, {&b, tb}}};
  for (std::size_t era = 0; era < issued.size(); ++era) {
    const Layout& l = *issued[era].first;
    const WallTime t{Duration(issued[era].second)};
    const std::uint64_t lo = l.min_id_at(t).value();
    const std::uint64_t id =
        lo | (in.ConsumeIntegral<std::uint64_t>() & low_bits(l.fields()[0].shift));
    FUZZ_CHECK(h->era_of(id) == era);
    snowid::Result<snowid::DecodedId> d = h->decode(id);
    FUZZ_CHECK(d.is_ok() && d->ticks == l.ticks_at(t));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  LayoutSpec spec;
  spec.name = in.ConsumeRandomLengthString(24);
  spec.epoch_unix_ms = pick_epoch(in);
  spec.unit_ms = pick_unit(in);
  spec.decode_only = in.ConsumeBool();
  switch (in.ConsumeIntegralInRange(0, 2)) {
    case 0:
      free_fields(in, spec);
      break;
    case 1:
      generation_fields(in, spec);
      break;
    default:
      foreign_fields(in, spec);
      break;
  }

  snowid::Result<Layout> created = Layout::create(spec);
  FUZZ_CHECK(created.is_ok() == should_accept(spec));
  if (!created.is_ok()) {
    FUZZ_CHECK(created.status().code() == Code::kInvalidArgument);
    FUZZ_CHECK(!created.status().message().empty());
    return 0;
  }
  const Layout& l = created.value();
  check_structure(spec, l);
  check_round_trip(in, l);
  check_instant(in, l);
  check_history(in, l);
  return 0;
}
