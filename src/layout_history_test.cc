#include "snowid/layout_history.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace snowid {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr std::int64_t kEpoch2026 = 1767225600000;
const WallTime k2026 = wall_from_unix_ms(kEpoch2026);
const WallTime k2028 = wall_from_unix_ms(1830297600000);
const WallTime k2030 = wall_from_unix_ms(1893456000000);
const WallTime k2035 = wall_from_unix_ms(2051222400000);

Layout make(std::string name, std::int64_t epoch_ms, std::vector<FieldSpec> fields) {
  LayoutSpec spec;
  spec.name = std::move(name);
  spec.epoch_unix_ms = epoch_ms;
  spec.fields = std::move(fields);
  Result<Layout> r = Layout::create(std::move(spec));
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? std::move(r).value() : Layout::snowid_default();
}

// Same epoch and time field (41 bits at bit 22); the region bits go to the host.
Layout wide_host() {
  return make("snowid_v2", kEpoch2026,
              {{"time", FieldRole::kTime, 41},
               {"host", FieldRole::kHost, 10},
               {"sequence", FieldRole::kSequence, 12}});
}

// Same epoch, one bit less of time; the time field moves up to bit 23.
Layout coarse_time() {
  return make("snowid_v3", kEpoch2026,
              {{"time", FieldRole::kTime, 40},
               {"host", FieldRole::kHost, 11},
               {"sequence", FieldRole::kSequence, 12}});
}

// The default widths with an epoch of 2030: tick counts restart at zero.
Layout restarted_epoch() {
  return make("snowid_2030", 1893456000000,
              {{"time", FieldRole::kTime, 41},
               {"region", FieldRole::kRegion, 2},
               {"host", FieldRole::kHost, 8},
               {"sequence", FieldRole::kSequence, 12}});
}

LayoutHistory make_history(std::vector<LayoutEra> eras) {
  Result<LayoutHistory> r = LayoutHistory::create(std::move(eras));
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  if (r.is_ok()) return std::move(r).value();
  return LayoutHistory::create({{Layout::snowid_default(), k2026}}).value();
}

void expect_refused(std::vector<LayoutEra> eras, const std::vector<std::string>& parts) {
  Result<LayoutHistory> r = LayoutHistory::create(std::move(eras));
  ASSERT_FALSE(r.is_ok()) << "accepted an invalid history";
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  for (const std::string& part : parts) {
    EXPECT_NE(r.status().message().find(part), std::string::npos)
        << "message \"" << r.status().message() << "\" lacks \"" << part << "\"";
  }
}

std::uint64_t id_at(const Layout& l, WallTime t, WorkerId w, std::uint64_t seq) {
  Result<std::uint64_t> id = l.encode(l.ticks_at(t), w, seq);
  EXPECT_TRUE(id.is_ok()) << id.status().to_string();
  return id.is_ok() ? id.value() : 0;
}

// ---- valid histories ----

TEST(LayoutHistory, SingleEraDecodesLikeItsLayout) {
  const Layout& l = Layout::snowid_default();
  const LayoutHistory h = make_history({{l, k2026}});
  ASSERT_EQ(h.eras().size(), 1u);
  EXPECT_EQ(h.current().layout.name(), "snowid");
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t id = rng() >> 1;
    EXPECT_EQ(h.era_of(id), 0u);
    Result<DecodedId> a = h.decode(id);
    Result<DecodedId> b = l.decode(id);
    ASSERT_TRUE(a.is_ok() && b.is_ok());
    EXPECT_EQ(a->values, b->values);
    EXPECT_EQ(a->time, b->time);
  }
  Result<DecodedId> too_big = h.decode(std::uint64_t{1} << 63);
  ASSERT_FALSE(too_big.is_ok());
  EXPECT_EQ(too_big.status().code(), Code::kOutOfRange);
}

TEST(LayoutHistory, MovingRegionBitsToTheHostUnderTheSameTimeFieldIsValid) {
  const LayoutHistory h = make_history({{Layout::snowid_default(), k2026}, {wide_host(), k2030}});
  ASSERT_EQ(h.eras().size(), 2u);
  EXPECT_EQ(h.eras()[0].layout.name(), "snowid");
  EXPECT_EQ(h.eras()[1].layout.name(), "snowid_v2");
  EXPECT_EQ(h.eras()[1].cutover, k2030);
  EXPECT_EQ(h.current().layout.name(), "snowid_v2");
}

TEST(LayoutHistory, TheEraInEffectChangesExactlyAtTheCutover) {
  const LayoutHistory h = make_history({{Layout::snowid_default(), k2026}, {wide_host(), k2030}});
  EXPECT_EQ(h.era_at(k2026 - milliseconds(1)), std::nullopt) << "before the first cut-over";
  EXPECT_EQ(h.era_at(k2026), 0u);
  EXPECT_EQ(h.era_at(k2030 - milliseconds(1)), 0u);
  EXPECT_EQ(h.era_at(k2030), 1u);
  EXPECT_EQ(h.era_at(k2030 + std::chrono::hours(24 * 365)), 1u);
}

TEST(LayoutHistory, DecodePicksTheEraOfIdsJustBeforeAndJustAfterTheCutover) {
  const Layout& v1 = Layout::snowid_default();
  const Layout v2 = wide_host();
  const LayoutHistory h = make_history({{v1, k2026}, {v2, k2030}});

  // The largest id era 0 can issue before the cut-over, and the smallest era 1 issues at it.
  const std::uint64_t last_v1 = id_at(v1, k2030 - nanoseconds(1), WorkerId{3, 255}, 4095);
  const std::uint64_t first_v2 = id_at(v2, k2030, WorkerId{0, 0}, 0);
  EXPECT_EQ(last_v1 + 1, first_v2);
  EXPECT_EQ(h.era_of(last_v1), 0u);
  EXPECT_EQ(h.era_of(first_v2), 1u);

  Result<DecodedId> d1 = h.decode(last_v1);
  ASSERT_TRUE(d1.is_ok()) << d1.status().to_string();
  EXPECT_EQ(d1->field_count, 4);
  EXPECT_EQ(d1->time, k2030 - milliseconds(1));
  EXPECT_EQ(d1->values[1], 3u);
  EXPECT_EQ(d1->values[2], 255u);
  EXPECT_EQ(d1->values[3], 4095u);

  // An era-1 host above 255 only decodes correctly with era 1's layout.
  const std::uint64_t v2_id = id_at(v2, k2030 + milliseconds(5), WorkerId{0, 1000}, 17);
  EXPECT_EQ(h.era_of(v2_id), 1u);
  Result<DecodedId> d2 = h.decode(v2_id);
  ASSERT_TRUE(d2.is_ok()) << d2.status().to_string();
  EXPECT_EQ(d2->field_count, 3);
  EXPECT_EQ(d2->time, k2030 + milliseconds(5));
  EXPECT_EQ(d2->values[1], 1000u);
  EXPECT_EQ(d2->values[2], 17u);
}

TEST(LayoutHistory, RandomIdsOfEachEraDecodeWithTheirOwnLayout) {
  const Layout& v1 = Layout::snowid_default();
  const Layout v2 = wide_host();
  const LayoutHistory h = make_history({{v1, k2026}, {v2, k2030}});
  std::mt19937_64 rng(11);
  const std::int64_t span_ns = (k2030 - k2026).count();
  std::uniform_int_distribution<std::int64_t> before(0, span_ns - 1);
  std::uniform_int_distribution<std::int64_t> after(0, span_ns * 10);
  for (int i = 0; i < 20000; ++i) {
    const WallTime t1 = k2026 + nanoseconds(before(rng));
    const WorkerId w1{static_cast<std::uint32_t>(rng() % 4),
                      static_cast<std::uint32_t>(rng() % 256)};
    const std::uint64_t s1 = rng() % 4096;
    const std::uint64_t id1 = id_at(v1, t1, w1, s1);
    ASSERT_EQ(h.era_of(id1), 0u);
    Result<DecodedId> d1 = h.decode(id1);
    ASSERT_TRUE(d1.is_ok());
    ASSERT_EQ(d1->values[1], w1.region);
    ASSERT_EQ(d1->values[2], w1.host);
    ASSERT_EQ(d1->values[3], s1);

    const WallTime t2 = k2030 + nanoseconds(after(rng));
    const WorkerId w2{0, static_cast<std::uint32_t>(rng() % 1024)};
    const std::uint64_t s2 = rng() % 4096;
    const std::uint64_t id2 = id_at(v2, t2, w2, s2);
    ASSERT_EQ(h.era_of(id2), 1u);
    Result<DecodedId> d2 = h.decode(id2);
    ASSERT_TRUE(d2.is_ok());
    ASSERT_EQ(d2->field_count, 3);
    ASSERT_EQ(d2->values[1], w2.host);
    ASSERT_EQ(d2->values[2], s2);
    ASSERT_EQ(d2->ticks, v2.ticks_at(t2));
    ASSERT_LT(id1, id2);
  }
}

TEST(LayoutHistory, ThreeErasEachDecodeTheirOwnIds) {
  const Layout& v1 = Layout::snowid_default();
  const Layout v2 = wide_host();
  const Layout v3 = coarse_time();
  const LayoutHistory h = make_history({{v1, k2026}, {v2, k2030}, {v3, k2035}});
  ASSERT_EQ(h.eras().size(), 3u);
  EXPECT_EQ(h.current().layout.name(), "snowid_v3");

  const std::uint64_t a = id_at(v1, k2026 + milliseconds(1), WorkerId{1, 2}, 3);
  const std::uint64_t b_last = id_at(v2, k2035 - nanoseconds(1), WorkerId{0, 1023}, 4095);
  const std::uint64_t c_first = id_at(v3, k2035, WorkerId{0, 0}, 0);
  const std::uint64_t c = id_at(v3, k2035 + milliseconds(2), WorkerId{0, 2047}, 9);
  EXPECT_LT(b_last, c_first);
  EXPECT_EQ(h.era_of(0), 0u);
  EXPECT_EQ(h.era_of(a), 0u);
  EXPECT_EQ(h.era_of(b_last), 1u);
  EXPECT_EQ(h.era_of(c_first), 2u);
  EXPECT_EQ(h.era_of(c), 2u);
  EXPECT_EQ(h.era_of((std::uint64_t{1} << 63) - 1), 2u);

  Result<DecodedId> dc = h.decode(c);
  ASSERT_TRUE(dc.is_ok()) << dc.status().to_string();
  EXPECT_EQ(dc->time, k2035 + milliseconds(2));
  EXPECT_EQ(dc->values[1], 2047u);
  EXPECT_EQ(dc->values[2], 9u);
  Result<DecodedId> dc0 = h.decode(c_first);
  ASSERT_TRUE(dc0.is_ok());
  EXPECT_EQ(dc0->time, k2035);
}

TEST(LayoutHistory, NewEraWithAnEarlierEpochIsValid) {
  // An earlier epoch gives larger tick counts at the cut-over.
  const Layout earlier = make("snowid_2025", 1735689600000,
                              {{"time", FieldRole::kTime, 41},
                               {"host", FieldRole::kHost, 10},
                               {"sequence", FieldRole::kSequence, 12}});
  const LayoutHistory h = make_history({{Layout::snowid_default(), k2026}, {earlier, k2030}});
  const std::uint64_t id = id_at(earlier, k2030, WorkerId{0, 5}, 0);
  EXPECT_EQ(h.era_of(id), 1u);
  Result<DecodedId> d = h.decode(id);
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->time, k2030);
  EXPECT_EQ(d->values[1], 5u);
}

TEST(LayoutHistory, FirstEraMayStartAfterItsEpoch) {
  const LayoutHistory h = make_history({{Layout::snowid_default(), k2028}, {wide_host(), k2030}});
  EXPECT_EQ(h.eras()[0].cutover, k2028);
  // Ids below era 0's first id still belong to era 0: there is no earlier era.
  EXPECT_EQ(h.era_of(0), 0u);
}

// ---- invalid histories ----

TEST(LayoutHistory, RefusesNoEras) { expect_refused({}, {"at least one era"}); }

TEST(LayoutHistory, RefusesALaterEpochWhoseTickCountsRestartSmall) {
  expect_refused({{Layout::snowid_default(), k2026}, {restarted_epoch(), k2030}},
                 {"era 1 (snowid_2030)", "its first id 0 is not above the last id era 0",
                  "2030-01-01T00:00:00.000Z", "would overlap"});
}

TEST(LayoutHistory, RefusesMovingTheTimeFieldDown) {
  // 42 bits of time at bit 21: the same instant gives half the id.
  const Layout lower = make("snowid_low", kEpoch2026,
                            {{"time", FieldRole::kTime, 42},
                             {"host", FieldRole::kHost, 9},
                             {"sequence", FieldRole::kSequence, 12}});
  expect_refused({{Layout::snowid_default(), k2026}, {lower, k2030}},
                 {"era 1 (snowid_low)", "era 0", "would overlap"});
}

TEST(LayoutHistory, RefusesACutoverInsideAMillisecondOfTheSameTimeField) {
  // Era 0 may already have issued ids in the millisecond that contains the cut-over.
  const WallTime mid = k2030 + nanoseconds(500'000);
  expect_refused({{Layout::snowid_default(), k2026}, {wide_host(), mid}},
                 {"era 1 (snowid_v2)", "would overlap"});
}

TEST(LayoutHistory, RefusesEqualCutovers) {
  expect_refused({{Layout::snowid_default(), k2030}, {wide_host(), k2030}},
                 {"era 1 (snowid_v2)", "cut-overs must strictly increase"});
}

TEST(LayoutHistory, RefusesDecreasingCutovers) {
  expect_refused({{Layout::snowid_default(), k2030}, {wide_host(), k2028}},
                 {"era 1 (snowid_v2)", "cut-overs must strictly increase"});
}

TEST(LayoutHistory, RefusesACutoverBeforeTheEpoch) {
  expect_refused({{Layout::snowid_default(), k2026 - std::chrono::hours(24)}},
                 {"era 0 (snowid)", "cut-over 2025-12-31T00:00:00.000Z",
                  "outside the layout's lifetime", "before the epoch"});
  expect_refused({{Layout::snowid_default(), k2026}, {restarted_epoch(), k2028}},
                 {"era 1 (snowid_2030)", "outside the layout's lifetime"});
}

TEST(LayoutHistory, RefusesACutoverPastTheEndOfLife) {
  const WallTime eol = wall_from_unix_ms(Layout::snowid_default().end_of_life_unix_ms());
  expect_refused({{Layout::snowid_default(), k2026}, {wide_host(), eol}},
                 {"era 1 (snowid_v2)", "outside the layout's lifetime", "end of life"});
}

TEST(LayoutHistory, RefusesAThirdEraOverlappingTheSecond) {
  expect_refused(
      {{Layout::snowid_default(), k2026}, {wide_host(), k2030}, {restarted_epoch(), k2035}},
      {"era 2 (snowid_2030)", "era 1", "would overlap"});
}

}  // namespace
}  // namespace snowid
