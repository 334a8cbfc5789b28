#include "resp_session.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "resp_test_support.h"
#include "service_test_support.h"
#include "snowid/layout.h"
#include "snowid/leased_generator.h"
#include "snowid/testing/memory_registry.h"
#include "snowid/testing/simulated_clock.h"
#include "snowid/time.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using test_support::as_map;
using test_support::cmd;
using test_support::eventually;
using test_support::id_of;
using test_support::integer_id_of;
using test_support::read_all;
using test_support::read_one;
using test_support::Reply;
using test_support::talk;
using test_support::TestService;
using test_support::word_of;

class RespSessionTest : public ::testing::Test {
 protected:
  RespSession session(RespSessionOptions o = {}) { return RespSession(*svc.service, std::move(o)); }
  RespSession authed_session(std::string token) {
    RespSessionOptions o;
    o.token = std::move(token);
    return session(std::move(o));
  }

  TestService svc;
};

TEST_F(RespSessionTest, PingRepliesPongOrItsArgumentAndEchoRepliesTheMessage) {
  RespSession s = session();
  EXPECT_EQ(talk(s, cmd({"PING"})), "+PONG\r\n");
  EXPECT_EQ(talk(s, cmd({"PING", "hello there"})), "$11\r\nhello there\r\n");
  EXPECT_EQ(talk(s, cmd({"ECHO", std::string_view("a\r\nb\0", 5)})),
            std::string("$5\r\na\r\nb\0\r\n", 11));
  EXPECT_EQ(talk(s, "PING\r\n"), "+PONG\r\n") << "inline form";
  EXPECT_EQ(talk(s, cmd({"PING", "a", "b"})),
            "-ERR wrong number of arguments for 'ping' command\r\n");
  EXPECT_EQ(talk(s, cmd({"ECHO"})), "-ERR wrong number of arguments for 'echo' command\r\n");
  EXPECT_EQ(s.commands(), 6u);
}

TEST_F(RespSessionTest, CommandNamesAreCaseInsensitive) {
  RespSession s = session();
  EXPECT_EQ(talk(s, cmd({"pInG"})), "+PONG\r\n");
  EXPECT_EQ(read_one(talk(s, cmd({"nextid"}))).type, '$');
  EXPECT_EQ(read_one(talk(s, cmd({"NeXtIdS", "3"}))).items.size(), 3u);
  EXPECT_EQ(talk(s, cmd({"echo", "X"})), "$1\r\nX\r\n");
}

TEST_F(RespSessionTest, NextIdIsIncreasingAndUniqueAcrossTenThousandCalls) {
  RespSession s = session();
  std::set<std::uint64_t> seen;
  std::uint64_t last = 0;
  const std::string request = cmd({"NEXTID"});
  for (int i = 0; i < 10000; ++i) {
    const Reply r = read_one(talk(s, request));
    ASSERT_EQ(r.type, '$') << i << ": " << r.text;
    const std::uint64_t id = id_of(r);
    ASSERT_GT(id, last) << i;
    last = id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 10000u);
  EXPECT_EQ(svc.service->snapshot().counters.single_requests, 10000u);
}

TEST_F(RespSessionTest, NextIdsReturnsNIncreasingUniqueIdsAfterEarlierOnes) {
  RespSession s = session();
  std::uint64_t last = id_of(read_one(talk(s, cmd({"NEXTID"}))));
  std::set<std::uint64_t> seen{last};
  std::size_t total = 1;
  // 5000 spans two ticks of 4,096 ids; 10000 is the maximum.
  for (const char* n : {"1", "2", "100", "4096", "5000", "10000"}) {
    const Reply r = read_one(talk(s, cmd({"NEXTIDS", n})));
    ASSERT_EQ(r.type, '*') << n << ": " << r.text;
    ASSERT_EQ(r.items.size(), std::stoull(n)) << n;
    for (const Reply& item : r.items) {
      const std::uint64_t id = id_of(item);
      ASSERT_GT(id, last) << n;
      last = id;
      seen.insert(id);
    }
    total += r.items.size();
  }
  EXPECT_EQ(seen.size(), total);
  const ServiceSnapshot snap = svc.service->snapshot();
  EXPECT_EQ(snap.counters.ids_issued, total);
  EXPECT_EQ(snap.counters.batch_requests, 6u);
}

TEST_F(RespSessionTest, NextIdsOutsideOneToMaxBatchIsRefusedWithTheBound) {
  RespSession s = session();
  const std::string bound = "-ERR NEXTIDS count must be between 1 and 10000\r\n";
  EXPECT_EQ(talk(s, cmd({"NEXTIDS", "0"})), bound);
  EXPECT_EQ(talk(s, cmd({"NEXTIDS", "-5"})), bound);
  EXPECT_EQ(talk(s, cmd({"NEXTIDS", "10001"})), bound);
  EXPECT_EQ(talk(s, cmd({"NEXTIDS", "9223372036854775807"})), bound);
  svc.service->set_max_batch(50);
  EXPECT_EQ(talk(s, cmd({"NEXTIDS", "51"})), "-ERR NEXTIDS count must be between 1 and 50\r\n")
      << "the bound is a runtime setting";
  EXPECT_EQ(read_one(talk(s, cmd({"NEXTIDS", "50"}))).items.size(), 50u);
}

TEST_F(RespSessionTest, NextIdsCountThatIsNotAnIntegerIsRefused) {
  RespSession s = session();
  const std::string not_integer = "-ERR value is not an integer or out of range\r\n";
  for (const char* n : {"abc", "1.5", "", " 5", "5 ", "+5", "05", "-0", "0x10",
                        "9223372036854775808", "99999999999999999999999"}) {
    EXPECT_EQ(talk(s, cmd({"NEXTIDS", n})), not_integer) << "'" << n << "'";
  }
  EXPECT_EQ(talk(s, cmd({"NEXTIDS"})), "-ERR wrong number of arguments for 'nextids' command\r\n");
  EXPECT_EQ(talk(s, cmd({"NEXTIDS", "1", "2"})),
            "-ERR wrong number of arguments for 'nextids' command\r\n");
  EXPECT_EQ(talk(s, cmd({"NEXTID", "1"})),
            "-ERR wrong number of arguments for 'nextid' command\r\n");
}

// The same 1000 commands, given to two sessions on two identical services:
// all at once to one, a byte at a time to the other. Each command's reply
// comes in order, and the bytes are the same.
TEST_F(RespSessionTest, PipelinedMixIsAnsweredInOrderAndAByteAtATimeGivesTheSameBytes) {
  std::string pipeline;
  std::vector<char> expected_types;
  for (int i = 0; i < 1000; ++i) {
    switch (i % 8) {
      case 0:
        pipeline += cmd({"NEXTID"});
        expected_types.push_back('$');
        break;
      case 1:
        pipeline += cmd({"NEXTIDS", std::to_string(1 + i % 300)});
        expected_types.push_back('*');
        break;
      case 2:
        pipeline += "PING\r\n";
        expected_types.push_back('+');
        break;
      case 3:
        pipeline += cmd({"ECHO", "message " + std::to_string(i)});
        expected_types.push_back('$');
        break;
      case 4:
        pipeline += cmd({"DECODE", "4096"});
        expected_types.push_back('*');
        break;
      case 5:
        pipeline += cmd({"NOSUCH", "x"});
        expected_types.push_back('-');
        break;
      case 6:
        pipeline += "nextid\r\n";
        expected_types.push_back('$');
        break;
      case 7:
        pipeline += cmd({"NEXTIDS", "0"});
        expected_types.push_back('-');
        break;
    }
  }
  RespSession whole = session();
  bool open = false;
  const std::string out_whole = talk(whole, pipeline, &open);
  EXPECT_TRUE(open);
  EXPECT_EQ(whole.commands(), 1000u);

  TestService twin;
  RespSession bytewise(*twin.service, {});
  std::string out_bytes;
  for (const char c : pipeline) {
    ASSERT_TRUE(bytewise.on_bytes(std::string_view(&c, 1), out_bytes));
    while (bytewise.pending()) ASSERT_TRUE(bytewise.on_bytes({}, out_bytes));
  }
  EXPECT_EQ(bytewise.commands(), 1000u);
  EXPECT_EQ(out_bytes, out_whole);

  const std::vector<Reply> replies = read_all(out_whole);
  ASSERT_EQ(replies.size(), 1000u);
  std::set<std::uint64_t> ids;
  std::uint64_t last = 0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < replies.size(); ++i) {
    ASSERT_EQ(replies[i].type, expected_types[i]) << "reply " << i << ": " << replies[i].text;
    std::vector<const Reply*> issued;
    if (i % 8 == 0 || i % 8 == 6) issued.push_back(&replies[i]);
    if (i % 8 == 1) {
      ASSERT_EQ(replies[i].items.size(), 1 + i % 300);
      for (const Reply& r : replies[i].items) issued.push_back(&r);
    }
    if (i % 8 == 3) {
      EXPECT_EQ(replies[i].text, "message " + std::to_string(i));
    }
    for (const Reply* r : issued) {
      const std::uint64_t id = id_of(*r);
      ASSERT_GT(id, last) << "reply " << i;
      last = id;
      ids.insert(id);
      ++count;
    }
  }
  EXPECT_EQ(ids.size(), count);
}

void expect_decodes_to(const Reply& reply, std::uint64_t id, const Layout& layout,
                       WorkerId worker) {
  const DecodedId d = layout.decode(id).value();
  std::map<std::string, Reply> m = as_map(reply);
  ASSERT_EQ(m.size(), 8u);
  EXPECT_EQ(m["id"].type, '$') << "the id as a string, exact in every client";
  EXPECT_EQ(m["id"].text, std::to_string(id));
  EXPECT_EQ(m["time"].type, '$');
  EXPECT_EQ(m["time"].text, format_iso8601(d.time));
  EXPECT_EQ(m["unix_ms"].number, unix_ms(d.time));
  EXPECT_EQ(m["ticks"].number, d.ticks);
  EXPECT_EQ(m["field_time"].number, d.ticks) << "the time field, renamed so keys stay unique";
  EXPECT_EQ(m["region"].number, worker.region);
  EXPECT_EQ(m["host"].number, worker.host);
  EXPECT_EQ(m["sequence"].type, ':');
  EXPECT_EQ(static_cast<std::uint64_t>(m["sequence"].number), d.values[3]);
}

TEST_F(RespSessionTest, DecodeOfANextIdRoundTripsInResp2AsAFlatArray) {
  RespSession s = session();
  const std::int64_t before = unix_ms(svc.clock.wall_now());
  const std::uint64_t id = id_of(read_one(talk(s, cmd({"NEXTID"}))));
  const std::int64_t after = unix_ms(svc.clock.wall_now());
  const Reply r = read_one(talk(s, cmd({"DECODE", std::to_string(id)})));
  ASSERT_EQ(r.type, '*') << r.text;
  ASSERT_EQ(r.items.size(), 16u);
  EXPECT_EQ(r.items[0].text, "id");
  EXPECT_EQ(r.items[2].text, "time");
  EXPECT_EQ(r.items[4].text, "unix_ms");
  EXPECT_EQ(r.items[6].text, "ticks");
  expect_decodes_to(r, id, svc.service->layout(), svc.generator->worker());
  const std::int64_t made = as_map(r)["unix_ms"].number;
  EXPECT_GE(made, before) << "made on the simulated clock";
  EXPECT_LE(made, after);
}

TEST_F(RespSessionTest, DecodeOfANextIdRoundTripsInResp3AsAMap) {
  RespSession s = session();
  ASSERT_EQ(read_one(talk(s, cmd({"HELLO", "3"}))).type, '%');
  const std::uint64_t id = id_of(read_one(talk(s, cmd({"NEXTID"}))));
  const Reply r = read_one(talk(s, cmd({"DECODE", std::to_string(id)})));
  ASSERT_EQ(r.type, '%') << r.text;
  ASSERT_EQ(r.items.size(), 16u);
  expect_decodes_to(r, id, svc.service->layout(), svc.generator->worker());
}

// A refused DECODE carries the service's word, as HTTP does: malformed text
// is INVALID_ARGUMENT, a number beyond the layout OUT_OF_RANGE.
TEST_F(RespSessionTest, IdFormatSwitchesThisConnectionBetweenStringsAndIntegers) {
  RespSession s = session();
  EXPECT_EQ(talk(s, cmd({"IDFORMAT"})), "+STRING\r\n") << "strings by default";
  const std::uint64_t a = id_of(read_one(talk(s, cmd({"NEXTID"}))));
  EXPECT_EQ(talk(s, cmd({"IDFORMAT", "INTEGER"})), "+OK\r\n");
  EXPECT_EQ(talk(s, cmd({"IDFORMAT"})), "+INTEGER\r\n");
  const std::uint64_t b = integer_id_of(read_one(talk(s, cmd({"NEXTID"}))));
  EXPECT_GT(b, a);
  const Reply batch = read_one(talk(s, cmd({"NEXTIDS", "3"})));
  ASSERT_EQ(batch.items.size(), 3u);
  for (const Reply& r : batch.items) EXPECT_GT(integer_id_of(r), b);
  std::map<std::string, Reply> m = as_map(read_one(talk(s, cmd({"DECODE", std::to_string(b)}))));
  EXPECT_EQ(m["id"].type, ':');
  EXPECT_EQ(static_cast<std::uint64_t>(m["id"].number), b);
  EXPECT_NE(talk(s, cmd({"CLIENT", "INFO"})).find(" idformat=integer"), std::string::npos);

  EXPECT_EQ(talk(s, cmd({"idformat", "string"})), "+OK\r\n") << "case-insensitive";
  EXPECT_GT(id_of(read_one(talk(s, cmd({"NEXTID"})))), b);
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"IDFORMAT", "hex"})))), "ERR");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"IDFORMAT", "string", "x"})))), "ERR");
  EXPECT_EQ(talk(s, cmd({"IDFORMAT"})), "+STRING\r\n") << "a refused change changes nothing";
}

TEST_F(RespSessionTest, DecodeOfABadIdIsRefusedWithTheWordOfItsCode) {
  RespSession s = session();
  for (const char* bad : {"abc", "-1", "", "12x", "1 2"}) {
    const Reply r = read_one(talk(s, cmd({"DECODE", bad})));
    EXPECT_EQ(word_of(r), "INVALID_ARGUMENT") << "'" << bad << "': " << r.text;
    EXPECT_GT(r.text.size(), std::string("INVALID_ARGUMENT ").size()) << "with a message";
  }
  for (const char* big : {"9223372036854775808", "99999999999999999999"}) {
    const Reply r = read_one(talk(s, cmd({"DECODE", big})));
    EXPECT_EQ(word_of(r), "OUT_OF_RANGE") << big << ": " << r.text;
  }
  bool open = false;
  EXPECT_EQ(talk(s, cmd({"DECODE"}), &open),
            "-ERR wrong number of arguments for 'decode' command\r\n");
  EXPECT_TRUE(open);
  EXPECT_EQ(svc.service->snapshot().counters.decode_errors, 7u);
}

TEST_F(RespSessionTest, BadCommandsKeepTheSessionAlive) {
  RespSession s = session();
  bool open = false;
  EXPECT_EQ(talk(s, cmd({"FOO", "a", "b"}), &open),
            "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n");
  EXPECT_TRUE(open);
  EXPECT_EQ(talk(s, cmd({"foo"})), "-ERR unknown command 'foo', with args beginning with: \r\n");
  // At most three arguments are quoted, each cut short; CR and LF never end
  // the error line early.
  const std::string long_arg(100, 'x');
  const std::string out = talk(s, cmd({"BAD\r\nNAME", long_arg, "2", "3", "4"}), &open);
  EXPECT_TRUE(open);
  EXPECT_EQ(out.find("\r\n"), out.size() - 2) << out;
  EXPECT_EQ(out.find('4'), std::string::npos) << out;
  EXPECT_EQ(out.find(long_arg), std::string::npos) << out;
  EXPECT_EQ(word_of(read_one(out)), "ERR");
  EXPECT_EQ(talk(s, cmd({"NEXTIDS", "x"}), &open),
            "-ERR value is not an integer or out of range\r\n");
  EXPECT_TRUE(open);
  EXPECT_EQ(talk(s, cmd({"PING"}), &open), "+PONG\r\n");
  EXPECT_TRUE(open);
  EXPECT_FALSE(s.protocol_error());
}

TEST_F(RespSessionTest, ProtocolErrorAnswersEarlierCommandsThenClosesAndIgnoresLaterBytes) {
  RespSession s = session();
  bool open = true;
  const std::string out =
      talk(s, cmd({"PING"}) + cmd({"ECHO", "e"}) + "*1\r\n$x\r\n" + cmd({"PING"}), &open);
  EXPECT_FALSE(open);
  EXPECT_TRUE(s.protocol_error());
  const std::vector<Reply> replies = read_all(out);
  ASSERT_EQ(replies.size(), 3u) << out;
  EXPECT_EQ(replies[0].text, "PONG");
  EXPECT_EQ(replies[1].text, "e");
  EXPECT_EQ(replies[2].type, '-');
  EXPECT_EQ(replies[2].text.rfind("ERR Protocol error: ", 0), 0u) << replies[2].text;
  EXPECT_EQ(talk(s, cmd({"PING"}), &open), "");
  EXPECT_FALSE(open);
  EXPECT_EQ(s.commands(), 2u);
}

TEST_F(RespSessionTest, QuitRepliesOkThenClosesAndIgnoresTheRestOfThePipeline) {
  RespSession s = session();
  bool open = true;
  EXPECT_EQ(talk(s, cmd({"PING"}) + cmd({"quit"}) + cmd({"PING"}) + cmd({"NEXTID"}), &open),
            "+PONG\r\n+OK\r\n");
  EXPECT_FALSE(open);
  EXPECT_FALSE(s.protocol_error()) << "a clean close";
  EXPECT_EQ(talk(s, cmd({"PING"}), &open), "");
  EXPECT_FALSE(open);
  EXPECT_EQ(svc.service->snapshot().counters.single_requests, 0u) << "the NEXTID was not run";
}

TEST_F(RespSessionTest, HelloThreeSwitchesToMapsAndHelloTwoSwitchesBack) {
  RespSessionOptions o;
  o.client_id = 42;
  RespSession s = session(o);
  EXPECT_EQ(s.version(), RespVersion::kResp2);
  Reply hello = read_one(talk(s, cmd({"HELLO"})));
  EXPECT_EQ(hello.type, '*') << "no version: stays RESP2";
  EXPECT_EQ(as_map(hello)["proto"].number, 2);

  hello = read_one(talk(s, cmd({"hello", "3"})));
  ASSERT_EQ(hello.type, '%');
  EXPECT_EQ(s.version(), RespVersion::kResp3);
  std::map<std::string, Reply> m = as_map(hello);
  EXPECT_EQ(m.size(), 7u);
  EXPECT_EQ(m["server"].text, "snowid");
  EXPECT_EQ(m["version"].type, '$');
  EXPECT_FALSE(m["version"].text.empty());
  EXPECT_EQ(m["proto"].number, 3);
  EXPECT_EQ(m["id"].number, 42);
  EXPECT_EQ(m["mode"].text, "standalone");
  EXPECT_EQ(m["role"].text, "master");
  EXPECT_EQ(m["modules"].type, '*');
  EXPECT_TRUE(m["modules"].items.empty());

  EXPECT_EQ(talk(s, cmd({"PING"})), "+PONG\r\n") << "PING is the same in RESP3";
  EXPECT_EQ(read_one(talk(s, cmd({"HELLO"}))).type, '%') << "no version: stays RESP3";
  EXPECT_EQ(talk(s, cmd({"CLIENT", "GETNAME"})), "_\r\n") << "the RESP3 null";

  EXPECT_EQ(talk(s, cmd({"HELLO", "4"})), "-NOPROTO unsupported protocol version\r\n");
  EXPECT_EQ(talk(s, cmd({"HELLO", "1"})), "-NOPROTO unsupported protocol version\r\n");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"HELLO", "three"})))), "ERR");
  EXPECT_EQ(talk(s, cmd({"HELLO", "2", "BOGUS"})), "-ERR Syntax error in HELLO option 'BOGUS'\r\n");
  EXPECT_EQ(talk(s, cmd({"HELLO", "2", "AUTH", "default"})),
            "-ERR Syntax error in HELLO option 'AUTH'\r\n")
      << "AUTH needs a user and a password";
  EXPECT_EQ(s.version(), RespVersion::kResp3) << "a refused HELLO changes nothing";

  hello = read_one(talk(s, cmd({"HELLO", "2", "SETNAME", "worker-7"})));
  EXPECT_EQ(hello.type, '*');
  EXPECT_EQ(s.version(), RespVersion::kResp2);
  EXPECT_EQ(talk(s, cmd({"CLIENT", "GETNAME"})), "$8\r\nworker-7\r\n");
  EXPECT_EQ(talk(s, cmd({"CLIENT", "SETNAME", ""})), "+OK\r\n");
  EXPECT_EQ(talk(s, cmd({"CLIENT", "GETNAME"})), "$-1\r\n") << "the RESP2 null";
}

TEST_F(RespSessionTest, AuthWithoutATokenConfiguredIsRefusedAsRedisDoes) {
  RespSession s = session();
  EXPECT_EQ(talk(s, cmd({"AUTH", "secret"})),
            "-ERR AUTH <password> called without any password configured for the default user. "
            "Are you sure your configuration is correct?\r\n");
  EXPECT_EQ(talk(s, cmd({"AUTH"})), "-ERR wrong number of arguments for 'auth' command\r\n");
  EXPECT_EQ(read_one(talk(s, cmd({"NEXTID"}))).type, '$') << "no token: no auth needed";
}

TEST_F(RespSessionTest, WithATokenOnlyAuthHelloAndQuitAreAnsweredBeforeAuth) {
  RespSession s = authed_session("s3cret");
  const std::string noauth = "-NOAUTH Authentication required.\r\n";
  for (const auto& c :
       {cmd({"NEXTID"}), cmd({"NEXTIDS", "2"}), cmd({"PING"}), cmd({"DECODE", "1"}), cmd({"INFO"}),
        cmd({"CLIENT", "ID"}), cmd({"ECHO", "x"}), cmd({"NOSUCH"})}) {
    EXPECT_EQ(talk(s, c), noauth) << c;
  }
  EXPECT_EQ(talk(s, cmd({"HELLO", "3"})), noauth);
  EXPECT_EQ(s.version(), RespVersion::kResp2);
  EXPECT_EQ(talk(s, cmd({"AUTH", "wrong"})),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  EXPECT_EQ(talk(s, cmd({"AUTH", "s3cret", "x"})),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n")
      << "the last argument is the password";
  EXPECT_EQ(talk(s, cmd({"AUTH", "s3cre"})),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  EXPECT_EQ(talk(s, cmd({"AUTH", "s3cret!"})),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  EXPECT_EQ(talk(s, cmd({"PING"})), noauth);
  EXPECT_EQ(talk(s, cmd({"AUTH", "s3cret"})), "+OK\r\n");
  EXPECT_EQ(talk(s, cmd({"PING"})), "+PONG\r\n");
  EXPECT_EQ(read_one(talk(s, cmd({"NEXTID"}))).type, '$');

  RespSession with_user = authed_session("s3cret");
  EXPECT_EQ(talk(with_user, cmd({"AUTH", "default", "s3cret"})), "+OK\r\n");
  EXPECT_EQ(talk(with_user, cmd({"PING"})), "+PONG\r\n");

  RespSession quitter = authed_session("s3cret");
  bool open = true;
  EXPECT_EQ(talk(quitter, cmd({"QUIT"}), &open), "+OK\r\n");
  EXPECT_FALSE(open);
}

TEST_F(RespSessionTest, HelloWithAuthAuthenticatesAndSwitchesInOneCommand) {
  RespSession s = authed_session("s3cret");
  EXPECT_EQ(talk(s, cmd({"HELLO", "3", "AUTH", "default", "nope"})),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  EXPECT_EQ(s.version(), RespVersion::kResp2);
  const Reply hello =
      read_one(talk(s, cmd({"HELLO", "3", "AUTH", "anyone", "s3cret", "SETNAME", "app"})));
  ASSERT_EQ(hello.type, '%') << hello.text;
  EXPECT_EQ(s.version(), RespVersion::kResp3);
  EXPECT_EQ(talk(s, cmd({"PING"})), "+PONG\r\n");
  EXPECT_EQ(talk(s, cmd({"CLIENT", "GETNAME"})), "$3\r\napp\r\n");
}

TEST_F(RespSessionTest, ClockStepBackOfTwoSecondsAnswersClockMovedBackThenUnhealthy) {
  RespSession s = session();
  ASSERT_EQ(read_one(talk(s, cmd({"NEXTID"}))).type, '$');
  svc.clock.step_wall(-2s);
  const Reply first = read_one(talk(s, cmd({"NEXTID"})));
  EXPECT_EQ(word_of(first), "CLOCK_MOVED_BACK") << first.text;
  EXPECT_EQ(first.text.find("retry after"), std::string::npos) << "not retryable";
  bool open = false;
  const Reply later = read_one(talk(s, cmd({"NEXTID"}), &open));
  EXPECT_TRUE(open) << "a refusal does not close the connection";
  EXPECT_EQ(word_of(later), "UNHEALTHY") << later.text;
  const Reply batch = read_one(talk(s, cmd({"NEXTIDS", "10"})));
  EXPECT_EQ(word_of(batch), "UNHEALTHY") << batch.text;
  EXPECT_EQ(batch.text.find("retry after"), std::string::npos);

  const Reply info = read_one(talk(s, cmd({"INFO", "health", "stats"})));
  EXPECT_NE(info.text.find("ready:0\r\n"), std::string::npos) << info.text;
  EXPECT_NE(info.text.find("healthy:0\r\n"), std::string::npos) << info.text;
  EXPECT_NE(info.text.find("refusals_clock_moved_back:1\r\n"), std::string::npos) << info.text;
  EXPECT_NE(info.text.find("refusals_unhealthy:2\r\n"), std::string::npos) << info.text;
}

TEST_F(RespSessionTest, RegistryOutageAnswersLeaseUncertainWithARetryHint) {
  RespSession s = session();
  ASSERT_EQ(read_one(talk(s, cmd({"NEXTID"}))).type, '$');
  svc.registry.set_unavailable(true);
  svc.clock.advance(9s);  // past stop_after (8 s) with no renewal
  const Reply r = read_one(talk(s, cmd({"NEXTID"})));
  EXPECT_EQ(word_of(r), "LEASE_UNCERTAIN") << r.text;
  EXPECT_NE(r.text.find("; retry after 10ms"), std::string::npos) << r.text;
  const Reply batch = read_one(talk(s, cmd({"NEXTIDS", "3"})));
  EXPECT_EQ(word_of(batch), "LEASE_UNCERTAIN") << batch.text;
  EXPECT_NE(batch.text.find("; retry after "), std::string::npos) << batch.text;
  svc.registry.set_unavailable(false);
}

// A layout with one worker id per region, so that a fenced holder finds no
// fresh id (the fenced one is quarantined) and its refusals can be seen.
Layout one_host_layout() {
  LayoutSpec spec;
  spec.name = "one_host";
  spec.fields = {{"time", FieldRole::kTime, 41},
                 {"region", FieldRole::kRegion, 2},
                 {"sequence", FieldRole::kSequence, 20}};
  auto l = Layout::create(spec);
  EXPECT_TRUE(l.is_ok()) << l.status().to_string();
  return l.is_ok() ? l.value() : Layout::snowid_default();
}

TEST(RespSessionLeaseTest, FencedLeaseWithNoFreshIdAnswersLeaseUncertainUntilReplaced) {
  TestService one(100, one_host_layout());
  ASSERT_NE(one.service, nullptr);
  RespSession s(*one.service, {});
  ASSERT_EQ(read_one(talk(s, cmd({"NEXTID"}))).type, '$');
  ASSERT_TRUE(one.registry.fence(one.generator->worker()).is_ok());
  // The watcher notices within moments; ids issued until then are fine.
  Reply r;
  ASSERT_TRUE(eventually([&] {
    r = read_one(talk(s, cmd({"NEXTID"})));
    return r.type != '$';
  }));
  EXPECT_EQ(word_of(r), "LEASE_UNCERTAIN") << r.text;
  EXPECT_NE(r.text.find("; retry after "), std::string::npos) << r.text;
  const Reply batch = read_one(talk(s, cmd({"NEXTIDS", "5"})));
  EXPECT_EQ(word_of(batch), "LEASE_UNCERTAIN") << batch.text;
  const Reply info = read_one(talk(s, cmd({"INFO", "health"})));
  EXPECT_NE(info.text.find("ready:0\r\n"), std::string::npos) << info.text;
  EXPECT_EQ(info.text.find("reason:\r\n"), std::string::npos) << "a reason is given: " << info.text;
}

TEST_F(RespSessionTest, AfterCloseEveryIssueAnswersShuttingDown) {
  RespSession s = session();
  ASSERT_EQ(read_one(talk(s, cmd({"NEXTID"}))).type, '$');
  ASSERT_TRUE(svc.service->close().is_ok());
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"NEXTID"})))), "SHUTTING_DOWN");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"NEXTIDS", "4"})))), "SHUTTING_DOWN");
  EXPECT_EQ(talk(s, cmd({"PING"})), "+PONG\r\n");
}

TEST_F(RespSessionTest, InfoHasEverySectionByDefaultAndOnlyThoseAskedFor) {
  RespSession s = session();
  ASSERT_EQ(read_one(talk(s, cmd({"NEXTIDS", "7"}))).items.size(), 7u);
  ASSERT_EQ(read_one(talk(s, cmd({"NEXTID"}))).type, '$');
  const Reply all = read_one(talk(s, cmd({"INFO"})));
  ASSERT_EQ(all.type, '$');
  const WorkerId w = svc.generator->worker();
  for (const std::string& line :
       {std::string("# Server\r\n"),
        std::string("snowid_version:"),
        std::string("process_id:"),
        "server_time_usec:" + std::to_string(unix_ms(svc.clock.wall_now()) * 1000) + "\r\n",
        std::string("uptime_in_seconds:"),
        std::string("\r\n\r\n# Layout\r\n"),
        std::string("layout_name:snowid\r\n"),
        std::string("layout_epoch:2026-01-01T00:00:00.000Z\r\n"),
        std::string("layout_unit_ms:1\r\n"),
        std::string("layout_bits_time:41\r\n"),
        std::string("layout_bits_region:2\r\n"),
        std::string("layout_bits_host:8\r\n"),
        std::string("layout_bits_sequence:12\r\n"),
        std::string("# Worker\r\n"),
        "region:" + std::to_string(w.region) + "\r\n",
        "host:" + std::to_string(w.host) + "\r\n",
        std::string("# Lease\r\n"),
        std::string("lease_state:held\r\n"),
        std::string("lease_renewals:"),
        std::string("lease_renewal_failures:"),
        std::string("lease_last_renewal_latency_ms:"),
        std::string("lease_max_renewal_latency_ms:"),
        std::string("lease_reacquisitions:0\r\n"),
        std::string("lease_losses:0\r\n"),
        std::string("# Health\r\n"),
        std::string("ready:1\r\n"),
        std::string("healthy:1\r\n"),
        std::string("reason:\r\n"),
        std::string("# Stats\r\n"),
        std::string("ids_issued:8\r\n"),
        std::string("single_requests:1\r\n"),
        std::string("batch_requests:1\r\n"),
        std::string("reserve_calls:1\r\n"),
        std::string("decodes:0\r\n")}) {
    EXPECT_NE(all.text.find(line), std::string::npos) << line << " in:\n" << all.text;
  }
  EXPECT_EQ(all.text.find("refusals_"), std::string::npos) << "none yet";
  EXPECT_EQ(read_one(talk(s, cmd({"INFO", "everything"}))).text.size(), all.text.size());

  const Reply lease = read_one(talk(s, cmd({"info", "LEASE"})));
  EXPECT_EQ(lease.text.rfind("# Lease\r\n", 0), 0u) << lease.text;
  EXPECT_EQ(lease.text.find("# Server"), std::string::npos) << lease.text;
  EXPECT_EQ(lease.text.find("# Stats"), std::string::npos) << lease.text;

  EXPECT_EQ(talk(s, cmd({"INFO", "keyspace"})), "$0\r\n\r\n") << "unknown section: empty";
}

TEST_F(RespSessionTest, HandshakeCommandsOfStockClientsAreAnswered) {
  RespSessionOptions o;
  o.client_id = 9;
  RespSession s = session(o);
  EXPECT_EQ(talk(s, cmd({"CLIENT", "SETINFO", "LIB-NAME", "redis-py"})), "+OK\r\n");
  EXPECT_EQ(talk(s, cmd({"CLIENT", "SETINFO", "LIB-VER", "5.0.1"})), "+OK\r\n");
  EXPECT_EQ(talk(s, cmd({"CLIENT", "SETNAME", "my app"})),
            "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
  EXPECT_EQ(talk(s, cmd({"client", "setname", "app"})), "+OK\r\n");
  EXPECT_EQ(talk(s, cmd({"CLIENT", "GETNAME"})), "$3\r\napp\r\n");
  EXPECT_EQ(talk(s, cmd({"CLIENT", "ID"})), ":9\r\n");
  const Reply info = read_one(talk(s, cmd({"CLIENT", "INFO"})));
  EXPECT_EQ(info.text, "id=9 name=app db=0 resp=2 idformat=string\n");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"CLIENT", "KILL", "x"})))), "ERR");
  EXPECT_EQ(talk(s, cmd({"CLIENT"})), "-ERR wrong number of arguments for 'client' command\r\n");

  EXPECT_EQ(talk(s, cmd({"SELECT", "0"})), "+OK\r\n");
  EXPECT_EQ(talk(s, cmd({"SELECT", "1"})), "-ERR DB index is out of range\r\n");
  EXPECT_EQ(talk(s, cmd({"SELECT", "x"})), "-ERR value is not an integer or out of range\r\n");

  // The two settings redis-benchmark reads at start; nothing else.
  EXPECT_EQ(talk(s, cmd({"CONFIG", "GET", "save"})), "*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
  EXPECT_EQ(talk(s, cmd({"CONFIG", "GET", "appendonly"})),
            "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
  EXPECT_EQ(talk(s, cmd({"CONFIG", "GET", "maxmemory"})), "*0\r\n");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"CONFIG", "SET", "save", ""})))), "ERR");
  EXPECT_EQ(talk(s, cmd({"CONFIG", "GET"})),
            "-ERR wrong number of arguments for 'config|get' command\r\n");

  EXPECT_EQ(talk(s, cmd({"COMMAND"})), "*0\r\n");
  EXPECT_EQ(talk(s, cmd({"COMMAND", "DOCS"})), "*0\r\n");
  EXPECT_EQ(talk(s, cmd({"COMMAND", "COUNT"})), ":0\r\n");

  ASSERT_EQ(read_one(talk(s, cmd({"HELLO", "3"}))).type, '%');
  EXPECT_EQ(talk(s, cmd({"CONFIG", "GET", "appendonly"})),
            "%1\r\n$10\r\nappendonly\r\n$2\r\nno\r\n")
      << "a map in RESP3";
  EXPECT_EQ(talk(s, cmd({"CONFIG", "GET", "maxmemory"})), "%0\r\n");
  EXPECT_EQ(talk(s, cmd({"COMMAND", "DOCS"})), "%0\r\n");
  EXPECT_EQ(read_one(talk(s, cmd({"CLIENT", "INFO"}))).text,
            "id=9 name=app db=0 resp=3 idformat=string\n");
}

}  // namespace
}  // namespace snowid::daemon

namespace snowid::daemon {
namespace {

// 16 KiB of "NEXTIDS 10000" asks for about 200 MB of replies: the session
// answers up to its budget, says more is pending, and answers the rest one
// budget at a time when called again with no new bytes.
TEST(RespSessionBudgetTest, PipelinedBatchesAreAnsweredOneOutputBudgetAtATime) {
  test_support::TestService t;
  ASSERT_TRUE(t.service);
  RespSessionOptions o;
  o.output_budget = 64 * 1024;
  RespSession session(*t.service, o);
  std::string in;
  for (int i = 0; i < 40; ++i) in += "NEXTIDS 10000\r\n";
  std::string out;
  ASSERT_TRUE(session.on_bytes(in, out));
  EXPECT_TRUE(session.pending());
  // One reply of 10000 ids is about 210 KB: one command per call here.
  EXPECT_LT(out.size(), 64 * 1024 + 256 * 1024u);
  std::uint64_t answered = session.commands();
  EXPECT_EQ(answered, 1u);
  int calls = 1;
  while (session.pending()) {
    out.clear();
    ASSERT_TRUE(session.on_bytes({}, out));
    ++calls;
    ASSERT_LT(calls, 100);
  }
  EXPECT_EQ(session.commands(), 40u);
  EXPECT_EQ(t.service->snapshot().counters.ids_issued, 400000u);
  // A final call with nothing buffered has nothing pending.
  out.clear();
  ASSERT_TRUE(session.on_bytes({}, out));
  EXPECT_FALSE(session.pending());
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace snowid::daemon
