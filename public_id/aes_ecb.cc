#include "aes_ecb.h"

#include <openssl/evp.h>

#include <array>
#include <atomic>
#include <climits>

namespace snowid::internal {
namespace {

std::atomic<std::uint64_t> next_serial{1};

struct ThreadContexts {
  struct Entry {
    std::uint64_t serial = 0;
    EVP_CIPHER_CTX* ctx = nullptr;
  };
  // A keyring holds at most 4 keys with 3 contexts each.
  std::array<Entry, 16> entries;
  std::size_t next_victim = 0;

  ~ThreadContexts() {
    for (Entry& e : entries) EVP_CIPHER_CTX_free(e.ctx);
  }
};

thread_local ThreadContexts contexts;

const EVP_CIPHER* cipher_for(std::size_t key_size) noexcept {
  switch (key_size) {
    case 16:
      return EVP_aes_128_ecb();
    case 24:
      return EVP_aes_192_ecb();
    case 32:
      return EVP_aes_256_ecb();
  }
  return nullptr;
}

}  // namespace

Result<std::unique_ptr<AesEcb>> AesEcb::create(std::span<const std::uint8_t> key, bool decrypt) {
  const EVP_CIPHER* cipher = cipher_for(key.size());
  if (cipher == nullptr) {
    return Status(Code::kInvalidArgument,
                  "an AES key has 16, 24 or 32 bytes, not " + std::to_string(key.size()));
  }
  std::unique_ptr<AesEcb> aes(new AesEcb());
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return Status(Code::kUnavailable, "libcrypto: no cipher context");
  aes->template_ = ctx;
  if (EVP_CipherInit_ex(ctx, cipher, nullptr, key.data(), nullptr, decrypt ? 0 : 1) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
    return Status(Code::kUnavailable, "libcrypto: AES key setup failed");
  }
  aes->decrypt_ = decrypt;
  aes->serial_ = next_serial.fetch_add(1, std::memory_order_relaxed);
  return aes;
}

AesEcb::~AesEcb() { EVP_CIPHER_CTX_free(static_cast<EVP_CIPHER_CTX*>(template_)); }

void* AesEcb::context_for_this_thread() const noexcept {
  ThreadContexts& tc = contexts;
  for (ThreadContexts::Entry& e : tc.entries) {
    if (e.serial == serial_) return e.ctx;
  }
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return nullptr;
  if (EVP_CIPHER_CTX_copy(ctx, static_cast<const EVP_CIPHER_CTX*>(template_)) != 1) {
    EVP_CIPHER_CTX_free(ctx);
    return nullptr;
  }
  ThreadContexts::Entry& victim = tc.entries[tc.next_victim];
  tc.next_victim = (tc.next_victim + 1) % tc.entries.size();
  EVP_CIPHER_CTX_free(victim.ctx);
  victim.serial = serial_;
  victim.ctx = ctx;
  return ctx;
}

bool AesEcb::run(const std::uint8_t* in, std::uint8_t* out, std::size_t blocks) const noexcept {
  return bind().run(in, out, blocks);
}

bool AesEcb::ThreadBound::run(const std::uint8_t* in, std::uint8_t* out,
                              std::size_t blocks) const noexcept {
  auto* ctx = static_cast<EVP_CIPHER_CTX*>(ctx_);
  if (ctx == nullptr) return false;
  while (blocks > 0) {
    const std::size_t chunk = blocks < INT_MAX / 16 ? blocks : INT_MAX / 16;
    // The direction's own call: EVP_CipherUpdate adds a dispatch, and
    // EVP_Cipher measured slower than both for single blocks.
    int written = 0;
    const int len = static_cast<int>(chunk * 16);
    const int ok = decrypt_ ? EVP_DecryptUpdate(ctx, out, &written, in, len)
                            : EVP_EncryptUpdate(ctx, out, &written, in, len);
    if (ok != 1 || written != len) return false;
    in += chunk * 16;
    out += chunk * 16;
    blocks -= chunk;
  }
  return true;
}

bool cbc_mac(const AesEcb& aes, std::span<const std::uint8_t> data, std::uint8_t* chain) noexcept {
  for (std::size_t at = 0; at + 16 <= data.size(); at += 16) {
    for (std::size_t i = 0; i < 16; ++i) chain[i] ^= data[at + i];
    if (!aes.run(chain, chain, 1)) return false;
  }
  return true;
}

}  // namespace snowid::internal
