// A TicketStore wrapper that injects faults into another store: a delay
// before each call (a slow database), calls refused with a given Status (a
// database that is down), or a take that commits in the inner store and
// then reports kUnavailable (a reply lost after the commit). Link
// snowid::testing. Thread-safe; the faults may be changed while calls run.
// Destroying it wakes stalled and delayed calls, but no call may still be
// inside it by then: release a stall before the store's users go away.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

#include "snowid/ticket_store.h"
#include "snowid/time.h"

namespace snowid::testing {

class FaultyTicketStore final : public TicketStore {
 public:
  // `inner` must outlive the wrapper.
  explicit FaultyTicketStore(TicketStore& inner);

  // Every later call first sleeps `delay` (real time: the fetcher thread is
  // real). Zero: no delay.
  void set_delay(Duration delay);
  // While set, every call returns `status` without reaching the inner store.
  // OK clears it.
  void set_failure(Status status);
  // The next `n` take() calls commit in the inner store, then return
  // kUnavailable as if the reply had been lost.
  void lose_replies(int n);
  // While true, calls block until set back to false (or the wrapper dies):
  // a database that hangs. Lets a test hold the fetcher mid-call.
  void set_stalled(bool stalled);

  // Calls that reached the wrapper / the inner store.
  std::uint64_t calls() const noexcept { return calls_.load(); }
  std::uint64_t inner_calls() const noexcept { return inner_calls_.load(); }

  Status migrate() override;
  Status create(std::string_view name, std::int64_t start, std::int64_t step) override;
  Result<SequenceRange> take(std::string_view name, std::int64_t size) override;
  Result<SequenceInfo> get(std::string_view name) override;
  Result<std::vector<SequenceInfo>> list() override;
  std::string_view kind() const noexcept override { return inner_.kind(); }

  ~FaultyTicketStore() override;

 private:
  // Applies the delay, the stall and the failure; OK to go on to the inner store.
  Status before_call();

  TicketStore& inner_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  Duration delay_ = Duration::zero();
  Status failure_;
  int lose_replies_ = 0;
  bool stalled_ = false;
  bool dying_ = false;
  std::atomic<std::uint64_t> calls_{0};
  std::atomic<std::uint64_t> inner_calls_{0};
};

}  // namespace snowid::testing
