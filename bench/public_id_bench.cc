// Public ids (docs/public-id.md) beside their references, in one run:
//   - 10 chained AES-256 blocks through EVP, the floor of one FF1 wrap
//     (a wrap is 10 dependent blocks once the tweak is absorbed);
//   - wrap and unwrap, compact and sealed, one at a time;
//   - wrap_many over 1,024 ids (ns_per_id);
//   - Botan's FPE_FE1 over the same 2^63 domain, when Botan 2 was found.
// Run: build/release/bench/snowid_public_id_bench
#include <benchmark/benchmark.h>
#include <openssl/evp.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "snowid/public_id.h"

#ifdef SNOWID_BENCH_BOTAN
#include <botan/bigint.h>
#include <botan/fpe_fe1.h>
#include <botan/symkey.h>
#endif

namespace snowid::bench {
namespace {

constexpr const char* kKeyring =
    "snowid-public-id-keys 1\n"
    "1 primary 2026-01-01T00:00:00Z k "
    "2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94\n";
constexpr std::uint64_t kFirstId = 4194324480;  // 2026-01-01T00:00:01Z

const PublicIdCodec& codec() {
  static const PublicIdCodec c = [] {
    Result<PublicIdKeyring> ring = PublicIdKeyring::parse(kKeyring);
    Result<PublicIdCodec> made = ring.is_ok() ? PublicIdCodec::create(std::move(ring).value())
                                              : Result<PublicIdCodec>(ring.status());
    if (!made.is_ok()) {
      std::fprintf(stderr, "%s\n", made.status().to_string().c_str());
      std::abort();
    }
    return std::move(made).value();
  }();
  return c;
}

const PublicIdType& ord() {
  static const PublicIdType t = codec().prepare("ord").value();
  return t;
}

// An AES-256-ECB context without padding, for the references.
struct EvpAes256 {
  EvpAes256() {
    const unsigned char key[32] = {1, 2, 3};
    EVP_EncryptInit_ex(ctx, EVP_aes_256_ecb(), nullptr, key, nullptr);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
  }
  ~EvpAes256() { EVP_CIPHER_CTX_free(ctx); }
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
};

void BM_Evp10ChainedAes256Blocks(benchmark::State& state) {
  EvpAes256 aes;
  EVP_CIPHER_CTX* ctx = aes.ctx;
  unsigned char block[16] = {};
  for (auto _ : state) {
    for (int i = 0; i < 10; ++i) {
      int n = 0;
      EVP_EncryptUpdate(ctx, block, &n, block, 16);
    }
    benchmark::DoNotOptimize(block);
  }
}
BENCHMARK(BM_Evp10ChainedAes256Blocks);

// The same through EVP_Cipher, the call the library makes.
void BM_EvpCipher10ChainedAes256Blocks(benchmark::State& state) {
  EvpAes256 aes;
  unsigned char block[16] = {};
  for (auto _ : state) {
    for (int i = 0; i < 10; ++i) EVP_Cipher(aes.ctx, block, block, 16);
    benchmark::DoNotOptimize(block);
  }
}
BENCHMARK(BM_EvpCipher10ChainedAes256Blocks);

// FF1 on a word under a fixed key, with the tweak of the type "ord".
struct Ff1Ord {
  Ff1Binary63 ff1 = std::move(Ff1Binary63::create(std::vector<std::uint8_t>(32, 7))).value();
  Ff1Binary63::Tweak tweak = [this] {
    const std::string_view t = "snowid/public-id/v1/ord";
    return ff1.absorb({reinterpret_cast<const std::uint8_t*>(t.data()), t.size()}).value();
  }();
};

// The permutation alone: FF1 on a word, without the text.
void BM_Ff1Binary63Encrypt(benchmark::State& state) {
  const Ff1Ord f;
  std::uint64_t x = kFirstId;
  for (auto _ : state) {
    x = f.ff1.encrypt(f.tweak, x).value();
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_Ff1Binary63Encrypt);

// The inverse permutation alone, what unwrap runs besides its text.
void BM_Ff1Binary63Decrypt(benchmark::State& state) {
  const Ff1Ord f;
  std::uint64_t x = kFirstId;
  for (auto _ : state) {
    x = f.ff1.decrypt(f.tweak, x).value();
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_Ff1Binary63Decrypt);

// Reading a public id's text without a key (unwrap's first step).
void BM_ParsePublicId(benchmark::State& state) {
  const PublicIdText text = codec().wrap(ord(), kFirstId).value();
  for (auto _ : state) benchmark::DoNotOptimize(parse_public_id(text.view()));
}
BENCHMARK(BM_ParsePublicId);

void BM_Wrap(benchmark::State& state, PublicIdForm form) {
  std::uint64_t id = kFirstId;
  for (auto _ : state) benchmark::DoNotOptimize(codec().wrap(ord(), id++, form));
}
BENCHMARK_CAPTURE(BM_Wrap, compact, PublicIdForm::kCompact);
BENCHMARK_CAPTURE(BM_Wrap, sealed, PublicIdForm::kSealed);

void BM_WrapNamedType(benchmark::State& state) {
  std::uint64_t id = kFirstId;
  for (auto _ : state) benchmark::DoNotOptimize(codec().wrap("ord", id++));
}
BENCHMARK(BM_WrapNamedType);

void BM_Unwrap(benchmark::State& state, PublicIdForm form) {
  std::vector<PublicIdText> texts;
  for (std::uint64_t i = 0; i < 1024; ++i)
    texts.push_back(codec().wrap(ord(), kFirstId + i, form).value());
  std::size_t i = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(codec().unwrap(ord(), texts[i++ % texts.size()].view()));
}
BENCHMARK_CAPTURE(BM_Unwrap, compact, PublicIdForm::kCompact);
BENCHMARK_CAPTURE(BM_Unwrap, sealed, PublicIdForm::kSealed);

void BM_WrapMany1024(benchmark::State& state) {
  std::vector<std::uint64_t> ids(1024);
  std::vector<PublicIdText> out(ids.size());
  std::uint64_t next = kFirstId;
  for (auto _ : state) {
    for (std::uint64_t& id : ids) id = next++;
    Status s = codec().wrap_many(ord(), ids, out);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 1024);
  state.counters["ns_per_id"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 1024,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_WrapMany1024);

#ifdef SNOWID_BENCH_BOTAN
void BM_BotanFe1(benchmark::State& state) {
  const Botan::BigInt domain = Botan::BigInt::power_of_2(63);
  Botan::FPE_FE1 fe1(domain, static_cast<std::size_t>(state.range(0)));
  const std::vector<std::uint8_t> key(32, 7);
  fe1.set_key(key);
  const std::uint8_t tweak[] = "snowid/public-id/v1/ord";
  std::uint64_t id = kFirstId;
  for (auto _ : state) {
    benchmark::DoNotOptimize(fe1.encrypt(Botan::BigInt(id++), tweak, sizeof tweak - 1));
  }
}
BENCHMARK(BM_BotanFe1)->Arg(5)->Arg(16)->Unit(benchmark::kMicrosecond);
#endif

}  // namespace
}  // namespace snowid::bench
