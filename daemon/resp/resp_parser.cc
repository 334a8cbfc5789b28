#include "resp_parser.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace snowid::daemon {
namespace {

// A count or length has at most 20 characters ("-9223372036854775808"), so
// its line end must come within the 21 bytes after the type byte.
constexpr std::size_t kNumberWindow = 21;

// Once the buffer is empty, a buffer grown beyond this (by a large command)
// is given back rather than kept for the connection's lifetime.
constexpr std::size_t kKeptCapacity = 64 * 1024;

constexpr std::size_t saturating_add(std::size_t a, std::size_t b) {
  return a > std::numeric_limits<std::size_t>::max() - b ? std::numeric_limits<std::size_t>::max()
                                                         : a + b;
}

// A decimal integer as Redis writes and reads them: an optional '-', then
// digits without leading zeros ("0" alone is zero; "-0", "+1", "01", " 1" and
// "" are not numbers). False if malformed or outside int64.
bool parse_decimal(std::string_view s, std::int64_t& out) {
  const bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  if (s.empty() || s.size() > 19) return false;
  if (s.front() == '0') {
    out = 0;
    return s.size() == 1 && !negative;
  }
  const std::uint64_t limit =
      static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
  std::uint64_t value = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (limit - digit) / 10) return false;
    value = value * 10 + digit;
  }
  // Two's complement: -(2^63) is reached by negating in unsigned arithmetic.
  out = negative ? static_cast<std::int64_t>(~value + 1) : static_cast<std::int64_t>(value);
  return true;
}

// The index of the first `c` in s[from, stop), or `stop` if there is none.
// Unlike std::string::find, never looks beyond `stop`.
std::size_t find_byte(const std::string& s, char c, std::size_t from, std::size_t stop) {
  if (from >= stop) return stop;
  const void* p = std::memchr(s.data() + from, c, stop - from);
  return p == nullptr ? stop : static_cast<std::size_t>(static_cast<const char*>(p) - s.data());
}

// Inline arguments are separated by what C's isspace() accepts, as in Redis;
// \n never gets here (it ends the line).
constexpr bool is_inline_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// A byte for an error message: itself if printable ASCII, else \xHH.
std::string describe_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string(1, c);
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string{'\\', 'x', kHex[u >> 4], kHex[u & 0xf]};
}

}  // namespace

RespParser::RespParser(RespLimits limits) : limits_(limits) {}

void RespParser::feed(std::string_view bytes) {
  if (failed() || bytes.empty()) return;
  compact();
  buf_.append(bytes);
}

// Moves the unconsumed bytes to the front of the buffer when that costs no
// more than the bytes consumed since the last move, so that each byte is
// moved a bounded number of times on average.
void RespParser::compact() {
  if (pos_ == 0) return;
  if (pos_ == buf_.size()) {
    if (buf_.capacity() > kKeptCapacity) {
      std::string().swap(buf_);
    } else {
      buf_.clear();
    }
    pos_ = 0;
    scan_ = 0;
    return;
  }
  if (pos_ < buf_.size() - pos_) return;
  buf_.erase(0, pos_);
  scan_ = scan_ > pos_ ? scan_ - pos_ : 0;
  pos_ = 0;
}

void RespParser::advance(std::size_t n) {
  pos_ += n;
  scan_ = 0;
}

RespParser::Status RespParser::fail(std::string message) {
  error_ = std::move(message);
  std::string().swap(buf_);
  pos_ = 0;
  scan_ = 0;
  RespCommand().swap(args_);
  argc_ = 0;
  return Status::kError;
}

RespParser::Status RespParser::emit(RespCommand& command) {
  command.swap(args_);
  command.resize(argc_);
  argc_ = 0;
  return Status::kCommand;
}

void RespParser::store_argument(std::string_view arg) {
  if (argc_ < args_.size()) {
    args_[argc_].assign(arg);
  } else {
    args_.emplace_back(arg);
  }
  ++argc_;
}

RespParser::Line RespParser::find_crlf_line(std::size_t start, std::size_t window,
                                            std::size_t& end) {
  const std::size_t size = buf_.size();
  if (start > size) return Line::kNeedMore;
  const std::size_t stop = std::min(size, saturating_add(start, window));
  const std::size_t from = std::max(scan_, start);
  const std::size_t cr = find_byte(buf_, '\r', from, stop);
  if (cr == stop) {
    if (size - start >= window) return Line::kTooLong;
    scan_ = size;
    return Line::kNeedMore;
  }
  if (cr + 1 == size) {
    scan_ = cr;
    return Line::kNeedMore;
  }
  if (buf_[cr + 1] != '\n') return Line::kBadEnd;
  end = cr;
  return Line::kFound;
}

RespParser::Status RespParser::parse_inline(RespCommand& command, bool& skipped) {
  skipped = false;
  const std::size_t size = buf_.size();
  // The line end may come at most max_inline_length + 1 bytes after the line
  // start (one more for a \r before it).
  const std::size_t window = saturating_add(limits_.max_inline_length, 2);
  const std::size_t stop = std::min(size, saturating_add(pos_, window));
  const std::size_t from = std::max(scan_, pos_);
  const std::size_t lf = find_byte(buf_, '\n', from, stop);
  if (lf == stop) {
    if (size - pos_ >= window) return fail("too big inline request");
    scan_ = size;
    return Status::kNeedMore;
  }
  const std::size_t end = lf > pos_ && buf_[lf - 1] == '\r' ? lf - 1 : lf;
  if (end - pos_ > limits_.max_inline_length) return fail("too big inline request");

  argc_ = 0;
  std::size_t i = pos_;
  while (i < end) {
    while (i < end && is_inline_space(buf_[i])) ++i;
    if (i == end) break;
    const std::size_t word = i;
    while (i < end && !is_inline_space(buf_[i])) ++i;
    if (argc_ == limits_.max_arguments) {
      return fail("too many arguments (at most " + std::to_string(limits_.max_arguments) + ")");
    }
    store_argument(std::string_view(buf_).substr(word, i - word));
  }
  advance(lf + 1 - pos_);
  if (argc_ == 0) {
    skipped = true;
    return Status::kNeedMore;
  }
  return emit(command);
}

RespParser::Status RespParser::next(RespCommand& command) {
  if (failed()) return Status::kError;
  for (;;) {
    const std::size_t size = buf_.size();
    switch (phase_) {
      case Phase::kCommandStart: {
        if (pos_ == size) return Status::kNeedMore;
        if (buf_[pos_] != '*') {
          bool skipped = false;
          const Status s = parse_inline(command, skipped);
          if (skipped) continue;
          return s;
        }
        std::size_t end = 0;
        const Line line = find_crlf_line(pos_ + 1, kNumberWindow, end);
        if (line == Line::kNeedMore) return Status::kNeedMore;
        std::int64_t count = 0;
        if (line != Line::kFound ||
            !parse_decimal(std::string_view(buf_).substr(pos_ + 1, end - pos_ - 1), count)) {
          return fail("invalid multibulk length");
        }
        advance(end + 2 - pos_);
        if (count <= 0) continue;  // *0, *-1: nothing to do, as in Redis
        if (static_cast<std::uint64_t>(count) > limits_.max_arguments) {
          return fail("too many arguments: " + std::to_string(count) + " (at most " +
                      std::to_string(limits_.max_arguments) + ")");
        }
        args_left_ = static_cast<std::size_t>(count);
        argc_ = 0;
        command_bytes_ = 0;
        phase_ = Phase::kBulkHeader;
        continue;
      }

      case Phase::kBulkHeader: {
        if (pos_ == size) return Status::kNeedMore;
        if (buf_[pos_] != '$') return fail("expected '$', got '" + describe_byte(buf_[pos_]) + "'");
        std::size_t end = 0;
        const Line line = find_crlf_line(pos_ + 1, kNumberWindow, end);
        if (line == Line::kNeedMore) return Status::kNeedMore;
        std::int64_t length = 0;
        if (line != Line::kFound ||
            !parse_decimal(std::string_view(buf_).substr(pos_ + 1, end - pos_ - 1), length) ||
            length < 0) {
          return fail("invalid bulk length");
        }
        const auto n = static_cast<std::uint64_t>(length);
        if (n > limits_.max_bulk_length) {
          return fail("bulk length " + std::to_string(n) + " over the limit of " +
                      std::to_string(limits_.max_bulk_length));
        }
        if (n > limits_.max_buffered_bytes - std::min(command_bytes_, limits_.max_buffered_bytes)) {
          return fail("command longer than " + std::to_string(limits_.max_buffered_bytes) +
                      " bytes");
        }
        bulk_length_ = static_cast<std::size_t>(n);
        command_bytes_ += bulk_length_;
        advance(end + 2 - pos_);
        phase_ = Phase::kBulkData;
        continue;
      }

      case Phase::kBulkData: {
        if (size - pos_ < bulk_length_ || size - pos_ - bulk_length_ < 2) {
          return Status::kNeedMore;
        }
        if (buf_[pos_ + bulk_length_] != '\r' || buf_[pos_ + bulk_length_ + 1] != '\n') {
          return fail("expected CRLF after bulk data");
        }
        store_argument(std::string_view(buf_).substr(pos_, bulk_length_));
        advance(bulk_length_ + 2);
        if (--args_left_ > 0) {
          phase_ = Phase::kBulkHeader;
          continue;
        }
        phase_ = Phase::kCommandStart;
        return emit(command);
      }
    }
  }
}

}  // namespace snowid::daemon
