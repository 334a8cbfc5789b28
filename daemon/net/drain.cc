// The shutdown protocol of server.h: stop_accepting(), then drain().
#include <mutex>

#include "server_impl.h"

namespace snowid::daemon {
namespace {

// After drain() forces the last connections closed, how long it waits for
// their handlers to finish before stopping the loop regardless.
constexpr Duration kForceWait = std::chrono::seconds(1);

}  // namespace

void Server::Impl::for_each_live(void (Connection::*what)()) {
  std::vector<std::shared_ptr<Connection>> now;
  {
    std::lock_guard<std::mutex> lock(mu);
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
  std::unique_lock<std::mutex> lock(mu);
  drained_cleanly = all_closed.wait_for(lock, timeout, [this] { return live.empty(); });
  if (!drained_cleanly && !threads.empty()) {
    lock.unlock();
    // The jobs still queued are for connections closed now: they must not
    // hold the shutdown (and the lease) for their turn at the store.
    pool.cancel();
    for_each_live(&Connection::force_close);
    lock.lock();
    (void)all_closed.wait_for(lock, kForceWait, [this] { return live.empty(); });
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
