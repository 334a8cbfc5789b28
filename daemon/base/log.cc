#include "log.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "json_text.h"
#include "mutex.h"

namespace snowid::daemon {
namespace {

// One write(2) per line in the common case. The lock covers the rare partial
// write (a pipe takes at most PIPE_BUF bytes atomically, a full pipe or a
// signal may cut a write short): the rest of the line follows before any
// other thread's line, so lines never interleave. One lock for every Logger,
// since they normally share stderr.
internal::Mutex& write_mutex() {
  static internal::Mutex m;
  return m;
}

// logfmt has no formal grammar; this follows the common reading (as in
// go-logfmt): a value is bare unless it is empty or holds a space, '=', '"',
// a control character or bytes that are not UTF-8; then it is quoted with
// the JSON escapes.
bool logfmt_needs_quotes(std::string_view s) noexcept {
  if (s.empty()) return true;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c <= 0x20 || c == '=' || c == '"' || c == 0x7F) return true;
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence_length(s.substr(i));
      if (n == 0) return true;
      i += n;
    } else {
      ++i;
    }
  }
  return false;
}

void append_logfmt_value(std::string& out, std::string_view s) {
  if (logfmt_needs_quotes(s)) {
    append_json_string(out, s);
  } else {
    out += s;
  }
}

// Keys are words chosen by the code; anything that would break the line
// structure becomes '_' all the same.
void append_logfmt_key(std::string& out, std::string_view key) {
  if (key.empty()) {
    out += '_';
    return;
  }
  for (char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    out += (c <= 0x20 || c == '=' || c == '"' || c >= 0x7F) ? '_' : ch;
  }
}

template <typename Int>
void append_integer(std::string& out, Int v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// The shortest text that reads back as the same double. JSON has no NaN or
// infinity: those are null there, and NaN, +Inf, -Inf in logfmt.
void append_double(std::string& out, double v, bool json) {
  if (std::isnan(v)) {
    out += json ? "null" : "NaN";
  } else if (std::isinf(v)) {
    out += json ? "null" : (v > 0 ? "+Inf" : "-Inf");
  } else {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
  }
}

void append_value(std::string& out, const LogField::Value& value, bool json) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string_view>) {
          if (json) {
            append_json_string(out, v);
          } else {
            append_logfmt_value(out, v);
          }
        } else if constexpr (std::is_same_v<T, bool>) {
          out += v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          append_double(out, v, json);
        } else {
          append_integer(out, v);
        }
      },
      value);
}

// Writes all of `line`, retrying after a signal and after a partial write.
// Gives up on any other error (the line is dropped, or its end is).
void write_all(int fd, std::string_view line) noexcept {
  internal::MutexLock lock(write_mutex());
  while (!line.empty()) {
    const ssize_t n = ::write(fd, line.data(), line.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    line.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

Logger::Logger(int fd, const Clock& clock, LogLevel level, bool json) noexcept
    : fd_(fd), clock_(clock), level_(level), json_(json) {}

void Logger::log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  if (!enabled(level)) return;
  const std::string line = format(level, msg, fields);
  write_all(fd_, line);
}

std::string Logger::format(LogLevel level, std::string_view msg,
                           std::initializer_list<LogField> fields) const {
  const std::string ts = format_iso8601(clock_.wall_now());
  const std::string_view level_name = log_level_name(level);
  std::string out;
  out.reserve(64 + msg.size() + fields.size() * 24);
  if (json_) {
    out += "{\"ts\":";
    append_json_string(out, ts);
    out += ",\"level\":";
    append_json_string(out, level_name);
    out += ",\"msg\":";
    append_json_string(out, msg);
    for (const LogField& f : fields) {
      out += ',';
      append_json_string(out, f.key);
      out += ':';
      append_value(out, f.value, true);
    }
    out += "}\n";
  } else {
    out += "ts=";
    out += ts;
    out += " level=";
    out += level_name;
    out += " msg=";
    append_logfmt_value(out, msg);
    for (const LogField& f : fields) {
      out += ' ';
      append_logfmt_key(out, f.key);
      out += '=';
      append_value(out, f.value, false);
    }
    out += '\n';
  }
  return out;
}

}  // namespace snowid::daemon
