#include "observers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace snowid::skew {
namespace {

std::vector<std::string> fleet(int n) {
  std::vector<std::string> hosts;
  for (int i = 0; i < n; ++i) hosts.push_back("host-" + std::to_string(i));
  return hosts;
}

TEST(Observers, RankIsFnv1aOfTargetZeroHost) {
  // Pinned: every monitor of every version must rank alike.
  EXPECT_EQ(observer_rank("", ""), 0xaf63bd4c8601b7dfULL);  // FNV-1a of one zero byte
  EXPECT_NE(observer_rank("a", "b"), observer_rank("b", "a"));
}

TEST(Observers, AtMostEightOthersNeverTheTarget) {
  const std::vector<std::string> hosts = fleet(20);
  const std::vector<std::string> obs = observers_of("host-3", hosts, 8);
  EXPECT_EQ(obs.size(), 8u);
  EXPECT_EQ(std::count(obs.begin(), obs.end(), "host-3"), 0);
  EXPECT_EQ(observers_of("host-0", fleet(3), 8).size(), 2u);
  EXPECT_EQ(observers_of("host-0", fleet(1), 8).size(), 0u);
}

TEST(Observers, TheSameWhateverTheOrderOfTheHosts) {
  std::vector<std::string> hosts = fleet(12);
  const std::vector<std::string> a = observers_of("host-5", hosts, 8);
  std::reverse(hosts.begin(), hosts.end());
  hosts.push_back("host-1");  // a duplicate counts once
  EXPECT_EQ(observers_of("host-5", hosts, 8), a);
}

TEST(Observers, HighestRankFirst) {
  const std::vector<std::string> obs = observers_of("host-2", fleet(12), 8);
  for (std::size_t i = 1; i < obs.size(); ++i) {
    EXPECT_GE(observer_rank("host-2", obs[i - 1]), observer_rank("host-2", obs[i]));
  }
}

}  // namespace
}  // namespace snowid::skew
