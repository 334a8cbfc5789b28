// Concurrent clients over every transport at once: no id is ever handed out
// twice, and each client's ids increase.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include "http_client.h"
#include "test_support.h"

namespace snowid::daemon_test {
namespace {

enum class Kind { kUnix, kTcp, kHttp };

struct ClientResult {
  std::vector<std::uint64_t> ids;
  std::string problem;  // empty: every reply was good
};

// 8 rounds of a 1,000-id batch and 25 single ids, pipelined on RESP.
ClientResult run_resp_client(std::optional<RespConn> c) {
  ClientResult out;
  if (!c) {
    out.problem = "cannot connect";
    return out;
  }
  for (int round = 0; round < 8; ++round) {
    std::string pipeline = encode_command({"NEXTIDS", "1000"});
    for (int i = 0; i < 25; ++i) pipeline += encode_command({"NEXTID"});
    if (!c->send(pipeline)) {
      out.problem = "write failed";
      return out;
    }
    for (int i = 0; i < 26; ++i) {
      const auto r = c->read();
      const auto ids = r ? ids_of(*r) : std::nullopt;
      if (!ids || ids->size() != (i == 0 ? 1000u : 1u)) {
        out.problem = "round " + std::to_string(round) + " reply " + std::to_string(i) + ": " +
                      (r ? r->debug() : "none");
        return out;
      }
      out.ids.insert(out.ids.end(), ids->begin(), ids->end());
    }
  }
  return out;
}

ClientResult run_http_client(int port) {
  ClientResult out;
  auto c = HttpConn::connect(port);
  if (!c) {
    out.problem = "cannot connect";
    return out;
  }
  for (int round = 0; round < 8; ++round) {
    for (int i = 0; i < 26; ++i) {
      const auto r = c->get(i == 0 ? "/v1/ids?count=1000" : "/v1/ids");
      const auto ids = r && r->status == 200 ? ids_of_json(r->body) : std::nullopt;
      if (!ids || ids->size() != (i == 0 ? 1000u : 1u)) {
        out.problem = "round " + std::to_string(round) + " request " + std::to_string(i) + ": " +
                      (r ? std::to_string(r->status) + " " + r->body.substr(0, 200) : "none");
        return out;
      }
      out.ids.insert(out.ids.end(), ids->begin(), ids->end());
    }
  }
  return out;
}

TEST(Concurrency, EightClientsOverUnixTcpAndHttpNeverShareAnId) {
  DaemonDir dir;
  auto d = dir.start_ready({"--tcp", "127.0.0.1:0"});
  const int tcp_port = d->tcp_port();
  const int http_port = d->http_port();
  ASSERT_GT(tcp_port, 0);
  ASSERT_GT(http_port, 0);

  const Kind kinds[] = {Kind::kUnix, Kind::kTcp,  Kind::kHttp, Kind::kUnix,
                        Kind::kTcp,  Kind::kHttp, Kind::kUnix, Kind::kHttp};
  std::vector<ClientResult> results(std::size(kinds));
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < std::size(kinds); ++i) {
    threads.emplace_back([&, i] {
      switch (kinds[i]) {
        case Kind::kUnix:
          results[i] = run_resp_client(RespConn::connect_unix(dir.socket()));
          break;
        case Kind::kTcp:
          results[i] = run_resp_client(RespConn::connect_tcp(tcp_port));
          break;
        case Kind::kHttp:
          results[i] = run_http_client(http_port);
          break;
      }
    });
  }
  for (std::thread& t : threads) t.join();

  std::unordered_set<std::uint64_t> all;
  std::size_t total = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    SCOPED_TRACE("client " + std::to_string(i));
    ASSERT_EQ(results[i].problem, "");
    EXPECT_EQ(results[i].ids.size(), 8u * 1025u);
    EXPECT_TRUE(strictly_increasing(results[i].ids));
    total += results[i].ids.size();
    all.insert(results[i].ids.begin(), results[i].ids.end());
  }
  EXPECT_GE(total, 50000u);
  EXPECT_EQ(all.size(), total) << total - all.size() << " ids were handed out twice";
  const std::uint64_t any = *all.begin();
  for (std::uint64_t id : all) {
    ASSERT_EQ(host_of(id), host_of(any));
    ASSERT_EQ(region_of(id), region_of(any));
  }
}

}  // namespace
}  // namespace snowid::daemon_test
