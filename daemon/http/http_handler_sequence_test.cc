// The sequence routes of HttpHandler (/v1/sequences...) on the in-memory
// ticket table: JSON shapes with numbers as strings, status codes
// (400/404/405/409/503), Allow, the token, sequences off, and which requests
// handle_or_defer() hands to the pool.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http_handler.h"
#include "json_test_support.h"
#include "sequence_service.h"
#include "sequence_test_support.h"
#include "service_test_support.h"
#include "snowid/time.h"

namespace snowid::daemon {
namespace {

using test_support::Json;
using test_support::parse_json;
using test_support::TestSequences;
using test_support::TestService;

std::optional<std::string> header(const HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return std::nullopt;
}

Json json(const HttpResponse& r) {
  EXPECT_EQ(r.content_type, "application/json");
  std::optional<Json> j = parse_json(r.body);
  EXPECT_TRUE(j.has_value()) << "not JSON: " << r.body;
  return j.value_or(Json{});
}

void expect_error(const HttpResponse& r, unsigned status, std::string_view word,
                  bool retryable = false) {
  EXPECT_EQ(r.status, status) << r.body;
  const Json j = json(r);
  EXPECT_EQ(j.str("error"), word) << r.body;
  EXPECT_FALSE(j.str("message").empty());
  const Json* retry = j.find("retryable");
  ASSERT_NE(retry, nullptr) << r.body;
  EXPECT_EQ(retry->boolean, retryable) << r.body;
  EXPECT_EQ(header(r, "Retry-After").has_value(), retryable) << r.body;
  EXPECT_EQ(header(r, "Cache-Control"), "no-store");
}

class HttpSequenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(ts.service, nullptr);
    seq.create("orders", 1001, 10);
    handler = make_handler("", seq.service.get());
  }

  std::unique_ptr<HttpHandler> make_handler(std::string token, SequenceService* sequences) {
    return std::make_unique<HttpHandler>(
        *ts.service, [] { return std::string("# metrics\n"); }, std::move(token), sequences);
  }

  HttpResponse call(std::string_view target, std::string_view method = "GET",
                    std::string_view authorization = "") const {
    return handler->handle(
        HttpRequest{.method = method, .target = target, .authorization = authorization});
  }

  HttpResponse put_json(std::string_view target, std::string_view body,
                        std::string_view type = "application/json") const {
    HttpRequest request{.method = "PUT", .target = target};
    request.content_type = type;
    request.body = body;
    request.has_body = !body.empty();
    return handler->handle(request);
  }

  TestService ts;
  TestSequences seq;
  std::unique_ptr<HttpHandler> handler;
};

TEST_F(HttpSequenceTest, NextGivesTheNumbersAsDecimalStringsNotCached) {
  HttpResponse r = call("/v1/sequences/orders/next");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, R"({"sequence":"orders","numbers":["1001"]})");
  EXPECT_EQ(header(r, "Cache-Control"), "no-store");
  r = call("/v1/sequences/orders/next?count=3");
  EXPECT_EQ(r.body, R"({"sequence":"orders","numbers":["1002","1003","1004"]})");
  r = call("/v1/sequences/orders/next?count=0025");
  ASSERT_EQ(r.status, 200u);
  const Json body = json(r);
  const Json* numbers = body.find("numbers");
  ASSERT_NE(numbers, nullptr);
  ASSERT_EQ(numbers->items.size(), 25u);
  EXPECT_EQ(numbers->items.front().text, "1005");
  EXPECT_EQ(numbers->items.back().text, "1029");
}

TEST_F(HttpSequenceTest, NextCountOutOfBoundsOrMalformedIsBadRequest) {
  for (const char* target :
       {"/v1/sequences/orders/next?count=0", "/v1/sequences/orders/next?count=10001",
        "/v1/sequences/orders/next?count=x", "/v1/sequences/orders/next?count=",
        "/v1/sequences/orders/next?count=-1", "/v1/sequences/orders/next?count=1&count=2",
        "/v1/sequences/orders/next?size=1", "/v1/sequences/orders/next?cuont=2"}) {
    SCOPED_TRACE(target);
    expect_error(call(target), 400, "INVALID_ARGUMENT");
  }
  ts.service->set_max_batch(2);
  expect_error(call("/v1/sequences/orders/next?count=3"), 400, "INVALID_ARGUMENT");
  EXPECT_EQ(seq.faulty->calls(), 0u);
}

TEST_F(HttpSequenceTest, RangeGivesStartAndExclusiveEndAndNeedsASizeWithinMaxRange) {
  HttpResponse r = call("/v1/sequences/orders/range?size=100");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, R"({"sequence":"orders","start":"1001","end":"1101","size":100})");
  r = call("/v1/sequences/orders/range?size=1");
  EXPECT_EQ(r.body, R"({"sequence":"orders","start":"1101","end":"1102","size":1})");

  const HttpResponse missing = call("/v1/sequences/orders/range");
  expect_error(missing, 400, "INVALID_ARGUMENT");
  EXPECT_EQ(json(missing).str("message"), "size is required: a decimal number from 1 to 1000");
  for (const char* target :
       {"/v1/sequences/orders/range?size=0", "/v1/sequences/orders/range?size=1001",
        "/v1/sequences/orders/range?size=1e3", "/v1/sequences/orders/range?count=5"}) {
    SCOPED_TRACE(target);
    expect_error(call(target), 400, "INVALID_ARGUMENT");
  }
  EXPECT_EQ(seq.memory.takes(), 2u);
}

TEST_F(HttpSequenceTest, PutCreatesASequenceOnceWith201TheInfoAndItsLocation) {
  HttpResponse r = call("/v1/sequences/invoices", "PUT");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(header(r, "Location"), "/v1/sequences/invoices");
  const std::string now = format_iso8601(seq.clock.wall_now());
  EXPECT_EQ(r.body, R"({"sequence":"invoices","next_value":"1","step":1000,"created":")" + now +
                        R"(","updated":")" + now + R"(","buffer":null})");

  r = call("/v1/sequences/tickets?start=9223372036854775806&step=1000000000", "PUT");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(json(r).str("next_value"), "9223372036854775806") << "a string above 2^53";
  EXPECT_EQ(json(r).num("step"), "1000000000");

  r = call("/v1/sequences/invoices?start=5", "PUT");
  expect_error(r, 409, "ALREADY_EXISTS");
  EXPECT_EQ(json(r).str("message"), "sequence 'invoices' exists already");

  for (const char* target :
       {"/v1/sequences/bad?start=-1", "/v1/sequences/bad?start=9223372036854775807",
        "/v1/sequences/bad?start=99999999999999999999", "/v1/sequences/bad?start=x",
        "/v1/sequences/bad?step=0", "/v1/sequences/bad?step=1000000001",
        "/v1/sequences/bad?start=1&start=2", "/v1/sequences/bad?count=1"}) {
    SCOPED_TRACE(target);
    expect_error(call(target, "PUT"), 400, "INVALID_ARGUMENT");
  }
  EXPECT_EQ(seq.memory.get("bad").status().code(), Code::kNotFound);
  SCOPED_TRACE("creating parameters on GET");
  expect_error(call("/v1/sequences/orders?start=1"), 400, "INVALID_ARGUMENT");
}

// PUT with a JSON body: the row the body asks for, never the defaults.
TEST_F(HttpSequenceTest, PutTakesStartAndStepFromAJsonBody) {
  HttpResponse r = put_json("/v1/sequences/invoices", R"({"start":1000,"step":100})");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(json(r).str("next_value"), "1000");
  EXPECT_EQ(json(r).num("step"), "100");
  Result<SequenceInfo> row = seq.memory.get("invoices");
  ASSERT_TRUE(row.is_ok());
  EXPECT_EQ(row->next_value, 1000);
  EXPECT_EQ(row->step, 100);

  // Decimal strings, for a start beyond 2^53; a charset parameter; one field
  // in the query and the other in the body; an empty object.
  r = put_json("/v1/sequences/big", R"({"start":"9007199254740993","step":"7"})",
               "Application/JSON; charset=\"UTF-8\"");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(seq.memory.get("big")->next_value, 9007199254740993);
  EXPECT_EQ(seq.memory.get("big")->step, 7);
  r = put_json("/v1/sequences/mixed?step=50", R"({"start":20})");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(seq.memory.get("mixed")->next_value, 20);
  EXPECT_EQ(seq.memory.get("mixed")->step, 50);
  r = put_json("/v1/sequences/plain", " { } ");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(seq.memory.get("plain")->next_value, 1);
  EXPECT_EQ(seq.memory.get("plain")->step, 1000);
}

TEST_F(HttpSequenceTest, PutRefusesABodyItCannotTakeWholeAndCreatesNothing) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"start":1,"start":2})", "more than once"},
      {R"({"start":1,"colour":"blue"})", "unknown field \"colour\""},
      {R"([1,2])", "JSON object"},
      {R"(12)", "JSON object"},
      {R"("x")", "JSON object"},
      {R"({"start":1)", "not valid JSON"},
      {R"({"start":1}{"step":2})", "not valid JSON"},
      {R"({"start":1.5})", "no fraction or exponent"},
      {R"({"start":1e3})", "no fraction or exponent"},
      {R"({"start":1.0})", "no fraction or exponent"},
      {R"({"start":-1})", "start must be a decimal number"},
      {R"({"start":9223372036854775807})", "start must be a decimal number"},
      {R"({"start":99999999999999999999999})", "start must be a decimal number"},
      {R"({"start":" 5"})", "start must be a decimal number"},
      {R"({"step":0})", "step must be a decimal number"},
      {R"({"step":1000000001})", "step must be a decimal number"},
      {R"({"step":true})", "integer or a decimal string"},
      {R"({"step":null})", "integer or a decimal string"},
      {R"({"step":{"n":1}})", "integer or a decimal string"},
      {R"({"step":[1]})", "integer or a decimal string"},
      {"{\"start\":\"\xff\"}", "not valid JSON"},
  };
  for (const auto& [body, says] : cases) {
    SCOPED_TRACE(body);
    const HttpResponse r = put_json("/v1/sequences/bad", body);
    expect_error(r, 400, "INVALID_ARGUMENT");
    EXPECT_NE(json(r).str("message").find(says), std::string::npos) << r.body;
  }
  SCOPED_TRACE("a field in both the query and the body");
  const HttpResponse both = put_json("/v1/sequences/bad?start=5", R"({"start":6})");
  expect_error(both, 400, "INVALID_ARGUMENT");
  EXPECT_NE(json(both).str("message").find("both in the query and in the request body"),
            std::string::npos)
      << both.body;
  EXPECT_EQ(seq.memory.get("bad").status().code(), Code::kNotFound);
}

TEST_F(HttpSequenceTest, PutBodyOfAnotherMediaTypeIsUnsupported) {
  for (const char* type : {"", "text/plain", "application/x-www-form-urlencoded",
                           "application/json; charset=latin1", "application/jsonx"}) {
    SCOPED_TRACE(type);
    expect_error(put_json("/v1/sequences/bad", R"({"start":5})", type), 415,
                 "UNSUPPORTED_MEDIA_TYPE");
  }
  EXPECT_EQ(seq.memory.get("bad").status().code(), Code::kNotFound);
}

TEST_F(HttpSequenceTest, BodiesOnRoutesThatReadNoneAreRefused) {
  for (const char* target : {"/v1/sequences", "/v1/sequences/orders", "/v1/sequences/orders/next",
                             "/v1/sequences/orders/range?size=5"}) {
    SCOPED_TRACE(target);
    HttpRequest request{.method = "GET", .target = target};
    request.content_type = "application/json";
    request.body = "{}";
    request.has_body = true;
    expect_error(handler->handle(request), 400, "INVALID_ARGUMENT");
  }
  // Nothing was taken from "orders" by the refused requests.
  EXPECT_EQ(json(call("/v1/sequences/orders/next")).find("numbers")->items.at(0).text, "1001");
}

TEST_F(HttpSequenceTest, GetShowsTheRowAndTheBufferOnceOneServesIt) {
  HttpResponse r = call("/v1/sequences/orders");
  ASSERT_EQ(r.status, 200u) << r.body;
  Json j = json(r);
  EXPECT_EQ(j.str("sequence"), "orders");
  EXPECT_EQ(j.str("next_value"), "1001");
  EXPECT_EQ(j.num("step"), "10");
  EXPECT_EQ(j.str("created"), format_iso8601(seq.clock.wall_now()));
  ASSERT_NE(j.find("buffer"), nullptr);
  EXPECT_EQ(j.find("buffer")->type, Json::Type::kNull);

  ASSERT_EQ(call("/v1/sequences/orders/next?count=2").status, 200u);
  j = json(call("/v1/sequences/orders"));
  const Json* buffer = j.find("buffer");
  ASSERT_NE(buffer, nullptr);
  ASSERT_EQ(buffer->type, Json::Type::kObject);
  EXPECT_EQ(buffer->num("numbers_issued"), "2");
  EXPECT_EQ(buffer->num("step_in_use"), "10");
  EXPECT_NE(buffer->num("ranges_fetched"), "<missing>");
  EXPECT_NE(buffer->num("buffered"), "<missing>");

  const HttpResponse head = call("/v1/sequences/orders", "HEAD");
  EXPECT_EQ(head.status, 200u) << "HEAD of a resource is safe";
}

TEST_F(HttpSequenceTest, ListGivesEveryName) {
  seq.create("alpha", 1, 1);
  const HttpResponse r = call("/v1/sequences");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, R"({"sequences":["alpha","orders"]})");
}

TEST_F(HttpSequenceTest, UnknownSequenceIsNotFoundWithHowToCreateItAndIsNeverCreated) {
  for (const char* target :
       {"/v1/sequences/ghost/next", "/v1/sequences/ghost/range?size=5", "/v1/sequences/ghost"}) {
    SCOPED_TRACE(target);
    const HttpResponse r = call(target);
    expect_error(r, 404, "NOT_FOUND");
    EXPECT_EQ(json(r).str("message"),
              "sequence 'ghost' does not exist (create it with PUT /v1/sequences/ghost)");
  }
  EXPECT_EQ(seq.memory.get("ghost").status().code(), Code::kNotFound);
}

TEST_F(HttpSequenceTest, BadNamesAreBadRequestAndMalformedPathsNotFound) {
  for (const std::string& target :
       std::vector<std::string>{"/v1/sequences/a%20b/next", "/v1/sequences/" + std::string(65, 'n'),
                                "/v1/sequences/a:b/range?size=1", "/v1/sequences/%C3%A9"}) {
    SCOPED_TRACE(target);
    expect_error(call(target), 400, "INVALID_ARGUMENT");
  }
  for (const char* target : {"/v1/sequences/", "/v1/sequences//next", "/v1/sequences/orders/",
                             "/v1/sequences/orders/next/", "/v1/sequences/orders/last",
                             "/v1/sequences/orders/next/more"}) {
    SCOPED_TRACE(target);
    expect_error(call(target), 404, "NOT_FOUND");
  }
  EXPECT_EQ(seq.faulty->calls(), 0u);
}

TEST_F(HttpSequenceTest, MethodsEachRouteTakesAndTheAllowOfTheOthers) {
  for (const char* target : {"/v1/sequences/orders/next", "/v1/sequences/orders/range?size=5"}) {
    SCOPED_TRACE(target);
    // HEAD must not burn numbers.
    const HttpResponse head = call(target, "HEAD");
    expect_error(head, 405, "METHOD_NOT_ALLOWED");
    EXPECT_EQ(header(head, "Allow"), "GET");
    for (const char* method : {"POST", "PUT", "DELETE"}) {
      const HttpResponse r = call(target, method);
      expect_error(r, 405, "METHOD_NOT_ALLOWED");
      EXPECT_EQ(header(r, "Allow"), "GET");
    }
  }
  EXPECT_EQ(seq.faulty->calls(), 0u);
  EXPECT_EQ(seq.service->snapshot().sequences.size(), 0u) << "no numbers taken";

  const HttpResponse del = call("/v1/sequences/orders", "DELETE");
  expect_error(del, 405, "METHOD_NOT_ALLOWED");
  EXPECT_EQ(header(del, "Allow"), "GET, HEAD, PUT");
  const HttpResponse put_list = call("/v1/sequences", "PUT");
  expect_error(put_list, 405, "METHOD_NOT_ALLOWED");
  EXPECT_EQ(header(put_list, "Allow"), "GET, HEAD");
  EXPECT_EQ(call("/v1/sequences", "HEAD").status, 200u);
}

TEST_F(HttpSequenceTest, TheTokenGuardsEverySequenceRoute) {
  handler = make_handler("s3cret", seq.service.get());
  for (const char* target : {"/v1/sequences", "/v1/sequences/orders", "/v1/sequences/orders/next",
                             "/v1/sequences/orders/range?size=1", "/v1/sequences/ghost"}) {
    SCOPED_TRACE(target);
    const HttpResponse r = call(target);
    EXPECT_EQ(r.status, 401u);
    EXPECT_TRUE(header(r, "WWW-Authenticate").has_value());
  }
  EXPECT_EQ(call("/v1/sequences/new", "PUT").status, 401u);
  EXPECT_EQ(seq.faulty->calls(), 0u);
  EXPECT_EQ(call("/v1/sequences/orders/next", "GET", "Bearer s3cret").status, 200u);
}

TEST_F(HttpSequenceTest, WithSequencesOffEveryRouteIsNotFoundSequencesOff) {
  SequenceService disabled(nullptr, seq.clock, test_support::sequence_test_options());
  for (SequenceService* sequences : {static_cast<SequenceService*>(nullptr), &disabled}) {
    handler = make_handler("", sequences);
    for (const char* target : {"/v1/sequences", "/v1/sequences/orders", "/v1/sequences/orders/next",
                               "/v1/sequences/orders/range?size=1", "/v1/sequences/a%20b"}) {
      SCOPED_TRACE(target);
      const HttpResponse r = call(target);
      expect_error(r, 404, "SEQUENCES_OFF");
      EXPECT_EQ(json(r).str("message"), kSequencesOffMessage);
    }
    expect_error(call("/v1/sequences/orders", "PUT"), 404, "SEQUENCES_OFF");
    EXPECT_EQ(call("/v1/ids").status, 200u) << "ids are served";
  }
  handler = make_handler("s3cret", nullptr);
  EXPECT_EQ(call("/v1/sequences").status, 401u) << "the token first, as for unknown paths";
}

TEST_F(HttpSequenceTest, AnUnreachableTableIsServiceUnavailableWithRetryAfter) {
  seq.faulty->set_failure(Status(Code::kUnavailable, "connection refused (injected)"));
  for (const char* target : {"/v1/sequences/orders/next", "/v1/sequences/orders/range?size=5",
                             "/v1/sequences/orders", "/v1/sequences"}) {
    SCOPED_TRACE(target);
    const HttpResponse r = call(target);
    expect_error(r, 503, "UNAVAILABLE", true);
    EXPECT_EQ(header(r, "Retry-After"), "1");
  }
  expect_error(call("/v1/sequences/new", "PUT"), 503, "UNAVAILABLE", true);
}

TEST_F(HttpSequenceTest, ASpentSequenceIsConflict) {
  seq.create("last", std::numeric_limits<std::int64_t>::max() - 1, 5);
  expect_error(call("/v1/sequences/last/next"), 409, "OUT_OF_RANGE");
  expect_error(call("/v1/sequences/last/range?size=2"), 409, "OUT_OF_RANGE");
}

TEST_F(HttpSequenceTest, OnlyRequestsThatWaitOnTheTableAreDeferred) {
  const auto defer = [&](std::string_view target, std::string_view method = "GET") {
    return handler->handle_or_defer(
        HttpRequest{.method = method, .target = target, .authorization = {}});
  };
  // No buffer yet: the pool opens it.
  HttpOutcome first = defer("/v1/sequences/orders/next");
  ASSERT_TRUE(first.deferred);
  EXPECT_EQ(seq.faulty->calls(), 0u) << "nothing ran here";
  const HttpResponse r = first.deferred();
  EXPECT_EQ(r.body, R"({"sequence":"orders","numbers":["1001"]})");

  // The buffer answers now, on this thread, whatever the table does.
  seq.faulty->set_stalled(true);
  HttpOutcome now = defer("/v1/sequences/orders/next?count=2");
  EXPECT_FALSE(now.deferred);
  EXPECT_EQ(now.response.body, R"({"sequence":"orders","numbers":["1002","1003"]})");

  // These always reach the table.
  EXPECT_TRUE(defer("/v1/sequences/orders/range?size=5").deferred);
  EXPECT_TRUE(defer("/v1/sequences/orders").deferred);
  EXPECT_TRUE(defer("/v1/sequences/orders", "HEAD").deferred);
  EXPECT_TRUE(defer("/v1/sequences/x", "PUT").deferred);
  EXPECT_TRUE(defer("/v1/sequences").deferred);
  // Refusals that need no table never are.
  EXPECT_FALSE(defer("/v1/sequences/orders/range").deferred);
  EXPECT_FALSE(defer("/v1/sequences/a%20b/next").deferred);
  EXPECT_FALSE(defer("/v1/sequences/orders/next", "HEAD").deferred);
  EXPECT_FALSE(defer("/v1/ids").deferred);
  seq.faulty->set_stalled(false);
}

}  // namespace
}  // namespace snowid::daemon
