// WRAP, UNWRAP, NEXTPUBID and NEXTPUBIDS over RESP, on a fake keyring (the
// real one is tested with the library and against the daemon in
// tests/daemon/public_id_test.cc): the replies' shapes, who may unwrap, and
// that a refused type or public ids off cost no id.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "fake_public_ids.h"
#include "resp_session.h"
#include "resp_test_support.h"
#include "service_test_support.h"

namespace snowid::daemon {
namespace {

using test_support::cmd;
using test_support::FakePublicIds;
using test_support::id_of;
using test_support::read_one;
using test_support::Reply;
using test_support::talk;
using test_support::TestService;
using test_support::word_of;

struct Session {
  explicit Session(FakePublicIds& keys, bool unix_socket = true, bool loopback = false,
                   std::string token = "") {
    RespSessionOptions o;
    o.public_ids = &keys;
    o.unix_socket = unix_socket;
    o.loopback_peer = loopback;
    o.token = std::move(token);
    session = std::make_unique<RespSession>(*svc.service, std::move(o));
  }
  Reply ask(std::initializer_list<std::string_view> args) {
    return read_one(talk(*session, cmd(args)));
  }
  std::uint64_t issued() const { return svc.service->snapshot().counters.ids_issued; }

  TestService svc;
  std::unique_ptr<RespSession> session;
};

TEST(RespPublicIds, WrapAnswersOnePublicIdPerIdAndUnwrapGivesTheIdsBack) {
  FakePublicIds keys;
  Session s(keys);
  const std::uint64_t a = id_of(s.ask({"NEXTID"}));
  const std::uint64_t b = id_of(s.ask({"NEXTID"}));
  const Reply w = s.ask({"WRAP", "ord", std::to_string(a), std::to_string(b)});
  ASSERT_EQ(w.type, '*') << w.text;
  ASSERT_EQ(w.items.size(), 2u);
  EXPECT_EQ(w.items[0].text, keys.text_of("ord", a));
  EXPECT_EQ(w.items[1].text, keys.text_of("ord", b));
  const Reply u = s.ask({"UNWRAP", w.items[1].text, w.items[0].text});
  ASSERT_EQ(u.type, '*') << u.text;
  ASSERT_EQ(u.items.size(), 2u);
  EXPECT_EQ(id_of(u.items[0]), b);
  EXPECT_EQ(id_of(u.items[1]), a);
}

TEST(RespPublicIds, NextPubIdIssuesOneIdBesideItsPublicId) {
  FakePublicIds keys;
  Session s(keys);
  const Reply r = s.ask({"NEXTPUBID", "ord"});
  ASSERT_EQ(r.type, '*') << r.text;
  ASSERT_EQ(r.items.size(), 2u);
  const std::uint64_t id = id_of(r.items[0]);
  EXPECT_EQ(r.items[1].text, keys.text_of("ord", id));
  EXPECT_EQ(s.issued(), 1u);
}

TEST(RespPublicIds, NextPubIdsIssuesIncreasingDistinctIdsEachBesideItsPublicId) {
  FakePublicIds keys;
  Session s(keys);
  const Reply r = s.ask({"NEXTPUBIDS", "ord", "500"});
  ASSERT_EQ(r.type, '*') << r.text;
  ASSERT_EQ(r.items.size(), 500u);
  std::uint64_t last = 0;
  std::set<std::string> publics;
  for (const Reply& pair : r.items) {
    ASSERT_EQ(pair.items.size(), 2u);
    const std::uint64_t id = id_of(pair.items[0]);
    EXPECT_GT(id, last);
    last = id;
    EXPECT_EQ(pair.items[1].text, keys.text_of("ord", id));
    publics.insert(pair.items[1].text);
  }
  EXPECT_EQ(publics.size(), 500u);
  EXPECT_EQ(s.issued(), 500u);
}

TEST(RespPublicIds, IdsKeepTheirIntegerFormatBesideTheirPublicIds) {
  FakePublicIds keys;
  Session s(keys);
  ASSERT_EQ(s.ask({"IDFORMAT", "INTEGER"}).type, '+');
  const Reply r = s.ask({"NEXTPUBID", "ord"});
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].type, ':');
  EXPECT_EQ(r.items[1].text, keys.text_of("ord", static_cast<std::uint64_t>(r.items[0].number)));
}

TEST(RespPublicIds, ABadTypeIsRefusedBeforeAnyIdIsIssued) {
  FakePublicIds keys;
  Session s(keys);
  EXPECT_EQ(word_of(s.ask({"NEXTPUBID", "Ord"})), "BAD_TYPE");
  EXPECT_EQ(word_of(s.ask({"NEXTPUBIDS", "o-d", "10"})), "BAD_TYPE");
  EXPECT_EQ(s.issued(), 0u);
}

TEST(RespPublicIds, EveryPublicIdCommandSaysWhenPublicIdsAreOffAndIssuesNothing) {
  FakePublicIds keys;
  keys.on_ = false;
  Session s(keys);
  for (const auto& args : std::vector<std::vector<std::string>>{{"NEXTPUBID", "ord"},
                                                                {"NEXTPUBIDS", "ord", "5"},
                                                                {"WRAP", "ord", "1"},
                                                                {"UNWRAP", "ord_1"}}) {
    std::string text = "*" + std::to_string(args.size()) + "\r\n";
    for (const std::string& a : args) text += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    const Reply r = read_one(talk(*s.session, text));
    EXPECT_EQ(word_of(r), "PUBLIC_IDS_OFF") << args[0] << ": " << r.text;
  }
  EXPECT_EQ(s.issued(), 0u);
}

TEST(RespPublicIds, RefusalsCarryTheKeyringsReasonWord) {
  FakePublicIds keys;
  Session s(keys);
  const Reply unknown = s.ask({"UNWRAP", "ord_0"});
  EXPECT_EQ(word_of(unknown), "UNKNOWN_KEY");
  EXPECT_EQ(unknown.text, "UNKNOWN_KEY slot 3 is retired");
  EXPECT_EQ(word_of(s.ask({"UNWRAP", "ord_zz"})), "BAD_SYMBOL");
  EXPECT_EQ(word_of(s.ask({"WRAP", "ord", "12x"})), "INVALID_ARGUMENT");
  EXPECT_EQ(word_of(s.ask({"WRAP", "ord", "-5"})), "INVALID_ARGUMENT");
}

TEST(RespPublicIds, ArityAndTheBatchBoundAreChecked) {
  FakePublicIds keys;
  Session s(keys);
  EXPECT_EQ(word_of(s.ask({"WRAP", "ord"})), "ERR");
  EXPECT_EQ(word_of(s.ask({"UNWRAP"})), "ERR");
  EXPECT_EQ(word_of(s.ask({"NEXTPUBIDS", "ord"})), "ERR");
  EXPECT_EQ(word_of(s.ask({"NEXTPUBIDS", "ord", "0"})), "ERR");
  s.svc.service->set_max_batch(2);
  EXPECT_EQ(word_of(s.ask({"WRAP", "ord", "1", "2", "3"})), "INVALID_ARGUMENT");
  EXPECT_EQ(s.ask({"WRAP", "ord", "1", "2"}).items.size(), 2u);
}

TEST(RespPublicIds, UnwrapIsRefusedToATcpPeerThatIsNotLocal) {
  FakePublicIds keys;
  Session remote(keys, /*unix_socket=*/false, /*loopback=*/false);
  EXPECT_EQ(word_of(remote.ask({"UNWRAP", "ord_1"})), "NOPERM");
  EXPECT_EQ(keys.denied.load(), 1);
  // Wrapping is not an oracle: anyone who may issue may wrap.
  EXPECT_EQ(remote.ask({"WRAP", "ord", "1"}).type, '*');
  Session loopback(keys, false, true);
  EXPECT_EQ(id_of(loopback.ask({"UNWRAP", "ord_1"}).items.at(0)), 1u);
}

TEST(RespPublicIds, UnderTheTokenRuleOnlyTheSocketAndAuthenticatedClientsUnwrap) {
  FakePublicIds keys;
  keys.callers = UnwrapCallers::kToken;
  Session loopback_without_token(keys, false, true);
  EXPECT_EQ(word_of(loopback_without_token.ask({"UNWRAP", "ord_1"})), "NOPERM");
  Session with_token(keys, false, false, "s3cret");
  EXPECT_EQ(word_of(with_token.ask({"UNWRAP", "ord_1"})), "NOAUTH");
  EXPECT_EQ(with_token.ask({"AUTH", "s3cret"}).type, '+');
  EXPECT_EQ(id_of(with_token.ask({"UNWRAP", "ord_1"}).items.at(0)), 1u);
  Session socket(keys, true);
  EXPECT_EQ(id_of(socket.ask({"UNWRAP", "ord_1"}).items.at(0)), 1u);
  keys.callers = UnwrapCallers::kAny;
  Session anyone(keys, false, false);
  EXPECT_EQ(id_of(anyone.ask({"UNWRAP", "ord_1"}).items.at(0)), 1u);
}

}  // namespace
}  // namespace snowid::daemon
