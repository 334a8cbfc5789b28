// The server's pool for the named sequences over real sockets: a ticket
// table that hangs (FaultyTicketStore stalled) holds only the requests that
// wait on it, never the event loop (one loop thread here, so every
// connection shares it), replies keep the order of the requests on each
// connection, a stop waits for a reply still on the pool but not for the
// work queued behind it once the connections are forced closed, and many clients
// mixing ids and sequences on the loop and the pool never share a number.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "http_handler.h"
#include "log.h"
#include "metrics.h"
#include "sequence_test_support.h"
#include "server.h"
#include "server_test_support.h"
#include "service_test_support.h"
#include "temp_dir.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using snowid::test_support::TempDir;
using test_support::Client;
using test_support::eventually;
using test_support::TestSequences;
using test_support::TestService;

struct Fixture {
  TempDir dir{"snowidd-seq-server"};
  TestService svc;
  TestSequences seq;
  ServerCounters counters;
  HttpHandler handler{*svc.service, [] { return std::string("# metrics\n"); }, "",
                      seq.service.get()};
  int log_fd =
      ::open((dir.path() + "/log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  Logger log{log_fd, svc.clock, LogLevel::kDebug, true};
  std::unique_ptr<Server> server;

  // One loop thread: every connection is served by the same thread.
  explicit Fixture(std::uint32_t sequence_threads = 2) {
    seq.create("orders", 1001, 10);
    ServerOptions o;
    o.socket = dir.path() + "/snowidd.sock";
    o.http = Address{"127.0.0.1", 0, false};
    o.threads = 1;
    o.sequence_threads = sequence_threads;
    Result<std::unique_ptr<Server>> s = Server::start(
        std::move(o), make_resp_sessions(*svc.service, seq.service.get()), handler, counters, log);
    EXPECT_TRUE(s.is_ok()) << s.status().to_string();
    if (s.is_ok()) server = std::move(s).value();
  }
  // The pool is joined when the server goes: a hung table is released first.
  ~Fixture() {
    seq.faulty->set_stalled(false);
    server.reset();
    ::close(log_fd);
  }

  Client resp() const { return Client::unix_socket(server->addresses().socket); }
  Client http() const { return Client::tcp(server->addresses().http->port); }
};

std::string get(std::string_view target) {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: test\r\n\r\n";
}

// One HTTP response: the headers, then Content-Length bytes of body.
bool whole_response(const std::string& got) {
  const std::size_t end = got.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  const std::size_t at = got.find("Content-Length: ");
  if (at == std::string::npos || at > end) return true;
  const std::size_t length = std::strtoul(got.c_str() + at + 16, nullptr, 10);
  return got.size() >= end + 4 + length;
}

// A number as the daemon sends it by default: the digits of a bulk string.
std::uint64_t integer_of(const std::string& value) {
  EXPECT_TRUE(!value.empty() && value.find_first_not_of("0123456789") == std::string::npos)
      << value;
  return std::strtoull(value.c_str(), nullptr, 10);
}

// The replies read line by line, each bulk string's length line dropped: an
// id ("$19", then its digits) is one value, as an array header ("*3") is.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.starts_with("$") && std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
    }
    out.push_back(line);
  }
  return out;
}

TEST(ServerSequences, AHungTableHoldsNeitherTheLoopNorTheOrderOfReplies) {
  Fixture f;
  ASSERT_NE(f.server, nullptr);
  f.seq.faulty->set_stalled(true);

  // NEXTSEQ must wait (no buffer yet, and the table hangs); the NEXTID
  // after it on the same connection must wait for its reply.
  Client a = f.resp();
  ASSERT_TRUE(a.connected());
  ASSERT_TRUE(a.send("NEXTSEQ orders\r\nNEXTID\r\n"));
  ASSERT_TRUE(eventually([&] { return f.seq.faulty->calls() >= 1; })) << "reached the table";

  // Another connection on the same loop thread is served meanwhile.
  Client b = f.resp();
  ASSERT_TRUE(b.send("NEXTID\r\nPING\r\n"));
  const std::vector<std::string> from_b = lines_of(b.read_lines(3));
  ASSERT_EQ(from_b.size(), 2u);
  const std::uint64_t b_id = integer_of(from_b[0]);
  EXPECT_EQ(from_b[1], "+PONG");
  EXPECT_FALSE(a.readable_now()) << "nothing for A before its NEXTSEQ is answered";

  f.seq.faulty->set_stalled(false);
  const std::vector<std::string> from_a = lines_of(a.read_lines(4));
  ASSERT_EQ(from_a.size(), 2u);
  EXPECT_EQ(from_a[0], "1001") << "the NEXTSEQ reply first";
  EXPECT_GT(integer_of(from_a[1]), b_id) << "A's NEXTID was answered after B's";
}

TEST(ServerSequences, AHungTableHoldsOnlyTheHttpRequestThatWaitsOnIt) {
  Fixture f;
  ASSERT_NE(f.server, nullptr);
  f.seq.faulty->set_stalled(true);

  Client a = f.http();
  ASSERT_TRUE(a.connected());
  ASSERT_TRUE(a.send(get("/v1/sequences/orders/next?count=2")));
  ASSERT_TRUE(eventually([&] { return f.seq.faulty->calls() >= 1; }));

  Client b = f.http();
  ASSERT_TRUE(b.send(get("/v1/ids")));
  const std::string ids = b.read_until(whole_response);
  EXPECT_EQ(ids.rfind("HTTP/1.1 200", 0), 0u) << ids;
  Client c = f.resp();
  ASSERT_TRUE(c.send("PING\r\n"));
  EXPECT_EQ(c.read_lines(1), "+PONG\r\n");
  EXPECT_FALSE(a.readable_now());

  f.seq.faulty->set_stalled(false);
  const std::string numbers = a.read_until(whole_response);
  EXPECT_EQ(numbers.rfind("HTTP/1.1 200", 0), 0u) << numbers;
  EXPECT_NE(numbers.find(R"({"sequence":"orders","numbers":["1001","1002"]})"), std::string::npos)
      << numbers;
  // The connection is kept alive and serves the next request.
  ASSERT_TRUE(a.send(get("/v1/sequences/orders/next")));
  const std::string again = a.read_until(whole_response);
  EXPECT_NE(again.find(R"("numbers":["1003"])"), std::string::npos) << again;
}

TEST(ServerSequences, AStopWaitsForTheReplyStillOnThePool) {
  Fixture f;
  ASSERT_NE(f.server, nullptr);
  f.seq.faulty->set_stalled(true);
  Client a = f.resp();
  ASSERT_TRUE(a.send("SEQRANGE orders 5\r\n"));
  ASSERT_TRUE(eventually([&] { return f.seq.faulty->calls() >= 1; }));

  std::atomic<bool> drained{false};
  bool clean = false;
  std::thread stopper([&] {
    f.server->stop_accepting();
    clean = f.server->drain(20s);
    drained = true;
  });
  // The stop has begun once the socket file is gone.
  const std::string path = f.dir.path() + "/snowidd.sock";
  EXPECT_TRUE(eventually([&] { return !std::filesystem::exists(path); }));
  EXPECT_FALSE(drained.load());
  EXPECT_FALSE(a.readable_now());

  f.seq.faulty->set_stalled(false);
  EXPECT_EQ(a.read_to_end(), "*2\r\n$4\r\n1001\r\n$4\r\n1006\r\n") << "the reply, then the close";
  stopper.join();
  EXPECT_TRUE(clean);
}

TEST(ServerSequences, ADrainPastItsTimeoutDoesNotRunTheWorkQueuedBehindAHungTable) {
  // One pool thread: the first NEXTSEQ hangs on the table, the others queue
  // behind it. Each names its own sequence, so every job that runs opens
  // its own buffer.
  Fixture f(1);
  ASSERT_NE(f.server, nullptr);
  constexpr int kClients = 6;
  for (int i = 0; i < kClients; ++i) f.seq.create("s" + std::to_string(i), 1, 10);
  f.seq.faulty->set_stalled(true);
  std::vector<Client> clients;
  clients.push_back(f.resp());
  ASSERT_TRUE(clients[0].send("NEXTSEQ s0\r\n"));
  ASSERT_TRUE(eventually([&] { return f.seq.faulty->calls() >= 1; }));
  for (int i = 1; i < kClients; ++i) {
    clients.push_back(f.resp());
    ASSERT_TRUE(clients.back().send("NEXTSEQ s" + std::to_string(i) + "\r\n"));
  }
  // Accepted, so each request is read (at the latest by the stop) and its
  // work handed to the pool.
  ASSERT_TRUE(eventually([&] {
    return f.counters.connections_open[static_cast<std::size_t>(Transport::kUnix)].load() ==
           kClients;
  }));

  std::atomic<bool> drained{false};
  bool clean = true;
  std::thread stopper([&] {
    f.server->stop_accepting();
    clean = f.server->drain(100ms);
    drained = true;
  });
  // Forced closed at the deadline, every client sees the close, no reply.
  for (Client& c : clients) EXPECT_EQ(c.read_to_end(), "");
  EXPECT_FALSE(drained.load()) << "the job on the table is still running";
  f.seq.faulty->set_stalled(false);
  stopper.join();
  EXPECT_FALSE(clean);
  EXPECT_LE(f.seq.service->snapshot().buffers, 1u)
      << "only the job already running reached the service; the queued ones answered "
         "SHUTTING_DOWN to closed connections";
}

TEST(ServerSequences, ManyClientsMixingIdsAndSequencesNeverShareANumber) {
  Fixture f;
  ASSERT_NE(f.server, nullptr);
  // A slow table, so that requests really wait on the pool while others
  // are answered from the buffer.
  f.seq.faulty->set_delay(1ms);
  constexpr int kClients = 4;
  constexpr int kRounds = 60;
  std::mutex mu;
  std::vector<std::int64_t> numbers;
  std::vector<std::string> problems;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&] {
      Client k = f.resp();
      std::vector<std::int64_t> mine;
      std::string problem;
      for (int r = 0; r < kRounds && problem.empty(); ++r) {
        if (!k.send("NEXTSEQ orders\r\nNEXTID\r\nNEXTSEQ orders 3\r\nSEQRANGE orders 2\r\n")) {
          problem = "send failed";
          break;
        }
        // n, id, *3 a b c, *2 start end: 9 values, 7 of them bulk strings
        const std::vector<std::string> l = lines_of(k.read_lines(16));
        if (l.size() != 9 || l[2] != "*3" || l[6] != "*2") {
          problem = "unexpected replies in round " + std::to_string(r);
          break;
        }
        for (int i : {0, 3, 4, 5}) mine.push_back(static_cast<std::int64_t>(integer_of(l[i])));
        const auto start = static_cast<std::int64_t>(integer_of(l[7]));
        const auto end = static_cast<std::int64_t>(integer_of(l[8]));
        if (end - start != 2) problem = "a range of " + std::to_string(end - start);
        for (std::int64_t n = start; n < end; ++n) mine.push_back(n);
      }
      std::lock_guard<std::mutex> lock(mu);
      numbers.insert(numbers.end(), mine.begin(), mine.end());
      if (!problem.empty()) problems.push_back(problem);
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_TRUE(problems.empty()) << problems.front();
  const std::set<std::int64_t> distinct(numbers.begin(), numbers.end());
  EXPECT_EQ(distinct.size(), numbers.size());
  EXPECT_EQ(numbers.size(), std::size_t{kClients} * kRounds * 6);
}

}  // namespace
}  // namespace snowid::daemon
