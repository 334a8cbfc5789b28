#include "sample_ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace snowid::canary {
namespace {

TEST(SampleRing, CapacityIsRoundedUpToAPowerOfTwo) {
  EXPECT_EQ(SampleRing(16).capacity(), 16u);
  EXPECT_EQ(SampleRing(17).capacity(), 32u);
  EXPECT_EQ(SampleRing(1000).capacity(), 1024u);
}

TEST(SampleRing, AFullRingRefusesAtOnceAndTakesAgainOncePopped) {
  SampleRing ring(16);
  for (std::uint64_t i = 0; i < 16; ++i) ASSERT_TRUE(ring.push({i, 1, 2})) << i;
  EXPECT_FALSE(ring.push({99, 1, 2}));
  EXPECT_EQ(ring.size(), 16u);
  QueuedSample s;
  ASSERT_TRUE(ring.pop(s));
  EXPECT_EQ(s.id, 0u);
  EXPECT_EQ(s.region, 1u);
  EXPECT_EQ(s.host, 2u);
  EXPECT_TRUE(ring.push({16, 1, 2}));
  EXPECT_FALSE(ring.push({17, 1, 2}));
}

TEST(SampleRing, OneProducerIsPoppedInOrderOverManyLaps) {
  SampleRing ring(16);
  std::uint64_t next_in = 0;
  std::uint64_t next_out = 0;
  for (int round = 0; round < 1000; ++round) {
    for (int i = 0; i < 11; ++i) ASSERT_TRUE(ring.push({next_in++, 0, 0}));
    QueuedSample s;
    while (ring.pop(s)) ASSERT_EQ(s.id, next_out++);
  }
  EXPECT_EQ(next_out, next_in);
  EXPECT_EQ(ring.size(), 0u);
}

// Every sample accepted by push() comes out exactly once, whatever the
// interleaving of producers and the consumer; a refused one never does.
TEST(SampleRing, ManyProducersLoseNothingTheyWereToldWasQueued) {
  constexpr int kProducers = 4;
  constexpr std::uint64_t kEach = 200000;
  SampleRing ring(256);
  std::atomic<int> done{0};
  std::vector<std::vector<std::uint64_t>> accepted(kProducers);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (std::uint64_t i = 0; i < kEach; ++i) {
        const std::uint64_t id = (std::uint64_t(p) << 32) | i;
        if (ring.push({id, std::uint32_t(p), 0})) accepted[p].push_back(id);
      }
      done.fetch_add(1);
    });
  }
  std::vector<std::uint64_t> seen_next(kProducers, 0);
  std::vector<std::uint64_t> popped(kProducers, 0);
  QueuedSample s;
  for (;;) {
    if (ring.pop(s)) {
      const auto p = static_cast<int>(s.id >> 32);
      ASSERT_EQ(static_cast<int>(s.region), p);
      // Per producer, in its order, with no repeat.
      ASSERT_GE(s.id & 0xffffffffu, seen_next[p]);
      seen_next[p] = (s.id & 0xffffffffu) + 1;
      ++popped[p];
    } else if (done.load() == kProducers && ring.size() == 0) {
      break;
    }
  }
  for (std::thread& t : producers) t.join();
  while (ring.pop(s)) ++popped[static_cast<int>(s.id >> 32)];
  std::uint64_t total = 0;
  for (int p = 0; p < kProducers; ++p) {
    EXPECT_EQ(popped[p], accepted[p].size()) << "producer " << p;
    total += popped[p];
  }
  EXPECT_GT(total, 0u);
}

}  // namespace
}  // namespace snowid::canary
