// The schema's migrations, shared by both stores. Versions count from 1 and
// mean the same on every database; a migration whose SQL is empty on one
// database is recorded there without running anything, so that a version
// number always names the same schema (docs/sequences.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "snowid/status.h"

namespace snowid::sequences {

struct Migration {
  std::int64_t version = 0;
  std::string_view name;  // recorded in snowid_schema_migrations
  std::string_view sql;   // one or more statements; empty: nothing to run here
};

// The newest schema this code knows.
inline constexpr std::int64_t kSchemaVersion = 2;

// The table a migrated database has; absent means version 0.
inline constexpr std::string_view kMigrationsTable = "snowid_schema_migrations";

inline Status newer_schema_error(std::int64_t found) {
  return Status(Code::kFailedPrecondition,
                "the database's snowid schema is version " + std::to_string(found) +
                    ", newer than this code knows (" + std::to_string(kSchemaVersion) +
                    "): upgrade snowid");
}

inline Status missing_schema_error(std::string_view database_message) {
  return Status(Code::kFailedPrecondition,
                "the ticket table is missing: run migrate (" + std::string(database_message) + ")");
}

}  // namespace snowid::sequences
