// Checks the library against the shared, language-neutral test vectors in
// vectors/*.json (their schema is in vectors/README.md). Every expected value
// there was derived independently of this library.
#include <gtest/gtest.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "snowid/fence.h"
#include "snowid/generator.h"
#include "snowid/lease_guard.h"
#include "snowid/snowid.h"
#include "snowid/testing/memory_fence_store.h"
#include "snowid/testing/simulated_clock.h"

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

// --- generator.json: scripts on a simulated clock ---------------------------

Duration ms(std::int64_t n) { return std::chrono::milliseconds(n); }

struct Script {
  explicit Script(const json& c)
      : layout(layout_named(c.at("layout").get<std::string>())),
        clock(wall_from_unix_ms(c.at("start_wall_ms").get<std::int64_t>())) {
    // A waiting call sleeps for the hint of the answer that made it wait;
    // the simulated clock then moves both readings by exactly that.
    clock.set_auto_advance(true);
    mono_start = clock.mono_now();
    const json& o = c.at("options");
    options.layout = layout;
    options.worker =
        WorkerId{o.at("region").get<std::uint32_t>(), o.at("host").get<std::uint32_t>()};
    options.random_start_bound = o.at("random_start_bound").get<std::uint32_t>();
    options.max_backward = ms(o.at("max_backward_ms").get<std::int64_t>());
    options.max_borrow = ms(o.at("max_borrow_ms").get<std::int64_t>());
    options.max_wait = ms(o.at("max_wait_ms").get<std::int64_t>());
    options.fence_window = ms(o.at("fence_window_ms").get<std::int64_t>());
    if (o.contains("not_before_ms")) {
      options.not_before = wall_from_unix_ms(o.at("not_before_ms").get<std::int64_t>());
    }
    if (o.contains("wait_until_ms")) {
      options.wait_until = wall_from_unix_ms(o.at("wait_until_ms").get<std::int64_t>());
    }
    if (o.contains("continue_after_ms")) {
      options.continue_after = wall_from_unix_ms(o.at("continue_after_ms").get<std::int64_t>());
    }
    if (o.value("lease", false)) {
      guard = std::make_shared<LeaseGuard>();
      options.lease = guard;
    }
    if (o.contains("fence")) {
      fence = std::make_shared<testing::MemoryFenceStore>();
      if (o.at("fence").contains("stored_ms")) {
        const Status s =
            fence->store(wall_from_unix_ms(o.at("fence").at("stored_ms").get<std::int64_t>()));
        if (!s.is_ok()) throw std::runtime_error(s.to_string());
      }
      options.fence_store = fence;
    }
  }

  // The code creating a generator gives, "OK" when it does.
  std::string create() {
    gen.reset();
    Result<std::unique_ptr<Generator>> r = Generator::create(clock, options);
    if (!r.is_ok()) return code_of(r.status());
    gen = std::move(r).value();
    return "OK";
  }

  std::int64_t wall_ms() const { return unix_ms(clock.wall_now()); }

  const Layout& layout;
  testing::SimulatedClock clock;
  MonoTime mono_start;
  GeneratorOptions options;
  std::shared_ptr<LeaseGuard> guard;
  std::shared_ptr<testing::MemoryFenceStore> fence;
  std::unique_ptr<Generator> gen;
};

// Checks one call step: `calls` calls (or one batch of n) and their answers.
void check_call(Script& s, const json& step) {
  std::string kind;
  for (const char* k : {"try_next", "next", "try_reserve", "reserve"}) {
    if (step.contains(k)) kind = k;
  }
  ASSERT_FALSE(kind.empty()) << step.dump();
  const bool batch = kind == "try_reserve" || kind == "reserve";
  const auto n = step.at(kind).get<std::uint32_t>();
  const std::uint32_t calls = batch ? 1 : n;
  for (std::uint32_t i = 0; i < calls; ++i) {
    IdBatch b;
    if (kind == "try_next" || kind == "next") {
      const IdResult r = kind == "next" ? s.gen->next() : s.gen->try_next();
      b.first = r.id;
      b.count = r.ok() ? 1 : 0;
      b.code = r.code;
      b.retry_after = r.retry_after;
    } else {
      b = kind == "reserve" ? s.gen->reserve(n) : s.gen->try_reserve(n);
    }
    if (step.contains("error")) {
      EXPECT_EQ(std::string(code_name(b.code)), step.at("error").get<std::string>());
      if (step.contains("retry_after_ms")) {
        EXPECT_EQ(b.retry_after, ms(step.at("retry_after_ms").get<std::int64_t>()));
      }
      return;
    }
    ASSERT_TRUE(b.ok()) << "call " << i << ": " << code_name(b.code);
    if (step.contains("first_id")) {
      ASSERT_EQ(b.first, u64(step.at("first_id")) + i) << "call " << i;
    } else {
      ASSERT_GE(b.first, u64(step.at("id_min")));
      ASSERT_LE(b.first, u64(step.at("id_max")));
    }
    if (batch) EXPECT_EQ(b.count, step.at("count").get<std::uint32_t>());
  }
}

TEST(Vectors, GeneratorScripts) {
  const json file = load("generator.json");
  ASSERT_EQ(file.at("schema"), "snowid-vectors/generator/1");
  ASSERT_GE(file.at("cases").size(), 30u);
  for (const json& c : file.at("cases")) {
    SCOPED_TRACE("case " + c.at("name").get<std::string>());
    Script s(c);
    ASSERT_EQ(s.create(), c.at("create").get<std::string>());
    int index = 0;
    for (const json& step : c.at("steps")) {
      SCOPED_TRACE("step " + std::to_string(index++) + ": " + step.dump());
      if (step.contains("advance_ms")) {
        s.clock.advance(ms(step.at("advance_ms").get<std::int64_t>()));
      } else if (step.contains("set_wall_ms")) {
        s.clock.set_wall(wall_from_unix_ms(step.at("set_wall_ms").get<std::int64_t>()));
      } else if (step.contains("advance_mono_ms")) {
        s.clock.advance_monotonic(ms(step.at("advance_mono_ms").get<std::int64_t>()));
      } else if (step.contains("lease_extend")) {
        const json& e = step.at("lease_extend");
        s.guard->extend(s.mono_start + ms(e.at("deadline_mono_ms").get<std::int64_t>()),
                        wall_from_unix_ms(e.at("high_water_ms").get<std::int64_t>()));
      } else if (step.contains("lease_lost")) {
        s.guard->mark_lost();
      } else if (step.contains("fence_fail")) {
        s.fence->set_fail_stores(step.at("fence_fail").get<bool>());
      } else if (step.contains("close")) {
        EXPECT_TRUE(s.gen->close().is_ok());
      } else if (step.contains("restart")) {
        ASSERT_EQ(s.create(), step.at("create").get<std::string>());
      } else if (step.contains("try_next") || step.contains("next") ||
                 step.contains("try_reserve") || step.contains("reserve")) {
        check_call(s, step);
      }
      if (step.contains("fence_ms")) {
        const std::optional<WallTime> stored = s.fence->stored();
        if (step.at("fence_ms").is_null()) {
          EXPECT_FALSE(stored.has_value());
        } else {
          ASSERT_TRUE(stored.has_value());
          EXPECT_EQ(unix_ms(*stored), step.at("fence_ms").get<std::int64_t>());
        }
      }
      if (step.contains("healthy")) EXPECT_EQ(s.gen->healthy(), step.at("healthy").get<bool>());
      if (step.contains("wall_ms")) EXPECT_EQ(s.wall_ms(), step.at("wall_ms").get<std::int64_t>());
    }
  }
}

// --- fence.json: the fence file --------------------------------------------

class FenceFileVectors : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "snowid-fence-vectors-XXXXXX");
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/fence";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write(const std::string& text) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << text;
  }
  std::string read() {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string dir_;
  std::string path_;
};

TEST_F(FenceFileVectors, TextsAreReadOrRefused) {
  const json file = load("fence.json");
  ASSERT_EQ(file.at("schema"), "snowid-vectors/fence/1");
  std::unique_ptr<FenceStore> store = make_file_fence_store(path_);
  for (const json& c : file.at("valid")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    write(c.at("text").get<std::string>());
    Result<std::optional<WallTime>> r = store->load();
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_TRUE(r.value().has_value());
    EXPECT_EQ(unix_ms(*r.value()), c.at("fence_ms").get<std::int64_t>());
  }
  for (const json& c : file.at("invalid")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    write(c.at("text").get<std::string>());
    Result<std::optional<WallTime>> r = store->load();
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(code_of(r.status()), c.at("error").get<std::string>());
  }
}

TEST_F(FenceFileVectors, FencesAreWrittenAsTheirText) {
  const json file = load("fence.json");
  std::unique_ptr<FenceStore> store = make_file_fence_store(path_);
  for (const json& c : file.at("write")) {
    const std::int64_t fence = c.at("fence_ms").get<std::int64_t>();
    SCOPED_TRACE(fence);
    ASSERT_TRUE(store->store(wall_from_unix_ms(fence)).is_ok());
    EXPECT_EQ(read(), c.at("text").get<std::string>());
  }
  const std::string before = read();
  for (const json& c : file.at("write_errors")) {
    const Status s = store->store(wall_from_unix_ms(c.at("fence_ms").get<std::int64_t>()));
    EXPECT_EQ(code_of(s), c.at("error").get<std::string>());
    EXPECT_EQ(read(), before);
  }
}

}  // namespace
}  // namespace snowid
