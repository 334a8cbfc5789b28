// HttpHandler against a real IdService (a leased generator on a simulated
// clock and the in-memory registry): routes, bounds, errors, the token, and
// readiness as the generator's state changes. parse_target on its own.
#include "http_handler.h"

#include <gtest/gtest.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "id_service.h"
#include "json_test_support.h"
#include "service_test_support.h"
#include "snowid/layout.h"
#include "snowid/time.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using test_support::eventually;
using test_support::Json;
using test_support::parse_json;
using test_support::TestService;
using test_support::valid_utf8;

std::uint64_t to_u64(std::string_view text) {
  std::uint64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  EXPECT_TRUE(r.ec == std::errc() && r.ptr == text.data() + text.size()) << text;
  return v;
}

// ----------------------------------------------------------------- fixture

constexpr std::string_view kMetricsBody = "# HELP snowid_up Test.\nsnowid_up 1\n";

std::optional<std::string> header(const HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return std::nullopt;
}

class HttpHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(ts.service, nullptr);
    handler = make_handler("");
  }

  std::unique_ptr<HttpHandler> make_handler(std::string token) {
    return std::make_unique<HttpHandler>(
        *ts.service, [] { return std::string(kMetricsBody); }, std::move(token));
  }

  HttpResponse get(std::string_view target, std::string_view method = "GET",
                   std::string_view authorization = "") const {
    return handler->handle(
        HttpRequest{.method = method, .target = target, .authorization = authorization});
  }

  // The body as JSON; fails the test (and returns an empty object) otherwise.
  static Json json(const HttpResponse& r) {
    EXPECT_EQ(r.content_type, "application/json");
    EXPECT_TRUE(valid_utf8(r.body)) << r.body;
    std::optional<Json> j = parse_json(r.body);
    EXPECT_TRUE(j.has_value()) << "not JSON: " << r.body;
    return j.value_or(Json{});
  }

  // An error response: the status, the word, retryable, and a message.
  static void expect_error(const HttpResponse& r, unsigned status, std::string_view word,
                           bool retryable) {
    EXPECT_EQ(r.status, status) << r.body;
    const Json j = json(r);
    EXPECT_EQ(j.str("error"), word) << r.body;
    EXPECT_NE(j.str("message"), "<missing>") << r.body;
    EXPECT_FALSE(j.str("message").empty()) << r.body;
    const Json* retry = j.find("retryable");
    ASSERT_NE(retry, nullptr) << r.body;
    EXPECT_EQ(retry->type, Json::Type::kBool);
    EXPECT_EQ(retry->boolean, retryable) << r.body;
    EXPECT_EQ(header(r, "Retry-After").has_value(), retryable) << r.body;
  }

  // The ids of a 200 answer from /v1/ids, checked to be decimal strings.
  static std::vector<std::uint64_t> ids_of(const HttpResponse& r) {
    EXPECT_EQ(r.status, 200u) << r.body;
    const Json j = json(r);
    std::vector<std::uint64_t> out;
    const Json* ids = j.find("ids");
    EXPECT_NE(ids, nullptr) << r.body;
    if (ids == nullptr) return out;
    EXPECT_EQ(ids->type, Json::Type::kArray);
    for (const Json& item : ids->items) {
      EXPECT_EQ(item.type, Json::Type::kString) << "ids are strings";
      out.push_back(to_u64(item.text));
    }
    return out;
  }

  TestService ts;
  std::unique_ptr<HttpHandler> handler;
};

// ------------------------------------------------------------------ /v1/ids

TEST_F(HttpHandlerTest, IdsWithoutCountGiveOneIdAsAStringThatIsNotCached) {
  const HttpResponse r = get("/v1/ids");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(header(r, "Cache-Control"), "no-store");
  const std::vector<std::uint64_t> ids = ids_of(r);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_GT(ids[0], 0u);
  EXPECT_EQ(r.body, "{\"ids\":[\"" + std::to_string(ids[0]) + "\"]}");
}

TEST_F(HttpHandlerTest, IdsCount1000GiveDistinctIncreasingIds) {
  const std::vector<std::uint64_t> ids = ids_of(get("/v1/ids?count=1000"));
  ASSERT_EQ(ids.size(), 1000u);
  for (std::size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]) << i;
  EXPECT_EQ(std::set<std::uint64_t>(ids.begin(), ids.end()).size(), 1000u);
  const std::vector<std::uint64_t> more = ids_of(get("/v1/ids?count=1000"));
  ASSERT_EQ(more.size(), 1000u);
  EXPECT_LT(ids.back(), more.front()) << "later requests get later ids";
}

TEST_F(HttpHandlerTest, IdsCountAtMaxBatchIsServedAcrossSeveralTicks) {
  // 10,000 ids need three ticks of 4,096.
  const std::vector<std::uint64_t> ids = ids_of(get("/v1/ids?count=10000"));
  ASSERT_EQ(ids.size(), 10000u);
  for (std::size_t i = 1; i < ids.size(); ++i) ASSERT_LT(ids[i - 1], ids[i]) << i;
}

TEST_F(HttpHandlerTest, IdsCountWithLeadingZerosWithinTenDigitsIsAccepted) {
  EXPECT_EQ(ids_of(get("/v1/ids?count=0010")).size(), 10u);
  EXPECT_EQ(ids_of(get("/v1/ids?count=0000000007")).size(), 7u);
  EXPECT_EQ(ids_of(get("/v1/ids?count=%33")).size(), 3u) << "escapes are decoded first";
}

TEST_F(HttpHandlerTest, IdsCountOutOfBoundsOrNotPlainDecimalIsBadRequest) {
  for (const std::string_view target :
       {"/v1/ids?count=0", "/v1/ids?count=10001", "/v1/ids?count=abc", "/v1/ids?count=-1",
        "/v1/ids?count=+1", "/v1/ids?count=%2B1", "/v1/ids?count=", "/v1/ids?count",
        "/v1/ids?count=00000000001", "/v1/ids?count=99999999999", "/v1/ids?count=4294967297",
        "/v1/ids?count=1.0", "/v1/ids?count=0x10", "/v1/ids?count=1e3", "/v1/ids?count=%201",
        "/v1/ids?count=1%20"}) {
    SCOPED_TRACE(target);
    expect_error(get(target), 400, "INVALID_ARGUMENT", false);
  }
  const Json j = json(get("/v1/ids?count=10001"));
  EXPECT_NE(j.str("message").find("10000"), std::string::npos) << "names the bound";
}

TEST_F(HttpHandlerTest, IdsBoundFollowsTheRuntimeMaxBatch) {
  ts.service->set_max_batch(5);
  EXPECT_EQ(ids_of(get("/v1/ids?count=5")).size(), 5u);
  expect_error(get("/v1/ids?count=6"), 400, "INVALID_ARGUMENT", false);
}

TEST_F(HttpHandlerTest, UnknownQueryParameterIsBadRequestNamingIt) {
  const HttpResponse r = get("/v1/ids?cnt=5");
  expect_error(r, 400, "INVALID_ARGUMENT", false);
  EXPECT_NE(json(r).str("message").find("\"cnt\""), std::string::npos) << r.body;
  expect_error(get("/v1/ids?count=2&x=1"), 400, "INVALID_ARGUMENT", false);
  expect_error(get("/v1/ids/1?count=2"), 400, "INVALID_ARGUMENT", false);
  expect_error(get("/healthz?verbose"), 400, "INVALID_ARGUMENT", false);
}

TEST_F(HttpHandlerTest, RepeatedCountIsBadRequest) {
  const HttpResponse r = get("/v1/ids?count=2&count=2");
  expect_error(r, 400, "INVALID_ARGUMENT", false);
  EXPECT_NE(json(r).str("message").find("more than once"), std::string::npos) << r.body;
}

TEST_F(HttpHandlerTest, EmptyQueryPairsAreIgnored) {
  EXPECT_EQ(ids_of(get("/v1/ids?")).size(), 1u);
  EXPECT_EQ(ids_of(get("/v1/ids?&count=2&")).size(), 2u);
}

TEST_F(HttpHandlerTest, MoreThan32QueryParametersIsBadRequest) {
  std::string target = "/v1/ids?count=1";
  for (int i = 0; i < 32; ++i) target += "&count=1";
  const HttpResponse r = get(target);
  expect_error(r, 400, "INVALID_ARGUMENT", false);
  EXPECT_NE(json(r).str("message").find("32"), std::string::npos) << r.body;
}

TEST_F(HttpHandlerTest, TargetLongerThan8KiBIsUriTooLong) {
  std::string target = "/v1/ids?count=1&pad=";
  target.resize(8 * 1024, 'x');
  {
    SCOPED_TRACE("at the limit: parsed, and the unknown parameter refused");
    expect_error(get(target), 400, "INVALID_ARGUMENT", false);
  }
  target += 'x';
  expect_error(get(target), 414, "INVALID_ARGUMENT", false);
}

// ------------------------------------------------------------- /v1/ids/{id}

TEST_F(HttpHandlerTest, DecodeOfAnIssuedIdRoundTrips) {
  const std::vector<std::uint64_t> ids = ids_of(get("/v1/ids?count=3"));
  ASSERT_EQ(ids.size(), 3u);
  const std::uint64_t id = ids[2];
  const HttpResponse r = get("/v1/ids/" + std::to_string(id));
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(header(r, "Cache-Control"), "no-store");
  const Json j = json(r);
  const DecodedId expected = Layout::snowid_default().decode(id).value();
  EXPECT_EQ(j.str("id"), std::to_string(id));
  EXPECT_EQ(j.str("layout"), Layout::snowid_default().name());
  EXPECT_EQ(j.str("time"), format_iso8601(expected.time));
  EXPECT_EQ(j.num("unix_ms"), std::to_string(unix_ms(expected.time)));
  EXPECT_EQ(j.num("ticks"), std::to_string(expected.ticks));
  const Json* fields = j.find("fields");
  ASSERT_NE(fields, nullptr) << r.body;
  const WorkerId worker = ts.generator->worker();
  EXPECT_EQ(fields->num("region"), std::to_string(worker.region));
  EXPECT_EQ(fields->num("host"), std::to_string(worker.host));
  EXPECT_EQ(fields->num("sequence"), std::to_string(expected.values[3]));
  EXPECT_EQ(fields->num("time"), std::to_string(expected.ticks));
  EXPECT_EQ(fields->members.size(), 4u);
  // The time is where the simulated clock stands.
  EXPECT_LE(expected.time, ts.clock.wall_now());
  EXPECT_GE(expected.time, test_support::service_test_start());
}

TEST_F(HttpHandlerTest, DecodeWritesTheIdAsAStringEvenAbove2To53) {
  const std::uint64_t max = Layout::snowid_default().max_id();
  const HttpResponse r = get("/v1/ids/" + std::to_string(max));
  ASSERT_EQ(r.status, 200u) << r.body;
  const Json j = json(r);
  EXPECT_EQ(j.str("id"), std::to_string(max));
  EXPECT_NE(j.num("ticks"), "<missing>") << "41-bit ticks fit a double";
  const HttpResponse small = get("/v1/ids/1");
  ASSERT_EQ(small.status, 200u) << small.body;
  EXPECT_EQ(json(small).str("id"), "1");
}

TEST_F(HttpHandlerTest, DecodeOfMalformedIdIsBadRequest) {
  for (const std::string_view target : {"/v1/ids/abc", "/v1/ids/-1", "/v1/ids/+1", "/v1/ids/1x",
                                        "/v1/ids/%201", "/v1/ids/123456789012345678901"}) {
    SCOPED_TRACE(target);
    expect_error(get(target), 400, "INVALID_ARGUMENT", false);
  }
}

TEST_F(HttpHandlerTest, DecodeOfIdBeyondTheLayoutIsBadRequest) {
  // Above 2^64-1, or using the sign bit the 63-bit layout leaves clear. The
  // service may call that INVALID_ARGUMENT or OUT_OF_RANGE; both are 400.
  for (const std::string_view target :
       {"/v1/ids/18446744073709551616", "/v1/ids/9223372036854775808"}) {
    SCOPED_TRACE(target);
    const HttpResponse r = get(target);
    const std::string word = json(r).str("error");
    EXPECT_TRUE(word == "INVALID_ARGUMENT" || word == "OUT_OF_RANGE") << r.body;
    expect_error(r, 400, word, false);
  }
}

// ------------------------------------------------------- paths and methods

TEST_F(HttpHandlerTest, UnknownPathsAndTrailingSlashesAreNotFound) {
  for (const std::string_view target :
       {"/", "/v1", "/v1/", "/v1/ids/", "/v1/ids//", "/v1/ids/1/", "/v1/ids/1/2", "/V1/IDS",
        "/v1/idsx", "/healthz/", "/readyz/", "/metrics/", "/v2/ids", "/v1/./ids"}) {
    SCOPED_TRACE(target);
    expect_error(get(target), 404, "NOT_FOUND", false);
  }
}

TEST_F(HttpHandlerTest, EscapedPathsAreDecodedBeforeRouting) {
  EXPECT_EQ(get("/%68ealthz").status, 200u);
  EXPECT_EQ(ids_of(get("/v1/%69ds?%63ount=2")).size(), 2u);
}

TEST_F(HttpHandlerTest, MalformedTargetIsBadRequest) {
  for (const std::string_view target :
       {"", "v1/ids", "*", "http://localhost/v1/ids", "/v1/ids?count=%", "/v1/ids?count=%4",
        "/v1/ids?count=%zz", "/v1/ids#frag", "/v1/ids?count=1#frag", "/v1/ids%00",
        "/v1/ids?count=1%00", "/v1/ids%2F1", "/v1/ids?count=1 2", "/v1/ids\x7f"}) {
    SCOPED_TRACE(target);
    expect_error(get(target), 400, "INVALID_ARGUMENT", false);
  }
}

TEST_F(HttpHandlerTest, OtherMethodsAreNotAllowedWithAllowHeader) {
  for (const std::string_view method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get", ""}) {
    SCOPED_TRACE(method);
    for (const std::string_view target : {"/v1/ids", "/v1/ids/1", "/healthz", "/metrics"}) {
      const HttpResponse r = get(target, method);
      expect_error(r, 405, "METHOD_NOT_ALLOWED", false);
      // /v1/ids refuses HEAD too (it would issue ids), so its Allow is GET.
      EXPECT_EQ(header(r, "Allow"), target == "/v1/ids" ? "GET" : "GET, HEAD");
    }
  }
  SCOPED_TRACE("no resource, no method to check");
  expect_error(get("/nowhere", "POST"), 404, "NOT_FOUND", false);
}

TEST_F(HttpHandlerTest, HeadIsAnsweredAsGetWithTheBodyForTheServerToDrop) {
  const HttpResponse g = get("/healthz");
  const HttpResponse h = get("/healthz", "HEAD");
  EXPECT_EQ(h.status, g.status);
  EXPECT_EQ(h.content_type, g.content_type);
  EXPECT_EQ(h.headers, g.headers);
  EXPECT_EQ(h.body, g.body);
}

TEST_F(HttpHandlerTest, HeadOnIdsIsRefusedWithoutUsingUpIds) {
  const std::uint64_t before = ts.service->snapshot().counters.ids_issued;
  const HttpResponse h = get("/v1/ids?count=1000", "HEAD");
  EXPECT_EQ(h.status, 405u);
  EXPECT_EQ(header(h, "Allow"), "GET");
  EXPECT_EQ(ts.service->snapshot().counters.ids_issued, before);
  EXPECT_EQ(ts.service->snapshot().counters.batch_requests, 0u);
}

TEST_F(HttpHandlerTest, ABodyOnARouteThatReadsNoneIsRefusedNotIgnored) {
  for (const std::string_view target :
       {"/v1/ids?count=3", "/v1/ids/1", "/healthz", "/readyz", "/metrics"}) {
    SCOPED_TRACE(target);
    HttpRequest request{.method = "GET", .target = target};
    request.content_type = "application/json";
    request.body = R"({"count":5})";
    request.has_body = true;
    const std::uint64_t before = ts.service->snapshot().counters.ids_issued;
    expect_error(handler->handle(request), 400, "INVALID_ARGUMENT", false);
    EXPECT_EQ(ts.service->snapshot().counters.ids_issued, before);
    // Chunked framing that carried nothing is a body too.
    request.body = "";
    expect_error(handler->handle(request), 400, "INVALID_ARGUMENT", false);
  }
  SCOPED_TRACE("the token is checked first: without it, 401");
  handler = make_handler("tok");
  HttpRequest request{.method = "GET", .target = "/v1/ids"};
  request.has_body = true;
  expect_error(handler->handle(request), 401, "UNAUTHENTICATED", false);
}

TEST(JsonMediaType, ApplicationJsonWithUtf8OrNoCharsetOnly) {
  for (const std::string_view yes :
       {"application/json", "Application/JSON", " application/json ", "application/json;",
        "application/json; charset=utf-8", "application/json;charset=\"UTF-8\"",
        "application/json; version=2; charset=utf-8"}) {
    EXPECT_TRUE(is_json_media_type(yes)) << yes;
  }
  for (const std::string_view no :
       {"", "text/plain", "application/jsonx", "application/x-json", "text/json",
        "application/json; charset=latin1", "application/json; charset=", "application/json; x",
        "application/problem+json", "json"}) {
    EXPECT_FALSE(is_json_media_type(no)) << no;
  }
}

TEST_F(HttpHandlerTest, OneIdIsCountedAsASingleRequest) {
  ASSERT_EQ(ids_of(get("/v1/ids")).size(), 1u);
  ASSERT_EQ(ids_of(get("/v1/ids?count=1")).size(), 1u);
  ASSERT_EQ(ids_of(get("/v1/ids?count=2")).size(), 2u);
  const ServiceCounters c = ts.service->snapshot().counters;
  EXPECT_EQ(c.single_requests, 2u);
  EXPECT_EQ(c.batch_requests, 1u);
  EXPECT_EQ(c.ids_issued, 4u);
}

// ----------------------------------------------------------------- probes

TEST_F(HttpHandlerTest, HealthzIsOk) {
  const HttpResponse r = get("/healthz");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "{\"status\":\"ok\"}");
}

TEST_F(HttpHandlerTest, ReadyzShowsTheWorkerAndTheHeldLease) {
  const HttpResponse r = get("/readyz");
  ASSERT_EQ(r.status, 200u) << r.body;
  const Json j = json(r);
  EXPECT_EQ(j.str("status"), "ready");
  EXPECT_EQ(j.str("lease"), "held");
  const Json* worker = j.find("worker");
  ASSERT_NE(worker, nullptr) << r.body;
  EXPECT_EQ(worker->num("region"), "1");
  EXPECT_EQ(worker->num("host"), std::to_string(ts.generator->worker().host));
}

TEST_F(HttpHandlerTest, MetricsUsePrometheusTextFromTheMetricsFunction) {
  const HttpResponse r = get("/metrics");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r.body, kMetricsBody);
}

// ------------------------------------------------------------------ token

TEST_F(HttpHandlerTest, WithoutATokenConfiguredNoAuthorizationIsNeeded) {
  EXPECT_EQ(get("/v1/ids").status, 200u);
  EXPECT_EQ(get("/v1/ids", "GET", "Bearer whatever").status, 200u);
}

TEST_F(HttpHandlerTest, TokenGuardsEveryRouteButTheProbes) {
  handler = make_handler("s3cret-token");
  for (const std::string_view target : {"/v1/ids", "/v1/ids/1", "/metrics", "/nowhere"}) {
    SCOPED_TRACE(target);
    for (const std::string_view auth :
         {"", "Bearer", "Bearer ", "Bearer s3cret", "Bearer s3cret-token2", "Bearer S3CRET-TOKEN",
          "Basic s3cret-token", "Bearers3cret-token", "s3cret-token", "Bearer s3cret-token x"}) {
      SCOPED_TRACE(auth);
      const HttpResponse r = get(target, "GET", auth);
      expect_error(r, 401, "UNAUTHENTICATED", false);
      EXPECT_EQ(header(r, "WWW-Authenticate"), "Bearer realm=\"snowid\"");
    }
  }
  EXPECT_EQ(get("/healthz").status, 200u);
  EXPECT_EQ(get("/readyz").status, 200u);
  EXPECT_EQ(get("/healthz", "GET", "Bearer wrong").status, 200u);
}

TEST_F(HttpHandlerTest, TokenIsAcceptedWithTheSchemeInAnyCase) {
  handler = make_handler("s3cret-token");
  for (const std::string_view auth : {"Bearer s3cret-token", "bearer s3cret-token",
                                      "BEARER s3cret-token", "Bearer   s3cret-token  "}) {
    SCOPED_TRACE(auth);
    EXPECT_EQ(ids_of(get("/v1/ids", "GET", auth)).size(), 1u);
  }
  EXPECT_EQ(get("/metrics", "GET", "Bearer s3cret-token").status, 200u);
  EXPECT_EQ(get("/nowhere", "GET", "Bearer s3cret-token").status, 404u);
}

// --------------------------------------------------------------- refusals

TEST_F(HttpHandlerTest, ClockSteppedBackTwoSecondsRefusesWithoutRetryAfterAndTurnsUnready) {
  ASSERT_EQ(ids_of(get("/v1/ids")).size(), 1u);
  ts.clock.step_wall(-2s);
  const HttpResponse r = get("/v1/ids?count=5");
  expect_error(r, 503, "CLOCK_MOVED_BACK", false);
  const HttpResponse ready = get("/readyz");
  EXPECT_EQ(ready.status, 503u) << ready.body;
  const Json j = json(ready);
  EXPECT_EQ(j.str("status"), "not ready");
  EXPECT_FALSE(j.str("reason").empty());
  EXPECT_NE(j.str("reason"), "<missing>");
  // Unhealthy until restarted: the liveness probe must see it, or an
  // orchestrator would keep an unready sidecar forever.
  expect_error(get("/healthz"), 503, "CLOCK_MOVED_BACK", false);
  expect_error(get("/v1/ids"), 503, "UNHEALTHY", false);
}

TEST_F(HttpHandlerTest, LeaseUncertainRefusalCarriesRetryAfter) {
  // Renewals fail from now on; once past the stop deadline (8 s after the
  // last renewal) the guard refuses, and keeps refusing while the registry
  // cannot be reached to replace the lease.
  ts.registry.set_unavailable(true);
  ts.clock.advance(9s);
  HttpResponse r;
  ASSERT_TRUE(eventually([&] {
    r = get("/v1/ids");
    return r.status != 200;
  }));
  expect_error(r, 503, "LEASE_UNCERTAIN", true);
  const std::optional<std::string> retry = header(r, "Retry-After");
  ASSERT_TRUE(retry.has_value());
  EXPECT_GE(to_u64(*retry), 1u);
  EXPECT_EQ(get("/readyz").status, 503u);
  ts.registry.set_unavailable(false);
}

TEST_F(HttpHandlerTest, AfterCloseIdsAreRefusedAsShuttingDown) {
  ASSERT_TRUE(ts.service->close().is_ok());
  expect_error(get("/v1/ids"), 503, "SHUTTING_DOWN", false);
  expect_error(get("/v1/ids?count=10"), 503, "SHUTTING_DOWN", false);
  EXPECT_EQ(get("/readyz").status, 503u);
  EXPECT_EQ(get("/healthz").status, 200u);
}

// ------------------------------------------------------- escaping of text

TEST_F(HttpHandlerTest, ClientTextInMessagesIsEscapedIntoValidJson) {
  const HttpResponse r = get("/v1/ids?%22%5C%01%0A%FF%E2%80%A8%C3%A9=1");
  expect_error(r, 400, "INVALID_ARGUMENT", false);
  EXPECT_NE(r.body.find("\\\"\\\\\\u0001\\n\\ufffd\\u2028\xc3\xa9"), std::string::npos) << r.body;
  EXPECT_NE(json(r).str("message").find("\"\\\x01\n\xef\xbf\xbd\xe2\x80\xa8\xc3\xa9\""),
            std::string::npos);
}

TEST_F(HttpHandlerTest, LongClientTextInMessagesIsCut) {
  const std::string name(1000, 'n');
  const HttpResponse r = get("/v1/ids?" + name + "=1");
  expect_error(r, 400, "INVALID_ARGUMENT", false);
  EXPECT_LT(r.body.size(), 300u) << r.body;
}

// ----------------------------------------------------------- parse_target

TEST(ParseTargetTest, SplitsPathAndQueryInOrder) {
  const auto t = parse_target("/v1/ids?count=10&b=x=y&flag");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->path, "/v1/ids");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"count", "10"}, {"b", "x=y"}, {"flag", ""}};
  EXPECT_EQ(t->query, expected);
  const auto bare = parse_target("/");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->path, "/");
  EXPECT_TRUE(bare->query.empty());
}

TEST(ParseTargetTest, DecodesPercentEscapesInPathAndQuery) {
  const auto t = parse_target("/a%20b/%7e%7E?n%61me=%41%2b%2F%3D%26&q=a+b%20c");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->path, "/a b/~~");
  const std::vector<std::pair<std::string, std::string>> expected = {{"name", "A+/=&"},
                                                                     {"q", "a b c"}};
  EXPECT_EQ(t->query, expected);
}

TEST(ParseTargetTest, PlusIsASpaceOnlyInTheQuery) {
  const auto t = parse_target("/a+b?c+d=e+f");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->path, "/a+b");
  ASSERT_EQ(t->query.size(), 1u);
  EXPECT_EQ(t->query[0].first, "c d");
  EXPECT_EQ(t->query[0].second, "e f");
}

TEST(ParseTargetTest, SkipsEmptyPairsAndKeepsLaterQuestionMarks) {
  const auto t = parse_target("/p?&&a=1&&b=?&");
  ASSERT_TRUE(t.has_value());
  const std::vector<std::pair<std::string, std::string>> expected = {{"a", "1"}, {"b", "?"}};
  EXPECT_EQ(t->query, expected);
}

TEST(ParseTargetTest, RefusesBadEscapes) {
  for (const std::string_view target :
       {"/%", "/%4", "/%g0", "/%0g", "/a?b=%", "/a?b=%2", "/a?%zz=1", "/a?b=1%", "/%%41"}) {
    SCOPED_TRACE(target);
    EXPECT_FALSE(parse_target(target).has_value());
  }
}

TEST(ParseTargetTest, RefusesDecodedNul) {
  EXPECT_FALSE(parse_target("/a%00b").has_value());
  EXPECT_FALSE(parse_target("/a?b=%00").has_value());
  EXPECT_FALSE(parse_target("/a?%00=1").has_value());
}

TEST(ParseTargetTest, RefusesAnEscapedSlashInThePathButNotInTheQuery) {
  EXPECT_FALSE(parse_target("/v1/ids%2F1").has_value());
  EXPECT_FALSE(parse_target("/v1/ids%2f1").has_value());
  ASSERT_TRUE(parse_target("/v1/ids?x=%2F").has_value());
}

TEST(ParseTargetTest, RefusesTargetsNotInOriginForm) {
  for (const std::string_view target :
       {"", "v1/ids", "*", "http://example.com/v1/ids", "example.com:80", "?count=1"}) {
    SCOPED_TRACE(target);
    EXPECT_FALSE(parse_target(target).has_value());
  }
}

TEST(ParseTargetTest, RefusesFragmentsAndRawBytesOutsideVisibleAscii) {
  for (const std::string_view target : std::initializer_list<std::string_view>{
           "/a#b", "/a?b=1#c", "/#", "/a b", "/a?b=c d", "/a\tb", "/a\r\n", "/a\x7f",
           "/caf\xc3\xa9", std::string_view("/a\0b", 4)}) {
    SCOPED_TRACE(target);
    EXPECT_FALSE(parse_target(target).has_value());
  }
  EXPECT_TRUE(parse_target("/a%23b").has_value()) << "an escaped # is data";
}

}  // namespace
}  // namespace snowid::daemon
