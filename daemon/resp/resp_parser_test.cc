#include "resp_parser.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace snowid::daemon {
namespace {

using Status = RespParser::Status;
using namespace std::string_literals;

// What a parser made of a byte stream: the commands in order, then the error
// that stopped it (empty if it stopped only for lack of data).
struct Outcome {
  std::vector<RespCommand> commands;
  std::string error;
  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  os << o.commands.size() << " commands [";
  for (const RespCommand& c : o.commands) {
    os << " (";
    for (const std::string& a : c) os << '"' << a << "\" ";
    os << ")";
  }
  return os << " ] error \"" << o.error << "\"";
}

// Calls next() until it needs more or fails, collecting into `out`.
void drain(RespParser& parser, Outcome& out) {
  RespCommand command;
  for (;;) {
    const Status s = parser.next(command);
    if (s == Status::kNeedMore) return;
    if (s == Status::kError) {
      out.error = parser.error();
      return;
    }
    out.commands.push_back(command);
  }
}

// Feeds `pieces` one after the other, draining after each.
Outcome parse_pieces(const std::vector<std::string_view>& pieces, RespLimits limits = {}) {
  RespParser parser(limits);
  Outcome out;
  for (std::string_view piece : pieces) {
    parser.feed(piece);
    drain(parser, out);
  }
  return out;
}

Outcome parse(std::string_view bytes, RespLimits limits = {}) {
  return parse_pieces({bytes}, limits);
}

// A request as client libraries encode it.
std::string multibulk(const std::vector<std::string>& args) {
  std::string s = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
}

// Expects a protocol error whose message contains `reason`, after `commands`.
void expect_error(std::string_view bytes, std::string_view reason,
                  std::vector<RespCommand> commands = {}, RespLimits limits = {}) {
  const Outcome o = parse(bytes, limits);
  EXPECT_EQ(o.commands, commands) << testing::PrintToString(std::string(bytes));
  EXPECT_NE(o.error.find(reason), std::string::npos)
      << testing::PrintToString(std::string(bytes)) << " gave error \"" << o.error << "\"";
  EXPECT_EQ(o.error.find_first_of("\r\n"), std::string::npos) << o.error;
}

// A stream of every accepted form, with the commands it holds.
const std::string kStream =
    "*1\r\n$4\r\nPING\r\n"                              // multibulk
    "*2\r\n$7\r\nNEXTIDS\r\n$3\r\n100\r\n"              // multibulk, two arguments
    "NEXTID\r\n"                                        // inline
    "  DECODE \t 42  \r\n"                              // inline, extra spaces
    "\r\n"                                              // empty inline line: skipped
    "   \t\n"                                           // blank line: skipped
    "INFO\n"                                            // bare \n
    "*0\r\n"                                            // ignored
    "*-1\r\n"                                           // ignored
    "*3\r\n$3\r\nSET\r\n$0\r\n\r\n$6\r\na\r\nb\0c\r\n"  // binary, empty
    "*1\r\n$4\r\nQUIT\r\n"s;
const std::vector<RespCommand> kStreamCommands = {
    {"PING"}, {"NEXTIDS", "100"},        {"NEXTID"}, {"DECODE", "42"},
    {"INFO"}, {"SET", "", "a\r\nb\0c"s}, {"QUIT"}};

// ---- accepted input ----

TEST(RespParser, OneMultibulkCommand) {
  const Outcome o = parse("*2\r\n$7\r\nNEXTIDS\r\n$2\r\n10\r\n");
  EXPECT_EQ(o, (Outcome{{{"NEXTIDS", "10"}}, ""}));
}

TEST(RespParser, EmptyParserNeedsMore) {
  RespParser parser;
  RespCommand command;
  EXPECT_EQ(parser.next(command), Status::kNeedMore);
  parser.feed("");
  EXPECT_EQ(parser.next(command), Status::kNeedMore);
  EXPECT_FALSE(parser.failed());
  EXPECT_EQ(parser.error(), "");
}

TEST(RespParser, PipelinedCommandsInOneFeed) {
  std::string bytes;
  std::vector<RespCommand> want;
  for (int i = 0; i < 1000; ++i) {
    want.push_back({"NEXTIDS", std::to_string(i)});
    bytes += multibulk(want.back());
  }
  EXPECT_EQ(parse(bytes), (Outcome{want, ""}));
}

TEST(RespParser, StreamOfEveryForm) { EXPECT_EQ(parse(kStream), (Outcome{kStreamCommands, ""})); }

TEST(RespParser, EverySplitPointGivesTheSameCommands) {
  const Outcome whole = parse(kStream);
  ASSERT_EQ(whole.commands, kStreamCommands);

  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < kStream.size(); ++i)
    bytes.push_back(std::string_view(kStream).substr(i, 1));
  EXPECT_EQ(parse_pieces(bytes), whole) << "byte by byte";

  for (std::size_t cut = 0; cut <= kStream.size(); ++cut) {
    const std::string_view s(kStream);
    EXPECT_EQ(parse_pieces({s.substr(0, cut), s.substr(cut)}), whole) << "split at " << cut;
  }
}

TEST(RespParser, EveryTwoSplitPointsGiveTheSameCommands) {
  const std::string_view s(kStream);
  const Outcome whole = parse(s);
  for (std::size_t a = 0; a <= s.size(); ++a) {
    for (std::size_t b = a; b <= s.size(); ++b) {
      ASSERT_EQ(parse_pieces({s.substr(0, a), s.substr(a, b - a), s.substr(b)}), whole)
          << "split at " << a << " and " << b;
    }
  }
}

TEST(RespParser, IncompleteCommandWaitsAtEveryByte) {
  const std::string bytes = multibulk({"DECODE", "123456789"});
  RespParser parser;
  RespCommand command;
  for (std::size_t i = 0; i + 1 < bytes.size(); ++i) {
    parser.feed(bytes.substr(i, 1));
    ASSERT_EQ(parser.next(command), Status::kNeedMore) << "after byte " << i;
  }
  parser.feed(bytes.substr(bytes.size() - 1));
  ASSERT_EQ(parser.next(command), Status::kCommand);
  EXPECT_EQ(command, (RespCommand{"DECODE", "123456789"}));
  EXPECT_EQ(parser.next(command), Status::kNeedMore);
  EXPECT_EQ(parser.buffered(), 0u);
}

TEST(RespParser, BulkIsBinarySafe) {
  const std::string arg = "\r\n\0\r*1\r\n$3\r\n\xff"s;
  const Outcome o = parse(multibulk({"ECHO", arg}));
  EXPECT_EQ(o, (Outcome{{{"ECHO", arg}}, ""}));
}

TEST(RespParser, WhatRedisCliPipeSends) {
  // redis-cli --pipe sends its input unchanged, then an ECHO of 20 random bytes
  // to learn when the server has answered everything.
  const std::string echo =
      "\x93\xe0m$C\\\x85\xf3$\xa1x\xa5\0\xee"
      "f?n\x90\xfb\x91"s;
  const Outcome o = parse("SET \"a b\" c\r\n\r\n*2\r\n$4\r\nECHO\r\n$20\r\n"s + echo + "\r\n");
  // Inline quotes are not interpreted (see resp_parser.h).
  EXPECT_EQ(o, (Outcome{{{"SET", "\"a", "b\"", "c"}, {"ECHO", echo}}, ""}));
}

TEST(RespParser, InlineToleratesSpacesTabsAndBareNewline) {
  EXPECT_EQ(parse("PING\n"), (Outcome{{{"PING"}}, ""}));
  EXPECT_EQ(parse("PING\r\n"), (Outcome{{{"PING"}}, ""}));
  EXPECT_EQ(parse("   NEXTIDS     7   \r\n"), (Outcome{{{"NEXTIDS", "7"}}, ""}));
  EXPECT_EQ(parse("\tNEXTIDS\t\t7\t\n"), (Outcome{{{"NEXTIDS", "7"}}, ""}));
  EXPECT_EQ(parse("NEXTIDS\v7\f\r\n"), (Outcome{{{"NEXTIDS", "7"}}, ""}));
  // A lone \r inside the line separates words, as isspace() does in Redis.
  EXPECT_EQ(parse("A\rB\n"), (Outcome{{{"A", "B"}}, ""}));
  // A NUL byte is an ordinary byte.
  EXPECT_EQ(parse("A\0B\n"s), (Outcome{{{"A\0B"s}}, ""}));
}

TEST(RespParser, InlineLineWaitsForItsEnd) {
  RespParser parser;
  RespCommand command;
  parser.feed("PING");
  EXPECT_EQ(parser.next(command), Status::kNeedMore);
  parser.feed("\r");
  EXPECT_EQ(parser.next(command), Status::kNeedMore);
  parser.feed("\nNEXT");
  ASSERT_EQ(parser.next(command), Status::kCommand);
  EXPECT_EQ(command, RespCommand{"PING"});
  EXPECT_EQ(parser.next(command), Status::kNeedMore);
  EXPECT_EQ(parser.buffered(), 4u);
}

TEST(RespParser, EmptyInlineLinesAreSkipped) {
  EXPECT_EQ(parse("\r\n\n  \r\n\t\n"), (Outcome{}));
  EXPECT_EQ(parse("\r\n\r\nPING\r\n"), (Outcome{{{"PING"}}, ""}));
}

TEST(RespParser, NonPositiveMultibulkCountsAreIgnored) {
  // As in Redis, which pins `*-10` in its protocol tests.
  EXPECT_EQ(parse("*0\r\n*-1\r\n*-10\r\n*-9223372036854775808\r\nPING\r\n"),
            (Outcome{{{"PING"}}, ""}));
}

TEST(RespParser, CommandVectorIsExactlyTheArguments) {
  RespParser parser;
  RespCommand command = {"stale", "stale", "stale", "stale"};
  parser.feed(multibulk({"A", "B", "C"}) + multibulk({"D"}) + "E F\r\n");
  ASSERT_EQ(parser.next(command), Status::kCommand);
  EXPECT_EQ(command, (RespCommand{"A", "B", "C"}));
  ASSERT_EQ(parser.next(command), Status::kCommand);
  EXPECT_EQ(command, (RespCommand{"D"}));
  ASSERT_EQ(parser.next(command), Status::kCommand);
  EXPECT_EQ(command, (RespCommand{"E", "F"}));
}

TEST(RespParser, BufferedCountsUnconsumedBytes) {
  RespParser parser;
  RespCommand command;
  parser.feed("*2\r\n$4\r\nECHO\r\n$5\r\nhel");
  EXPECT_EQ(parser.next(command), Status::kNeedMore);
  // The count, the first bulk and the second bulk's header are consumed.
  EXPECT_EQ(parser.buffered(), 3u);
  parser.feed("lo\r\n");
  ASSERT_EQ(parser.next(command), Status::kCommand);
  EXPECT_EQ(parser.buffered(), 0u);
}

TEST(RespParser, ManyPipelinedCommandsFedInOddChunks) {
  std::string bytes;
  std::vector<RespCommand> want;
  for (int i = 0; i < 5000; ++i) {
    if (i % 3 == 0) {
      want.push_back({"NEXTID"});
      bytes += "NEXTID\r\n";
    } else {
      want.push_back({"DECODE", std::string(static_cast<std::size_t>(i % 50), 'x')});
      bytes += multibulk(want.back());
    }
  }
  std::vector<std::string_view> pieces;
  for (std::size_t at = 0, n = 1; at < bytes.size(); at += n, n = n * 7 % 97 + 1) {
    pieces.push_back(std::string_view(bytes).substr(at, n));
  }
  EXPECT_EQ(parse_pieces(pieces), (Outcome{want, ""}));
}

// Byte by byte, a maximal inline line and a maximal bulk would take about
// n^2 / 2 steps if an incomplete line or bulk were rescanned from its start.
TEST(RespParser, ByteByByteLargeInputIsLinear) {
  const RespLimits limits;
  std::string bytes = std::string(limits.max_inline_length - 2, 'a') + " b\r\n";
  bytes += multibulk({"SET", std::string(limits.max_bulk_length, 'v')});
  RespParser parser;
  Outcome out;
  for (char c : bytes) {
    parser.feed(std::string_view(&c, 1));
    drain(parser, out);
  }
  ASSERT_EQ(out.error, "");
  ASSERT_EQ(out.commands.size(), 2u);
  EXPECT_EQ(out.commands[0][0].size(), limits.max_inline_length - 2);
  EXPECT_EQ(out.commands[1][1].size(), limits.max_bulk_length);
}

// ---- limits, at and beyond each bound ----

TEST(RespParserLimits, DefaultsAreSafe) {
  const RespLimits limits;
  EXPECT_EQ(limits.max_arguments, 1024u);
  EXPECT_EQ(limits.max_bulk_length, 512u * 1024);
  EXPECT_EQ(limits.max_inline_length, 64u * 1024);
  EXPECT_EQ(limits.max_buffered_bytes, 1024u * 1024);
}

TEST(RespParserLimits, MultibulkArguments) {
  RespLimits limits;
  limits.max_arguments = 3;
  EXPECT_EQ(parse(multibulk({"A", "B", "C"}), limits), (Outcome{{{"A", "B", "C"}}, ""}));
  // Refused on the count alone, before any argument arrives.
  expect_error("*4\r\n", "too many arguments: 4 (at most 3)", {}, limits);
  expect_error("*9223372036854775807\r\n", "too many arguments", {}, RespLimits{});
}

TEST(RespParserLimits, InlineArguments) {
  RespLimits limits;
  limits.max_arguments = 3;
  EXPECT_EQ(parse("A B C\r\n", limits), (Outcome{{{"A", "B", "C"}}, ""}));
  expect_error("A B C D\r\n", "too many arguments (at most 3)", {}, limits);
}

TEST(RespParserLimits, BulkLength) {
  RespLimits limits;
  limits.max_bulk_length = 8;
  const std::string at = multibulk({"ECHO", "12345678"});
  EXPECT_EQ(parse(at, limits), (Outcome{{{"ECHO", "12345678"}}, ""}));
  // Refused on the header, before the data arrives.
  expect_error("*2\r\n$4\r\nECHO\r\n$9\r\n", "bulk length 9 over the limit of 8", {}, limits);
}

TEST(RespParserLimits, HugeBulkLengthIsRefusedBeforeAnyData) {
  expect_error("*1\r\n$9223372036854775807\r\n", "over the limit");
  expect_error("*1\r\n$9223372036854775808\r\n", "invalid bulk length");
}

TEST(RespParserLimits, InlineLength) {
  RespLimits limits;
  limits.max_inline_length = 10;
  const std::string at(10, 'x');
  EXPECT_EQ(parse(at + "\r\n", limits), (Outcome{{{at}}, ""}));
  EXPECT_EQ(parse(at + "\n", limits), (Outcome{{{at}}, ""}));
  // The \r of a CR LF does not count; any other trailing byte does.
  expect_error(at + "y\n", "too big inline request", {}, limits);
  expect_error(at + " \r\n", "too big inline request", {}, limits);
  // Without a line end: waits while a line end could still make it fit...
  EXPECT_EQ(parse(at + "\r", limits), (Outcome{}));
  EXPECT_EQ(parse(at + "y", limits), (Outcome{}));
  // ...and refuses once none can.
  expect_error(at + "yy", "too big inline request", {}, limits);
  expect_error(at + "\r\r", "too big inline request", {}, limits);
}

TEST(RespParserLimits, DefaultInlineLength) {
  const std::size_t max = RespLimits{}.max_inline_length;
  EXPECT_EQ(parse(std::string(max, 'x') + "\n").commands.size(), 1u);
  expect_error(std::string(max + 1, 'x') + "\n", "too big inline request");
  expect_error(std::string(max + 2, 'x'), "too big inline request");
}

TEST(RespParserLimits, BufferedBytes) {
  RespLimits limits;
  limits.max_buffered_bytes = 10;
  // The arguments add up to exactly 10 bytes.
  EXPECT_EQ(parse(multibulk({"ECHO", "abcdef"}), limits), (Outcome{{{"ECHO", "abcdef"}}, ""}));
  EXPECT_EQ(parse(multibulk({"A", "B", "", "CDEFGHIJ"}), limits).commands.size(), 1u);
  // 11: refused on the header of the bulk that crosses the bound.
  expect_error("*2\r\n$4\r\nECHO\r\n$7\r\n", "command longer than 10 bytes", {}, limits);
  expect_error("*1\r\n$11\r\n", "command longer than 10 bytes", {}, limits);
  // The bound is per command.
  const std::string two = multibulk({"ECHO", "abcdef"}) + multibulk({"ECHO", "abcdef"});
  EXPECT_EQ(parse(two, limits).commands.size(), 2u);
}

// ---- malformed input ----

TEST(RespParserErrors, BadTypeByteInsideMultibulk) {
  expect_error("*1\r\n:5\r\n", "expected '$', got ':'");
  expect_error("*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n", "expected '$', got 'f'");
  expect_error("*1\r\n*1\r\n", "expected '$', got '*'");
  expect_error("*1\r\n\r\n", "expected '$', got '\\x0d'");
  expect_error("*1\r\n\xff", "expected '$', got '\\xff'");
}

TEST(RespParserErrors, MalformedMultibulkCount) {
  for (const char* bad : {"*\r\n", "*x\r\n", "*1x\r\n", "* 1\r\n", "*1 \r\n", "*+1\r\n", "*01\r\n",
                          "*-0\r\n", "*--1\r\n", "*-\r\n", "*1\r\r\n", "*1\rX", "*1\nPING\r\n",
                          "*99999999999999999999\r\n", "*9223372036854775808\r\n"}) {
    expect_error(bad, "invalid multibulk length");
  }
}

TEST(RespParserErrors, CountLineWithoutEndIsRefusedOnceTooLong) {
  // A count has at most 20 characters; a 21st without CR is an error at once.
  EXPECT_EQ(parse("*" + std::string(20, '1')), (Outcome{}));
  expect_error("*" + std::string(21, '1'), "invalid multibulk length");
  expect_error("*1\r\n$" + std::string(21, '1'), "invalid bulk length");
}

TEST(RespParserErrors, MalformedBulkLength) {
  for (const char* bad : {"$\r\n", "$x\r\n", "$-1\r\n", "$-2\r\n", "$+1\r\n", "$01\r\n", "$ 1\r\n",
                          "$1 \r\n", "$-0\r\n", "$1\rX", "$1\nX\r\n"}) {
    expect_error("*1\r\n"s + bad, "invalid bulk length");
  }
}

TEST(RespParserErrors, MissingCrlfAfterBulkData) {
  expect_error("*1\r\n$4\r\nPINGxx", "expected CRLF after bulk data");
  expect_error("*1\r\n$4\r\nPING\rx", "expected CRLF after bulk data");
  expect_error("*1\r\n$4\r\nPING\n\r", "expected CRLF after bulk data");
  expect_error("*1\r\n$3\r\nPING\r\n", "expected CRLF after bulk data");
  // Not decided before both bytes are there.
  EXPECT_EQ(parse("*1\r\n$4\r\nPING\r"), (Outcome{}));
}

TEST(RespParserErrors, CommandsBeforeTheErrorAreReturned) {
  expect_error("PING\r\n*1\r\n$4\r\nPING\r\n*1\r\n:1\r\n", "expected '$'", {{"PING"}, {"PING"}});
}

TEST(RespParserErrors, ParserStaysFailed) {
  RespParser parser;
  RespCommand command;
  parser.feed("*1\r\n$-1\r\nPING\r\n");
  ASSERT_EQ(parser.next(command), Status::kError);
  const std::string message = parser.error();
  EXPECT_EQ(message, "invalid bulk length");
  EXPECT_TRUE(parser.failed());
  parser.feed("PING\r\n");
  parser.feed(multibulk({"PING"}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(parser.next(command), Status::kError);
    EXPECT_EQ(parser.error(), message);
  }
  EXPECT_EQ(parser.buffered(), 0u);
}

TEST(RespParserErrors, EveryErrorIsTheSameAtEverySplitPoint) {
  RespLimits limits;
  limits.max_arguments = 4;
  limits.max_bulk_length = 16;
  limits.max_inline_length = 12;
  limits.max_buffered_bytes = 20;
  const std::string prefix = "PING\r\n" + multibulk({"A", "B"});
  for (const std::string& bad :
       {"*1\r\n:5\r\n"s, "*x\r\n"s, "*1\rX"s, "*1\r\n$-1\r\n"s, "*1\r\n$4\r\nPINGxx"s, "*5\r\n"s,
        "*1\r\n$17\r\n"s, "*2\r\n$10\r\n0123456789\r\n$11\r\n"s, "0123456789abc\r\n"s,
        "0123456789abcdef"s, "A B C D E\r\n"s, "*" + std::string(25, '7')}) {
    const std::string bytes = prefix + bad;
    const Outcome whole = parse(bytes, limits);
    ASSERT_NE(whole.error, "") << testing::PrintToString(bytes);
    ASSERT_EQ(whole.commands.size(), 2u) << testing::PrintToString(bytes);
    for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
      const std::string_view s(bytes);
      EXPECT_EQ(parse_pieces({s.substr(0, cut), s.substr(cut)}, limits), whole)
          << testing::PrintToString(bytes) << " split at " << cut;
    }
  }
}

}  // namespace
}  // namespace snowid::daemon
