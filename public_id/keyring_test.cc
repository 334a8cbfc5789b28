#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "snowid/public_id_keyring.h"
#include "test_keyrings.h"

namespace snowid {
namespace {

using namespace test_keyrings;

Status parse_status(const std::string& text) { return PublicIdKeyring::parse(text).status(); }

TEST(PublicIdKeyring, ParsesSlotsStatesAndPolicy) {
  const std::string text = kHead + "policy newest\n# a comment\n\n" +
                           line(1, "primary", "2027-01-01T00:00:00Z", "k2027", kKey1) +
                           line(0, "active", "2026-01-01T00:00:00Z", "k2026", kKey0) +
                           line(2, "decrypt", "2028-01-01T00:00:00Z", "k2028", kKey2) +
                           line(3, "retired", "2025-01-01T00:00:00Z", "old", kKey3);
  Result<PublicIdKeyring> ring = PublicIdKeyring::parse(text);
  ASSERT_TRUE(ring.is_ok()) << ring.status().to_string();
  EXPECT_EQ(ring->policy(), KeyPolicy::kNewest);
  EXPECT_EQ(ring->primary_slot(), 1);
  EXPECT_EQ(ring->slot(0)->state, KeyState::kActive);
  EXPECT_EQ(ring->slot(2)->state, KeyState::kDecrypt);
  EXPECT_EQ(ring->slot(3)->state, KeyState::kRetired);
  EXPECT_EQ(ring->slot(1)->name, "k2027");
  EXPECT_EQ(format_iso8601(ring->slot(1)->not_before), "2027-01-01T00:00:00.000Z");
  // Fingerprints tell keys apart and show none of the key.
  EXPECT_EQ(ring->slot(0)->fingerprint.size(), 8u);
  EXPECT_NE(ring->slot(0)->fingerprint, ring->slot(1)->fingerprint);
  EXPECT_EQ(std::string(kKey0).find(ring->slot(0)->fingerprint), std::string::npos);
  EXPECT_EQ(PublicIdKeyring::parse(test_keyrings::single())->policy(), KeyPolicy::kByTime);
}

TEST(PublicIdKeyring, RefusesBadGrammar) {
  const std::string ok = line(0, "primary", "2026-01-01T00:00:00Z", "a", kKey0);
  EXPECT_EQ(parse_status("").code(), Code::kInvalidArgument);
  EXPECT_EQ(parse_status(ok).code(), Code::kInvalidArgument);  // no header
  EXPECT_EQ(parse_status("snowid-public-id-keys 2\n" + ok).code(), Code::kInvalidArgument);
  EXPECT_TRUE(parse_status(kHead + ok).is_ok());
  EXPECT_FALSE(
      parse_status(kHead + line(4, "primary", "2026-01-01T00:00:00Z", "a", kKey0)).is_ok());
  EXPECT_FALSE(parse_status(kHead + line(0, "main", "2026-01-01T00:00:00Z", "a", kKey0)).is_ok());
  EXPECT_FALSE(parse_status(kHead + line(0, "primary", "2026-01-01", "a", kKey0) + "x").is_ok());
  EXPECT_FALSE(parse_status(kHead + line(0, "primary", "yesterday", "a", kKey0)).is_ok());
  EXPECT_FALSE(
      parse_status(kHead + line(0, "primary", "2026-01-01T00:00:00Z", "A!", kKey0)).is_ok());
  EXPECT_FALSE(
      parse_status(kHead + line(0, "primary", "2026-01-01T00:00:00Z", "a", "abcd")).is_ok());
  std::string bad_hex = kKey0;
  bad_hex[10] = 'g';
  EXPECT_FALSE(
      parse_status(kHead + line(0, "primary", "2026-01-01T00:00:00Z", "a", bad_hex.c_str()))
          .is_ok());
  EXPECT_FALSE(parse_status(kHead + ok + "policy newest\n").is_ok());  // policy after slots
  EXPECT_FALSE(parse_status(kHead + "policy sometimes\n" + ok).is_ok());
  EXPECT_FALSE(parse_status(kHead + "0 primary 2026-01-01T00:00:00Z a\n").is_ok());
}

TEST(PublicIdKeyring, RefusalsNameTheLineAndNeverTheKey) {
  const Status s =
      parse_status(kHead + "\n" + line(0, "primary", "2026-01-01T00:00:00Z", "a", kKey0) +
                   line(0, "active", "2026-01-01T00:00:00Z", "b", kKey1));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("line 4"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("given twice"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find(std::string(kKey1).substr(0, 8)), std::string::npos);
}

// A key written in the wrong field, whole or split in two, is refused without
// any of its digits in the message.
TEST(PublicIdKeyring, RefusalsOfMisplacedKeysNeverEchoThem) {
  const std::string key = kKey0;
  const std::string upper = "2B7E151628AED2A6ABF7158809CF4F3C";  // kKey0's first half
  const std::string lines[] = {
      "snowid-public-id-keys " + key + "\n",
      kHead + key + " primary 2026-01-01T00:00:00Z k2026 x\n",
      kHead + "1 " + key + " 2026-01-01T00:00:00Z k2026 x\n",
      kHead + "1 primary " + key + " k2026 x\n",
      kHead + "1 primary 2026-01-01T00:00:00Z " + upper + " ef4359d8d580aa4f7f036d6f04fc6a94\n",
      kHead + "0 primary 2026-01-01T00:00:00Z 2b7e151628aed2a6 " + std::string(kKey1) + "\n" +
          "1 active 2026-01-01T00:00:00Z 2b7e151628aed2a6 " + std::string(kKey2) + "\n",
  };
  for (const std::string& text : lines) {
    const Status s = parse_status(text);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << text;
    for (std::size_t at = 0; at + 8 <= key.size(); at += 4) {
      EXPECT_EQ(s.message().find(key.substr(at, 8)), std::string::npos) << s.message();
    }
    EXPECT_EQ(s.message().find(upper.substr(0, 8)), std::string::npos) << s.message();
  }
}

TEST(PublicIdKeyring, RefusesDuplicatesTooManySlotsAndPrimaryCount) {
  const char* t = "2026-01-01T00:00:00Z";
  // The same name, the same key.
  EXPECT_FALSE(
      parse_status(kHead + line(0, "primary", t, "a", kKey0) + line(1, "active", t, "a", kKey1))
          .is_ok());
  EXPECT_FALSE(
      parse_status(kHead + line(0, "primary", t, "a", kKey0) + line(1, "active", t, "b", kKey0))
          .is_ok());
  // A fifth slot line.
  const std::string four = line(0, "primary", t, "a", kKey0) + line(1, "active", t, "b", kKey1) +
                           line(2, "active", t, "c", kKey2) + line(3, "active", t, "d", kKey3);
  EXPECT_TRUE(parse_status(kHead + four).is_ok());
  const Status five = parse_status(kHead + four + line(3, "retired", t, "e", kKey3));
  EXPECT_NE(five.message().find("more than 4"), std::string::npos) << five.message();
  // No primary; two primaries.
  const Status none = parse_status(kHead + line(0, "active", t, "a", kKey0));
  EXPECT_NE(none.message().find("no primary"), std::string::npos) << none.message();
  EXPECT_FALSE(
      parse_status(kHead + line(0, "primary", t, "a", kKey0) + line(1, "primary", t, "b", kKey1))
          .is_ok());
}

class KeyringFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "keyring_" + std::to_string(::getpid());
    std::ofstream(path_) << test_keyrings::single();
  }
  void TearDown() override { ::unlink(path_.c_str()); }
  std::string path_;
};

TEST_F(KeyringFile, LoadsAtMode0600AndRefusesReadableByOthers) {
  ASSERT_EQ(::chmod(path_.c_str(), 0600), 0);
  Result<PublicIdKeyring> ring = PublicIdKeyring::load(path_);
  ASSERT_TRUE(ring.is_ok()) << ring.status().to_string();
  EXPECT_EQ(ring->primary_slot(), 1);
  ASSERT_EQ(::chmod(path_.c_str(), 0400), 0);
  EXPECT_TRUE(PublicIdKeyring::load(path_).is_ok());
  for (mode_t mode : {0644, 0640, 0604, 0620, 0602}) {
    ASSERT_EQ(::chmod(path_.c_str(), mode), 0);
    const Status s = PublicIdKeyring::load(path_).status();
    EXPECT_EQ(s.code(), Code::kFailedPrecondition) << std::oct << mode;
    EXPECT_NE(s.message().find("chmod 600"), std::string::npos) << s.message();
  }
  EXPECT_EQ(PublicIdKeyring::load(path_ + ".missing").status().code(), Code::kNotFound);
}

TEST(PublicIdKeyring, NewLinesParseAndDiffer) {
  Result<std::string> a =
      new_keyring_line(0, KeyState::kPrimary, wall_from_unix_ms(1767225600000), "a");
  Result<std::string> b =
      new_keyring_line(1, KeyState::kDecrypt, wall_from_unix_ms(1767225600000), "b");
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  Result<PublicIdKeyring> ring =
      PublicIdKeyring::parse(kHead + a.value() + "\n" + b.value() + "\n");
  ASSERT_TRUE(ring.is_ok()) << ring.status().to_string();
  EXPECT_NE(ring->slot(0)->fingerprint, ring->slot(1)->fingerprint);
  EXPECT_FALSE(new_keyring_line(4, KeyState::kPrimary, wall_from_unix_ms(0), "a").is_ok());
  EXPECT_FALSE(new_keyring_line(0, KeyState::kPrimary, wall_from_unix_ms(0), "").is_ok());
}

}  // namespace
}  // namespace snowid
