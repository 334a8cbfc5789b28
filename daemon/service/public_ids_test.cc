#include "public_ids.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

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

// The port the command table uses, on the real keyring.
class PublicIdPortTest : public PublicIdsTest {
 protected:
  // Ids of the simulated clock's time: unwrap refuses ids from the future.
  std::vector<std::uint64_t> ids_now(int n) {
    const Layout layout = Layout::snowid_default();
    const std::uint64_t base =
        layout.encode(layout.ticks_at(clock_.wall_now()) - 10, {.region = 1, .host = 2}, 0).value();
    std::vector<std::uint64_t> out;
    for (int i = 0; i < n; ++i) out.push_back(base + static_cast<std::uint64_t>(i));
    return out;
  }
};

TEST_F(PublicIdPortTest, WrappedIdsUnwrapToThemselvesAndAreCounted) {
  write_keys("first");
  ASSERT_TRUE(ids_.load(path_).is_ok());
  const std::vector<std::uint64_t> ids = ids_now(64);
  std::vector<std::string> publics;
  ASSERT_TRUE(ids_.wrap("ord", ids, publics).is_ok());
  ASSERT_EQ(publics.size(), ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_TRUE(publics[i].starts_with("ord_")) << publics[i];
    // The library's own wrap, one at a time, agrees with the batch.
    EXPECT_EQ(publics[i], ids_.current()->wrap("ord", ids[i]).value().view());
    const Result<UnwrappedId> u = ids_.unwrap(publics[i]);
    ASSERT_TRUE(u.is_ok()) << u.status().message();
    EXPECT_EQ(u.value().id, ids[i]);
    EXPECT_EQ(u.value().type, "ord");
    EXPECT_EQ(u.value().slot, 0);
    EXPECT_FALSE(u.value().sealed);
  }
  const PublicIds::Counts c = ids_.counts();
  EXPECT_EQ(c.wrapped, 64u);
  EXPECT_EQ(c.unwrapped, 64u);
  EXPECT_EQ(c.wrap_refusals + c.unwrap_refusals + c.unwrap_denied, 0u);
}

TEST_F(PublicIdPortTest, AnUpperCasePublicIdUnwrapsWithItsCanonicalType) {
  write_keys("first");
  ASSERT_TRUE(ids_.load(path_).is_ok());
  std::vector<std::string> publics;
  ASSERT_TRUE(ids_.wrap("ord_line", ids_now(1), publics).is_ok());
  std::string upper = publics[0];
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const Result<UnwrappedId> u = ids_.unwrap(upper);
  ASSERT_TRUE(u.is_ok()) << u.status().message();
  EXPECT_EQ(u.value().id, ids_now(1)[0]);
  EXPECT_EQ(u.value().type, "ord_line");
}

TEST_F(PublicIdPortTest, RefusalsStartWithTheLibrarysReasonWord) {
  write_keys("first");
  ASSERT_TRUE(ids_.load(path_).is_ok());
  std::vector<std::string> out;
  EXPECT_EQ(public_id_word(ids_.check_type("Ord").message()), "BAD_TYPE");
  EXPECT_EQ(public_id_word(ids_.wrap("ord", std::vector<std::uint64_t>{0}, out).message()),
            "BAD_ID");
  EXPECT_EQ(public_id_word(ids_.unwrap("ord_000000000000i").status().message()),
            "AMBIGUOUS_SYMBOL");
  EXPECT_EQ(public_id_word(ids_.unwrap("ord").status().message()), "NO_TYPE");
  const PublicIds::Counts c = ids_.counts();
  EXPECT_EQ(c.wrap_refusals, 1u);
  EXPECT_EQ(c.unwrap_refusals, 2u);
}

TEST_F(PublicIdPortTest, OffItRefusesEverythingWithoutIssuing) {
  std::vector<std::string> out;
  EXPECT_FALSE(ids_.on());
  EXPECT_EQ(ids_.check_type("ord").code(), Code::kFailedPrecondition);
  EXPECT_EQ(ids_.wrap("ord", ids_now(1), out).code(), Code::kFailedPrecondition);
  EXPECT_EQ(ids_.unwrap("ord_c4khywqwtw0xe").status().code(), Code::kFailedPrecondition);
}

TEST_F(PublicIdPortTest, WhoMayUnwrapFollowsTheSettingAndRefusalsAreCounted) {
  const PublicIdCaller socket{.unix_socket = true};
  const PublicIdCaller loopback{.loopback = true};
  const PublicIdCaller remote{};
  const PublicIdCaller remote_with_token{.token = true};
  EXPECT_TRUE(ids_.may_unwrap(socket));
  EXPECT_TRUE(ids_.may_unwrap(loopback));
  EXPECT_FALSE(ids_.may_unwrap(remote));
  EXPECT_FALSE(ids_.may_unwrap(remote_with_token));
  ids_.set_unwrap_callers(UnwrapCallers::kToken);
  EXPECT_TRUE(ids_.may_unwrap(socket));
  EXPECT_FALSE(ids_.may_unwrap(loopback));
  EXPECT_TRUE(ids_.may_unwrap(remote_with_token));
  ids_.set_unwrap_callers(UnwrapCallers::kAny);
  EXPECT_TRUE(ids_.may_unwrap(remote));
  EXPECT_EQ(ids_.counts().unwrap_denied, 3u);
  UnwrapCallers parsed = UnwrapCallers::kAny;
  EXPECT_TRUE(parse_unwrap_callers("token", parsed));
  EXPECT_EQ(parsed, UnwrapCallers::kToken);
  EXPECT_FALSE(parse_unwrap_callers("Local", parsed));
}

}  // namespace
}  // namespace snowid::daemon
