// first_request_timeout on the real sockets: a TCP RESP or HTTP connection
// that sends no complete first request in time is closed (and counted), one
// that has sent one is not, and the Unix socket never times out.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include "http_client.h"
#include "socket_io.h"
#include "test_support.h"

namespace snowid::daemon_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// True once the peer has closed `fd` (end of stream or reset), waiting at
// most `timeout`; what it sent before is dropped.
bool closed_by_peer(const Fd& fd, milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  std::string buf;
  bool eof = false;
  while (!eof && Clock::now() < until) (void)receive_some(fd.get(), buf, until, eof);
  return eof;
}

// The sample of `family` labelled transport="<transport>", or -1.
double by_transport(const std::string& metrics, const std::string& family,
                    const std::string& transport) {
  std::smatch m;
  const std::regex line(family + R"(\{transport=")" + transport + R"("\} ([0-9.e+]+))");
  if (!std::regex_search(metrics, m, line)) return -1;
  return std::stod(m[1].str());
}

TEST(FirstRequest, IdleTcpConnectionsAreClosedBusyOnesAndTheUnixSocketAreNot) {
  DaemonDir dir;
  auto d = dir.start_ready({"--tcp", "127.0.0.1:0", "--first-request-timeout", "1s"});
  const int http = d->http_port();
  const int tcp = d->tcp_port();
  ASSERT_GT(http, 0);
  ASSERT_GT(tcp, 0);

  Fd idle_resp = connect_tcp_loopback(tcp);
  Fd idle_http = connect_tcp_loopback(http);
  // Half a request is no request: a slow client is held to the same bound.
  Fd partial_http = connect_tcp_loopback(http);
  Fd partial_resp = connect_tcp_loopback(tcp);
  Fd idle_unix = connect_unix_socket(dir.socket());
  ASSERT_TRUE(idle_resp && idle_http && partial_http && partial_resp && idle_unix);
  ASSERT_TRUE(send_all(partial_http.get(), "GET /v1/ids HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  ASSERT_TRUE(send_all(partial_resp.get(), "*1\r\n$4\r\nPI"));

  auto busy_resp = RespConn::connect_tcp(tcp);
  ASSERT_TRUE(busy_resp.has_value());
  auto pong = busy_resp->command({"PING"});
  ASSERT_TRUE(pong.has_value());
  EXPECT_EQ(pong->debug(), "+PONG");
  auto busy_http = HttpConn::connect(http);
  ASSERT_TRUE(busy_http.has_value());
  auto first = busy_http->get("/healthz");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->status, 200);

  EXPECT_TRUE(closed_by_peer(idle_resp, milliseconds(20000)));
  EXPECT_TRUE(closed_by_peer(idle_http, milliseconds(20000)));
  EXPECT_TRUE(closed_by_peer(partial_http, milliseconds(20000)));
  EXPECT_TRUE(closed_by_peer(partial_resp, milliseconds(20000)));

  // Well past the timeout of the busy connections too: they are still served.
  std::this_thread::sleep_for(milliseconds(1500));
  auto again = busy_resp->command({"PING"});
  ASSERT_TRUE(again.has_value()) << "the busy RESP connection was closed";
  EXPECT_EQ(again->debug(), "+PONG");
  auto second = busy_http->get("/healthz");
  ASSERT_TRUE(second.has_value()) << "the busy HTTP connection was closed";
  EXPECT_EQ(second->status, 200);
  EXPECT_FALSE(closed_by_peer(idle_unix, milliseconds(10)));
  ASSERT_TRUE(send_all(idle_unix.get(), "PING\r\n"));
  std::string reply;
  bool eof = false;
  while (reply.find("\r\n") == std::string::npos && !eof) {
    if (!receive_some(idle_unix.get(), reply, Clock::now() + seconds(20), eof)) break;
  }
  EXPECT_EQ(reply, "+PONG\r\n") << "the idle Unix socket connection must not time out";

  const auto metrics = busy_http->get("/metrics");
  ASSERT_TRUE(metrics.has_value());
  const std::string family = "snowid_first_request_timeouts_total";
  EXPECT_EQ(by_transport(metrics->body, family, "tcp"), 2.0) << metrics->body;
  EXPECT_EQ(by_transport(metrics->body, family, "http"), 2.0) << metrics->body;
  EXPECT_EQ(by_transport(metrics->body, family, "unix"), 0.0) << metrics->body;
}

}  // namespace
}  // namespace snowid::daemon_test
