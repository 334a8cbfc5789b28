#include "resp_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "resp_parser.h"

namespace snowid::daemon {
namespace {

using namespace std::string_literals;

constexpr RespVersion kBoth[] = {RespVersion::kResp2, RespVersion::kResp3};
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// What `write` appends, in `version`.
template <typename Write>
std::string written(RespVersion version, Write write) {
  std::string out;
  RespWriter w(out, version);
  write(w);
  return out;
}

// Expects the same bytes in RESP2 and RESP3.
template <typename Write>
void expect_both(Write write, const std::string& want) {
  for (RespVersion v : kBoth) {
    EXPECT_EQ(written(v, write), want) << "RESP" << static_cast<int>(v);
  }
}

TEST(RespWriter, SimpleString) {
  expect_both([](RespWriter& w) { w.simple_string("OK"); }, "+OK\r\n");
  expect_both([](RespWriter& w) { w.simple_string("PONG"); }, "+PONG\r\n");
  expect_both([](RespWriter& w) { w.simple_string(""); }, "+\r\n");
}

TEST(RespWriter, SimpleStringReplacesCrAndLf) {
  expect_both([](RespWriter& w) { w.simple_string("a\r\nb\rc\nd"); }, "+a  b c d\r\n");
}

TEST(RespWriter, Error) {
  expect_both([](RespWriter& w) { w.error("ERR", "unknown command 'FOO'"); },
              "-ERR unknown command 'FOO'\r\n");
  expect_both([](RespWriter& w) { w.error("CLOCK_MOVED_BACK", "clock went back 2000 ms"); },
              "-CLOCK_MOVED_BACK clock went back 2000 ms\r\n");
  expect_both([](RespWriter& w) { w.error("LEASE_LOST", ""); }, "-LEASE_LOST\r\n");
}

TEST(RespWriter, ErrorKeepsTheCodeOneWordAndTheReplyOneLine) {
  expect_both([](RespWriter& w) { w.error("BAD CODE\r\n", "x\r\ny"); }, "-BAD_CODE__ x  y\r\n");
  expect_both([](RespWriter& w) { w.error("", "no code"); }, "-ERR no code\r\n");
}

TEST(RespWriter, ProtocolError) {
  expect_both([](RespWriter& w) { w.protocol_error("expected '$', got ':'"); },
              "-ERR Protocol error: expected '$', got ':'\r\n");
}

TEST(RespWriter, Integer) {
  expect_both([](RespWriter& w) { w.integer(0); }, ":0\r\n");
  expect_both([](RespWriter& w) { w.integer(42); }, ":42\r\n");
  expect_both([](RespWriter& w) { w.integer(-1); }, ":-1\r\n");
  expect_both([](RespWriter& w) { w.integer(kMax); }, ":9223372036854775807\r\n");
  expect_both([](RespWriter& w) { w.integer(kMin); }, ":-9223372036854775808\r\n");
}

TEST(RespWriter, UnsignedIntegerUpToInt64IsAnInteger) {
  expect_both([](RespWriter& w) { w.unsigned_integer(0); }, ":0\r\n");
  expect_both([](RespWriter& w) { w.unsigned_integer(26320794961383466u); },
              ":26320794961383466\r\n");
  expect_both([](RespWriter& w) { w.unsigned_integer(9223372036854775807u); },
              ":9223372036854775807\r\n");
}

TEST(RespWriter, UnsignedIntegerAboveInt64) {
  const auto write = [](RespWriter& w) { w.unsigned_integer(9223372036854775808u); };
  EXPECT_EQ(written(RespVersion::kResp2, write), "$19\r\n9223372036854775808\r\n");
  EXPECT_EQ(written(RespVersion::kResp3, write), "(9223372036854775808\r\n");
  const auto largest = [](RespWriter& w) {
    w.unsigned_integer(std::numeric_limits<std::uint64_t>::max());
  };
  EXPECT_EQ(written(RespVersion::kResp2, largest), "$20\r\n18446744073709551615\r\n");
  EXPECT_EQ(written(RespVersion::kResp3, largest), "(18446744073709551615\r\n");
}

TEST(RespWriter, BulkString) {
  expect_both([](RespWriter& w) { w.bulk_string("hello"); }, "$5\r\nhello\r\n");
  expect_both([](RespWriter& w) { w.bulk_string(""); }, "$0\r\n\r\n");
  // Binary-safe: nothing is replaced.
  expect_both([](RespWriter& w) { w.bulk_string("a\r\n\0b"s); }, "$5\r\na\r\n\0b\r\n"s);
}

TEST(RespWriter, Null) {
  const auto write = [](RespWriter& w) { w.null(); };
  EXPECT_EQ(written(RespVersion::kResp2, write), "$-1\r\n");
  EXPECT_EQ(written(RespVersion::kResp3, write), "_\r\n");
}

TEST(RespWriter, ArrayHeader) {
  expect_both([](RespWriter& w) { w.array_header(0); }, "*0\r\n");
  expect_both([](RespWriter& w) { w.array_header(3); }, "*3\r\n");
}

TEST(RespWriter, MapIsAFlatArrayInResp2) {
  const auto write = [](RespWriter& w) {
    w.map_header(2);
    w.bulk_string("worker");
    w.integer(7);
    w.bulk_string("sequence");
    w.integer(42);
  };
  EXPECT_EQ(written(RespVersion::kResp2, write),
            "*4\r\n$6\r\nworker\r\n:7\r\n$8\r\nsequence\r\n:42\r\n");
  EXPECT_EQ(written(RespVersion::kResp3, write),
            "%2\r\n$6\r\nworker\r\n:7\r\n$8\r\nsequence\r\n:42\r\n");
  const auto empty = [](RespWriter& w) { w.map_header(0); };
  EXPECT_EQ(written(RespVersion::kResp2, empty), "*0\r\n");
  EXPECT_EQ(written(RespVersion::kResp3, empty), "%0\r\n");
}

// What `write` appends, in `version`, with integers that can pass 2^53 in
// `wide` format.
template <typename Write>
std::string written_wide(RespVersion version, WideFormat wide, Write write) {
  std::string out;
  RespWriter w(out, version, wide);
  write(w);
  return out;
}

TEST(RespWriter, WideIntegersAreBulkStringsByDefault) {
  constexpr std::uint64_t kId = 26320794961383466;  // above 2^53: a double would round it
  expect_both([](RespWriter& w) { w.wide_integer(kId); }, "$17\r\n26320794961383466\r\n");
  expect_both([](RespWriter& w) { w.wide_integer(std::uint64_t{0}); }, "$1\r\n0\r\n");
  expect_both([](RespWriter& w) { w.wide_integer(kMax); }, "$19\r\n9223372036854775807\r\n");
  expect_both([](RespWriter& w) { w.wide_integer(kMin); }, "$20\r\n-9223372036854775808\r\n");
  expect_both([](RespWriter& w) { w.wide_integer(std::numeric_limits<std::uint64_t>::max()); },
              "$20\r\n18446744073709551615\r\n");
  expect_both([](RespWriter& w) { w.wide_integer(std::int64_t{123456789}); },
              "$9\r\n123456789\r\n");
}

TEST(RespWriter, WideIntegersAreIntegersWhenTheConnectionOptsIn) {
  for (RespVersion v : kBoth) {
    EXPECT_EQ(written_wide(v, WideFormat::kInteger,
                           [](RespWriter& w) { w.wide_integer(std::uint64_t{26320794961383466}); }),
              ":26320794961383466\r\n");
    EXPECT_EQ(written_wide(v, WideFormat::kInteger, [](RespWriter& w) { w.wide_integer(kMin); }),
              ":-9223372036854775808\r\n");
  }
  // Above INT64_MAX no RESP integer holds it: as unsigned_integer() writes it.
  EXPECT_EQ(written_wide(RespVersion::kResp3, WideFormat::kInteger,
                         [](RespWriter& w) { w.wide_integer(std::uint64_t{1} << 63); }),
            "(9223372036854775808\r\n");
}

TEST(RespWriter, WideRangeIsAnArrayOfConsecutiveValues) {
  expect_both([](RespWriter& w) { w.wide_range(std::uint64_t{26320794961383466}, 3); },
              "*3\r\n$17\r\n26320794961383466\r\n$17\r\n26320794961383467\r\n"
              "$17\r\n26320794961383468\r\n");
  expect_both([](RespWriter& w) { w.wide_range(std::int64_t{5}, 0); }, "*0\r\n");
  expect_both([](RespWriter& w) { w.wide_range(kMax - 1, 2); },
              "*2\r\n$19\r\n9223372036854775806\r\n$19\r\n9223372036854775807\r\n");
  EXPECT_EQ(written_wide(RespVersion::kResp2, WideFormat::kInteger,
                         [](RespWriter& w) { w.wide_range(std::int64_t{9}, 2); }),
            "*2\r\n:9\r\n:10\r\n");
}

TEST(RespWriter, LargeWideRange) {
  std::string out;
  RespWriter w(out, RespVersion::kResp2);
  w.wide_range(std::uint64_t{1000000}, 4096);
  std::string want = "*4096\r\n";
  for (int i = 0; i < 4096; ++i) want += "$7\r\n" + std::to_string(1000000 + i) + "\r\n";
  EXPECT_EQ(out, want);
}

TEST(RespWriter, AppendsToWhatIsThere) {
  std::string out = "+PONG\r\n";
  RespWriter w(out, RespVersion::kResp3);
  EXPECT_EQ(w.version(), RespVersion::kResp3);
  EXPECT_EQ(&w.output(), &out);
  w.integer(1);
  w.null();
  EXPECT_EQ(out, "+PONG\r\n:1\r\n_\r\n");
}

TEST(RespWriter, PipelinedRepliesInOneString) {
  std::string out;
  RespWriter w(out, RespVersion::kResp2);
  for (int i = 0; i < 3; ++i) w.integer(i);
  w.simple_string("OK");
  EXPECT_EQ(out, ":0\r\n:1\r\n:2\r\n+OK\r\n");
}

// An array of bulk strings is also how a client sends a request, so the
// writer's output must be what the parser reads.
TEST(RespWriter, ArrayOfBulkStringsParsesAsACommand) {
  const RespCommand command = {"ECHO", "", "a\r\nb\0"s, std::string(1000, 'x')};
  std::string out;
  RespWriter w(out, RespVersion::kResp2);
  w.array_header(command.size());
  for (const std::string& a : command) w.bulk_string(a);
  RespParser parser;
  parser.feed(out);
  RespCommand got;
  ASSERT_EQ(parser.next(got), RespParser::Status::kCommand);
  EXPECT_EQ(got, command);
  EXPECT_EQ(parser.next(got), RespParser::Status::kNeedMore);
}

}  // namespace
}  // namespace snowid::daemon
