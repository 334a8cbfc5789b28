#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "snowid/layout.h"

namespace snowid {
namespace {

constexpr std::array<std::uint32_t, 10> kShardCounts = {
    1, 2, 3, 7, 16, 1000, 1024, 65536, 2147483648u, 4294967295u};

TEST(ShardOf, AlwaysBelowTheShardCount) {
  std::mt19937_64 rng(16);
  for (std::uint32_t shards : kShardCounts) {
    SCOPED_TRACE(shards);
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t id = rng();
      ASSERT_LT(shard_of(id, shards), shards) << id;
      ASSERT_LT(shard_of(id >> 1, shards), shards) << (id >> 1);
    }
    for (std::uint64_t id : {std::uint64_t{0}, std::uint64_t{1}, ~std::uint64_t{0},
                             (std::uint64_t{1} << 63) - 1, std::uint64_t{1} << 63}) {
      ASSERT_LT(shard_of(id, shards), shards) << id;
    }
  }
}

TEST(ShardOf, OneShardTakesEverything) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(shard_of(rng(), 1), 0u);
}

TEST(ShardOf, SameIdSameShard) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t id = rng();
    const std::uint32_t first = shard_of(id, 1024);
    for (int k = 0; k < 3; ++k) ASSERT_EQ(shard_of(id, 1024), first);
  }
}

// The mapping is part of the format: rows already placed must stay where they are.
TEST(ShardOf, PinnedValues) {
  struct Vector {
    std::uint64_t id;
    std::array<std::uint32_t, 6> shard;  // for 1, 2, 7, 16, 1024 and 2^32-1 shards
  };
  constexpr std::array<std::uint32_t, 6> counts = {1, 2, 7, 16, 1024, 4294967295u};
  for (const Vector& v : {
           Vector{0, {0, 0, 0, 0, 0, 0}},
           Vector{1, {0, 0, 2, 5, 346, 1452414492u}},
           Vector{2, {0, 1, 6, 13, 879, 3687987350u}},
           Vector{42, {0, 1, 4, 10, 669, 2807687718u}},
           Vector{1767225600000, {0, 1, 5, 12, 828, 3474809985u}},
           Vector{175928847299117063, {0, 1, 5, 12, 793, 3326799806u}},
           Vector{0x123456789abcdef0, {0, 1, 4, 9, 600, 2519332237u}},
           Vector{9223372036854775807u, {0, 0, 2, 5, 361, 1516776189u}},
           Vector{18446744073709551615u, {0, 1, 4, 11, 723, 3033552379u}},
       }) {
    for (std::size_t i = 0; i < counts.size(); ++i) {
      EXPECT_EQ(shard_of(v.id, counts[i]), v.shard[i]) << v.id << " over " << counts[i];
    }
  }
}

// Ids of one worker in time order, as a database would receive them.
std::vector<std::uint64_t> sequential_ids(int per_ms, int count) {
  const Layout& l = Layout::snowid_default();
  const std::int64_t start = l.ticks_at(wall_from_unix_ms(1893456000000));  // 2030-01-01
  std::vector<std::uint64_t> ids;
  ids.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const std::int64_t ticks = start + i / per_ms;
    const auto seq = static_cast<std::uint64_t>(i % per_ms);
    ids.push_back(l.encode(ticks, WorkerId{1, 7}, seq).value());
  }
  return ids;
}

void expect_even_over_16(const std::vector<std::uint64_t>& ids) {
  std::array<int, 16> counts{};
  for (std::uint64_t id : ids) ++counts[shard_of(id, 16)];
  const double mean = static_cast<double>(ids.size()) / 16;
  for (std::size_t s = 0; s < counts.size(); ++s) {
    EXPECT_GT(counts[s], mean * 0.8) << "shard " << s;
    EXPECT_LT(counts[s], mean * 1.2) << "shard " << s;
  }
}

TEST(ShardOf, TimeOrderedIdsOfOneWorkerSpreadEvenlyOver16Shards) {
  expect_even_over_16(sequential_ids(40, 160000));
}

TEST(ShardOf, OneIdPerMillisecondSpreadsEvenlyOver16Shards) {
  expect_even_over_16(sequential_ids(1, 160000));
}

TEST(ShardOf, FullMillisecondsSpreadEvenlyOver16Shards) {
  expect_even_over_16(sequential_ids(4096, 160000));
}

TEST(ShardOf, TimeOrderedIdsSpreadOver1024ShardsWithoutHotSpots) {
  const std::vector<std::uint64_t> ids = sequential_ids(40, 160000);
  std::vector<int> counts(1024, 0);
  for (std::uint64_t id : ids) ++counts[shard_of(id, 1024)];
  const double mean = static_cast<double>(ids.size()) / 1024;
  double chi2 = 0;
  for (int c : counts) chi2 += (c - mean) * (c - mean) / mean;
  // 1023 degrees of freedom: mean 1023, standard deviation about 45.
  EXPECT_LT(chi2, 1023 + 6 * 45.0);
  EXPECT_GT(*std::min_element(counts.begin(), counts.end()), 0);
  EXPECT_LT(*std::max_element(counts.begin(), counts.end()), 2 * mean);
}

TEST(ShardOf, NeighbouringIdsRarelyShareAShard) {
  int same = 0;
  constexpr int kN = 100000;
  for (std::uint64_t id = 1'000'000; id < 1'000'000 + kN; ++id) {
    if (shard_of(id, 16) == shard_of(id + 1, 16)) ++same;
  }
  // Independent placement would match 1 time in 16.
  EXPECT_LT(same, kN / 16 * 1.2);
  EXPECT_GT(same, kN / 16 * 0.8);
}

}  // namespace
}  // namespace snowid
