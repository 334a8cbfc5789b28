// An SNTP server in the test's own process, on a free loopback port, whose
// replies the test writes, and the reply bytes a test writes them with.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "sntp_client.h"
#include "sntp_packet.h"

namespace snowid::skew::testing {

using Bytes = std::vector<std::uint8_t>;

// A server reply to `request`: LI, stratum, reference id (the kiss code at
// stratum 0), the request's transmit as the origin, and T2, T3.
Bytes sntp_reply(const Bytes& request, int leap, int stratum, const char* refid, WallTime t2,
                 WallTime t3);

// Answers each datagram with what `answer` returns (none, one or several).
class FakeSntpServer {
 public:
  using Answer = std::function<std::vector<Bytes>(const Bytes& request, int index)>;
  explicit FakeSntpServer(Answer answer);
  ~FakeSntpServer();
  FakeSntpServer(const FakeSntpServer&) = delete;
  FakeSntpServer& operator=(const FakeSntpServer&) = delete;

  std::uint16_t port() const noexcept { return port_; }
  SntpServer address() const { return {"127.0.0.1", port_}; }
  int requests() const noexcept { return requests_.load(); }

 private:
  void serve();

  Answer answer_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

}  // namespace snowid::skew::testing
