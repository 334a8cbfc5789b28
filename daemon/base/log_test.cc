#include "log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "json_test_support.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid::daemon {
namespace {

using snowid::testing::SimulatedClock;
using test_support::Json;
using test_support::parse_json;
using test_support::valid_utf8;

// 2026-11-30T05:00:00.123Z plus 456 us, which the timestamp floors away.
const WallTime kNow = wall_from_unix_ms(1796014800123) + std::chrono::microseconds(456);
constexpr std::string_view kTs = "2026-11-30T05:00:00.123Z";

using Members = std::vector<std::pair<std::string, std::string>>;

// The members of `line`, which must be one flat JSON object in valid UTF-8
// and a newline: strings decoded, other values as their text.
Members parse_line(const std::string& line) {
  EXPECT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  EXPECT_TRUE(valid_utf8(line)) << line;
  const std::optional<Json> object = parse_json(std::string_view(line).substr(0, line.size() - 1));
  EXPECT_TRUE(object && object->type == Json::Type::kObject) << line;
  if (!object) return {};
  Members members;
  for (const auto& [key, value] : object->members) {
    switch (value.type) {
      case Json::Type::kString:
      case Json::Type::kNumber:
        members.emplace_back(key, value.text);
        break;
      case Json::Type::kBool:
        members.emplace_back(key, value.boolean ? "true" : "false");
        break;
      case Json::Type::kNull:
        members.emplace_back(key, "null");
        break;
      case Json::Type::kArray:
      case Json::Type::kObject:
        ADD_FAILURE() << "nested value of " << key << " in " << line;
        break;
    }
  }
  return members;
}

// The one decoded value of `key` in the JSON line.
std::string json_value(const std::string& line, std::string_view key) {
  for (const auto& [k, v] : parse_line(line)) {
    if (k == key) return v;
  }
  ADD_FAILURE() << "no " << key << " in " << line;
  return {};
}

class LogTest : public ::testing::Test {
 protected:
  SimulatedClock clock_{kNow};
};

TEST_F(LogTest, JsonLineHasTsLevelMsgThenFieldsInOrder) {
  Logger log(-1, clock_, LogLevel::kInfo, true);
  EXPECT_EQ(log.format(LogLevel::kInfo, "listening",
                       {{"transport", "unix"}, {"address", "/run/snowid/snowidd.sock"}}),
            "{\"ts\":\"2026-11-30T05:00:00.123Z\",\"level\":\"info\",\"msg\":\"listening\","
            "\"transport\":\"unix\",\"address\":\"/run/snowid/snowidd.sock\"}\n");
  const Members m = parse_line(log.format(LogLevel::kWarn, "x", {{"b", 1}, {"a", 2}, {"c", 3}}));
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0], (std::pair<std::string, std::string>("ts", std::string(kTs))));
  EXPECT_EQ(m[1].second, "warn");
  EXPECT_EQ(m[2].second, "x");
  EXPECT_EQ(m[3].first, "b");
  EXPECT_EQ(m[4].first, "a");
  EXPECT_EQ(m[5].first, "c");
}

TEST_F(LogTest, LogfmtLine) {
  Logger log(-1, clock_, LogLevel::kInfo, false);
  EXPECT_EQ(log.format(LogLevel::kInfo, "listening",
                       {{"transport", "unix"}, {"address", "/run/snowid/snowidd.sock"}}),
            "ts=2026-11-30T05:00:00.123Z level=info msg=listening transport=unix "
            "address=/run/snowid/snowidd.sock\n");
}

TEST_F(LogTest, EveryLevelHasItsName) {
  Logger log(-1, clock_, LogLevel::kDebug, false);
  EXPECT_EQ(log.format(LogLevel::kDebug, "m", {}),
            std::string("ts=") + kTs.data() + " level=debug msg=m\n");
  EXPECT_NE(log.format(LogLevel::kInfo, "m", {}).find(" level=info "), std::string::npos);
  EXPECT_NE(log.format(LogLevel::kWarn, "m", {}).find(" level=warn "), std::string::npos);
  EXPECT_NE(log.format(LogLevel::kError, "m", {}).find(" level=error "), std::string::npos);
}

TEST_F(LogTest, TimestampFollowsTheInjectedClock) {
  Logger log(-1, clock_, LogLevel::kInfo, true);
  clock_.set_wall(wall_from_unix_ms(1767225600000) - std::chrono::nanoseconds(1));
  EXPECT_EQ(json_value(log.format(LogLevel::kInfo, "m", {}), "ts"), "2025-12-31T23:59:59.999Z");
  clock_.advance(std::chrono::nanoseconds(1));
  EXPECT_EQ(json_value(log.format(LogLevel::kInfo, "m", {}), "ts"), "2026-01-01T00:00:00.000Z");
}

TEST_F(LogTest, JsonEscapesQuotesBackslashesAndControlCharacters) {
  Logger log(-1, clock_, LogLevel::kInfo, true);
  const std::string nasty = std::string("say \"hi\"\\ \n\r\t\b\f") + '\0' + "\x01\x1f\x7f end";
  const std::string line = log.format(LogLevel::kInfo, nasty, {{"k", nasty}});
  EXPECT_NE(line.find(R"(say \"hi\"\\ \n\r\t\b\f\u0000\u0001\u001f\u007f end)"), std::string::npos)
      << line;
  EXPECT_EQ(json_value(line, "msg"), nasty);
  EXPECT_EQ(json_value(line, "k"), nasty);
}

TEST_F(LogTest, JsonKeepsValidUtf8AndReplacesInvalidBytes) {
  Logger log(-1, clock_, LogLevel::kInfo, true);
  const std::string valid = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";  // café € 😀
  EXPECT_EQ(json_value(log.format(LogLevel::kInfo, valid, {}), "msg"), valid);

  const std::string replacement = "\xEF\xBF\xBD";
  struct Case {
    std::string in;
    std::string want;
  };
  const Case cases[] = {
      {"a\xFF"
       "b",
       "a" + replacement + "b"},                                  // never in UTF-8
      {"\x80", replacement},                                      // stray continuation
      {"\xC3", replacement},                                      // truncated at the end
      {"\xC3(", replacement + "("},                               // truncated mid-string
      {"\xC0\xAF", replacement + replacement},                    // overlong '/'
      {"\xE0\x80\xAF", replacement + replacement + replacement},  // overlong, 3 bytes
      {"\xED\xA0\x80", replacement + replacement + replacement},  // a surrogate
      {"\xF4\x90\x80\x80", replacement + replacement + replacement + replacement},  // > U+10FFFF
  };
  for (const Case& c : cases) {
    const std::string line = log.format(LogLevel::kInfo, c.in, {{"v", c.in}});
    EXPECT_NE(line.find("\\ufffd"), std::string::npos) << line;
    EXPECT_EQ(json_value(line, "msg"), c.want) << line;
    EXPECT_EQ(json_value(line, "v"), c.want) << line;
  }
}

// For readers that take JSON as JavaScript, as the HTTP bodies do.
TEST_F(LogTest, JsonEscapesLineAndParagraphSeparators) {
  Logger log(-1, clock_, LogLevel::kInfo, true);
  const std::string text =
      "a\xE2\x80\xA8"
      "b\xE2\x80\xA9"
      "c";
  const std::string line = log.format(LogLevel::kInfo, text, {});
  EXPECT_NE(line.find(R"("msg":"a\u2028b\u2029c")"), std::string::npos) << line;
  EXPECT_EQ(json_value(line, "msg"), text);
}

TEST_F(LogTest, JsonEscapesKeysToo) {
  Logger log(-1, clock_, LogLevel::kInfo, true);
  const Members m = parse_line(log.format(LogLevel::kInfo, "m", {{"a\"b", 1}}));
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[3].first, "a\"b");
}

TEST_F(LogTest, JsonNumbersAndBooleans) {
  Logger log(-1, clock_, LogLevel::kInfo, true);
  const std::int64_t min64 = std::numeric_limits<std::int64_t>::min();
  const std::uint64_t max64 = std::numeric_limits<std::uint64_t>::max();
  const std::string line = log.format(LogLevel::kInfo, "m",
                                      {{"i", -42},
                                       {"min", min64},
                                       {"u", max64},
                                       {"t", true},
                                       {"f", false},
                                       {"half", 0.5},
                                       {"third", 1.0 / 3},
                                       {"big", 1e300},
                                       {"tiny", -2.5e-300},
                                       {"nan", std::numeric_limits<double>::quiet_NaN()},
                                       {"inf", std::numeric_limits<double>::infinity()},
                                       {"ninf", -std::numeric_limits<double>::infinity()}});
  const Members m = parse_line(line);
  std::map<std::string, std::string> v(m.begin(), m.end());
  EXPECT_EQ(v["i"], "-42");
  EXPECT_EQ(v["min"], "-9223372036854775808");
  EXPECT_EQ(v["u"], "18446744073709551615");
  EXPECT_EQ(v["t"], "true");
  EXPECT_EQ(v["f"], "false");
  EXPECT_EQ(v["half"], "0.5");
  // Doubles read back exactly.
  EXPECT_EQ(std::stod(v["third"]), 1.0 / 3);
  EXPECT_EQ(std::stod(v["big"]), 1e300);
  EXPECT_EQ(std::stod(v["tiny"]), -2.5e-300);
  EXPECT_EQ(v["nan"], "null");
  EXPECT_EQ(v["inf"], "null");
  EXPECT_EQ(v["ninf"], "null");
  // Numbers are not quoted.
  EXPECT_NE(line.find("\"i\":-42,"), std::string::npos) << line;
}

TEST_F(LogTest, LogfmtQuotesOnlyWhatNeedsIt) {
  Logger log(-1, clock_, LogLevel::kInfo, false);
  const std::string prefix = std::string("ts=") + kTs.data() + " level=info ";
  EXPECT_EQ(log.format(LogLevel::kInfo, "two words",
                       {{"plain", "a/b:c"},
                        {"empty", ""},
                        {"eq", "a=b"},
                        {"quote", "say \"hi\""},
                        {"nl", "a\nb"},
                        {"tab", "a\tb"},
                        {"backslash", "a\\b"},
                        {"utf8", "caf\xC3\xA9"}}),
            prefix +
                "msg=\"two words\" plain=a/b:c empty=\"\" eq=\"a=b\" quote=\"say \\\"hi\\\"\" "
                "nl=\"a\\nb\" tab=\"a\\tb\" backslash=a\\b utf8=caf\xC3\xA9\n");
  EXPECT_EQ(log.format(LogLevel::kInfo, "", {}), prefix + "msg=\"\"\n");
  // A quoted value escapes its backslashes.
  EXPECT_EQ(log.format(LogLevel::kInfo, "m", {{"k", "a\\ b"}}), prefix + "msg=m k=\"a\\\\ b\"\n");
}

TEST_F(LogTest, LogfmtReplacesInvalidUtf8AndControlCharacters) {
  Logger log(-1, clock_, LogLevel::kInfo, false);
  const std::string line = log.format(LogLevel::kInfo, "m",
                                      {{"bad",
                                        "a\xFF"
                                        "b"},
                                       {"ctl", std::string("a\x01\0b", 4)}});
  EXPECT_NE(line.find(" bad=\"a\\ufffdb\""), std::string::npos) << line;
  EXPECT_NE(line.find(" ctl=\"a\\u0001\\u0000b\""), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), line.size() - 1);
}

TEST_F(LogTest, LogfmtNumbersAndKeys) {
  Logger log(-1, clock_, LogLevel::kInfo, false);
  const std::string line = log.format(LogLevel::kInfo, "m",
                                      {{"n", 7u},
                                       {"neg", -3L},
                                       {"d", 0.25},
                                       {"ok", true},
                                       {"nan", std::numeric_limits<double>::quiet_NaN()},
                                       {"inf", std::numeric_limits<double>::infinity()},
                                       {"a key=\"x\"", 1}});
  EXPECT_EQ(line, std::string("ts=") + kTs.data() +
                      " level=info msg=m n=7 neg=-3 d=0.25 ok=true nan=NaN inf=+Inf "
                      "a_key__x_=1\n");
}

// The read end of a pipe, drained into a string.
class Pipe {
 public:
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read_ = fds[0];
    write_ = fds[1];
  }
  ~Pipe() {
    if (read_ >= 0) ::close(read_);
    close_write();
  }
  int write_fd() const { return write_; }
  void close_write() {
    if (write_ >= 0) ::close(write_);
    write_ = -1;
  }
  // Everything written until the write end was closed.
  std::string read_all() {
    std::string out;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(read_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }

 private:
  int read_ = -1;
  int write_ = -1;
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(text.substr(start));  // an unterminated tail: a test failure
      break;
    }
    lines.push_back(text.substr(start, nl - start + 1));
    start = nl + 1;
  }
  return lines;
}

TEST_F(LogTest, LogWritesEnabledLevelsOnly) {
  Pipe pipe;
  Logger log(pipe.write_fd(), clock_, LogLevel::kWarn, true);
  EXPECT_FALSE(log.enabled(LogLevel::kInfo));
  EXPECT_TRUE(log.enabled(LogLevel::kWarn));
  log.debug("d");
  log.info("i");
  log.warn("w", {{"n", 1}});
  log.error("e");
  log.set_level(LogLevel::kDebug);
  EXPECT_EQ(log.level(), LogLevel::kDebug);
  log.debug("d2");
  log.set_level(LogLevel::kError);
  log.warn("w2");
  log.log(LogLevel::kError, "e2");
  pipe.close_write();
  const std::vector<std::string> lines = split_lines(pipe.read_all());
  std::vector<std::string> msgs;
  for (const std::string& line : lines) msgs.push_back(json_value(line, "msg"));
  EXPECT_EQ(msgs, (std::vector<std::string>{"w", "e", "d2", "e2"}));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], log.format(LogLevel::kWarn, "w", {{"n", 1}}));
}

TEST_F(LogTest, AFailedWriteIsDropped) {
  Pipe pipe;
  const int fd = pipe.write_fd();
  pipe.close_write();
  Logger log(fd, clock_, LogLevel::kInfo, true);  // a closed descriptor: EBADF
  log.error("nowhere");
}

TEST_F(LogTest, ConcurrentLinesNeverInterleave) {
  constexpr int kThreads = 4;
  constexpr int kLines = 300;
  Pipe pipe;
  Logger log(pipe.write_fd(), clock_, LogLevel::kInfo, true);
  // Longer than PIPE_BUF, so that a line may take more than one write(2).
  const std::string long_text(6000, 'x');
  std::string text;
  std::thread reader([&] { text = pipe.read_all(); });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kLines; ++i) {
        log.info(i % 10 == 0 ? std::string_view(long_text) : std::string_view("short"),
                 {{"thread", t}, {"i", i}, {"quote", "\"\n\""}});
      }
    });
  }
  for (std::thread& w : writers) w.join();
  pipe.close_write();
  reader.join();

  const std::vector<std::string> lines = split_lines(text);
  ASSERT_EQ(lines.size(), std::size_t{kThreads * kLines});
  std::vector<int> next(kThreads, 0);
  for (const std::string& line : lines) {
    const Members m = parse_line(line);
    ASSERT_EQ(m.size(), 6u) << line;
    const int t = std::stoi(m[3].second);
    const int i = std::stoi(m[4].second);
    ASSERT_GE(t, 0);
    ASSERT_LT(t, kThreads);
    // Each thread's lines arrive whole and in its order.
    EXPECT_EQ(i, next[static_cast<std::size_t>(t)]++);
    EXPECT_EQ(m[2].second, i % 10 == 0 ? long_text : "short");
    EXPECT_EQ(m[5].second, "\"\n\"");
  }
}

}  // namespace
}  // namespace snowid::daemon
