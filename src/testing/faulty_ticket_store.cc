#include "snowid/testing/faulty_ticket_store.h"

#include <algorithm>
#include <utility>

namespace snowid::testing {
namespace {

// condition_variable::wait_for computes now() + d, which overflows for a
// duration near its maximum; a day per wait is longer than any test runs.
constexpr Duration kLongestWait = std::chrono::hours(24);

}  // namespace

FaultyTicketStore::FaultyTicketStore(TicketStore& inner) : inner_(inner) {}

// Wakes calls held by a stall or a delay so that they return. The callers
// must still be gone before the wrapper's memory is: as for any object, no
// call may run while it is destroyed.
FaultyTicketStore::~FaultyTicketStore() {
  std::lock_guard<std::mutex> lock(mu_);
  dying_ = true;
  cv_.notify_all();
}

void FaultyTicketStore::set_delay(Duration delay) {
  std::lock_guard<std::mutex> lock(mu_);
  delay_ = std::max(delay, Duration::zero());
}

void FaultyTicketStore::set_failure(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  failure_ = std::move(status);
}

void FaultyTicketStore::lose_replies(int n) {
  std::lock_guard<std::mutex> lock(mu_);
  lose_replies_ = std::max(n, 0);
}

void FaultyTicketStore::set_stalled(bool stalled) {
  std::lock_guard<std::mutex> lock(mu_);
  stalled_ = stalled;
  cv_.notify_all();
}

Status FaultyTicketStore::before_call() {
  calls_.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mu_);
  // The delay is slept in slices of at most kLongestWait, without the lock,
  // and cut short when the wrapper dies.
  Duration left = delay_;
  while (left > Duration::zero() && !dying_) {
    const Duration slice = std::min(left, kLongestWait);
    const auto start = std::chrono::steady_clock::now();
    cv_.wait_for(lock, slice, [this] { return dying_; });
    left -= std::chrono::steady_clock::now() - start;
  }
  cv_.wait(lock, [this] { return !stalled_ || dying_; });
  if (dying_) return Status(Code::kUnavailable, "ticket store closing (injected)");
  return failure_;
}

Status FaultyTicketStore::migrate() {
  if (Status s = before_call(); !s.is_ok()) return s;
  inner_calls_.fetch_add(1, std::memory_order_relaxed);
  return inner_.migrate();
}

Status FaultyTicketStore::create(std::string_view name, std::int64_t start, std::int64_t step) {
  if (Status s = before_call(); !s.is_ok()) return s;
  inner_calls_.fetch_add(1, std::memory_order_relaxed);
  return inner_.create(name, start, step);
}

Result<SequenceRange> FaultyTicketStore::take(std::string_view name, std::int64_t size) {
  if (Status s = before_call(); !s.is_ok()) return s;
  inner_calls_.fetch_add(1, std::memory_order_relaxed);
  Result<SequenceRange> r = inner_.take(name, size);
  // Only a take that committed can lose its reply.
  if (!r.is_ok()) return r;
  std::lock_guard<std::mutex> lock(mu_);
  if (lose_replies_ > 0) {
    --lose_replies_;
    return Status(Code::kUnavailable, "reply lost after commit (injected)");
  }
  return r;
}

Result<SequenceInfo> FaultyTicketStore::get(std::string_view name) {
  if (Status s = before_call(); !s.is_ok()) return s;
  inner_calls_.fetch_add(1, std::memory_order_relaxed);
  return inner_.get(name);
}

Result<std::vector<SequenceInfo>> FaultyTicketStore::list() {
  if (Status s = before_call(); !s.is_ok()) return s;
  inner_calls_.fetch_add(1, std::memory_order_relaxed);
  return inner_.list();
}

}  // namespace snowid::testing
