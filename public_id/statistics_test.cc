// 2^20 consecutive ids through the compact form's permutation: neighbours must
// map to unrelated values. Each bound is about five standard deviations of an
// ideal random permutation, and a broken one (the identity, or XOR with a
// constant) fails every one of them, which the last test shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <vector>

#include "snowid/ff1.h"
#include "test_hex.h"
#include "test_keyrings.h"

namespace snowid {
namespace {

constexpr std::size_t kCount = std::size_t{1} << 20;
constexpr std::uint64_t kFirst = 4194324480;  // 2026-01-01T00:00:01Z, worker 5, sequence 0

struct Figures {
  double mean_hamming = 0;    // between consecutive outputs; ideal 31.5
  double rise = 0;            // P(out[i+1] > out[i]); ideal 0.5
  double worst_bit_bias = 0;  // max over the 63 bits of |P(bit) - 0.5|
  double chi2_top8 = 0;       // of the top 8 bits' histogram, 255 degrees of freedom
  double spearman = 0;        // rank correlation of id and output
};

Figures figures_of(const std::vector<std::uint64_t>& out) {
  Figures f;
  const std::size_t n = out.size();
  std::uint64_t hd = 0, rises = 0;
  for (std::size_t i = 1; i < n; ++i) {
    hd += static_cast<std::uint64_t>(std::popcount(out[i] ^ out[i - 1]));
    rises += out[i] > out[i - 1];
  }
  f.mean_hamming = static_cast<double>(hd) / static_cast<double>(n - 1);
  f.rise = static_cast<double>(rises) / static_cast<double>(n - 1);
  std::vector<std::uint64_t> ones(63);
  std::vector<std::uint64_t> hist(256);
  for (std::uint64_t v : out) {
    for (int b = 0; b < 63; ++b) ones[static_cast<std::size_t>(b)] += (v >> b) & 1;
    ++hist[v >> 55];
  }
  for (std::uint64_t c : ones) {
    f.worst_bit_bias = std::max(f.worst_bit_bias,
                                std::fabs(static_cast<double>(c) / static_cast<double>(n) - 0.5));
  }
  const double expected = static_cast<double>(n) / 256;
  for (std::uint64_t c : hist)
    f.chi2_top8 +=
        (static_cast<double>(c) - expected) * (static_cast<double>(c) - expected) / expected;
  // The inputs are in rank order; rank the outputs.
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return out[a] < out[b]; });
  long double d2 = 0;
  for (std::size_t rank = 0; rank < n; ++rank) {
    const long double d = static_cast<long double>(order[rank]) - static_cast<long double>(rank);
    d2 += d * d;
  }
  const long double nn = static_cast<long double>(n);
  f.spearman = static_cast<double>(1 - 6 * d2 / (nn * (nn * nn - 1)));
  return f;
}

// Which of the bounds the figures break: none for a good permutation.
std::vector<std::string> broken_bounds(const Figures& f) {
  std::vector<std::string> broken;
  if (std::fabs(f.mean_hamming - 31.5) >= 0.02) broken.push_back("hamming");
  if (std::fabs(f.rise - 0.5) >= 0.0025) broken.push_back("rise");
  if (f.worst_bit_bias >= 0.0025) broken.push_back("bit bias");
  if (f.chi2_top8 >= 330) broken.push_back("chi2");
  if (std::fabs(f.spearman) >= 0.005) broken.push_back("spearman");
  return broken;
}

std::vector<std::uint64_t> consecutive() {
  std::vector<std::uint64_t> v(kCount);
  std::iota(v.begin(), v.end(), kFirst);
  return v;
}

TEST(PublicIdStatistics, ConsecutiveIdsMapToUnrelatedValues) {
  Ff1Binary63 ff1 =
      std::move(Ff1Binary63::create(testing_hex::hex_bytes(test_keyrings::kKey0))).value();
  const std::string_view t = "snowid/public-id/v1/ord";
  const Ff1Binary63::Tweak tw =
      ff1.absorb({reinterpret_cast<const std::uint8_t*>(t.data()), t.size()}).value();
  std::vector<std::uint64_t> out = consecutive();
  ASSERT_TRUE(ff1.encrypt_many(tw, out).is_ok());
  const Figures f = figures_of(out);
  std::printf(
      "2^20 consecutive ids: mean Hamming %.4f, P(rise) %.5f, worst bit bias %.5f, "
      "chi2(255) of top 8 bits %.1f, Spearman rho %.5f\n",
      f.mean_hamming, f.rise, f.worst_bit_bias, f.chi2_top8, f.spearman);
  EXPECT_EQ(broken_bounds(f), std::vector<std::string>{});
}

TEST(PublicIdStatistics, TheBoundsRejectBrokenPermutations) {
  const std::vector<std::uint64_t> identity = consecutive();
  std::vector<std::uint64_t> xored = identity;
  for (std::uint64_t& v : xored) v ^= 0x5a5a5a5a5a5a5a5aULL >> 1;
  const std::vector<std::string> all = {"hamming", "rise", "bit bias", "chi2", "spearman"};
  EXPECT_EQ(broken_bounds(figures_of(identity)), all);
  const std::vector<std::string> by_xor = broken_bounds(figures_of(xored));
  EXPECT_GE(by_xor.size(), 4u);
  EXPECT_NE(std::find(by_xor.begin(), by_xor.end(), "hamming"), by_xor.end());
}

}  // namespace
}  // namespace snowid
