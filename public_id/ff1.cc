// The general FF1, written from SP 800-38G section 5.1 with BIGNUM arithmetic.
#include "snowid/ff1.h"

#include <openssl/bn.h>

#include <cstring>
#include <string>

#include "aes_ecb.h"

namespace snowid {
namespace {

struct BnFree {
  void operator()(BIGNUM* b) const noexcept { BN_free(b); }
};
struct CtxFree {
  void operator()(BN_CTX* c) const noexcept { BN_CTX_free(c); }
};
using Bn = std::unique_ptr<BIGNUM, BnFree>;

Bn bn() { return Bn(BN_new()); }

// NUM_radix(X): the digits as a number, most significant first.
bool num(std::span<const std::uint32_t> digits, std::uint32_t radix, BIGNUM* out) {
  BN_zero(out);
  for (std::uint32_t d : digits) {
    if (BN_mul_word(out, radix) != 1 || BN_add_word(out, d) != 1) return false;
  }
  return true;
}

// STR^m_radix(x): m digits, most significant first. Destroys x.
bool str(BIGNUM* x, std::uint32_t radix, std::size_t m, std::uint32_t* out) {
  for (std::size_t i = m; i-- > 0;) {
    const BN_ULONG r = BN_div_word(x, radix);
    if (r == static_cast<BN_ULONG>(-1)) return false;
    out[i] = static_cast<std::uint32_t>(r);
  }
  return true;
}

void put_be(std::uint8_t* out, std::uint64_t v, std::size_t bytes) {
  for (std::size_t i = bytes; i-- > 0;) {
    out[i] = static_cast<std::uint8_t>(v);
    v >>= 8;
  }
}

// P = [1,2,1] [radix]_3 [10] [u mod 256] [n]_4 [t]_4
void fixed_block(std::uint32_t radix, std::size_t u, std::size_t n, std::size_t t,
                 std::uint8_t* p) {
  p[0] = 1;
  p[1] = 2;
  p[2] = 1;
  put_be(p + 3, radix, 3);
  p[6] = 10;
  p[7] = static_cast<std::uint8_t>(u % 256);
  put_be(p + 8, n, 4);
  put_be(p + 12, t, 4);
}

// Q = T || 0^((-t-b-1) mod 16) || [i]_1 || [NUM(B)]_b, with T in place; each
// round fills in its round byte and NUM(B).
std::vector<std::uint8_t> q_block(std::span<const std::uint8_t> tweak, std::size_t bbytes) {
  const std::size_t t = tweak.size();
  const std::size_t pad = (16 - (t + bbytes + 1) % 16) % 16;
  std::vector<std::uint8_t> q(t + pad + 1 + bbytes, 0);
  if (t > 0) std::memcpy(q.data(), tweak.data(), t);
  return q;
}

}  // namespace

Ff1::Ff1(std::unique_ptr<internal::AesEcb> aes, std::uint32_t radix)
    : aes_(std::move(aes)), radix_(radix) {}
Ff1::~Ff1() = default;
Ff1::Ff1(Ff1&&) noexcept = default;
Ff1& Ff1::operator=(Ff1&&) noexcept = default;

Result<Ff1> Ff1::create(std::span<const std::uint8_t> key, std::uint32_t radix) {
  if (radix < 2 || radix > 65536) {
    return Status(Code::kInvalidArgument,
                  "FF1 radix must be 2 to 65536, not " + std::to_string(radix));
  }
  Result<std::unique_ptr<internal::AesEcb>> aes = internal::AesEcb::create(key, false);
  if (!aes.is_ok()) return aes.status();
  return Ff1(std::move(aes).value(), radix);
}

Result<std::vector<std::uint32_t>> Ff1::encrypt(std::span<const std::uint32_t> numerals,
                                                std::span<const std::uint8_t> tweak) const {
  return run(numerals, tweak, true);
}

Result<std::vector<std::uint32_t>> Ff1::decrypt(std::span<const std::uint32_t> numerals,
                                                std::span<const std::uint8_t> tweak) const {
  return run(numerals, tweak, false);
}

Result<std::vector<std::uint32_t>> Ff1::run(std::span<const std::uint32_t> x,
                                            std::span<const std::uint8_t> tweak,
                                            bool encrypt) const {
  const std::size_t n = x.size();
  if (n < 2 || n > kMaxLength) {
    return Status(Code::kInvalidArgument, "FF1 length must be 2 to " + std::to_string(kMaxLength) +
                                              " numerals, not " + std::to_string(n));
  }
  for (std::uint32_t d : x) {
    if (d >= radix_) {
      return Status(
          Code::kInvalidArgument,
          "FF1 numeral " + std::to_string(d) + " is not below the radix " + std::to_string(radix_));
    }
  }
  if (tweak.size() > 0xffffffffu) return Status(Code::kInvalidArgument, "FF1 tweak too long");
  std::uint64_t domain_floor = 1;  // radix^n, or the first power at or above 10^6
  for (std::size_t i = 0; i < n && domain_floor < 1000000; ++i) domain_floor *= radix_;
  if (domain_floor < 1000000) {
    return Status(Code::kInvalidArgument, "FF1 domain radix^n = " + std::to_string(domain_floor) +
                                              " is below the minimum of 10^6");
  }
  // Halves below 2^32 (b <= 4, so d = 8 and y is one word): word arithmetic.
  std::uint64_t small_v = 1;
  for (std::size_t i = 0; i < n - n / 2 && small_v <= 0xffffffffu; ++i) small_v *= radix_;
  if (small_v <= 0xffffffffu) return run_small(x, tweak, encrypt);
  const Status no_bn(Code::kUnavailable, "libcrypto: BIGNUM arithmetic failed");
  std::unique_ptr<BN_CTX, CtxFree> ctx(BN_CTX_new());
  Bn radix_u = bn(), radix_v = bn(), a = bn(), b = bn(), y = bn(), c = bn();
  if (!ctx || !radix_u || !radix_v || !a || !b || !y || !c) return no_bn;

  const std::size_t u = n / 2;
  const std::size_t v = n - u;
  // radix^u and radix^v.
  if (BN_set_word(radix_u.get(), 1) != 1 || BN_set_word(radix_v.get(), 1) != 1) {
    return no_bn;
  }
  for (std::size_t i = 0; i < v; ++i) {
    if (i < u && BN_mul_word(radix_u.get(), radix_) != 1) return no_bn;
    if (BN_mul_word(radix_v.get(), radix_) != 1) return no_bn;
  }
  // b = ceil(ceil(v * log2(radix)) / 8): the bytes of radix^v - 1.
  if (BN_copy(c.get(), radix_v.get()) == nullptr || BN_sub_word(c.get(), 1) != 1) return no_bn;
  const std::size_t bbytes = (static_cast<std::size_t>(BN_num_bits(c.get())) + 7) / 8;
  const std::size_t d = 4 * ((bbytes + 3) / 4) + 4;
  const std::size_t t = tweak.size();

  std::uint8_t p[16];
  fixed_block(radix_, u, n, t, p);

  std::vector<std::uint8_t> q = q_block(tweak, bbytes);
  const std::size_t round_at = q.size() - 1 - bbytes;  // [i]_1, then NUM(B)
  std::vector<std::uint8_t> s((d + 15) / 16 * 16);

  std::vector<std::uint32_t> left(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(u));
  std::vector<std::uint32_t> right(x.begin() + static_cast<std::ptrdiff_t>(u), x.end());
  // Encryption keeps A (length u first) and B; decryption runs the rounds
  // backwards on the same pair.
  if (!num(left, radix_, a.get()) || !num(right, radix_, b.get())) return no_bn;

  for (int step = 0; step < 10; ++step) {
    const int i = encrypt ? step : 9 - step;
    // The half that feeds the PRF: B when encrypting, A when decrypting.
    BIGNUM* fed = encrypt ? b.get() : a.get();
    BIGNUM* mixed = encrypt ? a.get() : b.get();
    q[round_at] = static_cast<std::uint8_t>(i);
    if (BN_bn2binpad(fed, q.data() + round_at + 1, static_cast<int>(bbytes)) < 0) return no_bn;
    std::uint8_t r[16] = {};
    if (!internal::cbc_mac(*aes_, std::span<const std::uint8_t>(p, 16), r) ||
        !internal::cbc_mac(*aes_, q, r)) {
      return Status(Code::kUnavailable, "libcrypto: AES failed");
    }
    std::memcpy(s.data(), r, 16);
    for (std::size_t j = 1; j * 16 < d; ++j) {
      std::uint8_t block[16];
      std::memcpy(block, r, 16);
      std::uint64_t jj = j;
      for (int k = 15; k >= 8; --k) {
        block[k] ^= static_cast<std::uint8_t>(jj);
        jj >>= 8;
      }
      if (!aes_->run(block, s.data() + j * 16, 1)) {
        return Status(Code::kUnavailable, "libcrypto: AES failed");
      }
    }
    if (BN_bin2bn(s.data(), static_cast<int>(d), y.get()) == nullptr) return no_bn;
    const BIGNUM* modulus = i % 2 == 0 ? radix_u.get() : radix_v.get();
    const int ok = encrypt ? BN_mod_add(c.get(), mixed, y.get(), modulus, ctx.get())
                           : BN_mod_sub(c.get(), mixed, y.get(), modulus, ctx.get());
    if (ok != 1) return no_bn;
    // Encrypt: A <- B, B <- C. Decrypt: B <- A, A <- C.
    if (encrypt) {
      std::swap(a, b);
      if (BN_copy(b.get(), c.get()) == nullptr) return no_bn;
    } else {
      std::swap(a, b);
      if (BN_copy(a.get(), c.get()) == nullptr) return no_bn;
    }
  }
  std::vector<std::uint32_t> out(n);
  if (!str(a.get(), radix_, u, out.data()) || !str(b.get(), radix_, v, out.data() + u)) {
    return no_bn;
  }
  return out;
}

// The same algorithm when radix^v < 2^32: b <= 4 bytes, d = 8, so y is the
// first 8 bytes of R and every value fits a word.
Result<std::vector<std::uint32_t>> Ff1::run_small(std::span<const std::uint32_t> x,
                                                  std::span<const std::uint8_t> tweak,
                                                  bool encrypt) const {
  const std::size_t n = x.size();
  const std::size_t u = n / 2;
  const std::size_t v = n - u;
  std::uint64_t radix_u = 1, radix_v = 1;
  for (std::size_t i = 0; i < v; ++i) {
    if (i < u) radix_u *= radix_;
    radix_v *= radix_;
  }
  std::size_t bbytes = 0;
  for (std::uint64_t top = radix_v - 1; top > 0; top >>= 8) ++bbytes;
  if (bbytes == 0) bbytes = 1;  // not reached: radix^v >= 2
  const std::size_t t = tweak.size();
  std::uint8_t p[16];
  fixed_block(radix_, u, n, t, p);
  std::vector<std::uint8_t> q = q_block(tweak, bbytes);
  const std::size_t round_at = q.size() - 1 - bbytes;  // [i]_1, then NUM(B)
  std::uint64_t a = 0, b = 0;
  for (std::size_t i = 0; i < u; ++i) a = a * radix_ + x[i];
  for (std::size_t i = u; i < n; ++i) b = b * radix_ + x[i];
  for (int step = 0; step < 10; ++step) {
    const int i = encrypt ? step : 9 - step;
    q[round_at] = static_cast<std::uint8_t>(i);
    put_be(q.data() + round_at + 1, encrypt ? b : a, bbytes);
    std::uint8_t r[16] = {};
    if (!internal::cbc_mac(*aes_, std::span<const std::uint8_t>(p, 16), r) ||
        !internal::cbc_mac(*aes_, q, r)) {
      return Status(Code::kUnavailable, "libcrypto: AES failed");
    }
    std::uint64_t y = 0;
    for (int k = 0; k < 8; ++k) y = y << 8 | r[k];
    const std::uint64_t m = i % 2 == 0 ? radix_u : radix_v;
    if (encrypt) {
      const std::uint64_t c = (a + y % m) % m;
      a = b;
      b = c;
    } else {
      const std::uint64_t c = (b + m - y % m) % m;
      b = a;
      a = c;
    }
  }
  std::vector<std::uint32_t> out(n);
  for (std::size_t i = u; i-- > 0; a /= radix_) out[i] = static_cast<std::uint32_t>(a % radix_);
  for (std::size_t i = n; i-- > u; b /= radix_) out[i] = static_cast<std::uint32_t>(b % radix_);
  return out;
}

}  // namespace snowid
