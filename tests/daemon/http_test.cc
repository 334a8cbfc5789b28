// The HTTP/1.1 service over the real port: ids, decode, keep-alive, JSON
// errors, the bearer token, probes and metrics.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "http_client.h"
#include "test_support.h"

namespace snowid::daemon_test {
namespace {

using nlohmann::json;
using std::chrono::seconds;

// Expects a JSON error with `status`, the `word`, a message and `retryable`.
::testing::AssertionResult is_json_error(const std::optional<HttpReply>& r, int status,
                                         const std::string& word, bool retryable = false) {
  if (!r) return ::testing::AssertionFailure() << "no response";
  if (r->status != status) {
    return ::testing::AssertionFailure()
           << "status " << r->status << " instead of " << status << ": " << r->body;
  }
  if (r->header("content-type").find("application/json") == std::string::npos) {
    return ::testing::AssertionFailure() << "content-type " << r->header("content-type");
  }
  const json j = json::parse(r->body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("error") || !j.contains("message") ||
      !j.contains("retryable") || !j["error"].is_string() || !j["message"].is_string() ||
      !j["retryable"].is_boolean()) {
    return ::testing::AssertionFailure() << "not a JSON error: " << r->body;
  }
  if (!word.empty() && j["error"] != word) {
    return ::testing::AssertionFailure() << "error " << j["error"] << " instead of " << word;
  }
  if (j["retryable"].get<bool>() != retryable) {
    return ::testing::AssertionFailure() << "retryable is " << j["retryable"];
  }
  return ::testing::AssertionSuccess();
}

TEST(Http, IdsComeAsIncreasingDecimalStrings) {
  DaemonDir dir;
  auto d = dir.start_ready();
  const int port = d->http_port();
  ASSERT_GT(port, 0);

  auto one = http_get(port, "/v1/ids?count=1");
  ASSERT_TRUE(one.has_value());
  ASSERT_EQ(one->status, 200) << one->body;
  EXPECT_NE(one->header("content-type").find("application/json"), std::string::npos);
  EXPECT_EQ(one->header("cache-control"), "no-store");
  const auto single = ids_of_json(one->body);
  ASSERT_TRUE(single.has_value()) << one->body;
  ASSERT_EQ(single->size(), 1u);

  auto by_default = http_get(port, "/v1/ids");
  ASSERT_TRUE(by_default.has_value());
  ASSERT_EQ(by_default->status, 200) << by_default->body;
  const auto default_ids = ids_of_json(by_default->body);
  ASSERT_TRUE(default_ids.has_value()) << by_default->body;
  ASSERT_EQ(default_ids->size(), 1u);
  EXPECT_GT(default_ids->front(), single->front());

  auto many = http_get(port, "/v1/ids?count=1000");
  ASSERT_TRUE(many.has_value());
  ASSERT_EQ(many->status, 200) << many->body.substr(0, 200);
  const auto batch = ids_of_json(many->body);
  ASSERT_TRUE(batch.has_value()) << many->body.substr(0, 200);
  ASSERT_EQ(batch->size(), 1000u);
  EXPECT_TRUE(strictly_increasing(*batch));
  EXPECT_GT(batch->front(), default_ids->front());
  // Above 2^53 the ids would lose precision as JSON numbers: hence strings.
  EXPECT_GT(batch->front(), 1ULL << 53);
  for (std::uint64_t id : *batch) {
    ASSERT_EQ(host_of(id), host_of(single->front()));
    ASSERT_EQ(region_of(id), region_of(single->front()));
  }
}

TEST(Http, DecodeGivesTheFieldsOfAnId) {
  DaemonDir dir;
  auto d = dir.start_ready({"--region", "2"});
  const int port = d->http_port();
  auto issued = http_get(port, "/v1/ids");
  ASSERT_TRUE(issued.has_value());
  const auto ids = ids_of_json(issued->body);
  ASSERT_TRUE(ids.has_value()) << issued->body;
  const std::uint64_t id = ids->front();
  EXPECT_EQ(region_of(id), 2u);

  auto decoded = http_get(port, "/v1/ids/" + std::to_string(id));
  ASSERT_TRUE(decoded.has_value());
  ASSERT_EQ(decoded->status, 200) << decoded->body;
  const json j = json::parse(decoded->body, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << decoded->body;
  EXPECT_EQ(j.value("id", ""), std::to_string(id));
  EXPECT_EQ(j.value("unix_ms", 0ULL), (id >> 22) + 1767225600000ULL);
  EXPECT_EQ(j.value("ticks", 0ULL), id >> 22);
  EXPECT_TRUE(j.contains("time") && j["time"].is_string()) << decoded->body;
  ASSERT_TRUE(j.contains("fields") && j["fields"].is_object()) << decoded->body;
  EXPECT_EQ(j["fields"].value("region", 99u), 2u);
  EXPECT_EQ(j["fields"].value("host", 999u), host_of(id));
  EXPECT_EQ(j["fields"].value("sequence", 99999u), id & 0xfff);
}

TEST(Http, KeepAliveServesManyRequestsOnOneConnection) {
  DaemonDir dir;
  auto d = dir.start_ready();
  auto c = HttpConn::connect(d->http_port());
  ASSERT_TRUE(c.has_value());
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < 500; ++i) {
    auto r = c->get(i % 5 == 4 ? "/v1/ids?count=20" : "/v1/ids");
    ASSERT_TRUE(r.has_value()) << "request " << i << " got no response";
    ASSERT_EQ(r->status, 200) << r->body;
    const auto got = ids_of_json(r->body);
    ASSERT_TRUE(got.has_value()) << r->body;
    ids.insert(ids.end(), got->begin(), got->end());
  }
  EXPECT_EQ(ids.size(), 400u + 100u * 20u);
  EXPECT_TRUE(strictly_increasing(ids));
  // Pipelined requests: answered in order on the same connection.
  ASSERT_TRUE(
      c->send_raw("GET /v1/ids?count=3 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                  "GET /v1/ids/" +
                  std::to_string(ids.back()) +
                  " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                  "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  const auto first = c->read_reply();
  ASSERT_TRUE(first.has_value());
  const auto three = ids_of_json(first->body);
  ASSERT_TRUE(three.has_value()) << first->body;
  EXPECT_EQ(three->size(), 3u);
  EXPECT_GT(three->front(), ids.back());
  const auto second = c->read_reply();
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(second->body.find("\"id\":\"" + std::to_string(ids.back()) + "\""), std::string::npos)
      << second->body;
  const auto third = c->read_reply();
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->status, 200);
  EXPECT_NE(third->body.find("ok"), std::string::npos) << third->body;

  // Errors keep the connection too.
  EXPECT_TRUE(is_json_error(c->get("/v1/ids?count=0"), 400, "INVALID_ARGUMENT"));
  auto after = c->get("/healthz");
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->status, 200);
  EXPECT_FALSE(c->closed());
}

TEST(Http, BadRequestsGetJsonErrorsWithTheirStatus) {
  DaemonDir dir;
  auto d = dir.start_ready({"--max-batch", "100"});
  const int port = d->http_port();
  EXPECT_TRUE(is_json_error(http_get(port, "/v1/ids?count=0"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(is_json_error(http_get(port, "/v1/ids?count=101"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(is_json_error(http_get(port, "/v1/ids?count=abc"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(is_json_error(http_get(port, "/v1/ids?count=-3"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(is_json_error(http_get(port, "/v1/ids?count=1&count=2"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(is_json_error(http_get(port, "/v1/ids?colour=blue"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(is_json_error(http_get(port, "/v1/ids/xyz"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(is_json_error(http_get(port, "/v1/ids/9223372036854775808"), 400, "OUT_OF_RANGE"));
  EXPECT_TRUE(is_json_error(http_get(port, "/no/such/path"), 404, ""));
  EXPECT_TRUE(is_json_error(http_get(port, "/v1"), 404, ""));
  EXPECT_TRUE(is_json_error(http_get(port, "/v1/ids/"), 404, ""));  // one spelling per resource
  EXPECT_TRUE(is_json_error(http_get(port, "/v1/ids?count=" + std::string(9000, '1')), 414, ""));

  auto c = HttpConn::connect(port);
  ASSERT_TRUE(c.has_value());
  auto post = c->request("POST", "/v1/ids", {{"Content-Length", "0"}});
  EXPECT_TRUE(is_json_error(post, 405, ""));
  ASSERT_TRUE(post.has_value());
  EXPECT_NE(post->header("allow").find("GET"), std::string::npos) << post->header("allow");
  auto del = c->request("DELETE", "/v1/ids/1");
  EXPECT_TRUE(is_json_error(del, 405, ""));

  // HEAD must not use up ids: refused on /v1/ids.
  auto head_ids = c->request("HEAD", "/v1/ids");
  ASSERT_TRUE(head_ids.has_value());
  EXPECT_EQ(head_ids->status, 405);
  EXPECT_TRUE(head_ids->body.empty());
  EXPECT_NE(head_ids->header("allow").find("GET"), std::string::npos);

  // HEAD: the headers of GET, no body.
  auto head = c->request("HEAD", "/healthz");
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
  auto ok = c->get("/v1/ids?count=100");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->status, 200) << ok->body;
}

// A body is read, never ignored: a route that takes none refuses it, and
// the connection goes on (the body was read whole).
TEST(Http, BodiesOnRoutesThatTakeNoneAreRefused) {
  DaemonDir dir;
  auto d = dir.start_ready();
  auto c = HttpConn::connect(d->http_port());
  ASSERT_TRUE(c.has_value());
  ASSERT_TRUE(
      c->send_raw("GET /v1/ids HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  "Content-Length: 11\r\n\r\n{\"count\":5}"));
  EXPECT_TRUE(is_json_error(c->read_reply(), 400, "INVALID_ARGUMENT"));
  ASSERT_TRUE(
      c->send_raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                  "2\r\nhi\r\n0\r\n\r\n"));
  EXPECT_TRUE(is_json_error(c->read_reply(), 400, "INVALID_ARGUMENT"));
  // Chunked framing with no data is a body all the same.
  ASSERT_TRUE(
      c->send_raw("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                  "0\r\n\r\n"));
  EXPECT_TRUE(is_json_error(c->read_reply(), 400, "INVALID_ARGUMENT"));
  // Content-Length: 0 is no body.
  auto ok = c->request("GET", "/v1/ids?count=2", {{"Content-Length", "0"}});
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->status, 200) << ok->body;
  const auto ids = ids_of_json(ok->body);
  ASSERT_TRUE(ids.has_value()) << ok->body;
  EXPECT_EQ(ids->size(), 2u);
}

TEST(Http, OversizedBodiesAndHeadersAndOtherVersionsAreRefusedAndTheConnectionClosed) {
  DaemonDir dir;
  auto d = dir.start_ready();
  const int port = d->http_port();
  {
    // Announced beyond the 64 KiB limit: refused before the body is sent.
    auto c = HttpConn::connect(port);
    ASSERT_TRUE(c.has_value());
    ASSERT_TRUE(
        c->send_raw("PUT /v1/sequences/big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                    "application/json\r\nContent-Length: 65537\r\n\r\n"));
    const auto r = c->read_reply();
    EXPECT_TRUE(is_json_error(r, 413, "CONTENT_TOO_LARGE"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->header("connection"), "close");
    EXPECT_FALSE(c->read_reply(false, seconds(10)).has_value());
    EXPECT_TRUE(c->closed());
  }
  {
    // Chunks that add up to more than the limit.
    auto c = HttpConn::connect(port);
    ASSERT_TRUE(c.has_value());
    std::string request =
        "PUT /v1/sequences/big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 5; ++i) request += "4000\r\n" + std::string(0x4000, ' ') + "\r\n";
    request += "0\r\n\r\n";
    ASSERT_TRUE(c->send_raw(request));
    EXPECT_TRUE(is_json_error(c->read_reply(), 413, "CONTENT_TOO_LARGE"));
  }
  {
    auto c = HttpConn::connect(port);
    ASSERT_TRUE(c.has_value());
    ASSERT_TRUE(c->send_raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " +
                            std::string(20000, 'x') + "\r\n\r\n"));
    const auto r = c->read_reply();
    EXPECT_TRUE(is_json_error(r, 431, "HEADERS_TOO_LARGE"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->header("connection"), "close");
  }
  for (const char* version : {"HTTP/2.0", "HTTP/1.2", "HTTP/0.9", "HTTP/3.0"}) {
    SCOPED_TRACE(version);
    auto c = HttpConn::connect(port);
    ASSERT_TRUE(c.has_value());
    ASSERT_TRUE(
        c->send_raw(std::string("GET /healthz ") + version + "\r\nHost: 127.0.0.1\r\n\r\n"));
    const auto r = c->read_reply();
    EXPECT_TRUE(is_json_error(r, 505, "HTTP_VERSION_NOT_SUPPORTED"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->header("connection"), "close");
  }
  // A version that is not one at all is malformed.
  for (const char* version : {"HTTP/11", "HTTP/x.y", "HTTP/1.1x"}) {
    SCOPED_TRACE(version);
    auto c = HttpConn::connect(port);
    ASSERT_TRUE(c.has_value());
    ASSERT_TRUE(
        c->send_raw(std::string("GET /healthz ") + version + "\r\nHost: 127.0.0.1\r\n\r\n"));
    EXPECT_TRUE(is_json_error(c->read_reply(), 400, "BAD_REQUEST"));
  }
  // HTTP/1.0 is still spoken.
  auto c = HttpConn::connect(port);
  ASSERT_TRUE(c.has_value());
  ASSERT_TRUE(c->send_raw("GET /healthz HTTP/1.0\r\n\r\n"));
  const auto old = c->read_reply();
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->status, 200) << old->body;
}

TEST(Http, BearerTokenIsNeededForEverythingButTheProbes) {
  DaemonDir dir;
  auto d = dir.start_ready({"--http-token", "tok-123"});
  const int port = d->http_port();
  const auto without = http_get(port, "/v1/ids");
  EXPECT_TRUE(is_json_error(without, 401, ""));
  ASSERT_TRUE(without.has_value());
  EXPECT_NE(without->header("www-authenticate").find("Bearer"), std::string::npos);
  EXPECT_TRUE(
      is_json_error(http_get(port, "/v1/ids", {{"Authorization", "Bearer wrong"}}), 401, ""));
  EXPECT_TRUE(
      is_json_error(http_get(port, "/v1/ids", {{"Authorization", "Basic dG9rLTEyMw=="}}), 401, ""));
  EXPECT_TRUE(is_json_error(http_get(port, "/metrics"), 401, ""));
  EXPECT_TRUE(is_json_error(http_get(port, "/v1/ids/1"), 401, ""));
  // Without the token the routes cannot be probed: unknown paths say 401 too.
  EXPECT_TRUE(is_json_error(http_get(port, "/no/such/path"), 401, ""));

  const auto with = http_get(port, "/v1/ids?count=3", {{"Authorization", "Bearer tok-123"}});
  ASSERT_TRUE(with.has_value());
  EXPECT_EQ(with->status, 200) << with->body;
  const auto ids = ids_of_json(with->body);
  ASSERT_TRUE(ids.has_value()) << with->body;
  EXPECT_EQ(ids->size(), 3u);
  const auto metrics = http_get(port, "/metrics", {{"Authorization", "Bearer tok-123"}});
  ASSERT_TRUE(metrics.has_value());
  EXPECT_EQ(metrics->status, 200);

  const auto healthz = http_get(port, "/healthz");
  ASSERT_TRUE(healthz.has_value());
  EXPECT_EQ(healthz->status, 200);
  const auto readyz = http_get(port, "/readyz");
  ASSERT_TRUE(readyz.has_value());
  EXPECT_EQ(readyz->status, 200);
}

TEST(Http, ProbesSayLiveAndReady) {
  DaemonDir dir;
  auto d = dir.start_ready();
  const auto healthz = http_get(d->http_port(), "/healthz");
  ASSERT_TRUE(healthz.has_value());
  EXPECT_EQ(healthz->status, 200);
  EXPECT_FALSE(json::parse(healthz->body, nullptr, false).is_discarded()) << healthz->body;
  const auto readyz = http_get(d->http_port(), "/readyz");
  ASSERT_TRUE(readyz.has_value());
  EXPECT_EQ(readyz->status, 200) << readyz->body;
  EXPECT_FALSE(json::parse(readyz->body, nullptr, false).is_discarded()) << readyz->body;
}

TEST(Http, MetricsCountEveryIdIssuedOverEveryTransport) {
  DaemonDir dir;
  auto d = dir.start_ready({"--tcp", "127.0.0.1:0"});
  const int port = d->http_port();
  std::uint64_t taken = 0;

  auto u = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(u.has_value());
  for (int i = 0; i < 3; ++i) {
    const auto r = u->command({"NEXTID"});
    ASSERT_TRUE(r && ids_of(*r));
    taken += ids_of(*r)->size();
  }
  const auto batch = u->command({"NEXTIDS", "100"});
  ASSERT_TRUE(batch && ids_of(*batch));
  taken += ids_of(*batch)->size();
  ASSERT_TRUE(u->command({"NEXTIDS", "0"}).has_value());  // refused: counts nothing

  auto t = RespConn::connect_tcp(d->tcp_port());
  ASSERT_TRUE(t.has_value());
  const auto tcp_batch = t->command({"NEXTIDS", "7"});
  ASSERT_TRUE(tcp_batch && ids_of(*tcp_batch));
  taken += ids_of(*tcp_batch)->size();

  for (const char* target : {"/v1/ids?count=1000", "/v1/ids", "/v1/ids?count=17"}) {
    const auto r = http_get(port, target);
    ASSERT_TRUE(r.has_value());
    const auto ids = ids_of_json(r->body);
    ASSERT_TRUE(ids.has_value()) << r->body;
    taken += ids->size();
  }
  ASSERT_EQ(taken, 3u + 100u + 7u + 1000u + 1u + 17u);

  const auto metrics = http_get(port, "/metrics");
  ASSERT_TRUE(metrics.has_value());
  ASSERT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->header("content-type").find("text/plain"), std::string::npos)
      << metrics->header("content-type");
  EXPECT_NE(metrics->body.find("# TYPE snowid_ids_issued_total counter"), std::string::npos)
      << metrics->body;
  const auto issued = metric_value(metrics->body, "snowid_ids_issued_total");
  ASSERT_TRUE(issued.has_value()) << metrics->body;
  EXPECT_EQ(*issued, static_cast<double>(taken)) << metrics->body;
  const auto ready = metric_value(metrics->body, "snowid_ready");
  ASSERT_TRUE(ready.has_value()) << metrics->body;
  EXPECT_EQ(*ready, 1.0);
}

}  // namespace
}  // namespace snowid::daemon_test
