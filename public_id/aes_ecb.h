// One AES key for single blocks (ECB), shared by many threads without locks.
//
// An EVP_CIPHER_CTX is not safe to use from two threads at once, so each
// thread ciphers with its own copy of a template context that is keyed once
// and never used itself. A thread's copies live in a small thread-local cache
// keyed by the AesEcb's serial number (never reused, so a destroyed key's
// entry is never matched again); the cache evicts round robin and frees what
// it evicts or holds at thread exit (EVP_CIPHER_CTX_free cleanses the key
// schedule). A thread's first block under a key allocates; later ones do not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "snowid/status.h"

namespace snowid::internal {

class AesEcb {
 public:
  // key: 16, 24 or 32 bytes. decrypt selects the direction.
  static Result<std::unique_ptr<AesEcb>> create(std::span<const std::uint8_t> key, bool decrypt);
  ~AesEcb();
  AesEcb(const AesEcb&) = delete;
  AesEcb& operator=(const AesEcb&) = delete;

  // `blocks` 16-byte blocks from in to out (which may be the same). False
  // only if libcrypto fails.
  bool run(const std::uint8_t* in, std::uint8_t* out, std::size_t blocks) const noexcept;

  // This thread's context, looked up once for several calls of run() in a
  // row on the same thread; null only if libcrypto fails.
  class ThreadBound {
   public:
    bool ok() const noexcept { return ctx_ != nullptr; }
    bool run(const std::uint8_t* in, std::uint8_t* out, std::size_t blocks) const noexcept;

   private:
    friend class AesEcb;
    ThreadBound(void* ctx, bool decrypt) noexcept : ctx_(ctx), decrypt_(decrypt) {}
    void* ctx_;
    bool decrypt_;
  };
  ThreadBound bind() const noexcept { return ThreadBound(context_for_this_thread(), decrypt_); }

 private:
  AesEcb() = default;
  void* context_for_this_thread() const noexcept;

  void* template_ = nullptr;  // EVP_CIPHER_CTX*, keyed, only ever copied
  std::uint64_t serial_ = 0;
  bool decrypt_ = false;
};

// CBC-MAC with a zero IV over `data`, whose length is a multiple of 16,
// continuing from `chain` (16 bytes, updated in place).
bool cbc_mac(const AesEcb& aes, std::span<const std::uint8_t> data, std::uint8_t* chain) noexcept;

}  // namespace snowid::internal
