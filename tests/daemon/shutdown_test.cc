// SIGTERM while clients hammer the daemon: every reply is whole, the lease
// is released, the socket file removed, and a restart on the same worker id
// issues above everything issued before.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include "http_client.h"
#include "test_support.h"

namespace snowid::daemon_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct Hammer {
  std::vector<std::uint64_t> ids;
  std::vector<std::string> errors;  // error words seen (each a clean refusal)
  std::string problem;              // a torn or wrong reply, a hang
};

constexpr auto kGiveUp = seconds(60);

// NEXTIDS 100 four at a time, over and over, reconnecting after each close,
// until the daemon no longer accepts connections.
void hammer_resp(const std::function<std::optional<RespConn>()>& connect, Hammer& out,
                 std::atomic<std::uint64_t>& total) {
  const auto until = std::chrono::steady_clock::now() + kGiveUp;
  while (std::chrono::steady_clock::now() < until) {
    std::optional<RespConn> c = connect();
    if (!c) return;  // refused: the listener is gone
    const std::string pipeline =
        encode_command({"NEXTIDS", "100"}) + encode_command({"NEXTIDS", "100"}) +
        encode_command({"NEXTIDS", "100"}) + encode_command({"NEXTIDS", "100"});
    bool open = true;
    while (open && std::chrono::steady_clock::now() < until) {
      // A write may fail once the daemon closed: the replies already sent
      // are still read below.
      c->send(pipeline);
      for (int i = 0; i < 4; ++i) {
        const std::optional<RespValue> r = c->read(seconds(30));
        if (!r) {
          if (!c->closed() || c->pending_bytes() > 0 || c->malformed()) {
            out.problem = c->malformed() ? "malformed reply"
                          : c->closed()  ? "reply cut off by the close"
                                         : "no reply within 30 s";
            return;
          }
          open = false;
          break;
        }
        if (r->is_error()) {
          out.errors.push_back(r->error_word());
          continue;
        }
        const auto got = ids_of(*r);
        if (!got || got->size() != 100 || !strictly_increasing(*got)) {
          out.problem = "bad reply " + r->debug();
          return;
        }
        out.ids.insert(out.ids.end(), got->begin(), got->end());
        total.fetch_add(100, std::memory_order_relaxed);
      }
    }
  }
  out.problem = "the daemon still accepted connections after a minute";
}

void hammer_http(int port, Hammer& out, std::atomic<std::uint64_t>& total) {
  const auto until = std::chrono::steady_clock::now() + kGiveUp;
  while (std::chrono::steady_clock::now() < until) {
    std::optional<HttpConn> c = HttpConn::connect(port);
    if (!c) return;
    for (;;) {
      const std::optional<HttpReply> r = c->get("/v1/ids?count=100");
      if (!r) {
        if (!c->closed() || c->torn()) {
          out.problem = c->closed() ? "response cut off by the close" : "no response within 20 s";
          return;
        }
        break;
      }
      if (r->status != 200) {
        if (r->status != 503 || r->body.find("\"error\"") == std::string::npos) {
          out.problem = "status " + std::to_string(r->status) + ": " + r->body;
          return;
        }
        out.errors.push_back(r->body);
        continue;
      }
      const auto got = ids_of_json(r->body);
      if (!got || got->size() != 100 || !strictly_increasing(*got)) {
        out.problem = "bad body " + r->body.substr(0, 200);
        return;
      }
      out.ids.insert(out.ids.end(), got->begin(), got->end());
      total.fetch_add(100, std::memory_order_relaxed);
    }
  }
  out.problem = "the daemon still accepted connections after a minute";
}

TEST(Shutdown, SigtermWhileBusyAnswersWholeRepliesReleasesTheLeaseAndRestartsAbove) {
  DaemonDir dir;
  const std::vector<std::string> pinned = {"--host", "7", "--tcp", "127.0.0.1:0"};
  auto d = dir.start_ready(pinned);
  const auto ready = d->wait_for("ready", seconds(1));
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->value("host", 999), 7);
  const int tcp_port = d->tcp_port();
  const int http_port = d->http_port();
  ASSERT_GT(tcp_port, 0);
  ASSERT_GT(http_port, 0);
  const std::string socket = dir.socket();

  std::atomic<std::uint64_t> total{0};
  std::vector<Hammer> results(5);
  std::vector<std::thread> threads;
  threads.emplace_back(
      [&] { hammer_resp([&] { return RespConn::connect_unix(socket); }, results[0], total); });
  threads.emplace_back(
      [&] { hammer_resp([&] { return RespConn::connect_unix(socket); }, results[1], total); });
  threads.emplace_back(
      [&] { hammer_resp([&] { return RespConn::connect_tcp(tcp_port); }, results[2], total); });
  threads.emplace_back(
      [&] { hammer_resp([&] { return RespConn::connect_tcp(tcp_port); }, results[3], total); });
  threads.emplace_back([&] { hammer_http(http_port, results[4], total); });

  // Busy: wait until the clients have taken a good number of ids.
  const auto busy_until = std::chrono::steady_clock::now() + seconds(30);
  while (total.load() < 20000 && std::chrono::steady_clock::now() < busy_until) {
    std::this_thread::sleep_for(milliseconds(2));
  }
  EXPECT_GE(total.load(), 20000u) << "the clients did not get going";
  const std::size_t lines_before = d->line_count();
  d->signal(SIGTERM);
  const std::optional<int> status = d->wait_exit(seconds(30));
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(status, 0);

  std::uint64_t max_seen = 0;
  std::size_t ids_seen = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    SCOPED_TRACE("client " + std::to_string(i));
    EXPECT_EQ(results[i].problem, "");
    EXPECT_TRUE(strictly_increasing(results[i].ids));
    for (const std::string& e : results[i].errors) {
      EXPECT_NE(e.find("SHUTTING_DOWN"), std::string::npos) << e;
    }
    ids_seen += results[i].ids.size();
    if (!results[i].ids.empty()) max_seen = std::max(max_seen, results[i].ids.back());
  }
  ASSERT_GT(max_seen, 0u);

  const auto stopping = d->wait_for("stopping", seconds(1), lines_before);
  ASSERT_TRUE(stopping.has_value());
  EXPECT_TRUE(stopping->contains("signal")) << stopping->dump();
  const auto released = d->wait_for("lease released", seconds(1), lines_before);
  ASSERT_TRUE(released.has_value()) << "no \"lease released\"";
  EXPECT_EQ(released->value("host", 999), 7);
  EXPECT_TRUE(d->wait_for("stopped", seconds(1), lines_before).has_value());
  struct stat st {};
  EXPECT_NE(lstat(socket.c_str(), &st), 0) << "the socket file is still there";
  EXPECT_EQ(errno, ENOENT);

  // A restart on the same worker id and state issues above every id seen.
  auto again = dir.start_ready(pinned);
  auto c = RespConn::connect_unix(socket);
  ASSERT_TRUE(c.has_value());
  const auto next = c->command({"NEXTID"});
  ASSERT_TRUE(next.has_value());
  const auto id = ids_of(*next);
  ASSERT_TRUE(id.has_value()) << next->debug();
  EXPECT_EQ(host_of(id->front()), 7u);
  EXPECT_GT(id->front(), max_seen) << ids_seen << " ids seen before the restart";
  const auto batch = http_get(again->http_port(), "/v1/ids?count=1000");
  ASSERT_TRUE(batch.has_value());
  const auto batch_ids = ids_of_json(batch->body);
  ASSERT_TRUE(batch_ids.has_value()) << batch->body;
  EXPECT_GT(batch_ids->front(), id->front());
  again->signal(SIGTERM);
  EXPECT_EQ(again->wait_exit(seconds(30)), 0);
}

}  // namespace
}  // namespace snowid::daemon_test
