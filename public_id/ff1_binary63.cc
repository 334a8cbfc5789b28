// FF1 at radix 2, n = 63 (u = 31, v = 32, b = 4, d = 8) on 64-bit words.
//
// PRF(P || Q) is a CBC-MAC. P and every block of Q but the last depend only on
// the key and the tweak, so absorb() runs them once; Q's last block is the
// tweak's tail, the padding, the round number and NUM(B) as 4 bytes, and a
// round is then one AES block whose first 8 output bytes are y.
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "aes_ecb.h"
#include "snowid/ff1.h"

namespace snowid {
namespace {

constexpr int kU = 31;
constexpr std::uint64_t kMaskU = (std::uint64_t{1} << kU) - 1;
constexpr std::uint64_t kMaskV = (std::uint64_t{1} << 32) - 1;
constexpr std::size_t kChunk = 32;  // values per AES call in encrypt_many

std::uint64_t load_be64(const std::uint8_t* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

#if !defined(__SSE2__)
void store_be64(std::uint8_t* p, std::uint64_t v) noexcept {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}
#endif

// The block whose encryption gives round i's R, written with one 16-byte
// store where the target has one: AES then loads what was stored whole,
// which two 8-byte stores would make it wait for (store forwarding).
void round_block(const Ff1Binary63::Tweak& tw, int i, std::uint64_t fed,
                 std::uint8_t* out) noexcept {
  const std::uint64_t lo = tw.lo ^ (static_cast<std::uint64_t>(i) << 32 | fed);
#if defined(__SSE2__)
  const __m128i block = _mm_set_epi64x(static_cast<long long>(__builtin_bswap64(lo)),
                                       static_cast<long long>(__builtin_bswap64(tw.hi)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), block);
#else
  store_be64(out, tw.hi);
  store_be64(out + 8, lo);
#endif
}

Status aes_failed() { return Status(Code::kUnavailable, "libcrypto: AES failed"); }

}  // namespace

Ff1Binary63::Ff1Binary63(std::unique_ptr<internal::AesEcb> aes) : aes_(std::move(aes)) {}
Ff1Binary63::~Ff1Binary63() = default;
Ff1Binary63::Ff1Binary63(Ff1Binary63&&) noexcept = default;
Ff1Binary63& Ff1Binary63::operator=(Ff1Binary63&&) noexcept = default;

Result<Ff1Binary63> Ff1Binary63::create(std::span<const std::uint8_t> key) {
  Result<std::unique_ptr<internal::AesEcb>> aes = internal::AesEcb::create(key, false);
  if (!aes.is_ok()) return aes.status();
  return Ff1Binary63(std::move(aes).value());
}

Result<Ff1Binary63::Tweak> Ff1Binary63::absorb(std::span<const std::uint8_t> tweak) const {
  const std::size_t t = tweak.size();
  if (t > kMaxTweak) {
    return Status(Code::kInvalidArgument, "FF1 tweak of " + std::to_string(t) + " bytes; at most " +
                                              std::to_string(kMaxTweak));
  }
  // P = [1,2,1] [radix=2]_3 [10] [u mod 256] [n=63]_4 [t]_4
  std::uint8_t p[16] = {1, 2, 1, 0, 0, 2, 10, kU, 0, 0, 0, 63};
  p[12] = static_cast<std::uint8_t>(t >> 24);
  p[13] = static_cast<std::uint8_t>(t >> 16);
  p[14] = static_cast<std::uint8_t>(t >> 8);
  p[15] = static_cast<std::uint8_t>(t);
  std::uint8_t chain[16] = {};
  if (!internal::cbc_mac(*aes_, std::span<const std::uint8_t>(p, 16), chain)) {
    return aes_failed();
  }
  // Q = T || 0^pad || [i] || [B]_4, a multiple of 16 bytes.
  const std::size_t pad = (16 - (t + 5) % 16) % 16;
  const std::size_t q_len = t + pad + 5;
  std::uint8_t q[kMaxTweak + 32] = {};
  if (t > 0) std::memcpy(q, tweak.data(), t);
  if (!internal::cbc_mac(*aes_, std::span<const std::uint8_t>(q, q_len - 16), chain)) {
    return aes_failed();
  }
  // The last block's bytes 11 to 15 (round number, NUM(B)) are zero here.
  for (std::size_t k = 0; k < 11; ++k) chain[k] ^= q[q_len - 16 + k];
  Tweak out;
  out.hi = load_be64(chain);
  out.lo = load_be64(chain + 8);
  return out;
}

Result<std::uint64_t> Ff1Binary63::encrypt(const Tweak& tw, std::uint64_t x) const {
  if (x >= kDomain) return Status(Code::kInvalidArgument, "FF1 input is not below 2^63");
  const internal::AesEcb::ThreadBound aes = aes_->bind();
  std::uint64_t a = x >> 32;     // 31 bits
  std::uint64_t b = x & kMaskV;  // 32 bits
  for (int i = 0; i < 10; ++i) {
    std::uint8_t block[16];
    round_block(tw, i, b, block);
    if (!aes.run(block, block, 1)) return aes_failed();
    const std::uint64_t mask = i % 2 == 0 ? kMaskU : kMaskV;
    const std::uint64_t c = (a + load_be64(block)) & mask;
    a = b;
    b = c;
  }
  return a << 32 | b;
}

Result<std::uint64_t> Ff1Binary63::decrypt(const Tweak& tw, std::uint64_t x) const {
  if (x >= kDomain) return Status(Code::kInvalidArgument, "FF1 input is not below 2^63");
  const internal::AesEcb::ThreadBound aes = aes_->bind();
  std::uint64_t a = x >> 32;
  std::uint64_t b = x & kMaskV;
  for (int i = 9; i >= 0; --i) {
    std::uint8_t block[16];
    round_block(tw, i, a, block);
    if (!aes.run(block, block, 1)) return aes_failed();
    const std::uint64_t mask = i % 2 == 0 ? kMaskU : kMaskV;
    const std::uint64_t c = (b - load_be64(block)) & mask;
    b = a;
    a = c;
  }
  return a << 32 | b;
}

Status Ff1Binary63::encrypt_many(const Tweak& tw, std::span<std::uint64_t> values) const {
  for (std::uint64_t x : values) {
    if (x >= kDomain) return Status(Code::kInvalidArgument, "FF1 input is not below 2^63");
  }
  const internal::AesEcb::ThreadBound aes = aes_->bind();
  std::uint64_t a[kChunk];
  std::uint64_t b[kChunk];
  std::uint8_t blocks[kChunk * 16];
  // Results go to a scratch copy first, so that a failure writes nothing.
  for (std::size_t base = 0; base < values.size(); base += kChunk) {
    const std::size_t n = values.size() - base < kChunk ? values.size() - base : kChunk;
    for (std::size_t k = 0; k < n; ++k) {
      a[k] = values[base + k] >> 32;
      b[k] = values[base + k] & kMaskV;
    }
    for (int i = 0; i < 10; ++i) {
      for (std::size_t k = 0; k < n; ++k) {
        round_block(tw, i, b[k], blocks + 16 * k);
      }
      if (!aes.run(blocks, blocks, n)) return aes_failed();
      const std::uint64_t mask = i % 2 == 0 ? kMaskU : kMaskV;
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint64_t c = (a[k] + load_be64(blocks + 16 * k)) & mask;
        a[k] = b[k];
        b[k] = c;
      }
    }
    for (std::size_t k = 0; k < n; ++k) values[base + k] = a[k] << 32 | b[k];
  }
  return Status::ok();
}

}  // namespace snowid
