#include "ticket_store_url.h"

#include <string>

#include "snowid/postgres_ticket_store.h"
#include "snowid/sqlite_ticket_store.h"

namespace snowid::sequences {
namespace {

constexpr std::string_view kSqlitePrefix = "sqlite:";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool is_postgres(std::string_view url) {
  return starts_with(url, "postgresql://") || starts_with(url, "postgres://");
}

// Replaces the value of every `password=` parameter (URI query or key=value
// form) with "***".
std::string redact_password_parameters(std::string s) {
  constexpr std::string_view kKey = "password=";
  for (std::size_t at = s.find(kKey); at != std::string::npos; at = s.find(kKey, at)) {
    const bool starts_word = at == 0 || s[at - 1] == '?' || s[at - 1] == '&' || s[at - 1] == ' ';
    at += kKey.size();
    if (!starts_word) continue;
    const std::size_t end = s.find_first_of("& ", at);
    const std::size_t n = (end == std::string::npos ? s.size() : end) - at;
    s.replace(at, n, "***");
    at += 3;
  }
  return s;
}

}  // namespace

Result<std::string_view> ticket_store_kind(std::string_view url) {
  if (starts_with(url, kSqlitePrefix)) {
    if (url.size() == kSqlitePrefix.size()) {
      return Status(Code::kInvalidArgument, "ticket store \"sqlite:\" names no file: sqlite:PATH");
    }
    return std::string_view("sqlite");
  }
  if (is_postgres(url)) return std::string_view("postgresql");
  return Status(Code::kInvalidArgument,
                "ticket store \"" + redact_ticket_store_url(url) +
                    "\" is none of sqlite:PATH, postgresql://... and postgres://...");
}

Result<std::unique_ptr<TicketStore>> open_ticket_store(std::string_view url, const Clock& clock,
                                                       const TicketStoreOpenOptions& options) {
  Result<std::string_view> kind = ticket_store_kind(url);
  if (!kind.is_ok()) return kind.status();
  if (kind.value() == "sqlite") {
    SqliteTicketStoreOptions sqlite;
    sqlite.busy_timeout = options.timeout;
    sqlite.migrate = options.migrate;
    return open_sqlite_ticket_store(std::string(url.substr(kSqlitePrefix.size())), clock, sqlite);
  }
  PostgresTicketStoreOptions postgres;
  postgres.connect_timeout = options.timeout;
  postgres.statement_timeout = options.timeout;
  postgres.connections = options.connections;
  postgres.migrate = options.migrate;
  return open_postgres_ticket_store(std::string(url), clock, postgres);
}

std::string redact_ticket_store_url(std::string_view url) {
  if (starts_with(url, kSqlitePrefix)) return std::string(url);
  std::string out(url);
  // URI form: scheme://user:password@host...; the password is what lies
  // between the first ':' and the last '@' of the part before the path.
  if (const std::size_t scheme = out.find("://"); scheme != std::string::npos) {
    const std::size_t begin = scheme + 3;
    std::size_t authority_end = out.find_first_of("/?", begin);
    if (authority_end == std::string::npos) authority_end = out.size();
    const std::size_t at = out.rfind('@', authority_end);
    if (at != std::string::npos && at >= begin) {
      const std::size_t colon = out.find(':', begin);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  return redact_password_parameters(std::move(out));
}

}  // namespace snowid::sequences
