// What the listeners, the connections and the drain share: the options, the
// protocols' session factory and request handler, the counters and log, the
// set of live connections and the work pool.
#pragma once

// clang-format off
// First: Boost.Asio's awaitable.hpp uses std::exchange without including it.
#include <utility>
// clang-format on

#include <atomic>
#include <boost/asio.hpp>
#include <memory>
#include <unordered_map>
#include <utility>

#include "http_request_handler.h"
#include "log.h"
#include "metrics.h"
#include "mutex.h"
#include "resp_session_factory.h"
#include "server.h"
#include "work_pool.h"

namespace snowid::daemon {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;
using error_code = boost::system::error_code;

class Connection;

// Thread-safe where marked; the rest is set before the first accept and
// read-only after.
struct ServerCore {
  ServerCore(ServerOptions o, ServerCounters& c, Logger& l)
      : options(std::move(o)), counters(c), log(l) {}

  // Any thread. The set drain() waits on.
  void add(Connection* c, std::weak_ptr<Connection> w) EXCLUDES(mu) {
    internal::MutexLock lock(mu);
    live.emplace(c, std::move(w));
  }
  void remove(Connection* c) EXCLUDES(mu) {
    internal::MutexLock lock(mu);
    live.erase(c);
    if (live.empty()) all_closed.notify_all();
  }
  // Any thread: set by stop_accepting().
  bool stopping() const noexcept { return stopping_flag.load(std::memory_order_acquire); }

  const ServerOptions options;
  // Set by serve(), before any connection is accepted.
  std::unique_ptr<const RespSessionFactory> resp_sessions;
  const HttpRequestHandler* http_handler = nullptr;
  ServerCounters& counters;
  Logger& log;
  std::atomic<bool> stopping_flag{false};

  internal::Mutex mu;
  internal::CondVar all_closed;  // notified when `live` becomes empty
  std::unordered_map<Connection*, std::weak_ptr<Connection>> live GUARDED_BY(mu);

  // Started by serve() when the RESP sessions may defer work. Closed by drain() while
  // the loops still run, so before any io_context goes.
  WorkPool pool;
};

}  // namespace snowid::daemon
