// The classic Snowflake generator, kept here as a yardstick: one mutex
// around (last millisecond, sequence), the system clock read under the lock,
// and a spin to the next millisecond when the sequence runs out. It composes
// ids in the same bit layout as snowid's generator, so both do the same work
// per id and their figures can be divided.
//
// Not a product: a clock that steps back is simply waited out, and there is
// no random start, fence or health state.
#pragma once

#include <cstdint>
#include <mutex>

#include "snowid/layout.h"

namespace snowid::bench {

class MutexReference {
 public:
  // `layout` must satisfy can_generate() and have a 1 ms unit; worker 0.
  explicit MutexReference(const Layout& layout);

  // Thread-safe. Defined out of line, like Generator::next(), so that both
  // are called the same way.
  std::uint64_t next();

 private:
  std::int64_t now_ms() const noexcept;

  const std::int64_t epoch_ms_;
  const int time_shift_;
  const std::uint64_t sequence_mask_;

  std::mutex mu_;
  std::int64_t last_ms_ = -1;   // guarded by mu_
  std::uint64_t sequence_ = 0;  // guarded by mu_
};

}  // namespace snowid::bench
