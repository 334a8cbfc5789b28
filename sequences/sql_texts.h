// The SQL files under sql/, compiled in (embed_sql.cmake writes the
// definitions at build time). Each library embeds the files of its own
// database, in a namespace of its own, so that linking both stores into one
// program defines nothing twice.
#pragma once

#include <string_view>

namespace snowid::sequences::sqlite_sql {
// sql/001_ticket_table.sql
extern const std::string_view kTicketTable;
// sql/sqlite_gapless.sql: the gapless number statement (parameter :name).
extern const std::string_view kGaplessNext;
}  // namespace snowid::sequences::sqlite_sql

namespace snowid::sequences::postgres_sql {
// sql/001_ticket_table.sql
extern const std::string_view kTicketTable;
// sql/002_postgres_gapless.sql: the function snowid_next_gapless(name).
extern const std::string_view kGaplessFunction;
}  // namespace snowid::sequences::postgres_sql
