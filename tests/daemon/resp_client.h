// A small RESP2/RESP3 client for black-box tests: raw bytes out, replies
// parsed from what the daemon sends back, over a Unix or TCP socket. It is
// deliberately independent of the daemon's own parser and writer, so that a
// bug shared by both cannot hide.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "socket_io.h"

namespace snowid::daemon_test {

struct RespValue {
  enum class Type {
    kSimple,     // +
    kError,      // -
    kInteger,    // :
    kBulk,       // $ (and RESP3 = verbatim, its "txt:" prefix kept)
    kNull,       // $-1, *-1, _
    kArray,      // * (and RESP3 ~ set, > push)
    kMap,        // % (elements: key, value, key, value, ...)
    kDouble,     // ,
    kBool,       // #
    kBigNumber,  // (
  };
  Type type = Type::kNull;
  std::string str;           // simple, error, bulk, double, big number text
  std::int64_t integer = 0;  // integer; bool as 0/1
  std::vector<RespValue> elems;

  bool is_error() const noexcept { return type == Type::kError; }
  // The first word of an error ("ERR", "CLOCK_MOVED_BACK").
  std::string error_word() const;
  // For a map, or a RESP2 flat array of pairs: the value of `key`.
  const RespValue* field(std::string_view key) const;
  // Human-readable form for failure messages.
  std::string debug() const;
};

// Parses one complete reply at `pos` of `buf` and advances `pos` past it.
// nullopt when `buf` holds only part of a reply; sets `malformed` for bytes
// that are not RESP.
std::optional<RespValue> parse_resp(std::string_view buf, std::size_t& pos, bool& malformed);

// A command as a RESP array of bulk strings.
std::string encode_command(const std::vector<std::string>& args);

class RespConn {
 public:
  static std::optional<RespConn> connect_unix(const std::string& path);
  static std::optional<RespConn> connect_tcp(int port);
  RespConn(RespConn&&) noexcept = default;
  RespConn& operator=(RespConn&&) noexcept = default;

  int fd() const noexcept { return fd_.get(); }
  // Writes all of `bytes` (false on a write error, e.g. after the peer closed).
  bool send(std::string_view bytes);
  // The next reply; nullopt on timeout, end of stream or malformed bytes
  // (closed() / malformed() tell which).
  std::optional<RespValue> read(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // send(encode_command(args)) then read().
  std::optional<RespValue> command(const std::vector<std::string>& args);
  // True once the peer closed the stream (read returned 0 or ECONNRESET) and
  // every buffered reply was consumed.
  bool closed() const noexcept { return eof_ && pos_ >= buf_.size(); }
  bool malformed() const noexcept { return malformed_; }
  // Bytes received that do not make a whole reply yet.
  std::size_t pending_bytes() const noexcept { return buf_.size() - pos_; }
  // Waits up to `timeout` for the peer to close; true if it did (after any
  // replies still buffered, which are discarded).
  bool wait_closed(std::chrono::milliseconds timeout);
  // Closes with SO_LINGER 0: the peer sees a reset, unread data is dropped.
  void reset();
  void close() noexcept { fd_.reset(); }

 private:
  explicit RespConn(Fd fd) : fd_(std::move(fd)) {}
  bool fill(std::chrono::steady_clock::time_point until);

  Fd fd_;
  std::string buf_;
  std::size_t pos_ = 0;
  bool eof_ = false;
  bool malformed_ = false;
};

}  // namespace snowid::daemon_test
