// snowidd's structured log: one line per event, as a JSON object (default)
// or as logfmt, with a level. Private to the daemon.
//
// clang-format off
//   {"ts":"2026-11-30T05:00:00.123Z","level":"info","msg":"listening","transport":"unix","address":"/run/snowid/snowidd.sock"}
//   ts=2026-11-30T05:00:00.123Z level=info msg=listening transport=unix address=/run/snowid/snowidd.sock
// clang-format on
//
// Keys are fixed words chosen by the code; values are escaped (JSON string
// escapes; logfmt quotes a value holding a space, '=', '"' or a control
// character). Tests and tools parse the JSON form: the "msg" of each event is
// part of the daemon's interface (see docs/daemon.md).
//
// Thread-safe: each line is formatted on the caller's thread and written with
// one write(2) under a process-wide lock, so lines never interleave, even
// past the pipe's atomic-write size.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>

#include "log_level.h"
#include "snowid/time.h"

namespace snowid::daemon {

// One key and its value. Strings are copied into the line before log()
// returns, so views into temporaries are fine.
struct LogField {
  using Value = std::variant<std::string_view, std::int64_t, std::uint64_t, double, bool>;
  LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
  LogField(std::string_view k, const std::string& v) : key(k), value(std::string_view(v)) {}
  LogField(std::string_view k, const char* v) : key(k), value(std::string_view(v)) {}
  LogField(std::string_view k, bool v) : key(k), value(v) {}
  LogField(std::string_view k, double v) : key(k), value(v) {}
  LogField(std::string_view k, int v) : key(k), value(std::int64_t{v}) {}
  LogField(std::string_view k, long v) : key(k), value(std::int64_t{v}) {}
  LogField(std::string_view k, long long v) : key(k), value(std::int64_t{v}) {}
  LogField(std::string_view k, unsigned v) : key(k), value(std::uint64_t{v}) {}
  LogField(std::string_view k, unsigned long v) : key(k), value(std::uint64_t{v}) {}
  LogField(std::string_view k, unsigned long long v) : key(k), value(std::uint64_t{v}) {}
  std::string_view key;
  Value value;
};

class Logger {
 public:
  // Writes to `fd` (not owned; stderr in the daemon). `clock` stamps the
  // lines and must outlive the logger.
  Logger(int fd, const Clock& clock, LogLevel level, bool json) noexcept;

  // The level may change while the daemon runs (a runtime setting).
  void set_level(LogLevel level) noexcept { level_.store(level, std::memory_order_relaxed); }
  LogLevel level() const noexcept { return level_.load(std::memory_order_relaxed); }
  bool enabled(LogLevel level) const noexcept { return level >= this->level(); }

  // One line, if `level` is enabled. Never throws; a failed write is dropped.
  void log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});
  void debug(std::string_view msg, std::initializer_list<LogField> fields = {}) {
    log(LogLevel::kDebug, msg, fields);
  }
  void info(std::string_view msg, std::initializer_list<LogField> fields = {}) {
    log(LogLevel::kInfo, msg, fields);
  }
  void warn(std::string_view msg, std::initializer_list<LogField> fields = {}) {
    log(LogLevel::kWarn, msg, fields);
  }
  void error(std::string_view msg, std::initializer_list<LogField> fields = {}) {
    log(LogLevel::kError, msg, fields);
  }

  // The line log() would write (with its trailing newline), for tests.
  std::string format(LogLevel level, std::string_view msg,
                     std::initializer_list<LogField> fields) const;

 private:
  int fd_;
  const Clock& clock_;
  std::atomic<LogLevel> level_;
  bool json_;
};

}  // namespace snowid::daemon
