#include "fence_file.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "temp_dir.h"

namespace snowid::host {
namespace {

WallTime at(std::int64_t ms) { return WallTime(std::chrono::milliseconds(ms)); }

TEST(FenceStores, OneFilePerWorkerUnderItsName) {
  test_support::TempDir dir("fence-stores");
  FenceStores stores(dir.path());
  ASSERT_TRUE(stores.store_for({1, 2})->store(at(5000)).is_ok());
  EXPECT_TRUE(std::ifstream(dir.file("fence-r1-h2")).good());
  EXPECT_EQ(fence_path(dir.path(), {1, 2}), dir.file("fence-r1-h2"));
  EXPECT_TRUE(stores.last_failure().is_ok());
  EXPECT_TRUE(stores.last_failure_of({1, 2}).is_ok());
}

// The tool explains a refusal by the current worker's fence only; the
// daemon, at start and close, by any store's.
TEST(FenceStores, RemembersTheLastFailurePerWorkerAndOverall) {
  test_support::TempDir dir("fence-stores");
  // A regular file where the state directory should be: every write fails.
  const std::string not_a_dir = dir.file("plain");
  std::ofstream(not_a_dir) << "x";
  FenceStores stores(not_a_dir);
  std::shared_ptr<FenceStore> broken = stores.store_for({0, 3});
  EXPECT_FALSE(broken->store(at(5000)).is_ok());
  const Status failure = stores.last_failure_of({0, 3});
  EXPECT_FALSE(failure.is_ok());
  EXPECT_EQ(stores.last_failure().message(), failure.message());
  EXPECT_TRUE(stores.last_failure_of({0, 4}).is_ok()) << "no store for that worker";
  // A newer store for the worker is the one its generator now writes to.
  std::shared_ptr<FenceStore> fresh = stores.store_for({0, 3});
  EXPECT_TRUE(stores.last_failure_of({0, 3}).is_ok());
  EXPECT_FALSE(stores.last_failure().is_ok()) << "the older store's failure still counts";
}

}  // namespace
}  // namespace snowid::host
