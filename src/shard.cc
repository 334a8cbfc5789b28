#include "snowid/layout.h"

namespace snowid {

// The mapping is part of the format: the mixing constants and the reduction
// never change, or rows would move between shards.
std::uint32_t shard_of(std::uint64_t id, std::uint32_t shards) noexcept {
  // A 64-bit finalizer (xor-shift-multiply) so neighbouring ids land far apart.
  std::uint64_t x = id;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  // Multiply-shift reduction of the high 32 bits: unbiased enough and no division.
  return static_cast<std::uint32_t>(((x >> 32) * shards) >> 32);
}

}  // namespace snowid
