// The scenarios' PostgreSQL: a schema of its own for each test on the
// process's shared scratch server (sequences/testing/postgres_server.h), and
// SQL run by hand on a connection of the test's own.
#pragma once

#include <string>

#include "scenario_database.h"
#include "snowid/status.h"

namespace snowid::sequence_scenarios {

// A new schema on the shared server: its conninfo.
Result<std::string> fresh_postgres_schema();

// The shared scenarios' parameter: a fresh schema per test.
DatabaseParam postgres_database_param();

// Runs `sql` (one or more statements) on a new connection to `conninfo`:
// the first column of the first row of the last result as text, "" when
// there is none.
Result<std::string> run_sql(const std::string& conninfo, const std::string& sql);

}  // namespace snowid::sequence_scenarios
