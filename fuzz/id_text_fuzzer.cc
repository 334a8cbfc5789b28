// parse_id on arbitrary bytes, with and without a layout, against a plain
// model of the accepted syntax; then every preset decodes the parsed value and
// the raw input bytes, and the decoded fields must compose the id again.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "snowid/snowid.h"

namespace {

using snowid::Code;
using snowid::FieldRole;
using snowid::Layout;

const std::vector<Layout>& preset_layouts() {
  static const std::vector<Layout> layouts = [] {
    std::vector<Layout> v;
    for (std::string_view name : snowid::preset_names()) v.push_back(snowid::preset(name).value());
    return v;
  }();
  return layouts;
}

// Two eras whose ids are told apart by value: the default layout, then from
// 2030 one that gives the region bits to hosts.
const snowid::LayoutHistory& history() {
  static const snowid::LayoutHistory h = [] {
    snowid::LayoutSpec spec;
    spec.name = "wide_hosts";
    spec.fields = {{"time", FieldRole::kTime, 41},
                   {"host", FieldRole::kHost, 10},
                   {"sequence", FieldRole::kSequence, 12}};
    const Layout wide = Layout::create(spec).value();
    return snowid::LayoutHistory::create(
               {{Layout::snowid_default(), Layout::snowid_default().epoch()},
                {wide, snowid::wall_from_unix_ms(1893456000000)}})
        .value();
  }();
  return h;
}

// What parse_id(text) must answer, from the documented syntax alone: 1 to 20
// ASCII digits and nothing else, with a value of at most 2^64-1.
struct Expected {
  Code code = Code::kOk;
  std::uint64_t value = 0;
  std::string canonical;  // the digits without leading zeros ("0" for zero)
};

Expected model(std::string_view text) {
  Expected e;
  if (text.empty() || text.size() > 20) {
    e.code = Code::kInvalidArgument;
    return e;
  }
  for (char c : text) {
    if (c < '0' || c > '9') {
      e.code = Code::kInvalidArgument;
      return e;
    }
  }
  const std::size_t nonzero = text.find_first_not_of('0');
  e.canonical = nonzero == std::string_view::npos ? "0" : std::string(text.substr(nonzero));
  if (e.canonical.size() == 20 && e.canonical > "18446744073709551615") {
    e.code = Code::kOutOfRange;
    return e;
  }
  for (char c : e.canonical) e.value = e.value * 10 + static_cast<std::uint64_t>(c - '0');
  return e;
}

void check_decode(const Layout& l, std::uint64_t id, std::uint32_t shards) {
  snowid::Result<snowid::DecodedId> d = l.decode(id);
  if (id > l.max_id()) {
    FUZZ_CHECK(!d.is_ok() && d.status().code() == Code::kOutOfRange);
    return;
  }
  FUZZ_CHECK(d.is_ok());
  FUZZ_CHECK(d->id == id);
  FUZZ_CHECK(d->field_count == static_cast<int>(l.fields().size()));
  const std::span<const std::uint64_t> values(d->values.data(), l.fields().size());
  for (std::size_t i = 0; i < values.size(); ++i)
    FUZZ_CHECK(values[i] <= l.fields()[i].max_value());
  snowid::Result<std::uint64_t> again = l.encode(values);
  FUZZ_CHECK(again.is_ok() && again.value() == id);

  // The time lies within the layout's lifetime, at the start of its tick.
  FUZZ_CHECK(d->ticks == static_cast<std::int64_t>(values[0]));
  FUZZ_CHECK(d->ticks >= 0 && d->ticks <= l.max_ticks());
  FUZZ_CHECK(d->time == l.time_of_ticks(d->ticks));
  const std::int64_t ms = snowid::unix_ms(d->time);
  FUZZ_CHECK(ms >= l.epoch_unix_ms() && ms < l.end_of_life_unix_ms());
  FUZZ_CHECK(ms == l.epoch_unix_ms() + d->ticks * l.unit_ms());
  FUZZ_CHECK(l.ticks_at(d->time) == d->ticks);
  snowid::Result<std::uint64_t> lo = l.min_id_at(d->time);
  snowid::Result<std::uint64_t> hi = l.max_id_at(d->time);
  FUZZ_CHECK(lo.is_ok() && hi.is_ok() && lo.value() <= id && id <= hi.value());

  // Decoded times print and parse back.
  snowid::Result<snowid::WallTime> reparsed =
      snowid::parse_iso8601(snowid::format_iso8601(d->time));
  FUZZ_CHECK(reparsed.is_ok() && reparsed.value() == d->time);

  if (l.index_of(FieldRole::kOther) < 0) {
    auto value_of = [&](FieldRole role) -> std::uint64_t {
      const int i = l.index_of(role);
      return i < 0 ? 0 : values[static_cast<std::size_t>(i)];
    };
    const snowid::WorkerId worker{static_cast<std::uint32_t>(value_of(FieldRole::kRegion)),
                                  static_cast<std::uint32_t>(value_of(FieldRole::kHost))};
    snowid::Result<std::uint64_t> composed =
        l.encode(d->ticks, worker, value_of(FieldRole::kSequence));
    FUZZ_CHECK(composed.is_ok() && composed.value() == id);
  }

  FUZZ_CHECK(snowid::shard_of(id, shards) < shards);
  FUZZ_CHECK(snowid::shard_of(id, 1) == 0);
}

void check_history(std::uint64_t id) {
  const snowid::LayoutHistory& h = history();
  const std::size_t era = h.era_of(id);
  FUZZ_CHECK(era < h.eras().size());
  // The era is the last one whose first id (that of its cut-over) is at most id.
  for (std::size_t i = 1; i < h.eras().size(); ++i) {
    const snowid::LayoutEra& e = h.eras()[i];
    const std::uint64_t first = e.layout.min_id_at(e.cutover).value();
    FUZZ_CHECK((id >= first) == (i <= era));
  }
  snowid::Result<snowid::DecodedId> d = h.decode(id);
  snowid::Result<snowid::DecodedId> direct = h.eras()[era].layout.decode(id);
  FUZZ_CHECK(d.is_ok() == direct.is_ok());
  if (d.is_ok()) FUZZ_CHECK(d->values == direct->values && d->time == direct->time);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Expected want = model(text);

  snowid::Result<std::uint64_t> got = snowid::parse_id(text);
  FUZZ_CHECK(got.is_ok() == (want.code == Code::kOk));
  if (got.is_ok()) {
    FUZZ_CHECK(got.value() == want.value);
    FUZZ_CHECK(std::to_string(got.value()) == want.canonical);
  } else {
    FUZZ_CHECK(got.status().code() == want.code);
    FUZZ_CHECK(!got.status().message().empty());
  }

  std::uint32_t shards = 1;
  if (size >= 4) {
    std::memcpy(&shards, data + size - 4, 4);
    if (shards == 0) shards = 1;
  }
  std::vector<std::uint64_t> ids;
  if (got.is_ok()) ids.push_back(got.value());
  if (size >= 8) {
    std::uint64_t raw = 0;
    std::memcpy(&raw, data, 8);
    ids.push_back(raw);
    ids.push_back(raw >> 1);  // below 2^63: fits every 63-bit layout
  }

  for (const Layout& l : preset_layouts()) {
    snowid::Result<std::uint64_t> in_layout = snowid::parse_id(text, l);
    if (want.code != Code::kOk) {
      FUZZ_CHECK(!in_layout.is_ok() && in_layout.status().code() == want.code);
    } else if (want.value > l.max_id()) {
      FUZZ_CHECK(!in_layout.is_ok() && in_layout.status().code() == Code::kOutOfRange);
    } else {
      FUZZ_CHECK(in_layout.is_ok() && in_layout.value() == want.value);
    }
    for (std::uint64_t id : ids) {
      check_decode(l, id, shards);
      check_decode(l, id & l.max_id(), shards);
    }
  }
  for (std::uint64_t id : ids) check_history(id);
  return 0;
}
