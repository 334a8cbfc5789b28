#include "secret.h"

#include <gtest/gtest.h>

#include <string>

namespace snowid::daemon {
namespace {

TEST(SameSecret, MatchesOnlyTheSameBytes) {
  EXPECT_TRUE(same_secret("s3cret", "s3cret"));
  EXPECT_TRUE(same_secret("", ""));
  EXPECT_FALSE(same_secret("s3creT", "s3cret"));
  EXPECT_FALSE(same_secret("t3cret", "s3cret"));
}

TEST(SameSecret, APrefixOrAnExtensionIsNotTheSecret) {
  EXPECT_FALSE(same_secret("s3cre", "s3cret"));
  EXPECT_FALSE(same_secret("s3crets", "s3cret"));
  EXPECT_FALSE(same_secret("", "s3cret"));
  EXPECT_FALSE(same_secret("s3cret", ""));
  // A NUL past the end of `expected` is not taken for its end.
  EXPECT_FALSE(same_secret(std::string("s3cret\0", 7), "s3cret"));
}

}  // namespace
}  // namespace snowid::daemon
