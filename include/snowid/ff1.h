// FF1 format-preserving encryption (NIST SP 800-38G, Algorithms 7 and 8) over
// AES. Part of snowid::public_id, which links OpenSSL's libcrypto;
// snowid::core does not.
//
// Both classes are immutable after create(): encrypt and decrypt are const,
// thread-safe and lock-free. Ff1Binary63 makes no heap allocation per call
// once the calling thread has used the key (each thread keeps its own cipher
// context per key; see public_id/aes_ecb.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "snowid/status.h"

namespace snowid {

namespace internal {
class AesEcb;
}

// FF1 for any radix from 2 to 2^16 and any length n with radix^n >= 10^6
// (the minimum domain of SP 800-38G Rev. 1) and n <= kMaxLength. Numerals
// are digit values (0 <= d < radix), most significant first. Keys are 16, 24
// or 32 bytes (AES-128, -192, -256). Halves below 2^32 use word arithmetic,
// longer ones OpenSSL BIGNUM; both allocate. This is the reference that
// Ff1Binary63 is tested against.
class Ff1 {
 public:
  static constexpr std::size_t kMaxLength = 4096;

  static Result<Ff1> create(std::span<const std::uint8_t> key, std::uint32_t radix);
  ~Ff1();
  Ff1(Ff1&&) noexcept;
  Ff1& operator=(Ff1&&) noexcept;

  std::uint32_t radix() const noexcept { return radix_; }
  // INVALID_ARGUMENT for a digit out of range or a length outside the domain.
  Result<std::vector<std::uint32_t>> encrypt(std::span<const std::uint32_t> numerals,
                                             std::span<const std::uint8_t> tweak) const;
  Result<std::vector<std::uint32_t>> decrypt(std::span<const std::uint32_t> numerals,
                                             std::span<const std::uint8_t> tweak) const;

 private:
  Ff1(std::unique_ptr<internal::AesEcb> aes, std::uint32_t radix);
  Result<std::vector<std::uint32_t>> run(std::span<const std::uint32_t> numerals,
                                         std::span<const std::uint8_t> tweak, bool encrypt) const;
  Result<std::vector<std::uint32_t>> run_small(std::span<const std::uint32_t> numerals,
                                               std::span<const std::uint8_t> tweak,
                                               bool encrypt) const;

  std::unique_ptr<internal::AesEcb> aes_;
  std::uint32_t radix_ = 0;
};

// FF1 with radix 2 and n = 63 on integers: the 63 numerals are the bits of
// the value, most significant first, so x and its image are both in
// [0, 2^63). This is FF1(radix 2) exactly, specialised to word arithmetic;
// a round costs one AES block once the tweak's blocks are absorbed.
class Ff1Binary63 {
 public:
  static constexpr std::uint64_t kDomain = std::uint64_t{1} << 63;
  static constexpr std::size_t kMaxTweak = 256;  // bytes; enough for any public-id type

  // The tweak's share of the PRF, absorbed once: use one per (key, tweak).
  // Round i encrypts the block hi || (lo XOR (i << 32 | NUM(B))), both words
  // big endian: the CBC-MAC state before Q's last block, XORed with that
  // block's bytes up to the round number.
  struct Tweak {
    std::uint64_t hi = 0;
    std::uint64_t lo = 0;
  };

  static Result<Ff1Binary63> create(std::span<const std::uint8_t> key);
  ~Ff1Binary63();
  Ff1Binary63(Ff1Binary63&&) noexcept;
  Ff1Binary63& operator=(Ff1Binary63&&) noexcept;

  // INVALID_ARGUMENT for a tweak longer than kMaxTweak; UNAVAILABLE if
  // libcrypto fails (it does not, short of memory on a thread's first use).
  Result<Tweak> absorb(std::span<const std::uint8_t> tweak) const;
  // x must be below kDomain (checked: INVALID_ARGUMENT).
  Result<std::uint64_t> encrypt(const Tweak& tweak, std::uint64_t x) const;
  Result<std::uint64_t> decrypt(const Tweak& tweak, std::uint64_t x) const;
  // In place, each value below kDomain (checked before any is changed);
  // several values per AES call.
  Status encrypt_many(const Tweak& tweak, std::span<std::uint64_t> values) const;

 private:
  explicit Ff1Binary63(std::unique_ptr<internal::AesEcb> aes);
  std::unique_ptr<internal::AesEcb> aes_;
};

}  // namespace snowid
