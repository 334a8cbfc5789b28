#include "durable_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <string>

#include "temp_dir.h"

namespace snowid::internal {
namespace {

class DurableFileTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.file(name); }

  test_support::TempDir dir_{"snowid-durable-test"};
};

TEST_F(DurableFileTest, ReadFileStartReadsAWholeFileWithinTheLimit) {
  ASSERT_TRUE(write_file_durably(path("f"), "twelve bytes", 0600).is_ok());
  const FileStart got = read_file_start(path("f"), 12);
  EXPECT_TRUE(got.opened);
  EXPECT_EQ(got.error, 0);
  EXPECT_EQ(got.text, "twelve bytes");
}

TEST_F(DurableFileTest, ReadFileStartStopsOneBytePastTheLimit) {
  const std::string big(40000, 'x');
  ASSERT_TRUE(write_file_durably(path("f"), big, 0600).is_ok());
  const FileStart got = read_file_start(path("f"), 20000);
  EXPECT_EQ(got.error, 0);
  EXPECT_EQ(got.text.size(), 20001u) << "one byte more tells a longer file";
}

TEST_F(DurableFileTest, ReadFileStartGivesTheErrnoOfTheStepThatFailed) {
  const FileStart missing = read_file_start(path("none"), 10);
  EXPECT_FALSE(missing.opened);
  EXPECT_EQ(missing.error, ENOENT);
  ASSERT_EQ(::mkdir(path("d").c_str(), 0700), 0);
  const FileStart dir = read_file_start(path("d"), 10);
  EXPECT_TRUE(dir.opened);
  EXPECT_EQ(dir.error, EISDIR);
}

TEST_F(DurableFileTest, ReadSmallFileTellsAMissingFileFromAnUnreadableOne) {
  Result<std::optional<std::string>> missing = read_small_file(path("none"));
  ASSERT_TRUE(missing.is_ok());
  EXPECT_FALSE(missing.value().has_value());
  ASSERT_EQ(::mkdir(path("d").c_str(), 0700), 0);
  Result<std::optional<std::string>> dir = read_small_file(path("d"));
  ASSERT_FALSE(dir.is_ok());
  EXPECT_EQ(dir.status().code(), Code::kUnavailable);
  EXPECT_NE(dir.status().message().find("cannot read"), std::string::npos);
}

}  // namespace
}  // namespace snowid::internal
