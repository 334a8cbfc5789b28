// Whether the skew monitor has fenced this host's clock and holds it: while
// held, the id service refuses to issue and the leased generator takes no
// fresh worker id (LeasedGeneratorOptions::may_acquire), so that a host whose
// clock is wrong neither issues out of place nor churns through ids. The
// monitor lets go once it finds the clock back within bounds.
//
// Thread-safe; held() is one atomic load, for the issuing path.
#pragma once

#include <atomic>
#include <string>

#include "mutex.h"
#include "snowid/status.h"

namespace snowid::daemon {

class SkewHold {
 public:
  // Holds, with a line that says why (the monitor's explanation).
  void hold(std::string reason) {
    internal::MutexLock lock(mu_);
    reason_ = std::move(reason);
    held_.store(true, std::memory_order_release);
  }
  void release() {
    internal::MutexLock lock(mu_);
    reason_.clear();
    held_.store(false, std::memory_order_release);
  }
  bool held() const noexcept { return held_.load(std::memory_order_acquire); }
  // Empty when not held.
  std::string reason() const {
    internal::MutexLock lock(mu_);
    return reason_;
  }
  // OK when not held; kUnavailable (retryable: another host can serve, or
  // this one once its clock is back) with the reason when held.
  Status status() const {
    if (!held()) return Status::ok();
    return Status(Code::kUnavailable, "held by the skew monitor: " + reason());
  }

 private:
  mutable internal::Mutex mu_;
  std::string reason_ GUARDED_BY(mu_);
  std::atomic<bool> held_{false};
};

}  // namespace snowid::daemon
