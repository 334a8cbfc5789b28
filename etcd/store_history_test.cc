#include "store_history.h"

#include <gtest/gtest.h>

namespace snowid::etcd {
namespace {

using std::chrono::milliseconds;

Header at(std::uint64_t cluster, std::int64_t revision) {
  Header h;
  h.cluster_id = cluster;
  h.revision = revision;
  return h;
}

const WallTime kT = wall_from_unix_ms(1'772'359'200'000);

TEST(StoreHistory, RevisionsThatOnlyGrowAreNews_NotALoss) {
  StoreHistory h;
  EXPECT_FALSE(h.observe(at(7, 10)));
  EXPECT_FALSE(h.observe(at(7, 10)));
  EXPECT_FALSE(h.observe(at(7, 11)));
  EXPECT_FALSE(h.observe(at(0, 12)));  // a header without a cluster id
}

TEST(StoreHistory, ARevisionLowerThanOneSeenIsALossOnce) {
  StoreHistory h;
  EXPECT_FALSE(h.observe(at(7, 500)));
  const std::optional<std::string> why = h.observe(at(7, 3));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("went back from 500 to 3"), std::string::npos) << *why;
  // The new store's revisions are what counts from now on.
  EXPECT_FALSE(h.observe(at(7, 4)));
  EXPECT_TRUE(h.observe(at(7, 2)));
}

TEST(StoreHistory, AnotherClusterIdIsALossEvenAtAHigherRevision) {
  StoreHistory h;
  EXPECT_FALSE(h.observe(at(7, 5)));
  const std::optional<std::string> why = h.observe(at(8, 900));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("another cluster"), std::string::npos) << *why;
  EXPECT_FALSE(h.observe(at(8, 901)));
}

TEST(StoreHistory, AMarkReadBackLowerOrAbsentShowsLostWrites) {
  StoreHistory h;
  EXPECT_FALSE(h.check_mark("t", std::nullopt));  // nothing stored: nothing to miss
  h.stored_mark("t", kT + milliseconds(8000));
  EXPECT_FALSE(h.check_mark("t", kT + milliseconds(8000)));
  EXPECT_FALSE(h.check_mark("t", kT + milliseconds(9000)));
  // Stored rounded up to the millisecond: a read within it is the same mark.
  EXPECT_FALSE(h.check_mark("t", kT + milliseconds(7999) + std::chrono::microseconds(1)));
  EXPECT_TRUE(h.check_mark("t", kT + milliseconds(7999)));
  EXPECT_TRUE(h.check_mark("t", std::nullopt));
  EXPECT_FALSE(h.check_mark("other", std::nullopt));
  h.forget("t");
  EXPECT_FALSE(h.check_mark("t", std::nullopt));
}

TEST(StoreHistory, APendingLossIsTakenOnceAndKeepsTheFirstReason) {
  StoreHistory h;
  EXPECT_FALSE(h.has_pending());
  EXPECT_FALSE(h.take_pending());
  h.set_pending("first");
  h.set_pending("second");
  EXPECT_TRUE(h.has_pending());
  EXPECT_EQ(h.take_pending(), "first");
  EXPECT_FALSE(h.has_pending());
  EXPECT_FALSE(h.take_pending());
}

}  // namespace
}  // namespace snowid::etcd
