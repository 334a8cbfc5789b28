// The sequence commands of RespSession (NEXTSEQ, SEQRANGE, SEQCREATE,
// SEQINFO, SEQLIST) on the in-memory ticket table: reply shapes in RESP2 and
// RESP3, Redis-worded argument errors, refusal words, sequences off, INFO, and
// deferral: with a pool a command that waits on the table is handed over and
// the commands after it wait for its reply; without one it runs inline.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "resp_session.h"
#include "resp_test_support.h"
#include "sequence_service.h"
#include "sequence_test_support.h"
#include "service_test_support.h"
#include "snowid/time.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using test_support::as_map;
using test_support::cmd;
using test_support::read_all;
using test_support::read_one;
using test_support::Reply;
using test_support::talk;
using test_support::TestSequences;
using test_support::TestService;
using test_support::word_of;

// Answers to NEXTSEQ with a count, or SEQRANGE: the numbers of an array,
// each a bulk string of decimal digits.
std::vector<std::int64_t> integers(const Reply& r) {
  std::vector<std::int64_t> out;
  EXPECT_EQ(r.type, '*') << r.text;
  for (const Reply& item : r.items) out.push_back(test_support::decimal_of(item));
  return out;
}

// A bulk string of `n`'s decimal digits, as NEXTSEQ answers.
std::string bulk(std::int64_t n) {
  const std::string digits = std::to_string(n);
  return "$" + std::to_string(digits.size()) + "\r\n" + digits + "\r\n";
}

class RespSequenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(svc.service, nullptr);
    seq.create("orders", 1001, 10);
  }

  RespSession session(bool defer = false, std::string token = "") {
    RespSessionOptions o;
    o.sequences = seq.service.get();
    o.defer = defer;
    o.token = std::move(token);
    return RespSession(*svc.service, std::move(o));
  }

  TestService svc;
  TestSequences seq;
};

TEST_F(RespSequenceTest, NextSeqIsAnIntegerAndWithACountAnArrayOfConsecutiveNumbers) {
  RespSession s = session();
  EXPECT_EQ(talk(s, cmd({"NEXTSEQ", "orders"})), bulk(1001));
  EXPECT_EQ(integers(read_one(talk(s, cmd({"nextseq", "orders", "3"})))),
            (std::vector<std::int64_t>{1002, 1003, 1004}));
  // Across several ranges of the table (step 10).
  const std::vector<std::int64_t> many =
      integers(read_one(talk(s, cmd({"NEXTSEQ", "orders", "25"}))));
  ASSERT_EQ(many.size(), 25u);
  EXPECT_EQ(many.front(), 1005);
  for (std::size_t i = 1; i < many.size(); ++i) EXPECT_LT(many[i - 1], many[i]);
  EXPECT_EQ(integers(read_one(talk(s, cmd({"NEXTSEQ", "orders", "1"})))).size(), 1u)
      << "a count of 1 is still an array";
}

TEST_F(RespSequenceTest, ArityCountsAndNumbersAreRefusedAsRedisWordsThemAndTheSessionStays) {
  RespSession s = session();
  EXPECT_EQ(talk(s, cmd({"NEXTSEQ"})), "-ERR wrong number of arguments for 'nextseq' command\r\n");
  EXPECT_EQ(talk(s, cmd({"NEXTSEQ", "a", "1", "2"})),
            "-ERR wrong number of arguments for 'nextseq' command\r\n");
  EXPECT_EQ(talk(s, cmd({"NEXTSEQ", "orders", "x"})),
            "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(talk(s, cmd({"NEXTSEQ", "orders", "0"})),
            "-ERR NEXTSEQ count must be between 1 and 10000\r\n");
  EXPECT_EQ(talk(s, cmd({"NEXTSEQ", "orders", "10001"})),
            "-ERR NEXTSEQ count must be between 1 and 10000\r\n");
  svc.service->set_max_batch(5);
  EXPECT_EQ(talk(s, cmd({"NEXTSEQ", "orders", "6"})),
            "-ERR NEXTSEQ count must be between 1 and 5\r\n");
  EXPECT_EQ(talk(s, cmd({"SEQRANGE", "orders"})),
            "-ERR wrong number of arguments for 'seqrange' command\r\n");
  EXPECT_EQ(talk(s, cmd({"SEQRANGE", "orders", "0"})),
            "-ERR SEQRANGE size must be between 1 and 1000\r\n");
  EXPECT_EQ(talk(s, cmd({"SEQRANGE", "orders", "1001"})),
            "-ERR SEQRANGE size must be between 1 and 1000\r\n");
  EXPECT_EQ(talk(s, cmd({"SEQRANGE", "orders", "1e3"})),
            "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(talk(s, cmd({"SEQCREATE", "x"})),
            "-ERR wrong number of arguments for 'seqcreate' command\r\n");
  EXPECT_EQ(talk(s, cmd({"SEQCREATE", "x", "1", "2", "3"})),
            "-ERR wrong number of arguments for 'seqcreate' command\r\n");
  EXPECT_EQ(talk(s, cmd({"SEQCREATE", "x", "one"})),
            "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(talk(s, cmd({"SEQINFO"})), "-ERR wrong number of arguments for 'seqinfo' command\r\n");
  EXPECT_EQ(talk(s, cmd({"SEQLIST", "x"})),
            "-ERR wrong number of arguments for 'seqlist' command\r\n");
  EXPECT_EQ(seq.memory.takes(), 0u) << "nothing reached the table";
  EXPECT_EQ(talk(s, cmd({"PING"})), "+PONG\r\n");
}

TEST_F(RespSequenceTest, UnknownSequenceIsNotFoundWithTheWayToCreateItAndIsNeverCreated) {
  RespSession s = session();
  EXPECT_EQ(talk(s, cmd({"NEXTSEQ", "ghost"})),
            "-NOT_FOUND sequence 'ghost' does not exist (create it with SEQCREATE)\r\n");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"SEQRANGE", "ghost", "5"})))), "NOT_FOUND");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"SEQINFO", "ghost"})))), "NOT_FOUND");
  EXPECT_EQ(seq.memory.get("ghost").status().code(), Code::kNotFound);
  EXPECT_EQ(talk(s, cmd({"PING"})), "+PONG\r\n");
}

TEST_F(RespSequenceTest, BadNamesAreInvalidArgumentBeforeTheTable) {
  RespSession s = session();
  for (const char* bad : {"a b", "a/b", "\xff", "x:y"}) {
    EXPECT_EQ(word_of(read_one(talk(s, cmd({"NEXTSEQ", bad})))), "INVALID_ARGUMENT") << bad;
    EXPECT_EQ(word_of(read_one(talk(s, cmd({"SEQCREATE", bad, "1"})))), "INVALID_ARGUMENT");
  }
  const std::string long_name(65, 'n');
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"SEQINFO", long_name})))), "INVALID_ARGUMENT");
  EXPECT_EQ(seq.faulty->calls(), 0u);
}

TEST_F(RespSequenceTest, SeqRangeGivesAStartAndAnExclusiveEndFromTheTable) {
  RespSession s = session();
  const std::vector<std::int64_t> a =
      integers(read_one(talk(s, cmd({"SEQRANGE", "orders", "100"}))));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0], 1001);
  EXPECT_EQ(a[1], 1101);
  const std::vector<std::int64_t> b = integers(read_one(talk(s, cmd({"SEQRANGE", "orders", "1"}))));
  EXPECT_EQ(b, (std::vector<std::int64_t>{1101, 1102}));
  // NEXTSEQ's buffer takes its ranges after them.
  const Reply n = read_one(talk(s, cmd({"NEXTSEQ", "orders"})));
  EXPECT_EQ(test_support::decimal_of(n), 1102);
}

TEST_F(RespSequenceTest, SeqCreateMakesASequenceWithStepThousandByDefaultAndOnlyOnce) {
  RespSession s = session();
  EXPECT_EQ(talk(s, cmd({"SEQCREATE", "invoices", "5"})), "+OK\r\n");
  const Result<SequenceInfo> row = seq.memory.get("invoices");
  ASSERT_TRUE(row.is_ok());
  EXPECT_EQ(row->next_value, 5);
  EXPECT_EQ(row->step, kDefaultSequenceStep);
  EXPECT_EQ(talk(s, cmd({"SEQCREATE", "tickets", "0", "7"})), "+OK\r\n");
  EXPECT_EQ(seq.memory.get("tickets")->step, 7);

  EXPECT_EQ(talk(s, cmd({"SEQCREATE", "invoices", "9"})),
            "-ALREADY_EXISTS sequence 'invoices' exists already\r\n");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"SEQCREATE", "neg", "-1"})))), "INVALID_ARGUMENT");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"SEQCREATE", "neg", "1", "0"})))), "INVALID_ARGUMENT");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"SEQCREATE", "neg", "1", "1000000001"})))),
            "INVALID_ARGUMENT");
  EXPECT_EQ(seq.memory.get("neg").status().code(), Code::kNotFound);
  EXPECT_EQ(talk(s, cmd({"NEXTSEQ", "invoices"})), bulk(5));
}

TEST_F(RespSequenceTest, SeqInfoIsAFlatArrayInResp2AndAMapInResp3WithTheBufferOnceOpen) {
  RespSession s = session();
  const Reply before = read_one(talk(s, cmd({"SEQINFO", "orders"})));
  ASSERT_EQ(before.type, '*');
  std::map<std::string, Reply> m = as_map(before);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m["name"].text, "orders");
  EXPECT_EQ(test_support::decimal_of(m["next_value"]), 1001);
  EXPECT_EQ(m["step"].number, 10);
  EXPECT_EQ(m["created"].text, format_iso8601(seq.clock.wall_now()));
  EXPECT_EQ(m["updated"].text, format_iso8601(seq.clock.wall_now()));

  ASSERT_EQ(talk(s, cmd({"NEXTSEQ", "orders", "2"})).substr(0, 4), "*2\r\n");
  ASSERT_EQ(read_one(talk(s, cmd({"HELLO", "3"}))).type, '%');
  const Reply after = read_one(talk(s, cmd({"SEQINFO", "orders"})));
  ASSERT_EQ(after.type, '%');
  m = as_map(after);
  ASSERT_EQ(m.size(), 9u);
  EXPECT_GE(test_support::decimal_of(m["next_value"]), 1011);
  EXPECT_EQ(m["numbers_issued"].number, 2);
  EXPECT_GE(m["ranges_fetched"].number, 1);
  EXPECT_EQ(m["step_in_use"].number, 10);
  EXPECT_GE(m["buffered"].number, 0);
}

TEST_F(RespSequenceTest, SeqListIsAnArrayOfNamesInOrder) {
  RespSession s = session();
  seq.create("alpha", 1, 1);
  const Reply r = read_one(talk(s, cmd({"SEQLIST"})));
  ASSERT_EQ(r.type, '*');
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].text, "alpha");
  EXPECT_EQ(r.items[1].text, "orders");
}

TEST_F(RespSequenceTest, AnUnreachableTableIsUnavailableWithARetryHint) {
  RespSession s = session();
  seq.faulty->set_failure(Status(Code::kUnavailable, "connection refused (injected)"));
  EXPECT_EQ(talk(s, cmd({"SEQRANGE", "orders", "5"})),
            "-UNAVAILABLE connection refused (injected); retry after 100ms\r\n");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"NEXTSEQ", "orders"})))), "UNAVAILABLE");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"SEQLIST"})))), "UNAVAILABLE");
  EXPECT_EQ(talk(s, cmd({"PING"})), "+PONG\r\n");
}

TEST_F(RespSequenceTest, ASpentSequenceIsOutOfRange) {
  seq.create("last", std::numeric_limits<std::int64_t>::max() - 1, 5);
  RespSession s = session();
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"NEXTSEQ", "last"})))), "OUT_OF_RANGE");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"SEQRANGE", "last", "2"})))), "OUT_OF_RANGE");
}

TEST_F(RespSequenceTest, WithSequencesOffEveryCommandAnswersSequencesOff) {
  const std::string off = "-SEQUENCES_OFF " + std::string(kSequencesOffMessage) + "\r\n";
  RespSession none(*svc.service, RespSessionOptions{});
  SequenceService disabled(nullptr, seq.clock, test_support::sequence_test_options());
  RespSessionOptions o;
  o.sequences = &disabled;
  RespSession s(*svc.service, std::move(o));
  for (RespSession* session : {&none, &s}) {
    EXPECT_EQ(talk(*session, cmd({"NEXTSEQ", "orders"})), off);
    EXPECT_EQ(talk(*session, cmd({"SEQRANGE", "orders", "5"})), off);
    EXPECT_EQ(talk(*session, cmd({"SEQCREATE", "orders", "5"})), off);
    EXPECT_EQ(talk(*session, cmd({"SEQINFO", "orders"})), off);
    EXPECT_EQ(talk(*session, cmd({"SEQLIST"})), off);
    EXPECT_EQ(talk(*session, cmd({"NEXTID"}))[0], '$') << "ids are served";
  }
  const Reply info = read_one(talk(s, cmd({"INFO", "sequences"})));
  EXPECT_EQ(info.text, "# Sequences\r\nsequences_store:off\r\n");
}

TEST_F(RespSequenceTest, InfoSequencesShowsTheStoreAndTheCounters) {
  RespSession s = session();
  ASSERT_EQ(talk(s, cmd({"NEXTSEQ", "orders", "3"})).substr(0, 4), "*3\r\n");
  ASSERT_EQ(read_one(talk(s, cmd({"SEQRANGE", "orders", "4"}))).items.size(), 2u);
  const Reply info = read_one(talk(s, cmd({"INFO", "sequences"})));
  ASSERT_EQ(info.type, '$');
  for (const std::string line :
       {"# Sequences\r\n", "sequences_store:memory\r\n", "sequences_url:memory:test\r\n",
        "sequences_buffered:1\r\n", "sequences_numbers_issued:3\r\n",
        "sequences_ranges_served:1\r\n", "sequences_store_calls:", "sequences_buffer_waits:"}) {
    EXPECT_NE(info.text.find(line), std::string::npos) << line << " in:\n" << info.text;
  }
  EXPECT_NE(read_one(talk(s, cmd({"INFO"}))).text.find("# Sequences\r\n"), std::string::npos)
      << "in the default sections";
}

TEST_F(RespSequenceTest, WithATokenSequenceCommandsNeedAuth) {
  RespSession s = session(false, "t0k3n");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"NEXTSEQ", "orders"})))), "NOAUTH");
  EXPECT_EQ(word_of(read_one(talk(s, cmd({"SEQLIST"})))), "NOAUTH");
  EXPECT_EQ(talk(s, cmd({"AUTH", "t0k3n"})), "+OK\r\n");
  EXPECT_EQ(talk(s, cmd({"NEXTSEQ", "orders"})), bulk(1001));
}

// ---------------------------------------------------------------- deferral

TEST_F(RespSequenceTest, WithAPoolAWaitingCommandIsHandedOverAndTheRestWaitForItsReply) {
  RespSession s = session(true);
  std::string out;
  ASSERT_TRUE(s.on_bytes(
      cmd({"NEXTID"}) + cmd({"SEQRANGE", "orders", "5"}) + cmd({"NEXTID"}) + cmd({"PING"}), out));
  // The first NEXTID is answered; SEQRANGE waits on the table; nothing after
  // it may be answered before it.
  std::vector<Reply> replies = read_all(out);
  ASSERT_EQ(replies.size(), 1u) << out;
  EXPECT_TRUE(s.pending());
  EXPECT_EQ(seq.memory.takes(), 0u) << "nothing ran on this thread";
  DeferredReply work = s.take_deferred();
  ASSERT_TRUE(work);
  EXPECT_TRUE(s.awaiting());
  EXPECT_FALSE(s.take_deferred()) << "handed over once";

  // More bytes meanwhile are kept, not answered.
  ASSERT_TRUE(s.on_bytes(cmd({"ECHO", "late"}), out));
  EXPECT_EQ(read_all(out).size(), 1u);

  // The work is independent of the session: run it on another thread.
  std::string reply;
  std::thread pool([&] { reply = work(); });
  pool.join();
  EXPECT_EQ(seq.memory.takes(), 1u);
  s.complete_deferred(reply, out);
  EXPECT_FALSE(s.awaiting());
  ASSERT_TRUE(s.on_bytes({}, out));
  EXPECT_FALSE(s.pending());

  replies = read_all(out);
  ASSERT_EQ(replies.size(), 5u) << out;
  EXPECT_EQ(replies[0].type, '$');
  EXPECT_EQ(integers(replies[1]), (std::vector<std::int64_t>{1001, 1006}));
  EXPECT_EQ(replies[2].type, '$');
  EXPECT_GT(test_support::id_of(replies[2]), test_support::id_of(replies[0]));
  EXPECT_EQ(replies[3].text, "PONG");
  EXPECT_EQ(replies[4].text, "late");
}

TEST_F(RespSequenceTest, WithAPoolNextSeqGoesToThePoolOnlyWhileTheBufferCannotAnswer) {
  RespSession s = session(true);
  std::string out;
  ASSERT_TRUE(s.on_bytes(cmd({"NEXTSEQ", "orders"}), out));
  EXPECT_TRUE(out.empty());
  DeferredReply work = s.take_deferred();
  ASSERT_TRUE(work) << "no buffer yet: the pool opens it";
  s.complete_deferred(work(), out);
  ASSERT_TRUE(s.on_bytes({}, out));
  EXPECT_EQ(out, bulk(1001));

  // The buffer holds the rest of the range now: answered on this thread.
  out.clear();
  seq.faulty->set_stalled(true);
  ASSERT_TRUE(s.on_bytes(cmd({"NEXTSEQ", "orders"}) + cmd({"NEXTSEQ", "orders", "2"}), out));
  EXPECT_FALSE(s.take_deferred());
  EXPECT_EQ(out, bulk(1002) + "*2\r\n" + bulk(1003) + bulk(1004));

  // Admin commands always go to the pool, even with the buffer full.
  out.clear();
  ASSERT_TRUE(s.on_bytes(cmd({"SEQINFO", "orders"}), out));
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(s.take_deferred());
}

TEST_F(RespSequenceTest, WithoutAPoolTheWaitingCommandRunsInline) {
  RespSession s = session(false);
  std::string out;
  ASSERT_TRUE(s.on_bytes(cmd({"SEQLIST"}) + cmd({"NEXTSEQ", "orders"}), out));
  EXPECT_FALSE(s.pending());
  EXPECT_FALSE(s.take_deferred());
  const std::vector<Reply> replies = read_all(out);
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0].items.size(), 1u);
  EXPECT_EQ(test_support::decimal_of(replies[1]), 1001);
}

}  // namespace
}  // namespace snowid::daemon
