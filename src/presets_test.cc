#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "snowid/layout.h"

namespace snowid {
namespace {

struct ExpectedField {
  std::string_view name;
  FieldRole role;
  int width;
  int shift;
};

Layout load(std::string_view name) {
  Result<Layout> r = preset(name);
  EXPECT_TRUE(r.is_ok()) << name << ": " << r.status().to_string();
  return r.is_ok() ? r.value() : Layout::snowid_default();
}

void expect_fields(const Layout& l, const std::vector<ExpectedField>& expected) {
  ASSERT_EQ(l.fields().size(), expected.size()) << l.name();
  int total = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(l.name() + " field " + std::to_string(i));
    EXPECT_EQ(l.fields()[i].name, expected[i].name);
    EXPECT_EQ(l.fields()[i].role, expected[i].role);
    EXPECT_EQ(l.fields()[i].width, expected[i].width);
    EXPECT_EQ(l.fields()[i].shift, expected[i].shift);
    total += expected[i].width;
  }
  EXPECT_EQ(l.total_width(), total);
}

struct Known {
  std::uint64_t id;
  std::int64_t unix_ms;
  std::string_view iso;
  std::uint64_t worker;
  std::uint64_t process;
  std::uint64_t increment;
};

TEST(Presets, NamesListsAllFiveInOrder) {
  const std::span<const std::string_view> names = preset_names();
  ASSERT_EQ(names.size(), 5u);
  EXPECT_EQ(names[0], "snowid");
  EXPECT_EQ(names[1], "twitter");
  EXPECT_EQ(names[2], "discord");
  EXPECT_EQ(names[3], "instagram");
  EXPECT_EQ(names[4], "sonyflake");
}

TEST(Presets, EveryListedNameLoadsALayoutOfThatName) {
  for (std::string_view name : preset_names()) {
    Result<Layout> r = preset(name);
    ASSERT_TRUE(r.is_ok()) << name << ": " << r.status().to_string();
    EXPECT_EQ(r->name(), name);
  }
}

TEST(Presets, UnknownNameIsNotFound) {
  for (std::string_view name : {"snowflake", "", "Twitter", "discord ", "mastodon"}) {
    Result<Layout> r = preset(name);
    ASSERT_FALSE(r.is_ok()) << name;
    EXPECT_EQ(r.status().code(), Code::kNotFound);
    EXPECT_FALSE(r.status().retryable());
    EXPECT_NE(r.status().message().find("\"" + std::string(name) + "\""), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("known: snowid, twitter, discord, instagram, sonyflake"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(Presets, SnowidIsTheDefaultGenerationLayout) {
  const Layout l = load("snowid");
  EXPECT_EQ(l.epoch_unix_ms(), kDefaultEpochUnixMs);
  EXPECT_EQ(l.unit_ms(), 1);
  EXPECT_FALSE(l.decode_only());
  EXPECT_TRUE(l.can_generate());
  expect_fields(l, {{"time", FieldRole::kTime, 41, 22},
                    {"region", FieldRole::kRegion, 2, 20},
                    {"host", FieldRole::kHost, 8, 12},
                    {"sequence", FieldRole::kSequence, 12, 0}});
  EXPECT_EQ(l.total_width(), 63);
}

// ---- twitter ----

TEST(Presets, TwitterLayout) {
  const Layout l = load("twitter");
  EXPECT_EQ(l.epoch_unix_ms(), 1288834974657);
  EXPECT_EQ(format_iso8601(l.epoch()), "2010-11-04T01:42:54.657Z");
  EXPECT_EQ(l.unit_ms(), 1);
  EXPECT_TRUE(l.decode_only());
  EXPECT_FALSE(l.can_generate());
  expect_fields(l, {{"time", FieldRole::kTime, 41, 22},
                    {"datacenter", FieldRole::kRegion, 5, 17},
                    {"worker", FieldRole::kHost, 5, 12},
                    {"sequence", FieldRole::kSequence, 12, 0}});
  EXPECT_EQ(l.total_width(), 63);
  EXPECT_EQ(l.regions(), 32u);
  EXPECT_EQ(l.workers_per_region(), 32u);
}

TEST(Presets, TwitterIdDecodesToItsParts) {
  const Layout l = load("twitter");
  // 2020-01-01T00:00:00.123Z, datacenter 3, worker 17, sequence 99.
  const WallTime t = wall_from_unix_ms(1577836800123);
  const std::int64_t ticks = l.ticks_at(t);
  EXPECT_EQ(ticks, 1577836800123 - 1288834974657);
  Result<std::uint64_t> id = l.encode(ticks, WorkerId{3, 17}, 99);
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  EXPECT_EQ(id.value(), (static_cast<std::uint64_t>(ticks) << 22) | (3u << 17) | (17u << 12) | 99u);
  Result<DecodedId> d = l.decode(id.value());
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->time, t);
  EXPECT_EQ(format_iso8601(d->time), "2020-01-01T00:00:00.123Z");
  EXPECT_EQ(d->values[1], 3u);
  EXPECT_EQ(d->values[2], 17u);
  EXPECT_EQ(d->values[3], 99u);
}

TEST(Presets, TwitterRefusesIdsWithTheSignBitSet) {
  const Layout l = load("twitter");
  Result<DecodedId> d = l.decode(std::uint64_t{1} << 63);
  ASSERT_FALSE(d.is_ok());
  EXPECT_EQ(d.status().code(), Code::kOutOfRange);
}

// ---- discord ----

TEST(Presets, DiscordLayout) {
  const Layout l = load("discord");
  EXPECT_EQ(l.epoch_unix_ms(), 1420070400000);
  EXPECT_EQ(format_iso8601(l.epoch()), "2015-01-01T00:00:00.000Z");
  EXPECT_EQ(l.unit_ms(), 1);
  EXPECT_TRUE(l.decode_only());
  EXPECT_FALSE(l.can_generate());
  expect_fields(l, {{"timestamp", FieldRole::kTime, 42, 22},
                    {"worker", FieldRole::kOther, 5, 17},
                    {"process", FieldRole::kOther, 5, 12},
                    {"increment", FieldRole::kSequence, 12, 0}});
  EXPECT_EQ(l.total_width(), 64);
  EXPECT_EQ(l.max_id(), ~std::uint64_t{0});
}

TEST(Presets, DiscordKnownIdsDecodeToTheirPublishedTimes) {
  const Layout l = load("discord");
  for (const Known& k : {
           Known{175928847299117063, 1462015105796, "2016-04-30T11:18:25.796Z", 1, 0, 7},
           Known{90339695967350784, 1441609061949, "2015-09-07T06:57:41.949Z", 0, 3, 0},
           Known{937847820382261308, 1643670744749, "2022-01-31T23:12:24.749Z", 1, 5, 60},
           Known{105484726235607040, 1445219918546, "2015-10-19T01:58:38.546Z", 0, 11, 0},
       }) {
    SCOPED_TRACE(std::to_string(k.id));
    Result<DecodedId> d = l.decode(k.id);
    ASSERT_TRUE(d.is_ok()) << d.status().to_string();
    EXPECT_EQ(unix_ms(d->time), k.unix_ms);
    EXPECT_EQ(format_iso8601(d->time), k.iso);
    EXPECT_EQ(d->ticks, k.unix_ms - 1420070400000);
    EXPECT_EQ(d->field_count, 4);
    EXPECT_EQ(d->values[1], k.worker);
    EXPECT_EQ(d->values[2], k.process);
    EXPECT_EQ(d->values[3], k.increment);
    // And back again.
    const std::array<std::uint64_t, 4> values = {d->values[0], d->values[1], d->values[2],
                                                 d->values[3]};
    Result<std::uint64_t> id = l.encode(values);
    ASSERT_TRUE(id.is_ok());
    EXPECT_EQ(id.value(), k.id);
  }
}

TEST(Presets, DiscordDecodesIdsWithTheTopBitSet) {
  const Layout l = load("discord");
  Result<DecodedId> d = l.decode(~std::uint64_t{0});
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ(d->ticks, (std::int64_t{1} << 42) - 1);
  EXPECT_EQ(format_iso8601(d->time), "2154-05-15T07:35:11.103Z");
}

TEST(Presets, DiscordCannotEncodeByRoleBecauseWorkerAndProcessHaveNone) {
  const Layout l = load("discord");
  Result<std::uint64_t> r = l.encode(1, WorkerId{}, 0);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

// ---- instagram ----

TEST(Presets, InstagramLayout) {
  const Layout l = load("instagram");
  EXPECT_EQ(l.epoch_unix_ms(), 1314220021721);
  EXPECT_EQ(format_iso8601(l.epoch()), "2011-08-24T21:07:01.721Z");
  EXPECT_EQ(l.unit_ms(), 1);
  EXPECT_TRUE(l.decode_only());
  EXPECT_FALSE(l.can_generate());
  expect_fields(l, {{"time", FieldRole::kTime, 41, 23},
                    {"shard", FieldRole::kOther, 13, 10},
                    {"sequence", FieldRole::kSequence, 10, 0}});
  EXPECT_EQ(l.total_width(), 64);
}

TEST(Presets, InstagramIdDecodesToItsParts) {
  const Layout l = load("instagram");
  // 2012-06-01T12:00:00.000Z, shard 5001, sequence 1013.
  const std::int64_t ticks = 1338552000000 - 1314220021721;
  const std::array<std::uint64_t, 3> values = {static_cast<std::uint64_t>(ticks), 5001, 1013};
  Result<std::uint64_t> id = l.encode(values);
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  EXPECT_EQ(id.value(), (static_cast<std::uint64_t>(ticks) << 23) | (5001u << 10) | 1013u);
  Result<DecodedId> d = l.decode(id.value());
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(format_iso8601(d->time), "2012-06-01T12:00:00.000Z");
  EXPECT_EQ(d->values[1], 5001u);
  EXPECT_EQ(d->values[2], 1013u);
}

// ---- sonyflake ----

TEST(Presets, SonyflakeLayoutHasTenMsTicksAndSequenceAboveMachine) {
  const Layout l = load("sonyflake");
  EXPECT_EQ(l.epoch_unix_ms(), 1409529600000);
  EXPECT_EQ(format_iso8601(l.epoch()), "2014-09-01T00:00:00.000Z");
  EXPECT_EQ(l.unit_ms(), 10);
  EXPECT_TRUE(l.decode_only());
  EXPECT_FALSE(l.can_generate());
  expect_fields(l, {{"time", FieldRole::kTime, 39, 24},
                    {"sequence", FieldRole::kSequence, 8, 16},
                    {"machine", FieldRole::kOther, 16, 0}});
  EXPECT_EQ(l.total_width(), 63);
  EXPECT_LT(l.index_of(FieldRole::kSequence), 2);
  EXPECT_GT(l.shift_of(FieldRole::kSequence), l.fields()[2].shift);
  EXPECT_EQ(l.end_of_life_unix_ms(), 1409529600000 + (std::int64_t{1} << 39) * 10);
}

TEST(Presets, SonyflakeIdDecodesToItsParts) {
  const Layout l = load("sonyflake");
  // 100 ticks of 10 ms after the epoch, sequence 2, machine 0x1234.
  const std::uint64_t id = (std::uint64_t{100} << 24) | (std::uint64_t{2} << 16) | 0x1234;
  Result<DecodedId> d = l.decode(id);
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ(d->ticks, 100);
  EXPECT_EQ(format_iso8601(d->time), "2014-09-01T00:00:01.000Z");
  EXPECT_EQ(d->values[1], 2u);
  EXPECT_EQ(d->values[2], 0x1234u);
  EXPECT_EQ(l.ticks_at(d->time + std::chrono::milliseconds(9)), 100);
}

}  // namespace
}  // namespace snowid
