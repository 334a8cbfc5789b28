// FF1 against NIST's samples, published radix-2 cases, NIST's ACVP cases
// (fetched when reachable), and the fast path against the general one.
#include "snowid/ff1.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "test_hex.h"

namespace snowid {
namespace {

using testing_hex::hex_bytes;

std::vector<std::uint32_t> digits_of(std::string_view text, std::string_view alphabet) {
  std::vector<std::uint32_t> out;
  for (char c : text) out.push_back(static_cast<std::uint32_t>(alphabet.find(c)));
  return out;
}

std::string text_of(const std::vector<std::uint32_t>& digits, std::string_view alphabet) {
  std::string out;
  for (std::uint32_t d : digits) out += alphabet[d];
  return out;
}

constexpr std::string_view kBase36 = "0123456789abcdefghijklmnopqrstuvwxyz";

struct Sample {
  const char* key;
  std::uint32_t radix;
  const char* tweak;
  const char* pt;
  const char* ct;
};

// SP 800-38G FF1 samples 1 to 9 (ff1samples.pdf).
constexpr const char* k128 = "2B7E151628AED2A6ABF7158809CF4F3C";
constexpr const char* k192 = "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F";
constexpr const char* k256 = "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94";
const Sample kSamples[] = {
    {k128, 10, "", "0123456789", "2433477484"},
    {k128, 10, "39383736353433323130", "0123456789", "6124200773"},
    {k128, 36, "3737373770717273373737", "0123456789abcdefghi", "a9tv40mll9kdu509eum"},
    {k192, 10, "", "0123456789", "2830668132"},
    {k192, 10, "39383736353433323130", "0123456789", "2496655549"},
    {k192, 36, "3737373770717273373737", "0123456789abcdefghi", "xbj3kv35jrawxv32ysr"},
    {k256, 10, "", "0123456789", "6657667009"},
    {k256, 10, "39383736353433323130", "0123456789", "1001623463"},
    {k256, 36, "3737373770717273373737", "0123456789abcdefghi", "xs8a0azh2avyalyzuwd"},
};

TEST(Ff1, NistSamplesEncryptAndDecrypt) {
  for (const Sample& s : kSamples) {
    SCOPED_TRACE(s.ct);
    Result<Ff1> ff1 = Ff1::create(hex_bytes(s.key), s.radix);
    ASSERT_TRUE(ff1.is_ok()) << ff1.status().to_string();
    const std::vector<std::uint8_t> tweak = hex_bytes(s.tweak);
    Result<std::vector<std::uint32_t>> ct = ff1->encrypt(digits_of(s.pt, kBase36), tweak);
    ASSERT_TRUE(ct.is_ok()) << ct.status().to_string();
    EXPECT_EQ(text_of(ct.value(), kBase36), s.ct);
    Result<std::vector<std::uint32_t>> pt = ff1->decrypt(digits_of(s.ct, kBase36), tweak);
    ASSERT_TRUE(pt.is_ok()) << pt.status().to_string();
    EXPECT_EQ(text_of(pt.value(), kBase36), s.pt);
  }
}

TEST(Ff1, RefusesDomainsBelowTheMinimumAndBadNumerals) {
  Ff1 ff1 = std::move(Ff1::create(hex_bytes(k128), 10)).value();
  const std::vector<std::uint32_t> five = {1, 2, 3, 4, 5};  // 10^5 < 10^6
  EXPECT_EQ(ff1.encrypt(five, {}).status().code(), Code::kInvalidArgument);
  const std::vector<std::uint32_t> bad = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(ff1.encrypt(bad, {}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Ff1::create(hex_bytes(k128), 1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Ff1::create(hex_bytes("00"), 10).status().code(), Code::kInvalidArgument);
}

std::vector<std::uint32_t> bits_msb_first(std::uint64_t v, int n) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = (v >> (n - 1 - i)) & 1;
  return out;
}

std::uint64_t value_of_bits(const std::vector<std::uint32_t>& bits) {
  std::uint64_t v = 0;
  for (std::uint32_t b : bits) v = v << 1 | b;
  return v;
}

// Fuchsia fxfs (src/storage/fxfs/src/ff1.rs): radix 2, n = 32, the integer's
// bits most significant first, empty tweak.
TEST(Ff1, FuchsiaRadix2Length32Cases) {
  struct Case {
    const char* key;
    std::uint64_t in, out;
  };
  const std::string zero(64, '0');
  std::string ten;
  for (int i = 0; i < 32; ++i) ten += i % 10 == 9 ? "00" : std::string("0") + char('1' + i % 10);
  const Case cases[] = {
      {zero.c_str(), 1, 0x027c9468},        {zero.c_str(), 999, 0x87a92dd5},
      {zero.c_str(), 11471928, 0x70c679b1}, {zero.c_str(), 318689559, 0xdec5199a},
      {ten.c_str(), 1, 0x92fac14e},         {ten.c_str(), 999, 0x6d2cd513},
      {ten.c_str(), 11471928, 0xdb672d05},  {ten.c_str(), 318689559, 0x66d58b7e},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    Ff1 ff1 = std::move(Ff1::create(hex_bytes(c.key), 2)).value();
    Result<std::vector<std::uint32_t>> out = ff1.encrypt(bits_msb_first(c.in, 32), {});
    ASSERT_TRUE(out.is_ok());
    EXPECT_EQ(value_of_bits(out.value()), c.out);
    EXPECT_EQ(value_of_bits(ff1.decrypt(out.value(), {}).value()), c.in);
  }
}

// Zcash ZIP-32 (zcash-test-vectors ff1.py): FF1-AES256, radix 2, n = 88, each
// byte's bits least significant first.
TEST(Ff1, ZcashRadix2Length88Cases) {
  const auto le_bits = [](const std::vector<std::uint8_t>& bytes) {
    std::vector<std::uint32_t> out;
    for (std::uint8_t b : bytes)
      for (int i = 0; i < 8; ++i) out.push_back((b >> i) & 1);
    return out;
  };
  struct Case {
    const char* tweak;
    const char* in;
    const char* out;
  };
  std::string tweak_00_fe;
  for (int i = 0; i < 255; ++i) {
    static constexpr char kHex[] = "0123456789abcdef";
    tweak_00_fe += kHex[i >> 4];
    tweak_00_fe += kHex[i & 15];
  }
  const Case cases[] = {
      {"", "0000000000000000000000", "90acee3f83cde7ae5622f3"},
      {"", "90acee3f83cde7ae5622f3", "5b8bf120f39bab8527ea1b"},
      {"", "aaaaaaaaaaaaaaaaaaaaaa", "f082b7ee8f29c07691ce64"},
      {tweak_00_fe.c_str(), "aaaaaaaaaaaaaaaaaaaaaa", "be11b886a8059c27517bc5"},
  };
  Ff1 ff1 = std::move(Ff1::create(hex_bytes(k256), 2)).value();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.out);
    const std::vector<std::uint8_t> tweak = hex_bytes(c.tweak);
    Result<std::vector<std::uint32_t>> out = ff1.encrypt(le_bits(hex_bytes(c.in)), tweak);
    ASSERT_TRUE(out.is_ok());
    EXPECT_EQ(out.value(), le_bits(hex_bytes(c.out)));
    EXPECT_EQ(ff1.decrypt(out.value(), tweak).value(), le_bits(hex_bytes(c.in)));
  }
}

TEST(Ff1Binary63, AgreesWithTheGeneralFf1) {
  const std::vector<std::uint8_t> key = hex_bytes(k256);
  Ff1 general = std::move(Ff1::create(key, 2)).value();
  Ff1Binary63 fast = std::move(Ff1Binary63::create(key)).value();
  std::mt19937_64 rng(7);
  for (std::size_t t : {0u, 1u, 11u, 12u, 20u, 23u, 27u, 28u, 44u, 83u}) {
    std::vector<std::uint8_t> tweak(t);
    for (auto& b : tweak) b = static_cast<std::uint8_t>(rng());
    const Ff1Binary63::Tweak tw = fast.absorb(tweak).value();
    for (int k = 0; k < 20; ++k) {
      const std::uint64_t x = k == 0 ? 0 : k == 1 ? Ff1Binary63::kDomain - 1 : rng() >> 1;
      SCOPED_TRACE(testing::Message() << "tweak " << t << " x " << x);
      const std::uint64_t want =
          value_of_bits(general.encrypt(bits_msb_first(x, 63), tweak).value());
      EXPECT_EQ(fast.encrypt(tw, x).value(), want);
      EXPECT_EQ(fast.decrypt(tw, want).value(), x);
    }
  }
}

TEST(Ff1Binary63, KnownValuesOfTheSnowidDomain) {
  Ff1Binary63 fast = std::move(Ff1Binary63::create(hex_bytes(k256))).value();
  const Ff1Binary63::Tweak empty = fast.absorb({}).value();
  EXPECT_EQ(fast.encrypt(empty, 0).value(), 4324959997293592711u);
  EXPECT_EQ(fast.encrypt(empty, 1).value(), 4694632794459499269u);
  EXPECT_EQ(fast.encrypt(empty, 9223372036854775807u).value(), 2900474083761485816u);
  const std::string_view snowid = "snowid";
  const Ff1Binary63::Tweak named =
      fast.absorb({reinterpret_cast<const std::uint8_t*>(snowid.data()), snowid.size()}).value();
  EXPECT_EQ(fast.encrypt(named, 4194324480u).value(), 3103002977332832082u);
}

TEST(Ff1Binary63, BatchEqualsOneByOne) {
  Ff1Binary63 fast = std::move(Ff1Binary63::create(hex_bytes(k256))).value();
  const Ff1Binary63::Tweak tw = fast.absorb(hex_bytes("0102")).value();
  std::vector<std::uint64_t> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 4194324480u + i;
  std::vector<std::uint64_t> batch = values;
  ASSERT_TRUE(fast.encrypt_many(tw, batch).is_ok());
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(batch[i], fast.encrypt(tw, values[i]).value()) << i;
  }
  std::vector<std::uint64_t> bad = {1, Ff1Binary63::kDomain};
  EXPECT_EQ(fast.encrypt_many(tw, bad).code(), Code::kInvalidArgument);
  EXPECT_EQ(bad[0], 1u);
}

// Radix 2, n = 20 (2^20 >= 10^6, the smallest binary domain allowed): every
// input maps to a distinct output, and decryption inverts it.
TEST(Ff1, IsABijectionOnTheWholeOfASmallDomain) {
  Ff1 ff1 = std::move(Ff1::create(hex_bytes(k128), 2)).value();
  constexpr std::uint64_t kSize = std::uint64_t{1} << 20;
  std::vector<bool> seen(kSize);
  const std::vector<std::uint8_t> tweak = hex_bytes("7477");
  for (std::uint64_t x = 0; x < kSize; ++x) {
    const std::vector<std::uint32_t> out = ff1.encrypt(bits_msb_first(x, 20), tweak).value();
    const std::uint64_t y = value_of_bits(out);
    ASSERT_LT(y, kSize);
    ASSERT_FALSE(seen[y]) << "two inputs map to " << y;
    seen[y] = true;
    if (x % 4099 == 0) {
      ASSERT_EQ(value_of_bits(ff1.decrypt(out, tweak).value()), x);
    }
  }
}

// NIST's ACVP FF1 cases (usnistgov/ACVP-Server), read from
// $SNOWID_ACVP_FF1_FILE or fetched; skipped when neither is possible.
TEST(Ff1, AcvpCases) {
  std::string path;
  if (const char* given = std::getenv("SNOWID_ACVP_FF1_FILE"); given != nullptr && *given) {
    path = given;
  } else {
    path = testing::TempDir() + "acvp_ff1_internalProjection.json";
    const std::string command =
        "curl -fsSL --max-time 20 -o '" + path +
        "' https://raw.githubusercontent.com/usnistgov/ACVP-Server/master/gen-val/json-files/"
        "ACVP-AES-FF1-1.0/internalProjection.json 2>/dev/null";
    if (std::system(command.c_str()) != 0) {
      GTEST_SKIP() << "the ACVP FF1 vectors could not be fetched (set SNOWID_ACVP_FF1_FILE)";
    }
  }
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << "no ACVP file at " << path;
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << path << " is not JSON";
  int checked = 0;
  for (const auto& group : doc.at("testGroups")) {
    const std::string alphabet = group.at("alphabet");
    const auto radix = group.at("radix").get<std::uint32_t>();
    const bool encrypt = group.at("direction") == "encrypt";
    for (const auto& c : group.at("tests")) {
      SCOPED_TRACE(testing::Message() << "tcId " << c.at("tcId"));
      Ff1 ff1 = std::move(Ff1::create(hex_bytes(c.at("key").get<std::string>()), radix)).value();
      const std::vector<std::uint8_t> tweak = hex_bytes(c.at("tweak").get<std::string>());
      const std::string pt = c.at("pt"), ct = c.at("ct");
      const std::string from = encrypt ? pt : ct, to = encrypt ? ct : pt;
      Result<std::vector<std::uint32_t>> got = encrypt
                                                   ? ff1.encrypt(digits_of(from, alphabet), tweak)
                                                   : ff1.decrypt(digits_of(from, alphabet), tweak);
      ASSERT_TRUE(got.is_ok()) << got.status().to_string();
      EXPECT_EQ(text_of(got.value(), alphabet), to);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  std::printf("ACVP FF1: %d cases\n", checked);
}

}  // namespace
}  // namespace snowid
