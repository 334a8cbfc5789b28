// The public-id routes, on a fake keyring (the real one is tested with the
// library and against the daemon in tests/daemon/public_id_test.cc): the
// issuing forms of /v1/ids, wrapping one id, unwrapping one public id, who
// may unwrap, and the refusals' words and statuses.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "fake_public_ids.h"
#include "http_handler.h"
#include "json_test_support.h"
#include "service_test_support.h"

namespace snowid::daemon {
namespace {

using test_support::FakePublicIds;
using test_support::Json;
using test_support::parse_json;
using test_support::TestService;

struct Routes {
  explicit Routes(FakePublicIds& keys, std::string token = "")
      : handler(*svc.service, {}, std::move(token), nullptr, &keys) {}

  HttpResponse get(const std::string& target, bool loopback = true,
                   std::string_view authorization = {}) const {
    HttpRequest r;
    r.method = "GET";
    r.target = target;
    r.loopback_peer = loopback;
    r.authorization = authorization;
    return handler.handle(r);
  }
  std::uint64_t issued() const { return svc.service->snapshot().counters.ids_issued; }

  TestService svc;
  const HttpHandler handler;
};

Json json_of(const HttpResponse& r) {
  std::optional<Json> j = parse_json(r.body);
  EXPECT_TRUE(j.has_value()) << r.body;
  return j.value_or(Json{});
}

std::string error_of(const HttpResponse& r) { return json_of(r).str("error"); }

TEST(HttpPublicIds, IdsWithATypeComeWithTheirPublicIdsInTheSameOrder) {
  FakePublicIds keys;
  Routes routes(keys);
  for (const std::string count : {"", "&count=1", "&count=7"}) {
    SCOPED_TRACE(count);
    const HttpResponse r = routes.get("/v1/ids?type=ord" + count);
    ASSERT_EQ(r.status, 200u) << r.body;
    const Json j = json_of(r);
    const Json* ids = j.find("ids");
    const Json* publics = j.find("public");
    ASSERT_TRUE(ids != nullptr && publics != nullptr) << r.body;
    ASSERT_EQ(ids->items.size(), count == "&count=7" ? 7u : 1u);
    ASSERT_EQ(publics->items.size(), ids->items.size());
    for (std::size_t i = 0; i < ids->items.size(); ++i) {
      EXPECT_EQ(ids->items[i].type, Json::Type::kString);
      EXPECT_EQ(publics->items[i].text, keys.text_of("ord", std::stoull(ids->items[i].text)));
    }
  }
  EXPECT_EQ(routes.issued(), 9u);
}

TEST(HttpPublicIds, IdsWithoutATypeAreAnsweredAsBefore) {
  FakePublicIds keys;
  Routes routes(keys);
  const Json j = json_of(routes.get("/v1/ids?count=3"));
  ASSERT_NE(j.find("ids"), nullptr);
  EXPECT_EQ(j.find("ids")->items.size(), 3u);
  EXPECT_EQ(j.find("public"), nullptr);
}

TEST(HttpPublicIds, OneIdIsWrappedAndItsPublicIdUnwrapsToIt) {
  FakePublicIds keys;
  Routes routes(keys);
  const HttpResponse w = routes.get("/v1/ids/1234567/public?type=ord");
  ASSERT_EQ(w.status, 200u) << w.body;
  EXPECT_EQ(json_of(w).str("id"), "1234567");
  EXPECT_EQ(json_of(w).str("public"), keys.text_of("ord", 1234567));
  const HttpResponse u = routes.get("/v1/public-ids/" + keys.text_of("ord", 1234567));
  ASSERT_EQ(u.status, 200u) << u.body;
  const Json j = json_of(u);
  EXPECT_EQ(j.str("id"), "1234567");
  EXPECT_EQ(j.str("type"), "ord");
  EXPECT_EQ(j.num("slot"), "0");
  EXPECT_EQ(j.str("form"), "compact");
  EXPECT_EQ(routes.issued(), 0u);
}

TEST(HttpPublicIds, RefusalsAreWordedWithTheirStatuses) {
  FakePublicIds keys;
  Routes routes(keys);
  const HttpResponse missing = routes.get("/v1/ids/12/public");
  EXPECT_EQ(missing.status, 400u);
  EXPECT_NE(json_of(missing).str("message").find("type is required"), std::string::npos);
  EXPECT_EQ(error_of(routes.get("/v1/ids/12x/public?type=ord")), "INVALID_ARGUMENT");
  const HttpResponse bad_type = routes.get("/v1/ids?type=Ord&count=5");
  EXPECT_EQ(bad_type.status, 400u);
  EXPECT_EQ(error_of(bad_type), "BAD_TYPE");
  const HttpResponse unknown = routes.get("/v1/public-ids/ord_0");
  EXPECT_EQ(unknown.status, 404u);
  EXPECT_EQ(error_of(unknown), "UNKNOWN_KEY");
  EXPECT_EQ(json_of(unknown).str("message"), "slot 3 is retired");
  EXPECT_EQ(error_of(routes.get("/v1/ids?type=ord&colour=red")), "INVALID_ARGUMENT");
  EXPECT_EQ(routes.issued(), 0u);
}

TEST(HttpPublicIds, EveryRouteSaysWhenPublicIdsAreOffAndIssuesNothing) {
  FakePublicIds keys;
  keys.on_ = false;
  Routes routes(keys);
  for (const char* target : {"/v1/ids?type=ord", "/v1/ids?type=ord&count=4",
                             "/v1/ids/5/public?type=ord", "/v1/public-ids/ord_1"}) {
    const HttpResponse r = routes.get(target);
    EXPECT_EQ(r.status, 404u) << target;
    EXPECT_EQ(error_of(r), "PUBLIC_IDS_OFF") << target;
  }
  EXPECT_EQ(routes.issued(), 0u);
  EXPECT_EQ(routes.get("/v1/ids").status, 200u);
}

TEST(HttpPublicIds, UnwrapIsForbiddenToAPeerThatIsNotLocalUnlessTheRuleAllowsIt) {
  FakePublicIds keys;
  Routes routes(keys);
  const HttpResponse remote = routes.get("/v1/public-ids/ord_1", /*loopback=*/false);
  EXPECT_EQ(remote.status, 403u);
  EXPECT_EQ(error_of(remote), "FORBIDDEN");
  EXPECT_EQ(keys.denied.load(), 1);
  EXPECT_EQ(routes.get("/v1/ids/5/public?type=ord", false).status, 200u);
  keys.callers = UnwrapCallers::kAny;
  EXPECT_EQ(routes.get("/v1/public-ids/ord_1", false).status, 200u);
}

TEST(HttpPublicIds, UnderTheTokenRuleTheBearerTokenUnwraps) {
  FakePublicIds keys;
  keys.callers = UnwrapCallers::kToken;
  Routes open(keys);
  // No http_token: no caller over HTTP holds it, loopback or not.
  EXPECT_EQ(open.get("/v1/public-ids/ord_1", true).status, 403u);
  Routes guarded(keys, "s3cret");
  EXPECT_EQ(guarded.get("/v1/public-ids/ord_1", false, "Bearer s3cret").status, 200u);
  EXPECT_EQ(guarded.get("/v1/public-ids/ord_1", true, "Bearer wrong").status, 401u);
}

}  // namespace
}  // namespace snowid::daemon
