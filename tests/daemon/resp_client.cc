#include "resp_client.h"

#include <sys/socket.h>

#include <charconv>
#include <utility>

namespace snowid::daemon_test {
namespace {

// The line starting at `pos` without its CRLF; nullopt if incomplete.
std::optional<std::string_view> line_at(std::string_view buf, std::size_t pos) {
  const std::size_t end = buf.find("\r\n", pos);
  if (end == std::string_view::npos) return std::nullopt;
  return buf.substr(pos, end - pos);
}

bool to_int(std::string_view text, std::int64_t& out) {
  if (text.empty()) return false;
  const char* first = text.data();
  if (*first == '+') ++first;
  const auto [ptr, ec] = std::from_chars(first, text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::optional<RespValue> parse_at(std::string_view buf, std::size_t& pos, bool& malformed,
                                  int depth) {
  if (depth > 32) {
    malformed = true;
    return std::nullopt;
  }
  if (pos >= buf.size()) return std::nullopt;
  const char kind = buf[pos];
  const std::optional<std::string_view> line = line_at(buf, pos + 1);
  if (!line) return std::nullopt;
  const std::size_t after = pos + 1 + line->size() + 2;
  RespValue v;
  switch (kind) {
    case '+':
    case '-':
    case ',':
    case '(':
      v.type = kind == '+'   ? RespValue::Type::kSimple
               : kind == '-' ? RespValue::Type::kError
               : kind == ',' ? RespValue::Type::kDouble
                             : RespValue::Type::kBigNumber;
      v.str = std::string(*line);
      pos = after;
      return v;
    case ':':
      v.type = RespValue::Type::kInteger;
      if (!to_int(*line, v.integer)) {
        malformed = true;
        return std::nullopt;
      }
      pos = after;
      return v;
    case '#':
      if (*line != "t" && *line != "f") {
        malformed = true;
        return std::nullopt;
      }
      v.type = RespValue::Type::kBool;
      v.integer = *line == "t" ? 1 : 0;
      pos = after;
      return v;
    case '_':
      if (!line->empty()) {
        malformed = true;
        return std::nullopt;
      }
      v.type = RespValue::Type::kNull;
      pos = after;
      return v;
    case '$':
    case '=': {
      std::int64_t len = 0;
      if (!to_int(*line, len) || len < -1) {
        malformed = true;
        return std::nullopt;
      }
      if (len == -1) {
        v.type = RespValue::Type::kNull;
        pos = after;
        return v;
      }
      const std::size_t n = static_cast<std::size_t>(len);
      if (buf.size() < after + n + 2) return std::nullopt;
      if (buf.substr(after + n, 2) != "\r\n") {
        malformed = true;
        return std::nullopt;
      }
      v.type = RespValue::Type::kBulk;
      v.str = std::string(buf.substr(after, n));
      pos = after + n + 2;
      return v;
    }
    case '*':
    case '~':
    case '>':
    case '%': {
      std::int64_t count = 0;
      if (!to_int(*line, count) || count < -1) {
        malformed = true;
        return std::nullopt;
      }
      if (count == -1) {
        v.type = RespValue::Type::kNull;
        pos = after;
        return v;
      }
      v.type = kind == '%' ? RespValue::Type::kMap : RespValue::Type::kArray;
      const std::int64_t elems = kind == '%' ? count * 2 : count;
      std::size_t p = after;
      v.elems.reserve(static_cast<std::size_t>(std::min<std::int64_t>(elems, 1 << 16)));
      for (std::int64_t i = 0; i < elems; ++i) {
        std::optional<RespValue> e = parse_at(buf, p, malformed, depth + 1);
        if (!e) return std::nullopt;
        v.elems.push_back(std::move(*e));
      }
      pos = p;
      return v;
    }
    default:
      malformed = true;
      return std::nullopt;
  }
}

}  // namespace

std::string RespValue::error_word() const {
  if (type != Type::kError) return "";
  return str.substr(0, str.find(' '));
}

const RespValue* RespValue::field(std::string_view key) const {
  if (type != Type::kMap && type != Type::kArray) return nullptr;
  for (std::size_t i = 0; i + 1 < elems.size(); i += 2) {
    if ((elems[i].type == Type::kBulk || elems[i].type == Type::kSimple) && elems[i].str == key) {
      return &elems[i + 1];
    }
  }
  return nullptr;
}

std::string RespValue::debug() const {
  switch (type) {
    case Type::kSimple:
      return "+" + str;
    case Type::kError:
      return "-" + str;
    case Type::kInteger:
      return ":" + std::to_string(integer);
    case Type::kBulk:
      return "\"" + str + "\"";
    case Type::kNull:
      return "(nil)";
    case Type::kDouble:
      return "," + str;
    case Type::kBool:
      return integer != 0 ? "#t" : "#f";
    case Type::kBigNumber:
      return "(" + str;
    case Type::kArray:
    case Type::kMap: {
      std::string out = type == Type::kMap ? "{" : "[";
      for (std::size_t i = 0; i < elems.size(); ++i) {
        if (i > 0) out += i % 2 == 1 && type == Type::kMap ? ": " : ", ";
        if (i >= 20) {
          out += "... (" + std::to_string(elems.size()) + " elements)";
          break;
        }
        out += elems[i].debug();
      }
      return out + (type == Type::kMap ? "}" : "]");
    }
  }
  return "?";
}

std::optional<RespValue> parse_resp(std::string_view buf, std::size_t& pos, bool& malformed) {
  std::size_t p = pos;
  std::optional<RespValue> v = parse_at(buf, p, malformed, 0);
  if (v) pos = p;
  return v;
}

std::string encode_command(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) {
    out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  }
  return out;
}

std::optional<RespConn> RespConn::connect_unix(const std::string& path) {
  Fd fd = connect_unix_socket(path);
  if (!fd) return std::nullopt;
  return RespConn(std::move(fd));
}

std::optional<RespConn> RespConn::connect_tcp(int port) {
  Fd fd = connect_tcp_loopback(port);
  if (!fd) return std::nullopt;
  return RespConn(std::move(fd));
}

void RespConn::reset() {
  if (!fd_) return;
  const linger l{1, 0};
  setsockopt(fd_.get(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close();
}

bool RespConn::send(std::string_view bytes) { return send_all(fd_.get(), bytes); }

bool RespConn::fill(std::chrono::steady_clock::time_point until) {
  if (eof_ || !fd_) return false;
  if (pos_ > (1u << 20) && pos_ * 2 > buf_.size()) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  return receive_some(fd_.get(), buf_, until, eof_);
}

std::optional<RespValue> RespConn::read(std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (malformed_) return std::nullopt;
    std::optional<RespValue> v = parse_resp(buf_, pos_, malformed_);
    if (v) return v;
    if (malformed_ || !fill(until)) return std::nullopt;
  }
}

std::optional<RespValue> RespConn::command(const std::vector<std::string>& args) {
  if (!send(encode_command(args))) return std::nullopt;
  return read();
}

bool RespConn::wait_closed(std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!eof_) {
    if (!fill(until) && !eof_) return false;
  }
  pos_ = buf_.size();
  return true;
}

}  // namespace snowid::daemon_test
