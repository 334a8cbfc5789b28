// A bounded multi-producer queue of canary samples (Vyukov's bounded queue:
// a power-of-two ring whose slots each carry a turn number). push() never
// waits and never takes a lock: it claims a slot with one compare-and-swap,
// or fails at once when the ring is full. One consumer pops.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace snowid::canary {

struct QueuedSample {
  std::uint64_t id = 0;
  std::uint32_t region = 0;
  std::uint32_t host = 0;
};

class SampleRing {
 public:
  // `capacity` is rounded up to a power of two (at least 2).
  explicit SampleRing(std::size_t capacity)
      : mask_(std::bit_ceil(capacity < 2 ? std::size_t{2} : capacity) - 1),
        slots_(std::make_unique<Slot[]>(mask_ + 1)) {
    for (std::size_t i = 0; i <= mask_; ++i) slots_[i].turn.store(i, std::memory_order_relaxed);
  }

  std::size_t capacity() const noexcept { return mask_ + 1; }

  // False, without waiting, when the ring is full.
  bool push(const QueuedSample& sample) noexcept {
    std::size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Slot& slot = slots_[pos & mask_];
      const std::size_t turn = slot.turn.load(std::memory_order_acquire);
      const auto diff = static_cast<std::ptrdiff_t>(turn - pos);
      if (diff == 0) {
        // The slot is free for position `pos`: claim the position.
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          slot.sample = sample;
          slot.turn.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // the slot still holds the sample of a lap ago: full
      } else {
        pos = tail_.load(std::memory_order_relaxed);  // another producer took it
      }
    }
  }

  // Takes the oldest sample, if one is complete. One consumer only.
  bool pop(QueuedSample& out) noexcept {
    const std::size_t pos = head_.load(std::memory_order_relaxed);
    Slot& slot = slots_[pos & mask_];
    if (slot.turn.load(std::memory_order_acquire) != pos + 1) return false;
    out = slot.sample;
    // Free for the producer of the next lap.
    slot.turn.store(pos + mask_ + 1, std::memory_order_release);
    head_.store(pos + 1, std::memory_order_relaxed);
    return true;
  }

  // About how many samples wait (exact when no push or pop runs).
  std::size_t size() const noexcept {
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    const std::size_t head = head_.load(std::memory_order_relaxed);
    return tail >= head ? tail - head : 0;
  }

 private:
  struct Slot {
    std::atomic<std::size_t> turn{0};
    QueuedSample sample;
  };
  // Apart, so that producers and the consumer do not share a cache line.
  static constexpr std::size_t kLine = 64;

  const std::size_t mask_;
  std::unique_ptr<Slot[]> slots_;
  alignas(kLine) std::atomic<std::size_t> tail_{0};
  alignas(kLine) std::atomic<std::size_t> head_{0};
};

}  // namespace snowid::canary
