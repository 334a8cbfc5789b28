#include "skew_keys.h"

#include <gtest/gtest.h>

#include <string>

#include "worker_keys.h"

namespace snowid::etcd {
namespace {

TEST(SkewKeys, SitBesideTheWorkerKeysOfTheSameNamespace) {
  const SkewKeys keys("/snowid", "prod", 3);
  const WorkerKeys workers("/snowid", "prod");
  EXPECT_EQ(keys.region(), "/snowid/prod/skew/3/");
  EXPECT_EQ(keys.agent("web-1"), "/snowid/prod/skew/3/agents/web-1");
  EXPECT_EQ(keys.vote("web-2", "web-1"), "/snowid/prod/skew/3/votes/web-2/web-1");
  EXPECT_EQ(keys.votes("web-2"), "/snowid/prod/skew/3/votes/web-2/");
  EXPECT_EQ(keys.fence("web-2"), "/snowid/prod/skew/3/fences/web-2");
  // Neither kind of key is inside the other's ranges.
  EXPECT_FALSE(keys.region().starts_with(workers.all()));
  EXPECT_FALSE(workers.parse(keys.vote("web-2", "web-1")).has_value());
  EXPECT_FALSE(keys.agent_of(workers.holder({3, 1})).has_value());
}

TEST(SkewKeys, ReadBackTheNameTheyCarry) {
  const SkewKeys keys("/a/b", "c", 0);
  EXPECT_EQ(keys.agent_of("/a/b/c/skew/0/agents/h1"), "h1");
  EXPECT_EQ(keys.voter_of("t", "/a/b/c/skew/0/votes/t/h1"), "h1");
  EXPECT_EQ(keys.fence_of("/a/b/c/skew/0/fences/t"), "t");
}

TEST(SkewKeys, ForeignKeysAreNotRead) {
  const SkewKeys keys("/snowid", "default", 1);
  // Another region, another cluster, a trailing segment, an empty name.
  EXPECT_FALSE(keys.agent_of("/snowid/default/skew/10/agents/h1"));
  EXPECT_FALSE(keys.agent_of("/snowid/other/skew/1/agents/h1"));
  EXPECT_FALSE(keys.agent_of("/snowid/default/skew/1/agents/h1/x"));
  EXPECT_FALSE(keys.agent_of("/snowid/default/skew/1/agents/"));
  // A vote of target "t/x" is no vote of "t"; "tt" is another target.
  EXPECT_FALSE(keys.voter_of("t", "/snowid/default/skew/1/votes/t/x/h1"));
  EXPECT_FALSE(keys.voter_of("t", "/snowid/default/skew/1/votes/tt/h1"));
  EXPECT_FALSE(keys.fence_of("/snowid/default/skew/1/fences/t/old"));
  EXPECT_FALSE(keys.fence_of("/snowid/default/skew/1/fence/t"));
}

TEST(SkewKeys, HostNamesAreOneTo253BytesWithoutASlash) {
  EXPECT_TRUE(valid_host_name("h"));
  EXPECT_TRUE(valid_host_name("web-1.example.com"));
  EXPECT_TRUE(valid_host_name(std::string(253, 'a')));
  EXPECT_FALSE(valid_host_name(""));
  EXPECT_FALSE(valid_host_name(std::string(254, 'a')));
  EXPECT_FALSE(valid_host_name("a/b"));
  EXPECT_FALSE(valid_host_name("/"));
}

}  // namespace
}  // namespace snowid::etcd
