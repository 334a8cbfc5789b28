// The shutdown protocol of server.h: stop_accepting(), then drain().
#include <chrono>

#include "server_impl.h"

namespace snowid::daemon {
namespace {

// After drain() forces the last connections closed, how long it waits for
// their handlers to finish before stopping the loop regardless.
constexpr Duration kForceWait = std::chrono::seconds(1);

// Waits until `core.live` is empty or `timeout` has passed: whether it is.
bool wait_all_closed(ServerCore& core, Duration timeout) REQUIRES(core.mu) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!core.live.empty()) {
    if (core.all_closed.wait_until(core.mu, until) == std::cv_status::timeout) {
      return core.live.empty();
    }
  }
  return true;
}

}  // namespace

void Server::Impl::for_each_live(void (Connection::*what)()) {
  std::vector<std::shared_ptr<Connection>> now;
  {
    internal::MutexLock lock(mu);
    for (const auto& entry : live) {
      if (std::shared_ptr<Connection> c = entry.second.lock()) now.push_back(std::move(c));
    }
  }
  for (std::shared_ptr<Connection>& c : now) {
    asio::any_io_executor ex = c->executor();
    asio::post(ex, [c = std::move(c), what] { ((*c).*what)(); });
  }
}

void Server::Impl::stop_accepting() {
  if (stopping_flag.exchange(true, std::memory_order_acq_rel)) return;
  listeners.close();
  // A connection that registers after this sees `stopping` and closes.
  for_each_live(&Connection::stop);
}

bool Server::Impl::drain(Duration timeout) {
  if (drained) return drained_cleanly;
  drained = true;
  stop_accepting();
  if (timeout < Duration::zero()) timeout = Duration::zero();
  internal::MutexLock lock(mu);
  drained_cleanly = wait_all_closed(*this, timeout);
  if (!drained_cleanly && !threads.empty()) {
    lock.unlock();
    // The jobs still queued are for connections closed now: they must not
    // hold the shutdown (and the lease) for their turn at the store.
    pool.cancel();
    for_each_live(&Connection::force_close);
    lock.lock();
    (void)wait_all_closed(*this, kForceWait);
  }
  lock.unlock();
  // The loops still run, so the replies the pool posts are delivered (to
  // closed connections, by now, which drop them). Only the jobs already
  // running are waited for; each is bounded by the store's timeouts and the
  // buffers' wait timeout.
  pool.close();
  work.clear();
  for (const std::unique_ptr<asio::io_context>& io : ios) io->stop();
  for (std::thread& t : threads) t.join();
  threads.clear();
  return drained_cleanly;
}

}  // namespace snowid::daemon
