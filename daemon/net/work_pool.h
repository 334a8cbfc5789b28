// The threads that wait on the ticket table of the named sequences, so that
// the event loops never do. A job's last act is to post its reply back to
// its connection's loop; the pool is therefore closed (joined) while the
// loops still run.
//
// Thread-safe: post() from any thread; start(), cancel() and close() from
// the server's owner thread.
#pragma once

#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <memory>
#include <utility>

#include "mutex.h"

namespace snowid::daemon {

class WorkPool {
 public:
  // Starts `threads` threads (at least one). Once, before any post().
  void start(std::uint32_t threads);
  // True once start() has made the threads.
  bool running() const noexcept { return pool_ != nullptr; }

  // Runs `job` on the pool: false once the pool is closed, and then the job
  // has not run. Without threads (sequences off, so nothing should wait on
  // the table) the job runs here. A job must begin by checking cancelled():
  // after cancel() the queue is only emptied.
  template <typename Job>
  bool post(Job&& job) EXCLUDES(mu_) {
    {
      internal::MutexLock lock(mu_);
      if (closed_) return false;
      if (pool_) {
        boost::asio::post(*pool_, std::forward<Job>(job));
        return true;
      }
    }
    job();
    return true;
  }

  // The jobs that start from now on must answer without doing their work
  // (drain() forced the connections closed; the jobs still queued must not
  // hold the shutdown for their turn at the store).
  void cancel() noexcept { cancelled_.store(true, std::memory_order_release); }
  bool cancelled() const noexcept { return cancelled_.load(std::memory_order_acquire); }

  // Waits for the jobs already running; later post() calls return false.
  void close() EXCLUDES(mu_);

 private:
  std::unique_ptr<boost::asio::thread_pool> pool_;
  std::atomic<bool> cancelled_{false};
  internal::Mutex mu_;  // orders posting against closing
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace snowid::daemon
