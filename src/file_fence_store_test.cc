#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "snowid/fence.h"

namespace snowid {
namespace {

namespace fs = std::filesystem;
using std::chrono::nanoseconds;

class FileFenceStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "snowid-fence-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    dir_ = pattern;
    path_ = (dir_ / "fence").string();
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void write_file(const std::string& content) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << content;
    ASSERT_TRUE(out.good());
  }

  std::string read_file() const {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  std::vector<std::string> dir_entries() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
      names.push_back(e.path().filename().string());
    }
    return names;
  }

  // Loads a file with this content and expects kDataLoss naming the file.
  void expect_data_loss(const std::string& content) {
    SCOPED_TRACE("content \"" + content + "\"");
    write_file(content);
    std::unique_ptr<FenceStore> store = make_file_fence_store(path_);
    Result<std::optional<WallTime>> r = store->load();
    ASSERT_FALSE(r.is_ok()) << "loaded "
                            << (r.value() ? format_iso8601(*r.value()) : std::string("nothing"));
    EXPECT_EQ(r.status().code(), Code::kDataLoss);
    EXPECT_FALSE(r.status().retryable());
    EXPECT_NE(r.status().message().find(path_), std::string::npos) << r.status().message();
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(FileFenceStoreTest, LoadWithoutAFileFindsNoFence) {
  std::unique_ptr<FenceStore> store = make_file_fence_store(path_);
  Result<std::optional<WallTime>> r = store->load();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FALSE(r.value().has_value());
  EXPECT_TRUE(dir_entries().empty());
}

TEST_F(FileFenceStoreTest, StoreThenLoadKeepsTheMillisecond) {
  std::unique_ptr<FenceStore> store = make_file_fence_store(path_);
  const WallTime fence = wall_from_unix_ms(1767225600123) + nanoseconds(456'789);
  ASSERT_TRUE(store->store(fence).is_ok());
  Result<std::optional<WallTime>> r = store->load();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_TRUE(r.value().has_value());
  EXPECT_EQ(*r.value(), wall_from_unix_ms(1767225600123));
}

TEST_F(FileFenceStoreTest, ANewStoreReadsWhatAnotherStored) {
  const WallTime fence = wall_from_unix_ms(1893456000000);
  ASSERT_TRUE(make_file_fence_store(path_)->store(fence).is_ok());
  Result<std::optional<WallTime>> r = make_file_fence_store(path_)->load();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_TRUE(r.value().has_value());
  EXPECT_EQ(*r.value(), fence);
}

TEST_F(FileFenceStoreTest, FileHoldsMagicVersionAndUnixMilliseconds) {
  std::unique_ptr<FenceStore> store = make_file_fence_store(path_);
  ASSERT_TRUE(store->store(wall_from_unix_ms(1767225600123) + nanoseconds(999'999)).is_ok());
  EXPECT_EQ(read_file(), "snowid-fence 1 1767225600123\n");
  ASSERT_TRUE(store->store(WallTime{}).is_ok());
  EXPECT_EQ(read_file(), "snowid-fence 1 0\n");
}

TEST_F(FileFenceStoreTest, StoreOverwritesTheOldFence) {
  std::unique_ptr<FenceStore> store = make_file_fence_store(path_);
  ASSERT_TRUE(store->store(wall_from_unix_ms(2000000000000)).is_ok());
  ASSERT_TRUE(store->store(wall_from_unix_ms(1900000000000)).is_ok());
  EXPECT_EQ(read_file(), "snowid-fence 1 1900000000000\n");
  Result<std::optional<WallTime>> r = store->load();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_TRUE(r.value().has_value());
  EXPECT_EQ(*r.value(), wall_from_unix_ms(1900000000000));
}

TEST_F(FileFenceStoreTest, StoreLeavesNoTemporaryFileBehind) {
  std::unique_ptr<FenceStore> store = make_file_fence_store(path_);
  for (std::int64_t ms : {1767225600000, 1767225601000, 1767225602000}) {
    ASSERT_TRUE(store->store(wall_from_unix_ms(ms)).is_ok());
  }
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"fence"});
}

TEST_F(FileFenceStoreTest, LargestRepresentableInstantRoundTrips) {
  // 2262-04-11T23:47:16.854Z, the last millisecond of 64-bit nanosecond time.
  const WallTime last = wall_from_unix_ms(9223372036854);
  std::unique_ptr<FenceStore> store = make_file_fence_store(path_);
  ASSERT_TRUE(store->store(last).is_ok());
  EXPECT_EQ(read_file(), "snowid-fence 1 9223372036854\n");
  Result<std::optional<WallTime>> r = store->load();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_TRUE(r.value().has_value());
  EXPECT_EQ(*r.value(), last);
}

TEST_F(FileFenceStoreTest, RefusesGarbage) {
  expect_data_loss("hello world\n");
  expect_data_loss(std::string("\x00\x01\x02\n", 4));
  expect_data_loss("1767225600000\n");
}

TEST_F(FileFenceStoreTest, RefusesAnEmptyFile) { expect_data_loss(""); }

TEST_F(FileFenceStoreTest, RefusesAHeaderWithoutValue) {
  expect_data_loss("snowid-fence 1 ");
  expect_data_loss("snowid-fence 1 \n");
  expect_data_loss("snowid-fence 1");
}

TEST_F(FileFenceStoreTest, RefusesAValueWithoutTheFinalNewline) {
  expect_data_loss("snowid-fence 1 1767225600000");
  expect_data_loss("snowid-fence 1 17672");
}

TEST_F(FileFenceStoreTest, RefusesAnotherVersion) {
  expect_data_loss("snowid-fence 2 1767225600000\n");
  expect_data_loss("snowid-fence  1767225600000\n");
}

TEST_F(FileFenceStoreTest, RefusesMalformedValues) {
  expect_data_loss("snowid-fence 1 -1767225600000\n");
  expect_data_loss("snowid-fence 1 +1767225600000\n");
  expect_data_loss("snowid-fence 1 17672256000x0\n");
  expect_data_loss("snowid-fence 1 1767225600000 \n");
  expect_data_loss("snowid-fence 1  1767225600000\n");
  expect_data_loss("snowid-fence 1 1767225600000\n\n");
  expect_data_loss("snowid-fence 1 1767225600000\r\n");
  expect_data_loss("snowid-fence 1 1767225600000\nsnowid-fence 1 1767225600000\n");
}

TEST_F(FileFenceStoreTest, RefusesANumberWithTooManyDigits) {
  expect_data_loss("snowid-fence 1 9999999999999999999\n");
  expect_data_loss("snowid-fence 1 " + std::string(40, '9') + "\n");
}

TEST_F(FileFenceStoreTest, RefusesAFileLargerThanAFence) {
  expect_data_loss("snowid-fence 1 1767225600000\n" + std::string(1000, '\n'));
  expect_data_loss(std::string(4096, 'x'));
}

// A value that parses as a number but is not an instant WallTime can hold
// (past 2262-04-11) is as unreadable as garbage: the fence it stood for is lost.
TEST_F(FileFenceStoreTest, RefusesAValuePastTheLastRepresentableInstant) {
  expect_data_loss("snowid-fence 1 9223372036855\n");
  expect_data_loss("snowid-fence 1 99999999999999\n");
  expect_data_loss("snowid-fence 1 999999999999999999\n");
}

TEST_F(FileFenceStoreTest, StoreIntoAMissingDirectoryIsRetryablyUnavailable) {
  const std::string missing = (dir_ / "no-such-dir" / "fence").string();
  std::unique_ptr<FenceStore> store = make_file_fence_store(missing);
  const Status s = store->store(wall_from_unix_ms(1767225600000));
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_TRUE(s.retryable());
  EXPECT_NE(s.message().find(missing + ".tmp"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(std::strerror(ENOENT)), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir_ / "no-such-dir"));
}

TEST_F(FileFenceStoreTest, LoadFromAMissingDirectoryFindsNoFence) {
  std::unique_ptr<FenceStore> store =
      make_file_fence_store((dir_ / "no-such-dir" / "fence").string());
  Result<std::optional<WallTime>> r = store->load();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FALSE(r.value().has_value());
}

TEST_F(FileFenceStoreTest, LoadOfADirectoryIsUnavailable) {
  fs::create_directory(path_);
  std::unique_ptr<FenceStore> store = make_file_fence_store(path_);
  Result<std::optional<WallTime>> r = store->load();
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_NE(r.status().message().find(path_), std::string::npos) << r.status().message();
}

TEST_F(FileFenceStoreTest, StoreReplacesACorruptFile) {
  write_file("garbage");
  std::unique_ptr<FenceStore> store = make_file_fence_store(path_);
  ASSERT_FALSE(store->load().is_ok());
  ASSERT_TRUE(store->store(wall_from_unix_ms(1767225600000)).is_ok());
  Result<std::optional<WallTime>> r = store->load();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_TRUE(r.value().has_value());
  EXPECT_EQ(*r.value(), wall_from_unix_ms(1767225600000));
}

}  // namespace
}  // namespace snowid
