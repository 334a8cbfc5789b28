#include "public_ids.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "snowid/testing/simulated_clock.h"

namespace snowid::daemon {
namespace {

class PublicIdsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/snowid-public-ids-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    dir_ = templ;
    path_ = dir_ + "/keys";
  }
  void TearDown() override {
    std::remove(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  // A keyring of one primary key, written with `mode`.
  void write_keys(const std::string& name, ::mode_t mode = 0600) {
    const Result<std::string> line =
        new_keyring_line(0, KeyState::kPrimary, WallTime(std::chrono::milliseconds(0)), name);
    ASSERT_TRUE(line.is_ok()) << line.status().message();
    write_text(std::string(PublicIdKeyring::kHeader) + "\n" + line.value() + "\n", mode);
  }
  void write_text(const std::string& text, ::mode_t mode = 0600) {
    std::remove(path_.c_str());
    std::ofstream(path_) << text;
    ASSERT_EQ(::chmod(path_.c_str(), mode), 0);
  }
  std::string dir_, path_;
  testing::SimulatedClock clock_{WallTime(std::chrono::hours(24 * 365 * 57))};
  PublicIds ids_{Layout::snowid_default(), clock_};
};

TEST_F(PublicIdsTest, OffUntilAKeyringIsLoadedAndOffAgainForAnEmptyPath) {
  EXPECT_EQ(ids_.current(), nullptr);
  write_keys("first");
  ASSERT_TRUE(ids_.load(path_).is_ok());
  ASSERT_NE(ids_.current(), nullptr);
  EXPECT_EQ(ids_.current()->keys().slot(0)->name, "first");
  ASSERT_TRUE(ids_.reload("").is_ok());
  EXPECT_EQ(ids_.current(), nullptr);
}

TEST_F(PublicIdsTest, AValidNewFileReplacesTheKeyringAndHoldersKeepTheOld) {
  write_keys("first");
  ASSERT_TRUE(ids_.load(path_).is_ok());
  const std::shared_ptr<const PublicIdCodec> held = ids_.current();
  write_keys("second");
  ASSERT_TRUE(ids_.reload(path_).is_ok());
  EXPECT_EQ(ids_.current()->keys().slot(0)->name, "second");
  EXPECT_EQ(held->keys().slot(0)->name, "first");
  EXPECT_EQ(ids_.reloads(), 1u);
  EXPECT_EQ(ids_.reload_failures(), 0u);
}

TEST_F(PublicIdsTest, AnInvalidNewFileKeepsTheKeyringInUseAndNamesThePath) {
  write_keys("first");
  ASSERT_TRUE(ids_.load(path_).is_ok());
  const std::shared_ptr<const PublicIdCodec> before = ids_.current();
  write_text("snowid-public-id-keys 1\n0 primary 2026-01-01 broken 00\n");
  const Status s = ids_.reload(path_);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message().rfind(path_ + ": ", 0), 0u) << s.message();
  EXPECT_EQ(ids_.current(), before);
  EXPECT_EQ(ids_.reload_failures(), 1u);
  EXPECT_EQ(ids_.reloads(), 0u);
}

TEST_F(PublicIdsTest, AFileGroupOrOthersMayReadIsRefused) {
  write_keys("first", 0644);
  EXPECT_EQ(ids_.load(path_).code(), Code::kFailedPrecondition);
  EXPECT_EQ(ids_.current(), nullptr);
  write_keys("first", 0640);
  EXPECT_EQ(ids_.load(path_).code(), Code::kFailedPrecondition);
}

TEST_F(PublicIdsTest, TheDescriptionNamesStatesAndFingerprintsNeverKeys) {
  write_keys("first");
  const std::string text = [&] {
    std::ifstream in(path_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  ASSERT_TRUE(ids_.load(path_).is_ok());
  const std::string shown = describe_keyring(ids_.current()->keys());
  EXPECT_EQ(shown, "0:primary:" + ids_.current()->keys().slot(0)->fingerprint);
  const std::size_t key_at = text.find_last_of(' ') + 1;
  EXPECT_EQ(shown.find(text.substr(key_at, 8)), std::string::npos);
}

TEST_F(PublicIdsTest, StatsCountSlotsByStateAndNameThePrimary) {
  EXPECT_FALSE(keyring_stats(ids_).on);
  EXPECT_EQ(keyring_stats(ids_).primary_fingerprint, "");
  const Result<std::string> a =
      new_keyring_line(0, KeyState::kActive, WallTime(std::chrono::hours(1)), "a");
  const Result<std::string> b =
      new_keyring_line(2, KeyState::kPrimary, WallTime(std::chrono::hours(2)), "b");
  const Result<std::string> c =
      new_keyring_line(3, KeyState::kRetired, WallTime(std::chrono::hours(0)), "c");
  ASSERT_TRUE(a.is_ok() && b.is_ok() && c.is_ok());
  write_text(std::string(PublicIdKeyring::kHeader) + "\n" + a.value() + "\n" + b.value() + "\n" +
             c.value() + "\n");
  ASSERT_TRUE(ids_.reload(path_).is_ok());
  const PublicIdKeyringStats s = keyring_stats(ids_);
  EXPECT_TRUE(s.on);
  EXPECT_EQ(s.slots_by_state, (std::array<std::uint32_t, 4>{1, 1, 0, 1}));
  EXPECT_EQ(s.primary_slot, 2);
  EXPECT_EQ(s.primary_fingerprint, ids_.current()->keys().slot(2)->fingerprint);
  EXPECT_EQ(s.reloads, 1u);
}

}  // namespace
}  // namespace snowid::daemon
