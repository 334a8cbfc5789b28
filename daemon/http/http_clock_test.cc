// GET /v1/clock on the generator's simulated clock: the times as strings,
// the host's bound, HEAD as GET, and the token.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "host_bound.h"
#include "http_handler.h"
#include "json_test_support.h"
#include "service_test_support.h"
#include "snowid/time.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using test_support::Json;
using test_support::parse_json;
using test_support::TestService;

class HttpClockTest : public ::testing::Test {
 protected:
  HttpResponse get(std::string_view method = "GET", std::string_view authorization = "") {
    HttpRequest request;
    request.method = method;
    request.target = "/v1/clock";
    request.authorization = authorization;
    return handler->handle(request);
  }
  static Json json(const HttpResponse& r) {
    EXPECT_EQ(r.content_type, "application/json");
    std::optional<Json> j = parse_json(r.body);
    EXPECT_TRUE(j.has_value()) << r.body;
    return j.value_or(Json{});
  }

  TestService ts;
  std::unique_ptr<HttpHandler> handler = std::make_unique<HttpHandler>(
      *ts.service, [] { return std::string(); }, "");
};

TEST_F(HttpClockTest, ClockWithoutABoundGivesTheTimesAsStringsAndNullsTheRest) {
  ts.clock.set_wall(WallTime(1780272000s + 7ns));
  const HttpResponse r = get();
  ASSERT_EQ(r.status, 200u) << r.body;
  const Json j = json(r);
  EXPECT_EQ(j.str("receive_ns"), "1780272000000000007");
  EXPECT_EQ(j.str("send_ns"), "1780272000000000007");
  EXPECT_EQ(j.str("bound_source"), "unknown");
  for (const char* key : {"bound_ns", "earliest_ns", "latest_ns"}) {
    const Json* v = j.find(key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_EQ(v->type, Json::Type::kNull) << key;
  }
}

TEST_F(HttpClockTest, ClockWithAChronyBoundGivesTheIntervalAroundTheSendTime) {
  ts.clock.set_wall(WallTime(1780272000s));
  ts.service->host_bound().set(
      {BoundSource::kChrony, 250us, ts.clock.mono_now(), 50.0, std::chrono::seconds(10)});
  const Json j = json(get());
  EXPECT_EQ(j.str("bound_source"), "chrony");
  EXPECT_EQ(j.num("bound_ns"), "250000");
  EXPECT_EQ(j.str("earliest_ns"), "1780271999999750000");
  EXPECT_EQ(j.str("latest_ns"), "1780272000000250000");
}

TEST_F(HttpClockTest, HeadIsAnsweredAsGetAndOtherMethodsAreRefused) {
  EXPECT_EQ(get("HEAD").status, 200u);
  const HttpResponse post = get("POST");
  EXPECT_EQ(post.status, 405u) << post.body;
}

TEST_F(HttpClockTest, WithATokenTheClockNeedsIt) {
  handler = std::make_unique<HttpHandler>(
      *ts.service, [] { return std::string(); }, "s3cret");
  EXPECT_EQ(get().status, 401u);
  EXPECT_EQ(get("GET", "Bearer s3cret").status, 200u);
}

}  // namespace
}  // namespace snowid::daemon
