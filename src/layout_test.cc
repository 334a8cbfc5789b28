#include "snowid/layout.h"

#include <gtest/gtest.h>

#include <array>
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
constexpr std::int64_t kEndOfLife2095 = kEpoch2026 + (std::int64_t{1} << 41);
constexpr std::int64_t kEpoch2014 = 1409529600000;
// The last millisecond that 64-bit nanoseconds since 1970 can hold (2262-04-11T23:47:16.854Z).
constexpr std::int64_t kLastRepresentableMs = 9223372036854;

LayoutSpec spec_of(std::vector<FieldSpec> fields, bool decode_only = false,
                   std::int64_t epoch_ms = kEpoch2026, std::int64_t unit_ms = 1) {
  LayoutSpec spec;
  spec.name = "test";
  spec.epoch_unix_ms = epoch_ms;
  spec.unit_ms = unit_ms;
  spec.fields = std::move(fields);
  spec.decode_only = decode_only;
  return spec;
}

Layout make(LayoutSpec spec) {
  Result<Layout> r = Layout::create(std::move(spec));
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? std::move(r).value() : Layout::snowid_default();
}

// Refused with kInvalidArgument and a message that names the reason.
void expect_invalid(LayoutSpec spec, std::string_view reason) {
  Result<Layout> r = Layout::create(std::move(spec));
  ASSERT_FALSE(r.is_ok()) << "accepted a layout that should be refused (" << reason << ")";
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find(reason), std::string::npos)
      << "message \"" << r.status().message() << "\" lacks \"" << reason << "\"";
}

// time 41 · host 10 · sequence 12: no region field.
Layout host_only_layout() {
  return make(spec_of({{"time", FieldRole::kTime, 41},
                       {"host", FieldRole::kHost, 10},
                       {"sequence", FieldRole::kSequence, 12}}));
}

// time 42 · sequence 21: a single generator.
Layout sequence_only_layout() {
  return make(spec_of({{"time", FieldRole::kTime, 42}, {"sequence", FieldRole::kSequence, 21}}));
}

// 64 bits, two role-less fields in the middle, decode-only.
Layout wide_foreign_layout() {
  return make(spec_of({{"ts", FieldRole::kTime, 42},
                       {"worker", FieldRole::kOther, 5},
                       {"process", FieldRole::kOther, 5},
                       {"inc", FieldRole::kSequence, 12}},
                      true, 1420070400000));
}

// 10 ms ticks, sequence above a role-less machine field, decode-only.
Layout ten_ms_layout() {
  return make(spec_of({{"time", FieldRole::kTime, 39},
                       {"sequence", FieldRole::kSequence, 8},
                       {"machine", FieldRole::kOther, 16}},
                      true, kEpoch2014, 10));
}

// A short decode-only layout that uses only 23 bits.
Layout narrow_layout() {
  return make(spec_of({{"t", FieldRole::kTime, 20}, {"x", FieldRole::kOther, 3}}, true));
}

std::vector<Layout> assorted_layouts() {
  return {Layout::snowid_default(), host_only_layout(), sequence_only_layout(),
          wide_foreign_layout(),    ten_ms_layout(),    narrow_layout()};
}

// ---- the default layout ----

TEST(DefaultLayout, HasTimeRegionHostSequenceWithPinnedWidthsAndShifts) {
  const Layout& l = Layout::snowid_default();
  EXPECT_EQ(l.name(), "snowid");
  ASSERT_EQ(l.fields().size(), 4u);
  const std::array<std::string_view, 4> names = {"time", "region", "host", "sequence"};
  const std::array<FieldRole, 4> roles = {FieldRole::kTime, FieldRole::kRegion, FieldRole::kHost,
                                          FieldRole::kSequence};
  const std::array<int, 4> widths = {41, 2, 8, 12};
  const std::array<int, 4> shifts = {22, 20, 12, 0};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(l.fields()[i].name, names[i]);
    EXPECT_EQ(l.fields()[i].role, roles[i]);
    EXPECT_EQ(l.fields()[i].width, widths[i]);
    EXPECT_EQ(l.fields()[i].shift, shifts[i]);
  }
  EXPECT_EQ(l.total_width(), 63);
  EXPECT_TRUE(l.can_generate());
  EXPECT_FALSE(l.decode_only());
}

TEST(DefaultLayout, RoleLookups) {
  const Layout& l = Layout::snowid_default();
  EXPECT_EQ(l.index_of(FieldRole::kTime), 0);
  EXPECT_EQ(l.index_of(FieldRole::kRegion), 1);
  EXPECT_EQ(l.index_of(FieldRole::kHost), 2);
  EXPECT_EQ(l.index_of(FieldRole::kSequence), 3);
  EXPECT_EQ(l.index_of(FieldRole::kOther), -1);
  EXPECT_EQ(l.width_of(FieldRole::kRegion), 2);
  EXPECT_EQ(l.width_of(FieldRole::kOther), 0);
  EXPECT_EQ(l.shift_of(FieldRole::kTime), 22);
  EXPECT_EQ(l.shift_of(FieldRole::kHost), 12);
}

TEST(DefaultLayout, EpochIsStartOf2026InMilliseconds) {
  const Layout& l = Layout::snowid_default();
  EXPECT_EQ(kDefaultEpochUnixMs, 1767225600000);
  EXPECT_EQ(l.epoch_unix_ms(), 1767225600000);
  EXPECT_EQ(l.epoch(), wall_from_unix_ms(1767225600000));
  EXPECT_EQ(format_iso8601(l.epoch()), "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(l.unit_ms(), 1);
}

TEST(DefaultLayout, EndOfLifeIsTwoToTheFortyFirstMillisecondsAfterTheEpoch) {
  const Layout& l = Layout::snowid_default();
  EXPECT_EQ(l.end_of_life_unix_ms(), 3966248855552);
  EXPECT_EQ(l.end_of_life_unix_ms(), kEndOfLife2095);
  EXPECT_EQ(format_iso8601(wall_from_unix_ms(l.end_of_life_unix_ms())), "2095-09-07T15:47:35.552Z");
}

TEST(DefaultLayout, Capacities) {
  const Layout& l = Layout::snowid_default();
  EXPECT_EQ(l.regions(), 4u);
  EXPECT_EQ(l.workers_per_region(), 256u);
  EXPECT_EQ(l.regions() * l.workers_per_region(), 1024u);
  EXPECT_EQ(l.sequence_capacity(), 4096u);
  EXPECT_EQ(l.max_ticks(), (std::int64_t{1} << 41) - 1);
  EXPECT_EQ(l.max_id(), (std::uint64_t{1} << 63) - 1);
  EXPECT_EQ(l.fields()[0].max_value(), (std::uint64_t{1} << 41) - 1);
  EXPECT_EQ(l.fields()[3].max_value(), 4095u);
}

TEST(DefaultLayout, PinnedEncodings) {
  // These values are the persistent format; they must never change.
  const Layout& l = Layout::snowid_default();
  struct Vector {
    std::int64_t ticks;
    WorkerId worker;
    std::uint64_t sequence;
    std::uint64_t id;
  };
  for (const Vector& v : {
           Vector{0, {0, 0}, 0, 0},
           Vector{0, {0, 0}, 1, 1},
           Vector{0, {0, 1}, 0, 4096},
           Vector{0, {1, 0}, 0, 1048576},
           Vector{1, {0, 0}, 0, 4194304},
           Vector{1, {1, 1}, 1, 5246977},
           Vector{1234, {3, 255}, 4095, 5179965439},
           Vector{(std::int64_t{1} << 41) - 1, {2, 7}, 9, 9223372036852707337u},
       }) {
    Result<std::uint64_t> id = l.encode(v.ticks, v.worker, v.sequence);
    ASSERT_TRUE(id.is_ok()) << id.status().to_string();
    EXPECT_EQ(id.value(), v.id);
    Result<DecodedId> d = l.decode(v.id);
    ASSERT_TRUE(d.is_ok());
    EXPECT_EQ(d->ticks, v.ticks);
    EXPECT_EQ(d->values[1], v.worker.region);
    EXPECT_EQ(d->values[2], v.worker.host);
    EXPECT_EQ(d->values[3], v.sequence);
  }
}

// ---- roles ----

TEST(FieldRoles, NamesRoundTrip) {
  for (FieldRole r : {FieldRole::kTime, FieldRole::kRegion, FieldRole::kHost, FieldRole::kSequence,
                      FieldRole::kOther}) {
    Result<FieldRole> back = parse_role(role_name(r));
    ASSERT_TRUE(back.is_ok()) << role_name(r);
    EXPECT_EQ(back.value(), r);
  }
  EXPECT_EQ(role_name(FieldRole::kTime), "time");
  EXPECT_EQ(role_name(FieldRole::kRegion), "region");
  EXPECT_EQ(role_name(FieldRole::kHost), "host");
  EXPECT_EQ(role_name(FieldRole::kSequence), "sequence");
  EXPECT_EQ(role_name(FieldRole::kOther), "other");
}

TEST(FieldRoles, UnknownRoleNameIsRefused) {
  for (std::string_view name : {"", "Time", "worker", "time "}) {
    Result<FieldRole> r = parse_role(name);
    ASSERT_FALSE(r.is_ok()) << name;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("expected time, region, host, sequence or other"),
              std::string::npos);
  }
}

// ---- Layout::create: accepted ----

TEST(LayoutCreate, BadFieldNameIsQuotedWithoutItsControlBytes) {
  expect_invalid(spec_of({{"ti\x01me\x1b[2J", FieldRole::kTime, 41},
                          {"host", FieldRole::kHost, 10},
                          {"sequence", FieldRole::kSequence, 12}}),
                 "field name \"ti?me?[2J\"");
}

TEST(LayoutCreate, LayoutWithoutRegionCanGenerate) {
  const Layout l = host_only_layout();
  EXPECT_TRUE(l.can_generate());
  EXPECT_EQ(l.regions(), 1u);
  EXPECT_EQ(l.workers_per_region(), 1024u);
  EXPECT_EQ(l.sequence_capacity(), 4096u);
  EXPECT_EQ(l.shift_of(FieldRole::kTime), 22);
  EXPECT_EQ(l.shift_of(FieldRole::kHost), 12);
  EXPECT_EQ(l.index_of(FieldRole::kRegion), -1);
}

TEST(LayoutCreate, LayoutWithoutRegionAndHostCanGenerate) {
  const Layout l = sequence_only_layout();
  EXPECT_TRUE(l.can_generate());
  EXPECT_EQ(l.regions(), 1u);
  EXPECT_EQ(l.workers_per_region(), 1u);
  EXPECT_EQ(l.sequence_capacity(), std::uint64_t{1} << 21);
  EXPECT_EQ(l.shift_of(FieldRole::kTime), 21);
}

TEST(LayoutCreate, LayoutWithRegionButNoHostCanGenerate) {
  const Layout l = make(spec_of({{"time", FieldRole::kTime, 41},
                                 {"region", FieldRole::kRegion, 10},
                                 {"sequence", FieldRole::kSequence, 12}}));
  EXPECT_TRUE(l.can_generate());
  EXPECT_EQ(l.regions(), 1024u);
  EXPECT_EQ(l.workers_per_region(), 1u);
}

TEST(LayoutCreate, DecodeOnly64BitLayoutIsAccepted) {
  const Layout l = wide_foreign_layout();
  EXPECT_TRUE(l.decode_only());
  EXPECT_FALSE(l.can_generate());
  EXPECT_EQ(l.total_width(), 64);
  EXPECT_EQ(l.max_id(), ~std::uint64_t{0});
  Result<DecodedId> d = l.decode(~std::uint64_t{0});
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ(d->values[0], (std::uint64_t{1} << 42) - 1);
  EXPECT_EQ(d->values[1], 31u);
  EXPECT_EQ(d->values[2], 31u);
  EXPECT_EQ(d->values[3], 4095u);
}

TEST(LayoutCreate, DecodeOnlyLayoutMayHaveAnyOrderAfterTime) {
  const Layout l = make(spec_of({{"time", FieldRole::kTime, 41},
                                 {"host", FieldRole::kHost, 8},
                                 {"region", FieldRole::kRegion, 2},
                                 {"sequence", FieldRole::kSequence, 12}},
                                true));
  EXPECT_FALSE(l.can_generate());
  EXPECT_EQ(l.shift_of(FieldRole::kRegion), 12);
}

TEST(LayoutCreate, DecodeOnlyGenerationShapedLayoutCannotGenerate) {
  LayoutSpec spec = spec_of({{"time", FieldRole::kTime, 41},
                             {"region", FieldRole::kRegion, 2},
                             {"host", FieldRole::kHost, 8},
                             {"sequence", FieldRole::kSequence, 12}},
                            true);
  const Layout l = make(spec);
  EXPECT_TRUE(l.decode_only());
  EXPECT_FALSE(l.can_generate());
}

TEST(LayoutCreate, EmptyNameBecomesCustom) {
  LayoutSpec spec = spec_of({{"time", FieldRole::kTime, 42}, {"seq", FieldRole::kSequence, 21}});
  spec.name = "";
  EXPECT_EQ(make(spec).name(), "custom");
}

TEST(LayoutCreate, FieldNamesOfDigitsUnderscoresAndUpTo32CharactersAreAccepted) {
  const std::string longest(32, 'a');
  const Layout l = make(spec_of({{"t_0", FieldRole::kTime, 41},
                                 {longest, FieldRole::kOther, 10},
                                 {"9", FieldRole::kOther, 12}},
                                true));
  EXPECT_EQ(l.fields()[1].name, longest);
}

TEST(LayoutCreate, EightFieldsAreAccepted) {
  std::vector<FieldSpec> fields = {{"time", FieldRole::kTime, 40}};
  for (int i = 1; i < kMaxFields; ++i) {
    fields.push_back({"f" + std::to_string(i), FieldRole::kOther, 3});
  }
  const Layout l = make(spec_of(fields, true));
  EXPECT_EQ(l.fields().size(), 8u);
  EXPECT_EQ(l.total_width(), 61);
}

TEST(LayoutCreate, TimeFieldEndingExactlyAtTheLimitOfTimeIsAccepted) {
  // epoch + 2^40 ms lands exactly on the last representable millisecond.
  const std::int64_t epoch = kLastRepresentableMs - (std::int64_t{1} << 40);
  const Layout l =
      make(spec_of({{"time", FieldRole::kTime, 40}, {"x", FieldRole::kOther, 23}}, true, epoch));
  EXPECT_EQ(l.end_of_life_unix_ms(), kLastRepresentableMs);
}

TEST(LayoutCreate, EpochZeroIsAccepted) {
  const Layout l = make(
      spec_of({{"time", FieldRole::kTime, 42}, {"sequence", FieldRole::kSequence, 21}}, false, 0));
  EXPECT_EQ(l.epoch_unix_ms(), 0);
}

// ---- Layout::create: refused ----

TEST(LayoutCreate, RefusesGenerationLayoutNotUsing63Bits) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 41},
                          {"region", FieldRole::kRegion, 2},
                          {"host", FieldRole::kHost, 8},
                          {"sequence", FieldRole::kSequence, 11}}),
                 "this one uses 62");
  expect_invalid(spec_of({{"time", FieldRole::kTime, 42},
                          {"region", FieldRole::kRegion, 2},
                          {"host", FieldRole::kHost, 8},
                          {"sequence", FieldRole::kSequence, 12}}),
                 "this one uses 64");
}

TEST(LayoutCreate, RefusesFieldsOver64Bits) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 41},
                          {"a", FieldRole::kOther, 12},
                          {"b", FieldRole::kOther, 12}},
                         true),
                 "over 64");
}

TEST(LayoutCreate, RefusesZeroWidthField) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 41},
                          {"region", FieldRole::kRegion, 0},
                          {"host", FieldRole::kHost, 10},
                          {"sequence", FieldRole::kSequence, 12}}),
                 "leave a field out instead of giving it 0 bits");
}

TEST(LayoutCreate, RefusesNegativeOrHugeWidth) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 41}, {"x", FieldRole::kOther, -3}}, true),
                 "1 to 64 bits");
  expect_invalid(spec_of({{"time", FieldRole::kTime, 41}, {"x", FieldRole::kOther, 65}}, true),
                 "1 to 64 bits");
}

TEST(LayoutCreate, RefusesDuplicateFieldNames) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 41},
                          {"host", FieldRole::kRegion, 2},
                          {"host", FieldRole::kHost, 8},
                          {"sequence", FieldRole::kSequence, 12}}),
                 "\"host\" repeats");
}

TEST(LayoutCreate, RefusesBadFieldNames) {
  for (const std::string& bad :
       {std::string(""), std::string("Time"), std::string("a-b"), std::string("with space"),
        std::string("caf\xc3\xa9"), std::string(33, 'a')}) {
    expect_invalid(spec_of({{"time", FieldRole::kTime, 42}, {bad, FieldRole::kSequence, 21}}),
                   "must be 1-32 of [a-z0-9_]");
  }
}

TEST(LayoutCreate, RefusesTimeNotFirst) {
  expect_invalid(spec_of({{"sequence", FieldRole::kSequence, 21}, {"time", FieldRole::kTime, 42}}),
                 "first (most significant) field must be the time field");
  expect_invalid(spec_of({{"x", FieldRole::kOther, 12}, {"time", FieldRole::kTime, 41}}, true),
                 "must be the time field");
}

TEST(LayoutCreate, RefusesALayoutWithoutTime) {
  expect_invalid(spec_of({{"a", FieldRole::kOther, 32}, {"b", FieldRole::kOther, 31}}, true),
                 "must be the time field");
}

TEST(LayoutCreate, RefusesTwoSequenceFields) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 41},
                          {"seq_a", FieldRole::kSequence, 11},
                          {"seq_b", FieldRole::kSequence, 11}},
                         true),
                 "more than one sequence field");
}

TEST(LayoutCreate, RefusesTwoTimeFields) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 31},
                          {"time2", FieldRole::kTime, 20},
                          {"seq", FieldRole::kSequence, 12}}),
                 "more than one time field");
}

TEST(LayoutCreate, RefusesUnknownRole) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 42}, {"x", static_cast<FieldRole>(9), 21}}),
                 "unknown role");
}

TEST(LayoutCreate, RefusesUnitsOtherThanOneAndTenMs) {
  for (std::int64_t unit : {0, -1, 2, 5, 100, 1000}) {
    expect_invalid(spec_of({{"time", FieldRole::kTime, 35}, {"seq", FieldRole::kSequence, 28}},
                           false, kEpoch2026, unit),
                   "time unit must be 1 or 10 ms, not " + std::to_string(unit));
  }
}

TEST(LayoutCreate, AcceptsTenMsUnit) {
  const Layout l = make(spec_of({{"time", FieldRole::kTime, 35}, {"seq", FieldRole::kSequence, 28}},
                                false, kEpoch2026, 10));
  EXPECT_EQ(l.unit_ms(), 10);
  EXPECT_EQ(l.end_of_life_unix_ms(), kEpoch2026 + (std::int64_t{1} << 35) * 10);
}

TEST(LayoutCreate, RefusesNegativeEpoch) {
  expect_invalid(
      spec_of({{"time", FieldRole::kTime, 42}, {"seq", FieldRole::kSequence, 21}}, false, -1),
      "epoch must be between 1970-01-01 and 2262-04-11");
}

TEST(LayoutCreate, RefusesEpochAtOrPastTheLimitOfTime) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 1}, {"x", FieldRole::kOther, 1}}, true,
                         kLastRepresentableMs),
                 "epoch must be between");
}

TEST(LayoutCreate, RefusesTimeFieldOutliving2262) {
  // 2^43 ms after 2026 is in 2304.
  expect_invalid(spec_of({{"time", FieldRole::kTime, 43}, {"x", FieldRole::kOther, 21}}, true),
                 "outlives 2262-04-11");
  // 2^41 ticks of 10 ms is 697 years.
  expect_invalid(spec_of({{"time", FieldRole::kTime, 41},
                          {"region", FieldRole::kRegion, 2},
                          {"host", FieldRole::kHost, 8},
                          {"sequence", FieldRole::kSequence, 12}},
                         false, kEpoch2026, 10),
                 "outlives 2262-04-11");
}

TEST(LayoutCreate, RefusesTimeFieldWiderThan61Bits) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 62}}, true, 0), "at most 61 bits");
  expect_invalid(spec_of({{"time", FieldRole::kTime, 63}}, true, 0), "at most 61 bits");
}

TEST(LayoutCreate, RefusesTimeFieldEndingOneMillisecondPastTheLimitOfTime) {
  const std::int64_t epoch = kLastRepresentableMs - (std::int64_t{1} << 40) + 1;
  expect_invalid(
      spec_of({{"time", FieldRole::kTime, 40}, {"x", FieldRole::kOther, 23}}, true, epoch),
      "outlives 2262-04-11");
}

TEST(LayoutCreate, RefusesMoreThanEightFields) {
  std::vector<FieldSpec> fields = {{"time", FieldRole::kTime, 40}};
  for (int i = 1; i <= kMaxFields; ++i) {
    fields.push_back({"f" + std::to_string(i), FieldRole::kOther, 1});
  }
  expect_invalid(spec_of(fields, true), "1 to 8 fields, not 9");
}

TEST(LayoutCreate, RefusesNoFields) { expect_invalid(spec_of({}, true), "not 0"); }

TEST(LayoutCreate, RefusesHostBeforeRegionForGeneration) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 41},
                          {"host", FieldRole::kHost, 8},
                          {"region", FieldRole::kRegion, 2},
                          {"sequence", FieldRole::kSequence, 12}}),
                 "time, region, host, sequence in that order");
}

TEST(LayoutCreate, RefusesSequenceAboveWorkerForGeneration) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 41},
                          {"sequence", FieldRole::kSequence, 12},
                          {"host", FieldRole::kHost, 10}}),
                 "in that order");
}

TEST(LayoutCreate, RefusesRolelessFieldForGeneration) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 41},
                          {"shard", FieldRole::kOther, 10},
                          {"sequence", FieldRole::kSequence, 12}}),
                 "mark it decode-only");
}

TEST(LayoutCreate, RefusesGenerationLayoutWithoutSequence) {
  expect_invalid(spec_of({{"time", FieldRole::kTime, 41}, {"host", FieldRole::kHost, 22}}),
                 "in that order");
}

// ---- encode / decode ----

TEST(LayoutCodec, RandomValuesRoundTripThroughEncodeAndDecode) {
  std::mt19937_64 rng(0x5eed);
  for (const Layout& l : assorted_layouts()) {
    SCOPED_TRACE(l.name() + " " + std::to_string(l.total_width()) + " bits");
    const std::size_t n = l.fields().size();
    for (int iter = 0; iter < 20000; ++iter) {
      std::array<std::uint64_t, kMaxFields> values{};
      for (std::size_t i = 0; i < n; ++i) values[i] = rng() & l.fields()[i].max_value();
      Result<std::uint64_t> id = l.encode(std::span<const std::uint64_t>(values.data(), n));
      ASSERT_TRUE(id.is_ok()) << id.status().to_string();
      ASSERT_LE(id.value(), l.max_id());
      Result<DecodedId> d = l.decode(id.value());
      ASSERT_TRUE(d.is_ok()) << d.status().to_string();
      ASSERT_EQ(d->id, id.value());
      ASSERT_EQ(d->field_count, static_cast<int>(n));
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(d->values[i], values[i]) << "field " << i;
      ASSERT_EQ(d->ticks, static_cast<std::int64_t>(values[0]));
      ASSERT_EQ(d->time, l.time_of_ticks(d->ticks));
    }
  }
}

TEST(LayoutCodec, RandomIdsRoundTripThroughDecodeAndEncode) {
  std::mt19937_64 rng(42);
  for (const Layout& l : assorted_layouts()) {
    SCOPED_TRACE(l.name() + " " + std::to_string(l.total_width()) + " bits");
    for (int iter = 0; iter < 20000; ++iter) {
      const std::uint64_t id = rng() & l.max_id();
      Result<DecodedId> d = l.decode(id);
      ASSERT_TRUE(d.is_ok()) << d.status().to_string();
      Result<std::uint64_t> back = l.encode(std::span<const std::uint64_t>(
          d->values.data(), static_cast<std::size_t>(d->field_count)));
      ASSERT_TRUE(back.is_ok()) << back.status().to_string();
      ASSERT_EQ(back.value(), id);
    }
  }
}

TEST(LayoutCodec, EncodeByRoleMatchesEncodeByFieldOrder) {
  std::mt19937_64 rng(7);
  const Layout& l = Layout::snowid_default();
  for (int iter = 0; iter < 10000; ++iter) {
    const auto ticks = static_cast<std::int64_t>(rng() & l.fields()[0].max_value());
    const WorkerId w{static_cast<std::uint32_t>(rng() & 3),
                     static_cast<std::uint32_t>(rng() & 255)};
    const std::uint64_t seq = rng() & 4095;
    Result<std::uint64_t> by_role = l.encode(ticks, w, seq);
    const std::array<std::uint64_t, 4> values = {static_cast<std::uint64_t>(ticks), w.region,
                                                 w.host, seq};
    Result<std::uint64_t> by_field = l.encode(values);
    ASSERT_TRUE(by_role.is_ok());
    ASSERT_TRUE(by_field.is_ok());
    ASSERT_EQ(by_role.value(), by_field.value());
  }
}

TEST(LayoutCodec, EncodeByRoleWorksWithoutRegionOrHost) {
  const Layout l = host_only_layout();
  Result<std::uint64_t> id = l.encode(5, WorkerId{0, 1023}, 7);
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  EXPECT_EQ(id.value(), (std::uint64_t{5} << 22) | (std::uint64_t{1023} << 12) | 7);

  const Layout s = sequence_only_layout();
  Result<std::uint64_t> id2 = s.encode(5, WorkerId{}, 7);
  ASSERT_TRUE(id2.is_ok()) << id2.status().to_string();
  EXPECT_EQ(id2.value(), (std::uint64_t{5} << 21) | 7);
}

TEST(LayoutCodec, DecodeRefusesIdsAbove63BitsOnA63BitLayout) {
  const Layout& l = Layout::snowid_default();
  for (std::uint64_t id :
       {std::uint64_t{1} << 63, (std::uint64_t{1} << 63) + 1, ~std::uint64_t{0}}) {
    Result<DecodedId> d = l.decode(id);
    ASSERT_FALSE(d.is_ok()) << id;
    EXPECT_EQ(d.status().code(), Code::kOutOfRange);
    EXPECT_NE(d.status().message().find(std::to_string(id)), std::string::npos);
    EXPECT_NE(d.status().message().find("does not fit layout snowid (63 bits"), std::string::npos)
        << d.status().message();
  }
  EXPECT_TRUE(l.decode((std::uint64_t{1} << 63) - 1).is_ok());
}

TEST(LayoutCodec, DecodeRefusesIdsBeyondANarrowLayout) {
  const Layout l = narrow_layout();
  EXPECT_TRUE(l.decode((1u << 23) - 1).is_ok());
  Result<DecodedId> d = l.decode(1u << 23);
  ASSERT_FALSE(d.is_ok());
  EXPECT_EQ(d.status().code(), Code::kOutOfRange);
}

TEST(LayoutCodec, EncodeRefusesValuesThatDoNotFit) {
  const Layout& l = Layout::snowid_default();
  const std::array<std::uint64_t, 4> too_big_sequence = {1, 0, 0, 4096};
  Result<std::uint64_t> r = l.encode(too_big_sequence);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kOutOfRange);
  EXPECT_NE(r.status().message().find("sequence 4096 does not fit 12 bits (max 4095)"),
            std::string::npos)
      << r.status().message();

  const std::array<std::uint64_t, 4> too_big_time = {std::uint64_t{1} << 41, 0, 0, 0};
  Result<std::uint64_t> t = l.encode(too_big_time);
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.status().code(), Code::kOutOfRange);
  EXPECT_NE(t.status().message().find("time"), std::string::npos);

  Result<std::uint64_t> s = l.encode(0, WorkerId{}, 4096);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), Code::kOutOfRange);
}

TEST(LayoutCodec, EncodeRefusesTheWrongNumberOfValues) {
  const Layout& l = Layout::snowid_default();
  const std::array<std::uint64_t, 3> three = {1, 2, 3};
  Result<std::uint64_t> r = l.encode(three);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("has 4 fields, got 3 values"), std::string::npos)
      << r.status().message();
}

TEST(LayoutCodec, EncodeRefusesTicksOutsideTheLifetime) {
  const Layout& l = Layout::snowid_default();
  Result<std::uint64_t> before = l.encode(-1, WorkerId{}, 0);
  ASSERT_FALSE(before.is_ok());
  EXPECT_EQ(before.status().code(), Code::kOutOfRange);
  EXPECT_NE(before.status().message().find("before the layout's epoch"), std::string::npos);

  Result<std::uint64_t> after = l.encode(l.max_ticks() + 1, WorkerId{}, 0);
  ASSERT_FALSE(after.is_ok());
  EXPECT_EQ(after.status().code(), Code::kOutOfRange);
  EXPECT_NE(after.status().message().find("end of life"), std::string::npos);

  EXPECT_TRUE(l.encode(l.max_ticks(), WorkerId{}, 0).is_ok());
}

TEST(LayoutCodec, EncodeRefusesWorkersThatDoNotFit) {
  const Layout& l = Layout::snowid_default();
  Result<std::uint64_t> r = l.encode(1, WorkerId{4, 0}, 0);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  Result<std::uint64_t> h = l.encode(1, WorkerId{0, 256}, 0);
  ASSERT_FALSE(h.is_ok());
  EXPECT_EQ(h.status().code(), Code::kInvalidArgument);
}

TEST(LayoutCodec, EncodeByRoleRefusesLayoutsWithRolelessFields) {
  const Layout l = wide_foreign_layout();
  Result<std::uint64_t> r = l.encode(1, WorkerId{}, 0);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("worker"), std::string::npos) << r.status().message();
}

TEST(LayoutCodec, DecodedTimeIsTheStartOfTheTick) {
  const Layout l = ten_ms_layout();
  const std::uint64_t id = (std::uint64_t{123} << 24) | (std::uint64_t{4} << 16) | 0xbeef;
  Result<DecodedId> d = l.decode(id);
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->ticks, 123);
  EXPECT_EQ(d->time, wall_from_unix_ms(kEpoch2014 + 1230));
  EXPECT_EQ(d->values[1], 4u);
  EXPECT_EQ(d->values[2], 0xbeefu);
}

// ---- check_worker ----

TEST(LayoutWorker, AcceptsEveryWorkerInRange) {
  const Layout& l = Layout::snowid_default();
  EXPECT_TRUE(l.check_worker(WorkerId{0, 0}).is_ok());
  EXPECT_TRUE(l.check_worker(WorkerId{3, 255}).is_ok());
  EXPECT_TRUE(l.check_worker(WorkerId{2, 17}).is_ok());
}

TEST(LayoutWorker, RefusesRegionOutOfRange) {
  const Status s = Layout::snowid_default().check_worker(WorkerId{4, 0});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_FALSE(s.retryable());
  EXPECT_NE(s.message().find("region 4 does not fit layout snowid (max 3)"), std::string::npos)
      << s.message();
}

TEST(LayoutWorker, RefusesHostOutOfRange) {
  const Status s = Layout::snowid_default().check_worker(WorkerId{0, 256});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("host 256 does not fit layout snowid (max 255)"), std::string::npos)
      << s.message();
  EXPECT_EQ(Layout::snowid_default().check_worker(WorkerId{0, 0xffffffffu}).code(),
            Code::kInvalidArgument);
}

TEST(LayoutWorker, LayoutWithoutRegionOnlyAcceptsRegionZero) {
  const Layout l = host_only_layout();
  EXPECT_TRUE(l.check_worker(WorkerId{0, 1023}).is_ok());
  EXPECT_EQ(l.check_worker(WorkerId{0, 1024}).code(), Code::kInvalidArgument);
  const Status s = l.check_worker(WorkerId{1, 0});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("(max 0)"), std::string::npos) << s.message();
}

TEST(LayoutWorker, LayoutWithoutWorkerFieldsOnlyAcceptsWorkerZero) {
  const Layout l = sequence_only_layout();
  EXPECT_TRUE(l.check_worker(WorkerId{0, 0}).is_ok());
  EXPECT_FALSE(l.check_worker(WorkerId{0, 1}).is_ok());
  EXPECT_FALSE(l.check_worker(WorkerId{1, 0}).is_ok());
}

// ---- ticks ----

TEST(LayoutTicks, TicksAreFlooredMillisecondsSinceTheEpoch) {
  const Layout& l = Layout::snowid_default();
  const WallTime e = l.epoch();
  EXPECT_EQ(l.ticks_at(e), 0);
  EXPECT_EQ(l.ticks_at(e + nanoseconds(1)), 0);
  EXPECT_EQ(l.ticks_at(e + milliseconds(1) - nanoseconds(1)), 0);
  EXPECT_EQ(l.ticks_at(e + milliseconds(1)), 1);
  EXPECT_EQ(l.ticks_at(e + milliseconds(123'456) + nanoseconds(999'999)), 123'456);
}

TEST(LayoutTicks, InstantsBeforeTheEpochGiveNegativeTicksRoundedDown) {
  const Layout& l = Layout::snowid_default();
  const WallTime e = l.epoch();
  EXPECT_EQ(l.ticks_at(e - nanoseconds(1)), -1);
  EXPECT_EQ(l.ticks_at(e - milliseconds(1)), -1);
  EXPECT_EQ(l.ticks_at(e - milliseconds(1) - nanoseconds(1)), -2);
  EXPECT_EQ(l.ticks_at(WallTime{}), -kEpoch2026);
}

TEST(LayoutTicks, TenMsTicks) {
  const Layout l = ten_ms_layout();
  const WallTime e = l.epoch();
  EXPECT_EQ(l.ticks_at(e), 0);
  EXPECT_EQ(l.ticks_at(e + milliseconds(9) + nanoseconds(999'999)), 0);
  EXPECT_EQ(l.ticks_at(e + milliseconds(10)), 1);
  EXPECT_EQ(l.ticks_at(e + milliseconds(25)), 2);
  EXPECT_EQ(l.ticks_at(e - nanoseconds(1)), -1);
  EXPECT_EQ(l.ticks_at(e - milliseconds(10)), -1);
  EXPECT_EQ(l.ticks_at(e - milliseconds(10) - nanoseconds(1)), -2);
  EXPECT_EQ(l.ticks_at(e - milliseconds(25)), -3);
}

TEST(LayoutTicks, TimeOfTicksIsTheStartOfTheTick) {
  const Layout& l = Layout::snowid_default();
  EXPECT_EQ(l.time_of_ticks(0), l.epoch());
  EXPECT_EQ(l.time_of_ticks(1500), l.epoch() + milliseconds(1500));
  EXPECT_EQ(l.time_of_ticks(-3), l.epoch() - milliseconds(3));
  EXPECT_EQ(l.time_of_ticks(l.max_ticks() + 1), wall_from_unix_ms(l.end_of_life_unix_ms()));

  const Layout t = ten_ms_layout();
  EXPECT_EQ(t.time_of_ticks(7), t.epoch() + milliseconds(70));
  EXPECT_EQ(t.time_of_ticks(-3), t.epoch() - milliseconds(30));
}

TEST(LayoutTicks, TicksAtInvertsTimeOfTicks) {
  std::mt19937_64 rng(99);
  for (const Layout& l : {Layout::snowid_default(), ten_ms_layout()}) {
    std::uniform_int_distribution<std::int64_t> dist(-1'000'000'000, l.max_ticks());
    std::uniform_int_distribution<std::int64_t> within(0, l.unit_ms() * 1'000'000 - 1);
    for (int i = 0; i < 20000; ++i) {
      const std::int64_t k = dist(rng);
      ASSERT_EQ(l.ticks_at(l.time_of_ticks(k)), k);
      ASSERT_EQ(l.ticks_at(l.time_of_ticks(k) + nanoseconds(within(rng))), k);
    }
  }
}

// The contract: floor((t - epoch) / unit) for any instant, negative allowed.
// 1700-01-01 is far enough before 2026 that t - epoch in nanoseconds does not
// fit 64 bits, although the tick count itself does.
TEST(LayoutTicks, TicksAtLongBeforeTheEpochAreNegativeNotWrapped) {
  const Layout& l = Layout::snowid_default();
  const WallTime t = wall_from_unix_ms(-8520336000000);  // 1700-01-01T00:00:00Z
  EXPECT_EQ(l.ticks_at(t), -8520336000000 - kEpoch2026);
  Result<std::uint64_t> min = l.min_id_at(t);
  ASSERT_FALSE(min.is_ok());
  EXPECT_NE(min.status().message().find("before the epoch"), std::string::npos)
      << min.status().message();
}

// ---- min_id_at / max_id_at ----

TEST(LayoutIdBounds, AtTheEpoch) {
  const Layout& l = Layout::snowid_default();
  Result<std::uint64_t> min = l.min_id_at(l.epoch());
  Result<std::uint64_t> max = l.max_id_at(l.epoch());
  ASSERT_TRUE(min.is_ok());
  ASSERT_TRUE(max.is_ok());
  EXPECT_EQ(min.value(), 0u);
  EXPECT_EQ(max.value(), (std::uint64_t{1} << 22) - 1);
}

TEST(LayoutIdBounds, MaxIsMinWithAllLowerBitsSet) {
  const Layout& l = Layout::snowid_default();
  const WallTime t = l.epoch() + milliseconds(1234) + nanoseconds(500'000);
  Result<std::uint64_t> min = l.min_id_at(t);
  Result<std::uint64_t> max = l.max_id_at(t);
  ASSERT_TRUE(min.is_ok());
  ASSERT_TRUE(max.is_ok());
  EXPECT_EQ(min.value(), std::uint64_t{1234} << 22);
  EXPECT_EQ(max.value(), min.value() | 0x3fffff);

  const Layout s = sequence_only_layout();
  Result<std::uint64_t> smin = s.min_id_at(s.epoch() + milliseconds(9));
  Result<std::uint64_t> smax = s.max_id_at(s.epoch() + milliseconds(9));
  ASSERT_TRUE(smin.is_ok());
  ASSERT_TRUE(smax.is_ok());
  EXPECT_EQ(smin.value(), std::uint64_t{9} << 21);
  EXPECT_EQ(smax.value(), smin.value() | 0x1fffff);
}

TEST(LayoutIdBounds, TenMsLayoutUsesItsTicks) {
  const Layout l = ten_ms_layout();
  Result<std::uint64_t> min = l.min_id_at(l.epoch() + milliseconds(25));
  Result<std::uint64_t> max = l.max_id_at(l.epoch() + milliseconds(25));
  ASSERT_TRUE(min.is_ok());
  ASSERT_TRUE(max.is_ok());
  EXPECT_EQ(min.value(), std::uint64_t{2} << 24);
  EXPECT_EQ(max.value(), (std::uint64_t{3} << 24) - 1);
}

TEST(LayoutIdBounds, LastTickReachesTheLargestId) {
  const Layout& l = Layout::snowid_default();
  const WallTime last = wall_from_unix_ms(l.end_of_life_unix_ms()) - nanoseconds(1);
  Result<std::uint64_t> min = l.min_id_at(last);
  Result<std::uint64_t> max = l.max_id_at(last);
  ASSERT_TRUE(min.is_ok()) << min.status().to_string();
  ASSERT_TRUE(max.is_ok()) << max.status().to_string();
  EXPECT_EQ(min.value(), static_cast<std::uint64_t>(l.max_ticks()) << 22);
  EXPECT_EQ(max.value(), l.max_id());

  const Layout w = wide_foreign_layout();
  Result<std::uint64_t> wmax =
      w.max_id_at(wall_from_unix_ms(w.end_of_life_unix_ms()) - nanoseconds(1));
  ASSERT_TRUE(wmax.is_ok()) << wmax.status().to_string();
  EXPECT_EQ(wmax.value(), ~std::uint64_t{0});
}

TEST(LayoutIdBounds, RefusesInstantsBeforeTheEpoch) {
  const Layout& l = Layout::snowid_default();
  for (WallTime t : {l.epoch() - nanoseconds(1), l.epoch() - milliseconds(1), WallTime{}}) {
    Result<std::uint64_t> min = l.min_id_at(t);
    ASSERT_FALSE(min.is_ok());
    EXPECT_EQ(min.status().code(), Code::kOutOfRange);
    EXPECT_NE(min.status().message().find("before the epoch"), std::string::npos);
    EXPECT_NE(min.status().message().find(format_iso8601(t)), std::string::npos);
    Result<std::uint64_t> max = l.max_id_at(t);
    ASSERT_FALSE(max.is_ok());
    EXPECT_EQ(max.status().code(), Code::kOutOfRange);
  }
}

TEST(LayoutIdBounds, RefusesInstantsPastTheEndOfLife) {
  const Layout& l = Layout::snowid_default();
  const WallTime eol = wall_from_unix_ms(l.end_of_life_unix_ms());
  for (WallTime t : {eol, eol + nanoseconds(1), eol + std::chrono::hours(24 * 365)}) {
    Result<std::uint64_t> min = l.min_id_at(t);
    ASSERT_FALSE(min.is_ok());
    EXPECT_EQ(min.status().code(), Code::kOutOfRange);
    EXPECT_NE(min.status().message().find("end of life"), std::string::npos);
    Result<std::uint64_t> max = l.max_id_at(t);
    ASSERT_FALSE(max.is_ok());
    EXPECT_EQ(max.status().code(), Code::kOutOfRange);
  }
}

TEST(LayoutIdBounds, EveryIdOfAnInstantLiesWithinItsBounds) {
  std::mt19937_64 rng(2026);
  for (const Layout& l : {Layout::snowid_default(), host_only_layout(), sequence_only_layout()}) {
    SCOPED_TRACE(l.name());
    std::uniform_int_distribution<std::int64_t> ns(
        0, (l.end_of_life_unix_ms() - l.epoch_unix_ms()) * 1'000'000 - 1);
    for (int i = 0; i < 20000; ++i) {
      const WallTime t = l.epoch() + nanoseconds(ns(rng));
      const WorkerId w{static_cast<std::uint32_t>(rng() % l.regions()),
                       static_cast<std::uint32_t>(rng() % l.workers_per_region())};
      const std::uint64_t seq = rng() % l.sequence_capacity();
      Result<std::uint64_t> id = l.encode(l.ticks_at(t), w, seq);
      Result<std::uint64_t> min = l.min_id_at(t);
      Result<std::uint64_t> max = l.max_id_at(t);
      ASSERT_TRUE(id.is_ok() && min.is_ok() && max.is_ok());
      ASSERT_LE(min.value(), id.value());
      ASSERT_LE(id.value(), max.value());
    }
    // The bounds are tight: the smallest and largest worker and sequence reach them.
    const WallTime t = l.epoch() + milliseconds(777);
    const WorkerId last_worker{static_cast<std::uint32_t>(l.regions() - 1),
                               static_cast<std::uint32_t>(l.workers_per_region() - 1)};
    EXPECT_EQ(l.encode(777, WorkerId{}, 0).value(), l.min_id_at(t).value());
    EXPECT_EQ(l.encode(777, last_worker, l.sequence_capacity() - 1).value(),
              l.max_id_at(t).value());
  }
}

// ---- ordering ----

TEST(LayoutOrdering, IdsOfLaterTicksCompareGreaterWhateverTheWorkerAndSequence) {
  std::mt19937_64 rng(1234567);
  for (const Layout& l : {Layout::snowid_default(), host_only_layout(), sequence_only_layout()}) {
    SCOPED_TRACE(l.name());
    std::uniform_int_distribution<std::int64_t> ns(
        0, (l.end_of_life_unix_ms() - l.epoch_unix_ms()) * 1'000'000 - 1);
    auto random_id_at = [&](WallTime t) {
      const WorkerId w{static_cast<std::uint32_t>(rng() % l.regions()),
                       static_cast<std::uint32_t>(rng() % l.workers_per_region())};
      return l.encode(l.ticks_at(t), w, rng() % l.sequence_capacity()).value();
    };
    for (int i = 0; i < 20000; ++i) {
      const WallTime a = l.epoch() + nanoseconds(ns(rng));
      // Half of the pairs are close together, so neighbouring ticks are tested too.
      const WallTime b = (i % 2 == 0)
                             ? l.epoch() + nanoseconds(ns(rng))
                             : a + nanoseconds(static_cast<std::int64_t>(rng() % 3'000'000));
      if (l.ticks_at(b) >= l.ticks_at(wall_from_unix_ms(l.end_of_life_unix_ms()))) continue;
      if (l.ticks_at(a) == l.ticks_at(b)) continue;
      const std::uint64_t ida = random_id_at(a);
      const std::uint64_t idb = random_id_at(b);
      ASSERT_EQ(a < b, ida < idb) << format_iso8601(a) << " vs " << format_iso8601(b);
    }
  }
}

// ---- check_layout ----

TEST(CheckLayout, RefusesAnEpochInTheFuture) {
  const Layout& l = Layout::snowid_default();
  for (WallTime now : {l.epoch() - nanoseconds(1), l.epoch() - std::chrono::hours(24 * 30)}) {
    Result<LayoutReport> r = check_layout(l, now);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("layout snowid: epoch 2026-01-01T00:00:00.000Z is in the "
                                        "future"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(CheckLayout, ReportAtTheEpoch) {
  const Layout& l = Layout::snowid_default();
  Result<LayoutReport> r = check_layout(l, l.epoch());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->end_of_life_unix_ms, 3966248855552);
  EXPECT_NEAR(r->years_remaining, 69.684, 0.001);
  EXPECT_EQ(r->regions, 4u);
  EXPECT_EQ(r->workers_per_region, 256u);
  EXPECT_EQ(r->ids_per_worker_per_unit, 4096u);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(CheckLayout, ReportLaterInLife) {
  const Layout& l = Layout::snowid_default();
  Result<LayoutReport> r = check_layout(l, wall_from_unix_ms(1893456000000));  // 2030-01-01
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_NEAR(r->years_remaining, 65.684, 0.001);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(CheckLayout, ReportOfALayoutWithoutRegion) {
  const Layout l = host_only_layout();
  Result<LayoutReport> r = check_layout(l, wall_from_unix_ms(1893456000000));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->regions, 1u);
  EXPECT_EQ(r->workers_per_region, 1024u);
  EXPECT_EQ(r->ids_per_worker_per_unit, 4096u);
}

TEST(CheckLayout, RefusesALayoutPastItsEndOfLife) {
  const Layout& l = Layout::snowid_default();
  const WallTime eol = wall_from_unix_ms(l.end_of_life_unix_ms());
  for (WallTime now : {eol, eol + std::chrono::hours(1)}) {
    Result<LayoutReport> r = check_layout(l, now);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Code::kOutOfRange);
    EXPECT_NE(r.status().message().find("reached its end of life on 2095-09-07T15:47:35.552Z"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(CheckLayout, WarnsWhenFewerThanTenYearsAreLeft) {
  const Layout& l = Layout::snowid_default();
  Result<LayoutReport> r = check_layout(l, wall_from_unix_ms(3786912000000));  // 2090-01-01
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_NEAR(r->years_remaining, 5.683, 0.001);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("fewer than 10 years left"), std::string::npos) << r->warnings[0];
  EXPECT_NE(r->warnings[0].find("2095-09-07T15:47:35.552Z"), std::string::npos) << r->warnings[0];

  Result<LayoutReport> last = check_layout(l, wall_from_unix_ms(l.end_of_life_unix_ms() - 1));
  ASSERT_TRUE(last.is_ok()) << last.status().to_string();
  EXPECT_GT(last->years_remaining, 0.0);
  EXPECT_LT(last->years_remaining, 1e-9);
  EXPECT_EQ(last->warnings.size(), 1u);
}

TEST(CheckLayout, ShortLayoutWarnsFromItsFirstDay) {
  // 2^38 ms is about 8.7 years.
  const Layout l = make(spec_of({{"time", FieldRole::kTime, 38},
                                 {"host", FieldRole::kHost, 13},
                                 {"sequence", FieldRole::kSequence, 12}}));
  Result<LayoutReport> r = check_layout(l, l.epoch());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_NEAR(r->years_remaining, 8.7105, 0.001);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("layout test has fewer than 10 years left"), std::string::npos)
      << r->warnings[0];
}

}  // namespace
}  // namespace snowid
