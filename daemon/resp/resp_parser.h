// The request side of the Redis protocol (RESP) for snowidd: bytes from a
// client in, commands out. Private to the daemon; no dependency beyond the
// standard library.
//
// Two request forms are understood, chosen per command by its first byte:
//
//   * multibulk, what every client library, redis-cli and redis-benchmark send:
//       *<N>\r\n  then N times  $<len>\r\n<len bytes>\r\n
//     Arguments are binary-safe (they may hold \r, \n and NUL bytes).
//   * inline, for people typing at telnet or nc: one line of arguments
//     separated by runs of spaces or tabs (also \r, \v, \f), ended by \n or
//     \r\n. Quotes have no meaning here: `"a b"` is the two arguments `"a` and
//     `b"`, unlike in Redis, which unquotes inline arguments. No snowidd
//     command takes an argument with a space in it.
//
// Where Redis' observable behaviour is a choice, the parser makes the same
// one: an inline line with no arguments is skipped, and so is `*N` with N <= 0
// (`*0`, `*-1`, also `*-10`); a bulk length below 0 is an error; a count or
// length is a plain decimal (no sign '+', no leading zeros, no spaces). It is
// stricter than Redis in three places: the two bytes after bulk data must be
// \r\n, a length line must end in \r\n (not \r and another byte), and an
// inline line over the limit is refused even when its line end arrived with
// it. Each decision depends only on the bytes seen so far, never on how they
// were split across feed() calls.
//
// Example, for one connection:
//
//   RespParser parser;
//   RespCommand command;
//   parser.feed(bytes_just_read);
//   for (;;) {
//     const RespParser::Status s = parser.next(command);
//     if (s == RespParser::Status::kNeedMore) break;      // read again
//     if (s == RespParser::Status::kError) { /* reply -ERR Protocol error: <parser.error()>,
//                                               then close */ }
//     handle(command);
//   }
//
// Not thread-safe: one parser per connection, used by one thread at a time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace snowid::daemon {

// One command: its name and arguments, each as the exact bytes sent.
using RespCommand = std::vector<std::string>;

// Bounds on what one client may make the parser hold. The defaults suit
// snowidd, whose commands and arguments are a few bytes long; each must be at
// least 1.
struct RespLimits {
  // Arguments in one command (the command name counts). A larger multibulk
  // count, or an inline line with more words, is an error.
  std::size_t max_arguments = 1024;
  // Length of one multibulk argument. A larger `$<len>` is an error as soon as
  // its header arrives, before any of its bytes.
  std::size_t max_bulk_length = 512 * 1024;
  // Length of one inline line, without its \n or \r\n. A longer line is an
  // error as soon as that many bytes have arrived without a line end.
  std::size_t max_inline_length = 64 * 1024;
  // Argument bytes of one multibulk command (the sum of its bulk lengths). The
  // header of the bulk that would take the sum beyond this is an error. This
  // bounds what one incomplete command makes the parser hold: its arguments
  // plus their framing (under 40 bytes each), or max_inline_length + 2 bytes
  // for an inline command. Complete commands stay buffered until next()
  // returns them, so drain next() after each feed(); the buffer's capacity
  // may reach about twice what it holds between compactions.
  std::size_t max_buffered_bytes = 1024 * 1024;
};

class RespParser {
 public:
  enum class Status {
    kCommand,   // a complete command was stored in the argument of next()
    kNeedMore,  // every buffered byte belongs to an incomplete command: feed more
    kError,     // a protocol error (see error()); the parser stays failed
  };

  explicit RespParser(RespLimits limits = {});

  // Appends bytes read from the client. Ignored once the parser has failed.
  void feed(std::string_view bytes);

  // Parses the next command from the buffered bytes. On kCommand, `command`
  // holds exactly its arguments (the strings' storage is reused between calls;
  // the vector has at least one element). On kNeedMore and kError `command` is
  // unspecified. Amortised cost is linear in the bytes fed: an incomplete line
  // or bulk is never rescanned from its start.
  [[nodiscard]] Status next(RespCommand& command);

  // After kError: what was wrong, a short single line without CR or LF to
  // follow "Protocol error: ". Empty while the parser has not failed.
  const std::string& error() const noexcept { return error_; }
  bool failed() const noexcept { return !error_.empty(); }

  // Bytes fed but not yet consumed by a returned or skipped command or by the
  // parsed part of an incomplete one.
  std::size_t buffered() const noexcept { return buf_.size() - pos_; }

  const RespLimits& limits() const noexcept { return limits_; }

 private:
  enum class Phase {
    kCommandStart,  // before the first byte of a command
    kBulkHeader,    // inside a multibulk command, before a `$<len>\r\n`
    kBulkData,      // inside a multibulk command, before a bulk's bytes and \r\n
  };
  enum class Line { kFound, kNeedMore, kTooLong, kBadEnd };

  // An inline line at pos_. Sets `skipped` (and returns kNeedMore) for a line
  // without arguments, which is consumed.
  Status parse_inline(RespCommand& command, bool& skipped);
  // Finds the \r\n ending the line that starts at `start`; the line (without
  // its \r\n) must be shorter than `window` bytes. On kFound `end` is the
  // index of the \r.
  Line find_crlf_line(std::size_t start, std::size_t window, std::size_t& end);
  void store_argument(std::string_view arg);
  Status emit(RespCommand& command);
  Status fail(std::string message);
  void advance(std::size_t n);
  void compact();

  RespLimits limits_;
  std::string buf_;       // buf_[pos_, size) is unconsumed
  std::size_t pos_ = 0;   // first unconsumed byte
  std::size_t scan_ = 0;  // buf_[line start, scan_) holds no line end: resume there
  Phase phase_ = Phase::kCommandStart;
  std::size_t args_left_ = 0;      // bulks still to come in this multibulk command
  std::size_t bulk_length_ = 0;    // in kBulkData: the declared length
  std::size_t command_bytes_ = 0;  // sum of the declared bulk lengths so far
  RespCommand args_;               // arguments parsed so far; storage reused
  std::size_t argc_ = 0;           // how many of args_ belong to this command
  std::string error_;
};

}  // namespace snowid::daemon
