// Checks the library against the shared, language-neutral test vectors in
// vectors/*.json (their schema is in vectors/README.md). Every expected value
// there was derived independently of this library.
#include <gtest/gtest.h>

#include <charconv>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "snowid/snowid.h"

#ifndef SNOWID_VECTORS_DIR
#error "SNOWID_VECTORS_DIR must name the vectors directory"
#endif

namespace snowid {
namespace {

using nlohmann::json;

json load(const std::string& file) {
  const std::string path = std::string(SNOWID_VECTORS_DIR) + "/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return json::parse(in);
}

// Ids, field values and ticks are decimal strings in the vectors. Parsed here
// without the library's own parser, which is under test.
std::uint64_t u64(const json& j) {
  const std::string s = j.get<std::string>();
  std::uint64_t v = 0;
  const auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (err != std::errc() || end != s.data() + s.size()) throw std::runtime_error("bad number " + s);
  return v;
}

std::int64_t i64(const json& j) { return static_cast<std::int64_t>(u64(j)); }

std::string code_of(const Status& s) { return std::string(code_name(s.code())); }

// A layout spec from its JSON form; an unknown role name is refused here, as a
// layout file reader would refuse it.
Result<Layout> layout_from_spec(const json& spec, std::string name) {
  LayoutSpec ls;
  ls.name = std::move(name);
  ls.epoch_unix_ms = spec.at("epoch_ms").get<std::int64_t>();
  ls.unit_ms = spec.at("unit_ms").get<std::int64_t>();
  ls.decode_only = spec.at("decode_only").get<bool>();
  for (const json& f : spec.at("fields")) {
    Result<FieldRole> role = parse_role(f.at("role").get<std::string>());
    if (!role.is_ok()) return role.status();
    ls.fields.push_back(
        FieldSpec{f.at("name").get<std::string>(), role.value(), f.at("width").get<int>()});
  }
  return Layout::create(std::move(ls));
}

const json& layouts_file() {
  static const json j = load("layouts.json");
  return j;
}

// Every layout the other files refer to by name: presets by name, custom
// layouts from their spec.
const Layout& layout_named(const std::string& name) {
  static const std::map<std::string, Layout> all = [] {
    std::map<std::string, Layout> m;
    for (const json& l : layouts_file().at("layouts")) {
      const std::string n = l.at("name").get<std::string>();
      Result<Layout> r = l.at("preset").get<bool>() ? preset(n) : layout_from_spec(l, n);
      if (!r.is_ok()) throw std::runtime_error("layout " + n + ": " + r.status().to_string());
      m.emplace(n, r.value());
    }
    return m;
  }();
  const auto it = all.find(name);
  if (it == all.end()) throw std::runtime_error("no layout named " + name + " in layouts.json");
  return it->second;
}

bool has_other_field(const Layout& layout) { return layout.index_of(FieldRole::kOther) >= 0; }

TEST(Vectors, LayoutsHaveTheirProperties) {
  const json& layouts = layouts_file().at("layouts");
  ASSERT_GE(layouts.size(), 5u);
  for (const json& v : layouts) {
    const std::string name = v.at("name").get<std::string>();
    SCOPED_TRACE("layout " + name);
    Result<Layout> from_spec = layout_from_spec(v, name);
    ASSERT_TRUE(from_spec.is_ok()) << from_spec.status().to_string();
    std::vector<Layout> candidates = {from_spec.value()};
    if (v.at("preset").get<bool>()) {
      Result<Layout> p = preset(name);
      ASSERT_TRUE(p.is_ok()) << p.status().to_string();
      candidates.push_back(p.value());
    }
    for (const Layout& l : candidates) {
      EXPECT_EQ(l.name(), name);
      EXPECT_EQ(l.epoch_unix_ms(), v.at("epoch_ms").get<std::int64_t>());
      EXPECT_EQ(l.unit_ms(), v.at("unit_ms").get<std::int64_t>());
      EXPECT_EQ(l.decode_only(), v.at("decode_only").get<bool>());
      EXPECT_EQ(l.can_generate(), v.at("can_generate").get<bool>());
      EXPECT_EQ(l.total_width(), v.at("total_width").get<int>());
      EXPECT_EQ(l.max_id(), u64(v.at("max_id")));
      EXPECT_EQ(l.max_ticks(), i64(v.at("max_ticks")));
      EXPECT_EQ(l.regions(), v.at("regions").get<std::uint64_t>());
      EXPECT_EQ(l.workers_per_region(), v.at("workers_per_region").get<std::uint64_t>());
      EXPECT_EQ(l.sequence_capacity(), v.at("sequence_capacity").get<std::uint64_t>());
      EXPECT_EQ(l.end_of_life_unix_ms(), v.at("end_of_life_ms").get<std::int64_t>());
      EXPECT_EQ(format_iso8601(wall_from_unix_ms(l.end_of_life_unix_ms())),
                v.at("end_of_life").get<std::string>());
      const json& fields = v.at("fields");
      ASSERT_EQ(l.fields().size(), fields.size());
      for (std::size_t i = 0; i < fields.size(); ++i) {
        const FieldInfo& f = l.fields()[i];
        EXPECT_EQ(f.name, fields[i].at("name").get<std::string>());
        EXPECT_EQ(role_name(f.role), fields[i].at("role").get<std::string>());
        EXPECT_EQ(f.width, fields[i].at("width").get<int>());
        EXPECT_EQ(f.shift, fields[i].at("shift").get<int>());
        if (f.role != FieldRole::kOther) {
          EXPECT_EQ(l.index_of(f.role), static_cast<int>(i));
          EXPECT_EQ(l.width_of(f.role), f.width);
          EXPECT_EQ(l.shift_of(f.role), f.shift);
        }
      }
    }
  }
}

TEST(Vectors, InvalidLayoutsAreRefused) {
  const json& cases = layouts_file().at("invalid_layouts");
  ASSERT_GE(cases.size(), 10u);
  for (const json& c : cases) {
    SCOPED_TRACE(c.at("description").get<std::string>() + " (" + c.at("reason").get<std::string>() +
                 ")");
    Result<Layout> r = layout_from_spec(c.at("spec"), "invalid");
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(code_of(r.status()), c.at("error").get<std::string>()) << r.status().to_string();
  }
}

TEST(Vectors, LayoutChecksDependOnTheTime) {
  const json& cases = layouts_file().at("checks");
  ASSERT_GE(cases.size(), 5u);
  for (const json& c : cases) {
    SCOPED_TRACE(c.at("layout").get<std::string>() + " at " + c.at("now").get<std::string>());
    const Layout& l = layout_named(c.at("layout").get<std::string>());
    Result<LayoutReport> r = check_layout(l, wall_from_unix_ms(c.at("now_ms").get<std::int64_t>()));
    const std::string outcome = c.at("outcome").get<std::string>();
    if (c.contains("error")) {
      ASSERT_FALSE(r.is_ok()) << outcome;
      EXPECT_EQ(code_of(r.status()), c.at("error").get<std::string>()) << r.status().to_string();
      continue;
    }
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->end_of_life_unix_ms, l.end_of_life_unix_ms());
    EXPECT_EQ(r->warnings.empty(), outcome == "ok") << outcome;
  }
}

const json& ids_file() {
  static const json j = load("ids.json");
  return j;
}

TEST(Vectors, IdsDecodeAndEncode) {
  const json& cases = ids_file().at("cases");
  ASSERT_GE(cases.size(), 20u);
  for (const json& c : cases) {
    const std::string layout_name = c.at("layout").get<std::string>();
    SCOPED_TRACE(layout_name + " id " + c.at("id").get<std::string>() + ": " +
                 c.at("note").get<std::string>());
    const Layout& l = layout_named(layout_name);
    const std::uint64_t id = u64(c.at("id"));
    const json& fields = c.at("fields");
    ASSERT_EQ(fields.size(), l.fields().size());

    Result<DecodedId> d = l.decode(id);
    ASSERT_TRUE(d.is_ok()) << d.status().to_string();
    EXPECT_EQ(d->id, id);
    ASSERT_EQ(d->field_count, static_cast<int>(l.fields().size()));
    std::vector<std::uint64_t> values;
    for (std::size_t i = 0; i < l.fields().size(); ++i) {
      const std::uint64_t want = u64(fields.at(l.fields()[i].name));
      EXPECT_EQ(d->values[i], want) << l.fields()[i].name;
      values.push_back(want);
    }
    EXPECT_EQ(d->ticks, i64(c.at("ticks")));
    EXPECT_EQ(unix_ms(d->time), c.at("unix_ms").get<std::int64_t>());
    EXPECT_EQ(d->time, wall_from_unix_ms(c.at("unix_ms").get<std::int64_t>()));
    EXPECT_EQ(format_iso8601(d->time), c.at("time").get<std::string>());

    Result<std::uint64_t> e = l.encode(values);
    ASSERT_TRUE(e.is_ok()) << e.status().to_string();
    EXPECT_EQ(e.value(), id);
    if (!has_other_field(l)) {
      auto value_of = [&](FieldRole role) -> std::uint64_t {
        const int i = l.index_of(role);
        return i < 0 ? 0 : values[static_cast<std::size_t>(i)];
      };
      const WorkerId worker{static_cast<std::uint32_t>(value_of(FieldRole::kRegion)),
                            static_cast<std::uint32_t>(value_of(FieldRole::kHost))};
      Result<std::uint64_t> ew = l.encode(d->ticks, worker, value_of(FieldRole::kSequence));
      ASSERT_TRUE(ew.is_ok()) << ew.status().to_string();
      EXPECT_EQ(ew.value(), id);
    }

    // The id lies within the bounds of its own tick.
    Result<std::uint64_t> lo = l.min_id_at(d->time);
    Result<std::uint64_t> hi = l.max_id_at(d->time);
    ASSERT_TRUE(lo.is_ok() && hi.is_ok());
    EXPECT_LE(lo.value(), id);
    EXPECT_GE(hi.value(), id);

    // Ids travel as decimal strings.
    Result<std::uint64_t> parsed = parse_id(c.at("id").get<std::string>(), l);
    ASSERT_TRUE(parsed.is_ok()) << parsed.status().to_string();
    EXPECT_EQ(parsed.value(), id);
  }
}

TEST(Vectors, IdsTooWideForTheLayoutAreNotDecoded) {
  const json& cases = ids_file().at("decode_errors");
  ASSERT_GE(cases.size(), 3u);
  for (const json& c : cases) {
    SCOPED_TRACE(c.at("layout").get<std::string>() + " id " + c.at("id").get<std::string>());
    Result<DecodedId> d = layout_named(c.at("layout").get<std::string>()).decode(u64(c.at("id")));
    ASSERT_FALSE(d.is_ok());
    EXPECT_EQ(code_of(d.status()), c.at("error").get<std::string>()) << d.status().to_string();
  }
}

TEST(Vectors, FieldValuesThatDoNotFitAreNotEncoded) {
  const json& cases = ids_file().at("encode_errors");
  ASSERT_GE(cases.size(), 3u);
  for (const json& c : cases) {
    SCOPED_TRACE(c.at("layout").get<std::string>() + ": " + c.at("note").get<std::string>());
    const Layout& l = layout_named(c.at("layout").get<std::string>());
    std::vector<std::uint64_t> values;
    for (const FieldInfo& f : l.fields()) values.push_back(u64(c.at("fields").at(f.name)));
    Result<std::uint64_t> e = l.encode(values);
    ASSERT_FALSE(e.is_ok()) << e.value();
    EXPECT_EQ(code_of(e.status()), c.at("error").get<std::string>()) << e.status().to_string();
  }
}

TEST(Vectors, IdTextIsParsed) {
  const json& cases = ids_file().at("parse");
  ASSERT_GE(cases.size(), 5u);
  for (const json& c : cases) {
    const std::string text = c.at("text").get<std::string>();
    SCOPED_TRACE("\"" + text + "\": " + c.at("note").get<std::string>());
    Result<std::uint64_t> r = c.contains("layout")
                                  ? parse_id(text, layout_named(c.at("layout").get<std::string>()))
                                  : parse_id(text);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r.value(), u64(c.at("id")));
  }
}

TEST(Vectors, BadIdTextIsRefused) {
  const json& cases = ids_file().at("parse_errors");
  ASSERT_GE(cases.size(), 10u);
  for (const json& c : cases) {
    const std::string text = c.at("text").get<std::string>();
    SCOPED_TRACE("\"" + text + "\": " + c.at("note").get<std::string>());
    Result<std::uint64_t> r = c.contains("layout")
                                  ? parse_id(text, layout_named(c.at("layout").get<std::string>()))
                                  : parse_id(text);
    ASSERT_FALSE(r.is_ok()) << r.value();
    EXPECT_EQ(code_of(r.status()), c.at("error").get<std::string>()) << r.status().to_string();
  }
}

TEST(Vectors, TimeBoundsOfIds) {
  const json file = load("bounds.json");
  ASSERT_GE(file.at("cases").size(), 5u);
  for (const json& c : file.at("cases")) {
    SCOPED_TRACE(c.at("layout").get<std::string>() + " at " + c.at("time").get<std::string>() +
                 ": " + c.at("note").get<std::string>());
    const Layout& l = layout_named(c.at("layout").get<std::string>());
    const WallTime t = wall_from_unix_ms(c.at("unix_ms").get<std::int64_t>());
    EXPECT_EQ(l.ticks_at(t), i64(c.at("ticks")));
    Result<std::uint64_t> lo = l.min_id_at(t);
    Result<std::uint64_t> hi = l.max_id_at(t);
    ASSERT_TRUE(lo.is_ok()) << lo.status().to_string();
    ASSERT_TRUE(hi.is_ok()) << hi.status().to_string();
    EXPECT_EQ(lo.value(), u64(c.at("min_id")));
    EXPECT_EQ(hi.value(), u64(c.at("max_id")));
  }
  ASSERT_GE(file.at("errors").size(), 3u);
  for (const json& c : file.at("errors")) {
    SCOPED_TRACE(c.at("layout").get<std::string>() + " at " + c.at("time").get<std::string>() +
                 ": " + c.at("note").get<std::string>());
    const Layout& l = layout_named(c.at("layout").get<std::string>());
    const WallTime t = wall_from_unix_ms(c.at("unix_ms").get<std::int64_t>());
    for (const Result<std::uint64_t>& r : {l.min_id_at(t), l.max_id_at(t)}) {
      ASSERT_FALSE(r.is_ok()) << r.value();
      EXPECT_EQ(code_of(r.status()), c.at("error").get<std::string>()) << r.status().to_string();
    }
  }
}

TEST(Vectors, ShardOfIds) {
  const json file = load("shards.json");
  const json& cases = file.at("cases");
  ASSERT_GE(cases.size(), 20u);
  for (const json& c : cases) {
    SCOPED_TRACE("id " + c.at("id").get<std::string>() + " over " +
                 std::to_string(c.at("shards").get<std::uint32_t>()) + " shards");
    EXPECT_EQ(shard_of(u64(c.at("id")), c.at("shards").get<std::uint32_t>()),
              c.at("shard").get<std::uint32_t>());
  }
}

TEST(Vectors, LayoutHistoriesDecodeByValue) {
  const json file = load("histories.json");
  const json& histories = file.at("histories");
  ASSERT_GE(histories.size(), 5u);
  for (const json& h : histories) {
    SCOPED_TRACE(h.at("description").get<std::string>());
    std::vector<LayoutEra> eras;
    for (const json& e : h.at("eras")) {
      eras.push_back(LayoutEra{layout_named(e.at("layout").get<std::string>()),
                               wall_from_unix_ms(e.at("cutover_ms").get<std::int64_t>())});
    }
    Result<LayoutHistory> r = LayoutHistory::create(eras);
    if (h.contains("error")) {
      ASSERT_FALSE(r.is_ok()) << h.at("reason").get<std::string>();
      EXPECT_EQ(code_of(r.status()), h.at("error").get<std::string>()) << r.status().to_string();
      continue;
    }
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    const json& firsts = h.at("first_ids");
    for (std::size_t i = 0; i < firsts.size(); ++i) {
      const std::uint64_t first = u64(firsts[i]);
      EXPECT_EQ(r->era_of(first), i);
      Result<std::uint64_t> min = eras[i].layout.min_id_at(eras[i].cutover);
      ASSERT_TRUE(min.is_ok());
      EXPECT_EQ(min.value(), first);
    }
    for (const json& c : h.at("decode")) {
      SCOPED_TRACE("id " + c.at("id").get<std::string>());
      const std::uint64_t id = u64(c.at("id"));
      const std::size_t era = c.at("era").get<std::size_t>();
      EXPECT_EQ(r->era_of(id), era);
      Result<DecodedId> d = r->decode(id);
      ASSERT_TRUE(d.is_ok()) << d.status().to_string();
      EXPECT_EQ(unix_ms(d->time), c.at("unix_ms").get<std::int64_t>());
      Result<DecodedId> direct = eras[era].layout.decode(id);
      ASSERT_TRUE(direct.is_ok());
      EXPECT_EQ(d->values, direct->values);
    }
  }
}

}  // namespace
}  // namespace snowid
