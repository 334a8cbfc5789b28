#include "gateway_json.h"

#include <gtest/gtest.h>

namespace snowid::etcd {
namespace {

TEST(Base64, RoundTripsEveryLengthAndRefusesNonCanonicalText) {
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    const std::string text = base64_encode(bytes);
    EXPECT_EQ(text.size() % 4, 0u);
    EXPECT_EQ(base64_decode(text), bytes);
    bytes += static_cast<char>(i * 37 + 200);
  }
  EXPECT_EQ(base64_encode("/a/holder"), "L2EvaG9sZGVy");
  EXPECT_EQ(base64_decode("aGk="), "hi");
  for (const char* bad : {"a", "aGk", "aG=k", "aGl=", "a===", "aGk=aGk=", "a-_=", "aGk\n"}) {
    EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
  }
}

TEST(PrefixEnd, IsTheFirstKeyPastThePrefix) {
  EXPECT_EQ(prefix_end("/a/"), "/a0");
  EXPECT_EQ(prefix_end(std::string("a\xff", 2)), "b");
  EXPECT_EQ(prefix_end(std::string("\xff\xff", 2)), std::string(1, '\0'));
  EXPECT_EQ(prefix_end(""), std::string(1, '\0'));
}

TEST(TxnBody, EncodesComparesAndOpsAsTheGatewayExpects) {
  const std::string body =
      txn_body({{Compare::Target::kCreate, "/k/holder", 0}, {Compare::Target::kMod, "/k/mark", 7}},
               {Op::put("/k/holder", "v", 42), Op::remove("/k/x")}, {Op::range("/k/holder")});
  EXPECT_NE(body.find(R"("target":"CREATE")"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("create_revision":"0")"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("mod_revision":"7")"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("lease":"42")"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("request_delete_range")"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("request_range":{"key":")" + base64_encode("/k/holder")),
            std::string::npos)
      << body;
}

// Replies as etcd 3.4's gateway sends them.
TEST(ParseTxn, ReadsASuccessfulTxnWithItsRevision) {
  Result<TxnReply> r = parse_txn(
      R"({"header":{"cluster_id":"3249","member_id":"17010963214147749224","revision":"3",)"
      R"("raft_term":"2"},"succeeded":true,"responses":[{"response_put":{"header":{"revision":"3"}}},)"
      R"({"response_range":{"header":{"revision":"3"},"kvs":[{"key":"L2EvaG9sZGVy",)"
      R"("create_revision":"3","mod_revision":"3","version":"1","value":"aGk=","lease":"99"}],)"
      R"("count":"1"}}]})");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(r->succeeded);
  EXPECT_EQ(r->header.revision, 3);
  EXPECT_EQ(r->header.member_id, 17010963214147749224u);
  ASSERT_EQ(r->responses.size(), 2u);
  EXPECT_EQ(r->responses[0].kind, Op::Kind::kPut);
  ASSERT_EQ(r->responses[1].kvs.size(), 1u);
  const KeyValue& kv = r->responses[1].kvs[0];
  EXPECT_EQ(kv.key, "/a/holder");
  EXPECT_EQ(kv.value, "hi");
  EXPECT_EQ(kv.create_revision, 3);
  EXPECT_EQ(kv.lease, 99);
}

TEST(ParseTxn, ReadsAFailedCompareFromTheAbsenceOfSucceeded) {
  Result<TxnReply> r =
      parse_txn(R"({"header":{"revision":"9"},"responses":[{"response_range":{"header":{}}}]})");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FALSE(r->succeeded);
  ASSERT_EQ(r->responses.size(), 1u);
  EXPECT_TRUE(r->responses[0].kvs.empty());
}

TEST(ParseKeepalive, ATtlLeftOutMeansTheLeaseIsGone) {
  Result<KeepAliveReply> dead = parse_keepalive(R"({"result":{"header":{},"ID":"1"}})");
  ASSERT_TRUE(dead.is_ok());
  EXPECT_EQ(dead->ttl, 0);
  Result<KeepAliveReply> alive = parse_keepalive(R"({"result":{"ID":"5","TTL":"10"}})");
  ASSERT_TRUE(alive.is_ok());
  EXPECT_EQ(alive->ttl, 10);
  EXPECT_EQ(alive->id, 5);
}

TEST(ParseWatchMessage, ReadsPutAndDeleteEventsAndCancellations) {
  Result<WatchMessage> put = parse_watch_message(
      R"({"result":{"header":{"revision":"4"},"events":[{"kv":{"key":"YQ==","create_revision":"3",)"
      R"("mod_revision":"4","version":"2","value":"eHg="}}]}})");
  ASSERT_TRUE(put.is_ok()) << put.status().to_string();
  ASSERT_EQ(put->events.size(), 1u);
  EXPECT_FALSE(put->events[0].is_delete);
  EXPECT_EQ(put->events[0].kv.mod_revision, 4);

  Result<WatchMessage> del = parse_watch_message(
      R"({"result":{"events":[{"type":"DELETE","kv":{"key":"YQ==","mod_revision":"5"}}]}})");
  ASSERT_TRUE(del.is_ok());
  EXPECT_TRUE(del->events.at(0).is_delete);

  Result<WatchMessage> canceled = parse_watch_message(
      R"({"result":{"watch_id":"-1","created":true,"canceled":true,"cancel_reason":"no","compact_revision":"8"}})");
  ASSERT_TRUE(canceled.is_ok());
  EXPECT_TRUE(canceled->canceled);
  EXPECT_EQ(canceled->compact_revision, 8);
}

TEST(ParseError, ReadsUnaryAndStreamErrors) {
  const std::optional<GatewayError> unary = parse_error(
      R"({"error":"etcdserver: invalid auth token","message":"etcdserver: invalid auth token","code":16})");
  ASSERT_TRUE(unary.has_value());
  EXPECT_EQ(unary->code, kGrpcUnauthenticated);
  EXPECT_EQ(unary->message, "etcdserver: invalid auth token");
  const std::optional<GatewayError> stream =
      parse_error(R"({"error":{"grpc_code":14,"http_code":503,"message":"no leader"}})");
  ASSERT_TRUE(stream.has_value());
  EXPECT_EQ(stream->code, kGrpcUnavailable);
  EXPECT_FALSE(parse_error(R"({"header":{}})").has_value());
  EXPECT_FALSE(parse_error("not json").has_value());
}

// etcd 3.6 and later answer through grpc-gateway v2, whose error replies have
// no "error" member outside a stream and "code" instead of "grpc_code" in one.
TEST(Parsers, ErrorRepliesOfEtcd36AndLaterKeepTheirGrpcCode) {
  const std::optional<GatewayError> unary =
      parse_error(R"({"code":3,"message":"etcdserver: user name is empty","details":[]})");
  ASSERT_TRUE(unary.has_value());
  EXPECT_EQ(unary->code, kGrpcInvalidArgument);
  EXPECT_EQ(unary->message, "etcdserver: user name is empty");
  const std::optional<GatewayError> not_found =
      parse_error(R"({"code":5, "message":"etcdserver: requested lease not found"})");
  ASSERT_TRUE(not_found.has_value());
  EXPECT_EQ(not_found->code, kGrpcNotFound);
  const std::optional<GatewayError> stream =
      parse_error(R"({"error":{"code":14,"message":"etcdserver: no leader","details":[]}})");
  ASSERT_TRUE(stream.has_value());
  EXPECT_EQ(stream->code, kGrpcUnavailable);
  EXPECT_EQ(stream->message, "etcdserver: no leader");
  // Never read as an answer.
  EXPECT_FALSE(parse_range(R"({"code":14,"message":"etcdserver: no leader","kvs":[]})").is_ok());
  EXPECT_FALSE(parse_status(R"({"code":9,"message":"x","header":{},"leader":"1"})").is_ok());
}

TEST(Parsers, RefuseMalformedRepliesAsUnavailable) {
  for (const char* bad :
       {"", "[]", "{", "null", R"({"kvs":{}})", R"({"kvs":[{"key":"***"}]})",
        R"({"kvs":[{"create_revision":"12x"}]})", R"({"kvs":[{"lease":"99999999999999999999"}]})",
        R"({"kvs":[{"lease":1.5}]})", R"({"header":{"revision":true}})",
        R"({"error":"x","message":"y","code":5})"}) {
    Result<RangeReply> r = parse_range(bad);
    EXPECT_FALSE(r.is_ok()) << bad;
    if (!r.is_ok()) {
      EXPECT_EQ(r.status().code(), Code::kUnavailable) << bad;
    }
  }
  EXPECT_FALSE(parse_txn(R"({"responses":[{"response_other":{}}]})").is_ok());
  EXPECT_FALSE(parse_txn(R"({"succeeded":"yes"})").is_ok());
  EXPECT_FALSE(parse_lease_grant(R"({"TTL":"10"})").is_ok());
  EXPECT_FALSE(parse_authenticate(R"({"header":{}})").is_ok());
  EXPECT_FALSE(parse_watch_message(R"({"result":{"events":[{"type":"MOVE"}]}})").is_ok());
}

TEST(ParseRange, AcceptsIntegersAsNumbersToo) {
  Result<RangeReply> r =
      parse_range(R"({"header":{"revision":12},"kvs":[{"key":"YQ==","lease":7}]})");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->header.revision, 12);
  EXPECT_EQ(r->kvs.at(0).lease, 7);
}

}  // namespace
}  // namespace snowid::etcd
