#include "work_pool.h"

#include <algorithm>

namespace snowid::daemon {

void WorkPool::start(std::uint32_t threads) {
  pool_ = std::make_unique<boost::asio::thread_pool>(std::max<std::uint32_t>(threads, 1));
}

void WorkPool::close() {
  {
    internal::MutexLock lock(mu_);
    closed_ = true;
  }
  if (pool_) pool_->join();
}

}  // namespace snowid::daemon
