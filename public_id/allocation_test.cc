// Wrap and unwrap make no heap allocation once a thread has used the keys:
// operator new and libcrypto's allocator are counted around the calls.
#include <gtest/gtest.h>
#include <openssl/crypto.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "snowid/public_id.h"
#include "test_keyrings.h"

namespace {

std::atomic<long> allocations{0};

void* counted_malloc(std::size_t n, const char*, int) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n);
}
void* counted_realloc(void* p, std::size_t n, const char*, int) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::realloc(p, n);
}
void counted_free(void* p, const char*, int) { std::free(p); }

// Before anything of libcrypto runs.
const bool hooked = CRYPTO_set_mem_functions(counted_malloc, counted_realloc, counted_free) == 1;

}  // namespace

void* operator new(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace snowid {
namespace {

TEST(PublicIdAllocations, NoneInWrapUnwrapOrWrapMany) {
  ASSERT_TRUE(hooked) << "libcrypto allocated before the counting hook";
  PublicIdCodec c =
      std::move(PublicIdCodec::create(PublicIdKeyring::parse(test_keyrings::single()).value()))
          .value();
  const PublicIdType ord = c.prepare("ord").value();
  const std::uint64_t id = 4194324480;
  std::vector<std::uint64_t> ids(1024);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = id + i;
  std::vector<PublicIdText> out(ids.size());
  const std::string compact(c.wrap(ord, id)->view());
  const std::string sealed(c.wrap(ord, id, PublicIdForm::kSealed)->view());
  ASSERT_TRUE(c.unwrap(ord, sealed).is_ok());  // warm this thread's contexts

  const long before = allocations.load();
  std::uint64_t sum = 0;
  for (int i = 0; i < 1000; ++i) {
    sum += c.wrap(ord, id + static_cast<std::uint64_t>(i))->view().size();
    sum += c.wrap(ord, id, PublicIdForm::kSealed)->view().size();
    sum += c.unwrap(ord, compact)->id;
    sum += c.unwrap(ord, sealed)->id;
    sum += c.unwrap(compact)->id;
    sum += c.wrap("ord", id)->view().size();
  }
  ASSERT_TRUE(c.wrap_many(ord, ids, out).is_ok());
  const long during = allocations.load() - before;
  EXPECT_EQ(during, 0) << "allocations in 6,000 calls and a batch of 1,024";
  EXPECT_GT(sum, 0u);
  // The counter does count: a refusal allocates its message.
  EXPECT_FALSE(c.unwrap(ord, "ord_!").is_ok());
  EXPECT_GT(allocations.load() - before, 0);
}

}  // namespace
}  // namespace snowid
