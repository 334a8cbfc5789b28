// The listeners and the event loop over real sockets (a Unix socket in a
// temporary directory, TCP and HTTP on loopback port 0), with the request
// handling on the simulated-clock service of service_test_support.h.
#include "server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "http_handler.h"
#include "log.h"
#include "metrics.h"
#include "server_test_support.h"
#include "service_test_support.h"
#include "temp_dir.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using snowid::test_support::TempDir;
using test_support::Client;
using test_support::eventually;
using test_support::TestService;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What RESP2 replies, read line by line, hold: integer lines (ids) and
// array headers equal to `header`, up to the first other line.
struct IdScan {
  int ids = 0;
  int headers = 0;
  bool increasing = true;  // every id greater than the one before
  std::string stop;        // the first other line, without its '\n'
};

// Ids as the daemon sends them by default: "$<length>" then the digits.
IdScan scan_ids(const std::string& replies, std::string_view header = {}) {
  IdScan scan;
  std::istringstream in(replies);
  std::uint64_t last = 0;
  for (std::string line; std::getline(in, line);) {
    if (!header.empty() && line == header) {
      ++scan.headers;
      continue;
    }
    std::string digits;
    if (!line.starts_with("$") || !std::getline(in, digits) ||
        std::to_string(digits.size() - 1) + "\r" != line.substr(1)) {
      scan.stop = line;
      break;
    }
    const std::uint64_t id = std::stoull(digits);
    scan.increasing = scan.increasing && id > last;
    last = id;
    ++scan.ids;
  }
  return scan;
}

// A server on the test service, logging to a file in the temporary directory.
struct Fixture {
  TempDir dir{"snowidd-server"};
  TestService svc;
  ServerCounters counters;
  HttpHandler handler{*svc.service, [] { return std::string("# metrics\n"); }, ""};
  std::string log_path = dir.path() + "/log";
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  Logger log{log_fd, svc.clock, LogLevel::kDebug, true};
  std::unique_ptr<Server> server;

  ~Fixture() {
    server.reset();
    ::close(log_fd);
  }

  ServerOptions options() const {
    ServerOptions o;
    o.socket = dir.path() + "/run/sub/snowidd.sock";
    o.http = Address{"127.0.0.1", 0, false};
    o.tcp = Address{"127.0.0.1", 0, false};
    o.threads = 2;
    return o;
  }
  // Starts the server with `o`, or with options() if none are given.
  Status start(ServerOptions o) {
    if (!svc.service) return Status(Code::kFailedPrecondition, "the test service did not start");
    Result<std::unique_ptr<Server>> s =
        Server::start(std::move(o), make_resp_sessions(*svc.service), handler, counters, log);
    if (!s.is_ok()) return s.status();
    server = std::move(s).value();
    return Status::ok();
  }
  Status start() { return start(options()); }
};

TEST(Server, ListenersBindAndLogTheirAddresses) {
  Fixture f;
  ServerOptions o = f.options();
  o.socket_mode = 0600;
  ASSERT_TRUE(f.start(o).is_ok());
  const BoundAddresses& a = f.server->addresses();
  EXPECT_EQ(a.socket, o.socket);
  ASSERT_TRUE(a.tcp && a.http);
  EXPECT_NE(a.tcp->port, 0);
  EXPECT_NE(a.http->port, 0);
  EXPECT_NE(a.tcp->port, a.http->port);

  struct stat st {};
  ASSERT_EQ(::stat(o.socket.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((f.dir.path() + "/run/sub").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);

  const std::string log = read_file(f.log_path);
  EXPECT_NE(log.find(R"("msg":"listening","transport":"unix","address":")" + o.socket + "\""),
            std::string::npos)
      << log;
  EXPECT_NE(log.find(R"("msg":"listening","transport":"tcp","address":")" + a.tcp->to_string()),
            std::string::npos)
      << log;
  EXPECT_NE(log.find(R"("msg":"listening","transport":"http","address":")" + a.http->to_string()),
            std::string::npos)
      << log;

  f.server->stop_accepting();
  EXPECT_TRUE(f.server->drain(10s));
  EXPECT_FALSE(std::filesystem::exists(o.socket));
}

// Idle clients can hold at most max_connections descriptors: one more is
// closed at accept, and a slot that frees up is usable again.
TEST(Server, ConnectionsBeyondTheLimitAreClosedAtAccept) {
  Fixture f;
  ServerOptions o = f.options();
  o.max_connections = 2;
  ASSERT_TRUE(f.start(o).is_ok());
  const std::string& sock = f.server->addresses().socket;
  Client a = Client::unix_socket(sock);
  Client b = Client::unix_socket(sock);
  ASSERT_TRUE(a.connected() && b.connected());
  ASSERT_TRUE(a.send("PING\r\n"));
  ASSERT_EQ(a.read_lines(1), "+PONG\r\n");
  ASSERT_TRUE(b.send("PING\r\n"));
  ASSERT_EQ(b.read_lines(1), "+PONG\r\n");
  Client over = Client::tcp(f.server->addresses().tcp->port);
  ASSERT_TRUE(over.connected()) << "the kernel completes the handshake";
  EXPECT_TRUE(over.closed_by_peer());
  a.close_now();
  bool served = false;
  for (int attempt = 0; attempt < 200 && !served; ++attempt) {
    Client again = Client::unix_socket(sock);
    served = again.send("PING\r\n") && again.read_lines(1) == "+PONG\r\n";
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(served);
  EXPECT_NE(read_file(f.log_path).find("\"msg\":\"connection limit\""), std::string::npos);
}

// The default socket directory in /tmp must be this user's own: a directory
// another user made first (writable by others) is refused, not used.
TEST(Server, PrivateSocketDirectoryWritableByOthersIsRefused) {
  Fixture f;
  const std::string shared = f.dir.path() + "/shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  ServerOptions o = f.options();
  o.socket = shared + "/snowidd.sock";
  o.private_socket_dir = true;
  const Status refused = f.start(o);
  EXPECT_EQ(refused.code(), Code::kFailedPrecondition) << refused.to_string();
  ASSERT_EQ(::chmod(shared.c_str(), 0700), 0);
  EXPECT_TRUE(f.start(o).is_ok());
}

TEST(Server, StaleSocketIsReplacedButALiveOneOrAPlainFileIsNot) {
  Fixture f;
  ServerOptions o = f.options();
  o.tcp.reset();
  o.http.reset();
  std::filesystem::create_directories(f.dir.path() + "/run/sub");
  {
    // A socket file that nobody serves, as a crashed daemon leaves it.
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, o.socket.c_str(), o.socket.size() + 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::close(fd);
  }
  ASSERT_TRUE(f.start(o).is_ok());
  {
    Client c = Client::unix_socket(o.socket);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send("PING\r\n"));
    EXPECT_EQ(c.read_lines(1), "+PONG\r\n");
  }

  // A second server on the same path refuses to start and leaves it alone.
  Result<std::unique_ptr<Server>> second =
      Server::start(o, make_resp_sessions(*f.svc.service), f.handler, f.counters, f.log);
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), Code::kUnavailable);
  EXPECT_EQ(second.status().message(), "another snowidd is serving " + o.socket);
  Client still = Client::unix_socket(o.socket);
  EXPECT_TRUE(still.connected());
  f.server.reset();
  EXPECT_FALSE(std::filesystem::exists(o.socket));

  std::ofstream(o.socket) << "not a socket";
  Result<std::unique_ptr<Server>> third =
      Server::start(o, make_resp_sessions(*f.svc.service), f.handler, f.counters, f.log);
  ASSERT_FALSE(third.is_ok());
  EXPECT_EQ(third.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(read_file(o.socket), "not a socket");
}

TEST(Server, BindFailureNamesTheListener) {
  Fixture f;
  ServerOptions o = f.options();
  o.socket.clear();
  o.tcp.reset();
  ASSERT_TRUE(f.start(o).is_ok());
  ServerOptions clash = o;
  clash.http = f.server->addresses().http;
  Result<std::unique_ptr<Server>> second =
      Server::start(clash, make_resp_sessions(*f.svc.service), f.handler, f.counters, f.log);
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().message().rfind("http listener " + clash.http->to_string(), 0), 0u)
      << second.status().message();
  // A port in use is the configuration's fault (the daemon exits 2).
  EXPECT_EQ(second.status().code(), Code::kFailedPrecondition);
}

TEST(Server, PipelinedCommandsAreAnsweredInOrderWithUniqueIds) {
  Fixture f;
  ASSERT_TRUE(f.start().is_ok());
  Client c = Client::unix_socket(f.server->addresses().socket);
  ASSERT_TRUE(c.connected());
  constexpr int kCommands = 5000;  // far more than one read buffer
  std::string pipeline;
  for (int i = 0; i < kCommands; ++i) pipeline += "*1\r\n$6\r\nNEXTID\r\n";
  pipeline += "PING\r\n";
  ASSERT_TRUE(c.send(pipeline));
  const IdScan scan = scan_ids(c.read_lines(2 * kCommands + 1));
  EXPECT_TRUE(scan.increasing);
  EXPECT_EQ(scan.ids, kCommands);
  EXPECT_EQ(scan.stop, "+PONG\r");
}

// 100 pipelined NEXTIDS 10000 fit in 2.4 KB but ask for 22 MB of replies:
// the session stops at its output budget and the connection answers the
// rest as the client reads, in order, with nothing lost or repeated.
TEST(Server, PipelinedBatchesBeyondTheOutputBudgetAreAllAnsweredInOrder) {
  Fixture f;
  ASSERT_TRUE(f.start().is_ok());
  Client c = Client::unix_socket(f.server->addresses().socket);
  ASSERT_TRUE(c.connected());
  constexpr int kBatches = 100;
  std::string pipeline;
  for (int i = 0; i < kBatches; ++i) pipeline += "NEXTIDS 10000\r\n";
  pipeline += "PING\r\n";
  ASSERT_TRUE(c.send(pipeline));
  const IdScan scan = scan_ids(c.read_lines(kBatches * 20001 + 1), "*10000\r");
  EXPECT_TRUE(scan.increasing);
  EXPECT_EQ(scan.headers, kBatches);
  EXPECT_EQ(scan.ids, kBatches * 10000);
  EXPECT_EQ(scan.stop, "+PONG\r");
}

TEST(Server, TcpRespNeedsTheTokenAndTheUnixSocketDoesNot) {
  Fixture f;
  ServerOptions o = f.options();
  o.token = "s3cret";
  ASSERT_TRUE(f.start(o).is_ok());
  Client tcp = Client::tcp(f.server->addresses().tcp->port);
  ASSERT_TRUE(tcp.connected());
  ASSERT_TRUE(tcp.send("NEXTID\r\n"));
  EXPECT_EQ(tcp.read_lines(1).rfind("-NOAUTH", 0), 0u);
  ASSERT_TRUE(tcp.send("AUTH s3cret\r\nNEXTID\r\n"));
  const std::string authed = tcp.read_lines(3);
  EXPECT_EQ(authed.rfind("+OK\r\n$", 0), 0u) << authed;

  Client unix_client = Client::unix_socket(o.socket);
  ASSERT_TRUE(unix_client.send("NEXTID\r\n"));
  EXPECT_EQ(unix_client.read_lines(2).rfind("$", 0), 0u);
}

TEST(Server, QuitAndProtocolErrorsCloseTheConnection) {
  Fixture f;
  ASSERT_TRUE(f.start().is_ok());
  Client quit = Client::unix_socket(f.server->addresses().socket);
  ASSERT_TRUE(quit.send("PING\r\nQUIT\r\nPING\r\n"));
  EXPECT_EQ(quit.read_to_end(), "+PONG\r\n+OK\r\n");

  Client bad = Client::tcp(f.server->addresses().tcp->port);
  ASSERT_TRUE(bad.send("PING\r\n*1\r\n$x\r\nPING\r\n"));
  const std::string got = bad.read_to_end();
  EXPECT_EQ(got.rfind("+PONG\r\n-ERR Protocol error", 0), 0u) << got;
  EXPECT_EQ(Client::count(got, "\r\n"), 2u) << got;
  EXPECT_TRUE(eventually([&] { return f.counters.protocol_errors[1].load() == 1; }));
  EXPECT_EQ(f.counters.protocol_errors[0].load(), 0u);
  EXPECT_EQ(f.counters.connections_total[0].load(), 1u);
  EXPECT_EQ(f.counters.connections_total[1].load(), 1u);
}

TEST(Server, HttpKeepAliveHeadAndMalformedRequests) {
  Fixture f;
  ASSERT_TRUE(f.start().is_ok());
  const std::uint16_t port = f.server->addresses().http->port;

  Client c = Client::tcp(port);
  ASSERT_TRUE(
      c.send("GET /v1/ids?count=2 HTTP/1.1\r\nHost: x\r\n\r\n"
             "HEAD /v1/ids/1 HTTP/1.1\r\nHost: x\r\n\r\n"
             "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string got = c.read_to_end();  // the server closes after the third
  EXPECT_EQ(Client::count(got, "HTTP/1.1 200 OK\r\n"), 3u) << got;
  EXPECT_EQ(Client::count(got, "Server: snowidd\r\n"), 3u) << got;
  EXPECT_EQ(Client::count(got, "Connection: close\r\n"), 1u) << got;
  EXPECT_NE(got.find("{\"ids\":[\""), std::string::npos) << got;
  // The HEAD answer has the GET's Content-Length and no body: the next
  // response follows its blank line at once.
  const std::size_t head = got.find("HTTP/1.1 200 OK", got.find("{\"ids\""));
  const std::size_t next = got.find("HTTP/1.1 200 OK", head + 1);
  const std::string head_response = got.substr(head, next - head);
  EXPECT_TRUE(head_response.ends_with("\r\n\r\n")) << head_response;
  EXPECT_EQ(head_response.find("Content-Length: 0\r\n"), std::string::npos) << head_response;
  EXPECT_TRUE(got.ends_with("{\"status\":\"ok\"}")) << got;

  Client bad = Client::tcp(port);
  ASSERT_TRUE(bad.send("GET / HTTP/9.9 nonsense\r\n\r\n"));
  const std::string answer = bad.read_to_end();
  EXPECT_EQ(answer.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << answer;
  EXPECT_NE(answer.find("\"error\":\"BAD_REQUEST\""), std::string::npos) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;

  EXPECT_TRUE(eventually([&] { return f.counters.http_4xx.load() == 1; }));
  EXPECT_EQ(f.counters.http_2xx.load(), 3u);
  EXPECT_EQ(f.counters.protocol_errors[2].load(), 1u);
  EXPECT_EQ(f.counters.connections_total[2].load(), 2u);
}

TEST(Server, HttpHeaderLimitFirstRequestAndIdleTimeouts) {
  Fixture f;
  ServerOptions o = f.options();
  o.http_header_limit = 1024;
  o.http_idle_timeout = 200ms;
  o.first_request_timeout = 300ms;
  ASSERT_TRUE(f.start(o).is_ok());
  const std::uint16_t port = f.server->addresses().http->port;
  Client big = Client::tcp(port);
  ASSERT_TRUE(big.send("GET /healthz HTTP/1.1\r\nX-Big: " + std::string(2000, 'a') + "\r\n\r\n"));
  const std::string refused = big.read_to_end();
  EXPECT_EQ(refused.rfind("HTTP/1.1 431", 0), 0u) << refused;
  EXPECT_NE(refused.find("HEADERS_TOO_LARGE"), std::string::npos) << refused;

  // No first request: closed by the first-request timeout, and counted.
  Client idle = Client::tcp(port);
  ASSERT_TRUE(idle.connected());
  EXPECT_TRUE(idle.closed_by_peer());  // within the client's 10 s receive timeout
  EXPECT_TRUE(eventually([&] { return f.counters.first_request_timeouts[2].load() == 1; }));

  // After a first request: closed by the idle timeout, not counted.
  Client served = Client::tcp(port);
  ASSERT_TRUE(served.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_NE(served.read_until([](const std::string& s) { return s.ends_with("}"); }).find("200"),
            std::string::npos);
  EXPECT_TRUE(served.closed_by_peer());
  EXPECT_EQ(f.counters.first_request_timeouts[2].load(), 1u);
}

TEST(Server, TcpRespFirstRequestTimeoutSparesTheUnixSocket) {
  Fixture f;
  ServerOptions o = f.options();
  o.tcp = Address{"127.0.0.1", 0, false};
  o.first_request_timeout = 200ms;
  ASSERT_TRUE(f.start(o).is_ok());
  const BoundAddresses a = f.server->addresses();
  Client idle_unix = Client::unix_socket(a.socket);
  Client idle_tcp = Client::tcp(a.tcp->port);
  Client busy_tcp = Client::tcp(a.tcp->port);
  ASSERT_TRUE(busy_tcp.send("PING\r\n"));
  EXPECT_EQ(busy_tcp.read_lines(1), "+PONG\r\n");
  EXPECT_TRUE(idle_tcp.closed_by_peer());
  EXPECT_TRUE(eventually([&] { return f.counters.first_request_timeouts[1].load() == 1; }));
  // Both others are well past their timeout by now, and still served.
  std::this_thread::sleep_for(400ms);
  ASSERT_TRUE(busy_tcp.send("PING\r\n"));
  EXPECT_EQ(busy_tcp.read_lines(1), "+PONG\r\n");
  ASSERT_TRUE(idle_unix.send("PING\r\n"));
  EXPECT_EQ(idle_unix.read_lines(1), "+PONG\r\n");
  EXPECT_EQ(f.counters.first_request_timeouts[0].load(), 0u);
}

TEST(Server, StopClosesIdleConnectionsAndAnswersWhatWasReceived) {
  Fixture f;
  ASSERT_TRUE(f.start().is_ok());
  const BoundAddresses a = f.server->addresses();
  Client idle_resp = Client::unix_socket(a.socket);
  Client idle_http = Client::tcp(a.http->port);
  ASSERT_TRUE(idle_http.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_NE(idle_http.read_until([](const std::string& s) { return s.ends_with("}"); }).find("200"),
            std::string::npos);
  ASSERT_TRUE(idle_resp.send("PING\r\n"));
  EXPECT_EQ(idle_resp.read_lines(1), "+PONG\r\n");
  ASSERT_TRUE(eventually([&] { return f.counters.connections_open[0].load() == 1; }));

  f.server->stop_accepting();
  EXPECT_TRUE(idle_resp.closed_by_peer());
  EXPECT_TRUE(idle_http.closed_by_peer());
  EXPECT_FALSE(Client::unix_socket(a.socket).connected());
  EXPECT_FALSE(Client::tcp(a.http->port).connected());
  EXPECT_TRUE(f.server->drain(10s));
  EXPECT_EQ(f.counters.connections_open[0].load(), 0);
  EXPECT_EQ(f.counters.connections_open[2].load(), 0);
}

TEST(Server, DeadClientMidPipelineDoesNotHoldTheServer) {
  Fixture f;
  ASSERT_TRUE(f.start().is_ok());
  {
    Client dead = Client::unix_socket(f.server->addresses().socket);
    std::string pipeline;
    for (int i = 0; i < 200; ++i) pipeline += "NEXTIDS 1000\r\n";
    ASSERT_TRUE(dead.send(pipeline));
    dead.close_now();  // gone without reading megabytes of replies
  }
  Client alive = Client::unix_socket(f.server->addresses().socket);
  ASSERT_TRUE(alive.send("NEXTID\r\n"));
  EXPECT_EQ(alive.read_lines(2).rfind("$", 0), 0u);
  EXPECT_TRUE(eventually([&] { return f.counters.connections_open[0].load() == 1; }));
  f.server->stop_accepting();
  EXPECT_TRUE(f.server->drain(10s));
}

}  // namespace
}  // namespace snowid::daemon
