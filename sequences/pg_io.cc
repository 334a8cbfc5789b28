#include "pg_io.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <limits>

namespace snowid::pg {
namespace {

enum class SocketWait { kReady, kTimedOut, kFailed };

// Waits for `events` on the connection's socket until `deadline`, measured
// on `clock`; each poll() is also bounded by what was left when it began,
// so a simulated clock that does not move still ends the wait. A readable
// `wake_fd` (when not -1) ends it as a timeout.
SocketWait wait_socket(PGconn* conn, short events, const Clock& clock, MonoTime deadline,
                       int wake_fd) {
  const int fd = PQsocket(conn);
  if (fd < 0) return SocketWait::kFailed;
  for (;;) {
    const Duration left = deadline - clock.mono_now();
    if (left <= Duration::zero()) return SocketWait::kTimedOut;
    const std::int64_t left_ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    const int timeout_ms =
        static_cast<int>(std::min<std::int64_t>(left_ms, std::numeric_limits<int>::max()));
    pollfd p[2] = {{fd, events, 0}, {wake_fd, POLLIN, 0}};
    const int n = ::poll(p, wake_fd >= 0 ? 2 : 1, timeout_ms);
    if (n > 0 && wake_fd >= 0 && p[1].revents != 0) return SocketWait::kTimedOut;
    if (n > 0) return SocketWait::kReady;
    if (n == 0 && timeout_ms == left_ms) return SocketWait::kTimedOut;
    if (n < 0 && errno != EINTR) return SocketWait::kFailed;
  }
}

}  // namespace

std::string trimmed(const char* text) {
  std::string s = text != nullptr ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

Status check_conninfo(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(conninfo.c_str(), &error);
  if (parsed == nullptr) {
    Status s(Code::kInvalidArgument,
             "postgresql: the connection string is not valid: " +
                 (error != nullptr ? trimmed(error) : std::string("out of memory")));
    PQfreemem(error);
    return s;
  }
  PQconninfoFree(parsed);
  return Status::ok();
}

Result<PGconn*> connect_nonblocking(const std::string& conninfo, Duration connect_timeout,
                                    const Clock& clock, int wake_fd) {
  using std::chrono::ceil;
  using std::chrono::seconds;
  const std::string timeout =
      std::to_string(std::max<std::int64_t>(2, ceil<seconds>(connect_timeout).count()));
  // The caller's string is expanded first; the later keys override it.
  const char* keys[] = {"dbname", "connect_timeout", "fallback_application_name", nullptr};
  const char* values[] = {conninfo.c_str(), timeout.c_str(), "snowid", nullptr};
  const auto failed = [](PGconn* conn, const std::string& why) {
    Status s(Code::kUnavailable, "postgresql: connect: " + why);
    PQfinish(conn);
    return s;
  };
  // Started without waiting, then driven here, so that the whole attempt
  // (every address of a multi-host string) is bounded by one deadline and
  // `wake_fd` ends it; only the host name's lookup inside the start blocks.
  PGconn* conn = PQconnectStartParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr) return Status(Code::kUnavailable, "postgresql: connect: out of memory");
  if (PQstatus(conn) == CONNECTION_BAD) return failed(conn, trimmed(PQerrorMessage(conn)));
  const MonoTime deadline = clock.mono_now() + connect_timeout;
  for (PostgresPollingStatusType st = PGRES_POLLING_WRITING; st != PGRES_POLLING_OK;) {
    if (st == PGRES_POLLING_FAILED) return failed(conn, trimmed(PQerrorMessage(conn)));
    const SocketWait w =
        wait_socket(conn, st == PGRES_POLLING_READING ? POLLIN : POLLOUT, clock, deadline, wake_fd);
    if (w == SocketWait::kTimedOut) {
      return failed(
          conn,
          "no answer within " +
              std::to_string(
                  std::chrono::duration_cast<std::chrono::milliseconds>(connect_timeout).count()) +
              " ms (connect_timeout)");
    }
    if (w == SocketWait::kFailed) return failed(conn, trimmed(PQerrorMessage(conn)));
    st = PQconnectPoll(conn);
  }
  if (PQsetnonblocking(conn, 1) != 0) return failed(conn, trimmed(PQerrorMessage(conn)));
  // The server's notices ("relation ... already exists, skipping") would go
  // to stderr, where the daemon writes its log: nothing here acts on them.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return conn;
}

Answer exec_bounded(PGconn* conn, const char* sql, const std::vector<const char*>* params,
                    const Clock& clock, Duration budget, int wake_fd) {
  const MonoTime deadline = clock.mono_now() + budget;
  const int sent = params != nullptr
                       ? PQsendQueryParams(conn, sql, static_cast<int>(params->size()), nullptr,
                                           params->data(), nullptr, nullptr, 0)
                       : PQsendQuery(conn, sql);
  if (sent == 0) return {};
  // The command may not fit in the socket's buffer at once.
  for (int flushed = PQflush(conn); flushed != 0; flushed = PQflush(conn)) {
    if (flushed < 0) return {};
    const SocketWait w = wait_socket(conn, POLLIN | POLLOUT, clock, deadline, wake_fd);
    if (w == SocketWait::kTimedOut) return {nullptr, true};
    if (w == SocketWait::kFailed || PQconsumeInput(conn) == 0) return {};
  }
  Answer answer;
  for (;;) {
    while (PQisBusy(conn) != 0) {
      const SocketWait w = wait_socket(conn, POLLIN, clock, deadline, wake_fd);
      if (w == SocketWait::kTimedOut) {
        answer.timed_out = true;
        return answer;
      }
      // A connection that failed while reading is not asked for more.
      if (w == SocketWait::kFailed || PQconsumeInput(conn) == 0) {
        answer.result.reset();
        return answer;
      }
    }
    PGresult* r = PQgetResult(conn);
    if (r == nullptr) return answer;
    if (answer.result != nullptr && PQresultStatus(answer.result.get()) == PGRES_FATAL_ERROR) {
      PQclear(r);
    } else {
      answer.result.reset(r);
    }
  }
}

}  // namespace snowid::pg
