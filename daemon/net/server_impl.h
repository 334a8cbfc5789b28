// Server's state: the shared core, the event loops and the listeners.
// server.cc starts them, drain.cc stops them.
#pragma once

#include <memory>
#include <thread>
#include <vector>

#include "connection.h"
#include "listeners.h"
#include "server.h"
#include "server_core.h"

namespace snowid::daemon {

struct Server::Impl : ServerCore {
  Impl(ServerOptions o, ServerCounters& c, Logger& l);
  ~Impl() { (void)drain(Duration::zero()); }

  void serve(std::unique_ptr<const RespSessionFactory> resp, const HttpRequestHandler& http);

  // drain.cc
  void stop_accepting();
  bool drain(Duration timeout);
  // Posts `what` to each live connection's executor.
  void for_each_live(void (Connection::*what)());

  bool drained = false;
  bool drained_cleanly = true;
  bool serving = false;

  // One io_context per loop thread, each run by that thread alone: a
  // connection lives on one of them (round robin at accept), so its reads,
  // commands and writes never hop between threads, and no strand or lock
  // sits on the request path. The listeners are on the first.
  // Declared after everything the connections use (ServerCore comes first):
  // the io_contexts destroy the handlers they still hold, and with them the
  // connections, before the rest goes.
  using Work = asio::executor_work_guard<asio::io_context::executor_type>;
  std::vector<std::unique_ptr<asio::io_context>> ios;
  std::vector<Work> work;
  std::size_t next_io = 0;  // used by the listeners' thread only
  // After the io_contexts, so that the acceptors go first.
  Listeners listeners;
  std::vector<std::thread> threads;
};

}  // namespace snowid::daemon
