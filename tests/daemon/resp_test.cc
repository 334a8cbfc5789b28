// The Redis protocol over the real socket: pipelining, errors that keep the
// connection and frames that end it, RESP3, AUTH on TCP, and clients that
// die in the middle of a pipeline.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <set>
#include <string>
#include <thread>

#include "test_support.h"

namespace snowid::daemon_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Expects `reply` to be an error whose first word is `word`.
::testing::AssertionResult is_error(const std::optional<RespValue>& reply,
                                    const std::string& word) {
  if (!reply) return ::testing::AssertionFailure() << "no reply";
  if (reply->error_word() != word) {
    return ::testing::AssertionFailure() << "expected -" << word << "..., got " << reply->debug();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult still_serves(RespConn& c) {
  std::optional<RespValue> pong = c.command({"PING"});
  if (!pong || pong->debug() != "+PONG") {
    return ::testing::AssertionFailure()
           << "PING after the error: " << (pong ? pong->debug() : "no reply");
  }
  return ::testing::AssertionSuccess();
}

TEST(Resp, PipelinedCommandsAreAnsweredInOrderWithIncreasingIds) {
  DaemonDir dir;
  auto d = dir.start_ready();
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());

  // 10,000 commands in one write: every tenth is NEXTIDS 100, the rest NEXTID.
  constexpr int kCommands = 10000;
  std::string pipeline;
  for (int i = 0; i < kCommands; ++i) {
    pipeline += i % 10 == 9 ? encode_command({"NEXTIDS", "100"}) : encode_command({"NEXTID"});
  }
  // The replies (about 2.5 MB) are read while the request is still being
  // written, so that neither side blocks the other.
  bool sent = false;
  std::thread writer([&] { sent = c->send(pipeline); });
  std::vector<std::uint64_t> ids;
  ids.reserve(kCommands * 11);
  std::string first_problem;
  for (int i = 0; i < kCommands; ++i) {
    std::optional<RespValue> r = c->read();
    if (!r) {
      first_problem = "no reply " + std::to_string(i);
      break;
    }
    const auto got = ids_of(*r);
    const std::size_t want = i % 10 == 9 ? 100 : 1;
    const bool shape =
        i % 10 == 9 ? r->type == RespValue::Type::kArray : r->type == RespValue::Type::kBulk;
    if (!got || got->size() != want || !shape) {
      first_problem = "reply " + std::to_string(i) + ": " + r->debug();
      break;
    }
    ids.insert(ids.end(), got->begin(), got->end());
  }
  writer.join();
  EXPECT_TRUE(sent);
  ASSERT_EQ(first_problem, "");
  EXPECT_EQ(ids.size(), 9000u + 1000u * 100u);
  EXPECT_TRUE(strictly_increasing(ids));  // hence all distinct
  // Nothing more than one reply per command.
  EXPECT_FALSE(c->read(milliseconds(100)).has_value());
}

// A small request whose replies are large (1.4 KB asking for 11 MB): the
// daemon answers it in slices, and must go on answering although the client
// sends nothing more. (A build that waited for more input stalled after the
// first 256 KB.)
TEST(Resp, SmallPipelineWithHugeRepliesIsAnsweredInFullWithoutMoreInput) {
  DaemonDir dir;
  auto d = dir.start_ready();
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  constexpr int kBatches = 50;
  std::string pipeline;
  for (int i = 0; i < kBatches; ++i) pipeline += encode_command({"NEXTIDS", "10000"});
  ASSERT_TRUE(c->send(pipeline));
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < kBatches; ++i) {
    const auto r = c->read();
    ASSERT_TRUE(r.has_value()) << "no reply " << i << " of " << kBatches;
    const auto got = ids_of(*r);
    ASSERT_TRUE(got.has_value()) << r->debug();
    ASSERT_EQ(got->size(), 10000u);
    ids.insert(ids.end(), got->begin(), got->end());
  }
  EXPECT_TRUE(strictly_increasing(ids));
  EXPECT_TRUE(still_serves(*c));
}

TEST(Resp, BadCommandsAndArgumentsKeepTheConnectionOpen) {
  DaemonDir dir;
  auto d = dir.start_ready({"--max-batch", "50"});
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());

  EXPECT_TRUE(is_error(c->command({"NOSUCHCOMMAND"}), "ERR"));
  EXPECT_TRUE(still_serves(*c));
  EXPECT_TRUE(is_error(c->command({"NEXTID", "extra"}), "ERR"));
  EXPECT_TRUE(still_serves(*c));
  EXPECT_TRUE(is_error(c->command({"NEXTIDS"}), "ERR"));
  EXPECT_TRUE(is_error(c->command({"NEXTIDS", "1", "2"}), "ERR"));
  EXPECT_TRUE(is_error(c->command({"NEXTIDS", "abc"}), "ERR"));
  EXPECT_TRUE(is_error(c->command({"NEXTIDS", "0"}), "ERR"));
  EXPECT_TRUE(is_error(c->command({"NEXTIDS", "-1"}), "ERR"));
  EXPECT_TRUE(is_error(c->command({"NEXTIDS", "51"}), "ERR"));
  EXPECT_TRUE(is_error(c->command({"NEXTIDS", "99999999999999999999999"}), "ERR"));
  EXPECT_TRUE(still_serves(*c));
  const auto at_bound = c->command({"NEXTIDS", "50"});
  ASSERT_TRUE(at_bound.has_value());
  const auto fifty = ids_of(*at_bound);
  ASSERT_TRUE(fifty.has_value()) << at_bound->debug();
  EXPECT_EQ(fifty->size(), 50u);
  const auto one = c->command({"NEXTIDS", "1"});
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->type, RespValue::Type::kArray) << one->debug();
  EXPECT_EQ(one->elems.size(), 1u) << one->debug();

  EXPECT_TRUE(is_error(c->command({"DECODE"}), "ERR"));
  EXPECT_TRUE(is_error(c->command({"DECODE", "not-a-number"}), "INVALID_ARGUMENT"));
  // A number, but beyond the layout's 63 bits.
  EXPECT_TRUE(is_error(c->command({"DECODE", "9223372036854775808"}), "OUT_OF_RANGE"));
  EXPECT_TRUE(is_error(c->command({"DECODE", "-5"}), "INVALID_ARGUMENT"));
  EXPECT_TRUE(is_error(c->command({"ECHO"}), "ERR"));
  EXPECT_TRUE(still_serves(*c));

  // The error replies did not cost ids: the next one still increases.
  const auto next = c->command({"NEXTID"});
  ASSERT_TRUE(next.has_value());
  const auto id = ids_of(*next);
  ASSERT_TRUE(id.has_value()) << next->debug();
  EXPECT_GT(id->front(), fifty->back());
}

TEST(Resp, MalformedFrameGetsAProtocolErrorAndThenTheConnectionCloses) {
  DaemonDir dir;
  auto d = dir.start_ready();
  {
    auto c = RespConn::connect_unix(dir.socket());
    ASSERT_TRUE(c.has_value());
    // A good command, then a bulk length that is not a number, then a good
    // command that must not be answered.
    ASSERT_TRUE(c->send(encode_command({"NEXTID"}) + "*1\r\n$abc\r\n" + encode_command({"PING"})));
    const auto id = c->read();
    ASSERT_TRUE(id.has_value());
    EXPECT_TRUE(ids_of(*id).has_value()) << id->debug();
    const auto err = c->read();
    ASSERT_TRUE(err.has_value()) << "no protocol error before the close";
    ASSERT_EQ(err->type, RespValue::Type::kError) << err->debug();
    EXPECT_TRUE(err->str.starts_with("ERR Protocol error")) << err->debug();
    EXPECT_FALSE(c->read(seconds(10)).has_value()) << "a reply after the protocol error";
    EXPECT_TRUE(c->closed()) << "the connection stayed open";
  }
  {
    // An array header that is not a number.
    auto c = RespConn::connect_unix(dir.socket());
    ASSERT_TRUE(c.has_value());
    ASSERT_TRUE(c->send("*x\r\n"));
    const auto err = c->read();
    ASSERT_TRUE(err.has_value());
    EXPECT_TRUE(err->str.starts_with("ERR Protocol error")) << err->debug();
    EXPECT_TRUE(c->wait_closed(seconds(10)));
  }
  // The daemon serves on.
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(still_serves(*c));
}

TEST(Resp, QuitRepliesOkThenCloses) {
  DaemonDir dir;
  auto d = dir.start_ready();
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  ASSERT_TRUE(c->send(encode_command({"QUIT"}) + encode_command({"PING"})));
  const auto ok = c->read();
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->debug(), "+OK");
  EXPECT_TRUE(c->wait_closed(seconds(10)));
}

TEST(Resp, Hello3SwitchesToResp3AndDecodeAnswersAMap) {
  DaemonDir dir;
  auto d = dir.start_ready();
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());

  const auto id_reply = c->command({"NEXTID"});
  ASSERT_TRUE(id_reply.has_value());
  const auto id = ids_of(*id_reply);
  ASSERT_TRUE(id.has_value()) << id_reply->debug();

  // RESP2: a flat array of names and values.
  const auto flat = c->command({"DECODE", std::to_string(id->front())});
  ASSERT_TRUE(flat.has_value());
  ASSERT_EQ(flat->type, RespValue::Type::kArray) << flat->debug();
  ASSERT_NE(flat->field("host"), nullptr) << flat->debug();
  EXPECT_EQ(flat->field("host")->integer, host_of(id->front()));

  const auto hello = c->command({"HELLO", "3"});
  ASSERT_TRUE(hello.has_value());
  ASSERT_EQ(hello->type, RespValue::Type::kMap) << hello->debug();
  ASSERT_NE(hello->field("proto"), nullptr) << hello->debug();
  EXPECT_EQ(hello->field("proto")->integer, 3);

  const auto map = c->command({"DECODE", std::to_string(id->front())});
  ASSERT_TRUE(map.has_value());
  ASSERT_EQ(map->type, RespValue::Type::kMap) << map->debug();
  ASSERT_NE(map->field("id"), nullptr);
  ASSERT_NE(map->field("region"), nullptr);
  ASSERT_NE(map->field("host"), nullptr);
  ASSERT_NE(map->field("sequence"), nullptr);
  ASSERT_NE(map->field("time"), nullptr);
  EXPECT_EQ(map->field("region")->integer, region_of(id->front()));
  EXPECT_EQ(map->field("host")->integer, host_of(id->front()));
  EXPECT_EQ(map->field("sequence")->integer, static_cast<std::int64_t>(id->front() & 0xfff));

  const auto batch = c->command({"NEXTIDS", "3"});
  ASSERT_TRUE(batch.has_value());
  const auto three = ids_of(*batch);
  ASSERT_TRUE(three.has_value()) << batch->debug();
  EXPECT_EQ(three->size(), 3u);
  EXPECT_TRUE(is_error(c->command({"NOSUCHCOMMAND"}), "ERR"));

  const auto back = c->command({"HELLO", "2"});
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->type, RespValue::Type::kArray) << back->debug();
  const auto flat_again = c->command({"DECODE", std::to_string(id->front())});
  ASSERT_TRUE(flat_again.has_value());
  EXPECT_EQ(flat_again->type, RespValue::Type::kArray) << flat_again->debug();
}

// JavaScript clients turn a RESP integer into a double, exact only up to
// 2^53, and every id is far above it: ids and sequence numbers go as bulk
// strings unless a connection asks for integers.
TEST(Resp, IdsAreBulkStringsUnlessTheConnectionOptsIntoIntegers) {
  DaemonDir dir;
  auto d = dir.start_ready();
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  auto other = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(other.has_value());

  const auto one = c->command({"NEXTID"});
  ASSERT_TRUE(one.has_value());
  ASSERT_EQ(one->type, RespValue::Type::kBulk) << one->debug();
  const std::optional<std::int64_t> first = wide_value(*one);
  ASSERT_TRUE(first.has_value()) << one->debug();
  EXPECT_GT(*first, std::int64_t{1} << 53) << "an id a double could round";
  const auto decoded = c->command({"DECODE", one->str});
  ASSERT_TRUE(decoded.has_value());
  ASSERT_NE(decoded->field("id"), nullptr) << decoded->debug();
  EXPECT_EQ(decoded->field("id")->type, RespValue::Type::kBulk);
  EXPECT_EQ(decoded->field("id")->str, one->str);
  EXPECT_EQ(decoded->field("host")->type, RespValue::Type::kInteger) << "an 8-bit field";

  const auto mode = c->command({"IDFORMAT"});
  ASSERT_TRUE(mode.has_value());
  EXPECT_EQ(mode->str, "STRING");
  const auto set = c->command({"IDFORMAT", "integer"});
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->type, RespValue::Type::kSimple) << set->debug();
  const auto as_int = c->command({"NEXTID"});
  ASSERT_TRUE(as_int.has_value());
  ASSERT_EQ(as_int->type, RespValue::Type::kInteger) << as_int->debug();
  EXPECT_GT(as_int->integer, *first);
  const auto batch = c->command({"NEXTIDS", "3"});
  ASSERT_TRUE(batch.has_value());
  ASSERT_EQ(batch->elems.size(), 3u) << batch->debug();
  for (const RespValue& e : batch->elems) EXPECT_EQ(e.type, RespValue::Type::kInteger);
  EXPECT_TRUE(is_error(c->command({"IDFORMAT", "double"}), "ERR"));

  // The choice belongs to the connection that made it.
  const auto elsewhere = other->command({"NEXTID"});
  ASSERT_TRUE(elsewhere.has_value());
  EXPECT_EQ(elsewhere->type, RespValue::Type::kBulk) << elsewhere->debug();
  EXPECT_GT(wide_value(*elsewhere).value_or(0), batch->elems.back().integer);
}

TEST(Resp, TcpListenerWithATokenNeedsAuthButTheUnixSocketDoesNot) {
  DaemonDir dir;
  auto d = dir.start_ready({"--tcp", "127.0.0.1:0", "--http-token", "s3cret-token"});
  ASSERT_GT(d->tcp_port(), 0) << "no \"listening\" event for tcp";
  auto tcp = RespConn::connect_tcp(d->tcp_port());
  ASSERT_TRUE(tcp.has_value());
  // As Redis: everything but HELLO, AUTH and QUIT needs AUTH first.
  EXPECT_TRUE(is_error(tcp->command({"PING"}), "NOAUTH"));
  EXPECT_TRUE(is_error(tcp->command({"NEXTID"}), "NOAUTH"));
  EXPECT_TRUE(is_error(tcp->command({"AUTH", "wrong"}), "WRONGPASS"));
  EXPECT_TRUE(is_error(tcp->command({"NEXTIDS", "2"}), "NOAUTH"));
  const auto ok = tcp->command({"AUTH", "s3cret-token"});
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->debug(), "+OK");
  EXPECT_TRUE(still_serves(*tcp));
  const auto id = tcp->command({"NEXTID"});
  ASSERT_TRUE(id.has_value());
  EXPECT_TRUE(ids_of(*id).has_value()) << id->debug();

  // HELLO with AUTH authenticates a fresh connection in one step.
  auto hello_conn = RespConn::connect_tcp(d->tcp_port());
  ASSERT_TRUE(hello_conn.has_value());
  const auto hello = hello_conn->command({"HELLO", "3", "AUTH", "default", "s3cret-token"});
  ASSERT_TRUE(hello.has_value());
  EXPECT_EQ(hello->type, RespValue::Type::kMap) << hello->debug();
  const auto hello_id = hello_conn->command({"NEXTID"});
  ASSERT_TRUE(hello_id.has_value());
  EXPECT_TRUE(ids_of(*hello_id).has_value()) << hello_id->debug();

  auto unix_conn = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(unix_conn.has_value());
  const auto unix_id = unix_conn->command({"NEXTID"});
  ASSERT_TRUE(unix_id.has_value());
  EXPECT_TRUE(ids_of(*unix_id).has_value()) << unix_id->debug();
}

// Writes as much of `bytes` as the socket takes within about `budget`,
// without blocking: a client that stops reading makes the daemon stop
// reading too, and a blocking write would then never return.
std::size_t write_without_blocking(int fd, const std::string& bytes, milliseconds budget) {
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  std::size_t done = 0;
  const auto until = std::chrono::steady_clock::now() + budget;
  while (done < bytes.size() && std::chrono::steady_clock::now() < until) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) break;
    pollfd p{fd, POLLOUT, 0};
    if (poll(&p, 1, 20) == 0) break;  // the daemon stopped reading: its replies are stuck
  }
  return done;
}

TEST(Resp, ClientsDyingMidPipelineLeaveTheDaemonServingWithoutLeakingDescriptors) {
  DaemonDir dir;
  auto d = dir.start_ready({"--tcp", "127.0.0.1:0"});
  ASSERT_GT(d->tcp_port(), 0);
  {
    // Warm up both listeners, so lazily opened descriptors are counted.
    auto u = RespConn::connect_unix(dir.socket());
    ASSERT_TRUE(u.has_value());
    ASSERT_TRUE(still_serves(*u));
    auto t = RespConn::connect_tcp(d->tcp_port());
    ASSERT_TRUE(t.has_value());
    ASSERT_TRUE(still_serves(*t));
  }
  // The two warm-up connections close asynchronously: the smallest count
  // seen over a moment.
  int baseline = d->fd_count();
  for (int i = 0; i < 30; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
    baseline = std::min(baseline, d->fd_count());
  }
  ASSERT_GT(baseline, 0);

  std::string pipeline;
  const std::string one = encode_command({"NEXTID"});
  pipeline.reserve(one.size() * 100000);
  for (int i = 0; i < 100000; ++i) pipeline += one;

  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto c = round % 2 == 0 ? RespConn::connect_unix(dir.socket())
                            : RespConn::connect_tcp(d->tcp_port());
    ASSERT_TRUE(c.has_value());
    const std::size_t written = write_without_blocking(c->fd(), pipeline, milliseconds(500));
    ASSERT_GT(written, 0u);
    // Read a few replies, then vanish with a reset.
    for (int i = 0; i < 3; ++i) {
      const auto r = c->read(seconds(10));
      ASSERT_TRUE(r.has_value());
      ASSERT_TRUE(ids_of(*r).has_value()) << r->debug();
    }
    c->reset();

    auto fresh = RespConn::connect_unix(dir.socket());
    ASSERT_TRUE(fresh.has_value());
    ASSERT_TRUE(still_serves(*fresh));
    const auto id = fresh->command({"NEXTID"});
    ASSERT_TRUE(id.has_value());
    ASSERT_TRUE(ids_of(*id).has_value()) << id->debug();
  }
  EXPECT_TRUE(d->alive());

  // Every dead client's descriptor is closed once the daemon notices.
  int now = d->fd_count();
  const auto until = std::chrono::steady_clock::now() + seconds(20);
  while (now > baseline && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(20));
    now = d->fd_count();
  }
  EXPECT_LE(now, baseline) << "descriptors: " << now << " now, " << baseline << " before";
  EXPECT_TRUE(d->alive());
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(30)), 0);
}

}  // namespace
}  // namespace snowid::daemon_test
