#include "postgres_database.h"

#include <libpq-fe.h>

#include <memory>

#include "testing/postgres_server.h"

namespace snowid::sequence_scenarios {

Result<std::string> fresh_postgres_schema() {
  Result<sequences::testing::PostgresServer*> server = sequences::testing::shared_postgres_server();
  if (!server.is_ok()) return server.status();
  return server.value()->fresh_schema();
}

DatabaseParam postgres_database_param() {
  return {"Postgres", []() -> Result<std::unique_ptr<ScenarioDatabase>> {
            Result<std::string> conninfo = fresh_postgres_schema();
            if (!conninfo.is_ok()) return conninfo.status();
            return database_at(conninfo.value());
          }};
}

Result<std::string> run_sql(const std::string& conninfo, const std::string& sql) {
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn(PQconnectdb(conninfo.c_str()), &PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    return Status(Code::kUnavailable, std::string("connect: ") + PQerrorMessage(conn.get()));
  }
  std::unique_ptr<PGresult, decltype(&PQclear)> res(PQexec(conn.get(), sql.c_str()), &PQclear);
  const ExecStatusType st = PQresultStatus(res.get());
  if (st == PGRES_TUPLES_OK) {
    return std::string(PQntuples(res.get()) > 0 ? PQgetvalue(res.get(), 0, 0) : "");
  }
  if (st == PGRES_COMMAND_OK) return std::string();
  return Status(Code::kFailedPrecondition, sql + ": " + PQresultErrorMessage(res.get()));
}

}  // namespace snowid::sequence_scenarios
