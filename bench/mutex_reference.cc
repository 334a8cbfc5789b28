#include "mutex_reference.h"

#include "support.h"

namespace snowid::bench {

MutexReference::MutexReference(const Layout& layout)
    : epoch_ms_(layout.epoch_unix_ms()),
      time_shift_(layout.shift_of(FieldRole::kTime)),
      sequence_mask_(layout.sequence_capacity() - 1) {}

std::int64_t MutexReference::now_ms() const noexcept {
  return realtime_ns() / 1'000'000 - epoch_ms_;
}

std::uint64_t MutexReference::next() {
  std::lock_guard<std::mutex> lock(mu_);
  std::int64_t now = now_ms();
  if (now < last_ms_) now = last_ms_;  // the classic design throws here
  if (now == last_ms_) {
    sequence_ = (sequence_ + 1) & sequence_mask_;
    if (sequence_ == 0) {
      while (now <= last_ms_) now = now_ms();
    }
  } else {
    sequence_ = 0;
  }
  last_ms_ = now;
  // Worker 0: the region and host bits stay 0.
  return (static_cast<std::uint64_t>(now) << time_shift_) | sequence_;
}

}  // namespace snowid::bench
