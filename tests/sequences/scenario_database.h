// The database a scenario runs on, named by one configuration string
// (sequences/include/ticket_store_url.h) that the test's own stores and the client
// processes open alike: an SQLite file in a temporary directory, or a schema
// of its own on a real PostgreSQL (sequences/testing/postgres_server.h).
// Each scenario binary instantiates the shared scenarios with its database:
//
//   INSTANTIATE_TEST_SUITE_P(Sqlite, SequenceScenario,
//                            ::testing::Values(sqlite_database_param()), database_name);
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "snowid/status.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"

namespace snowid::sequence_scenarios {

class ScenarioDatabase {
 public:
  virtual ~ScenarioDatabase() = default;
  // "sqlite:PATH" or "postgresql://...": for open_ticket_store and the
  // client program's --store.
  virtual const std::string& url() const = 0;
  // A store with connections of its own (PostgreSQL; SQLite has one),
  // migrated, on the real clock; `timeout` as TicketStoreOpenOptions.
  Result<std::unique_ptr<TicketStore>> open(std::size_t connections = 1,
                                            Duration timeout = std::chrono::seconds(10)) const;
};

// A fresh file "tickets.db" in a new temporary directory, removed with it.
Result<std::unique_ptr<ScenarioDatabase>> sqlite_database();
// `url` itself, owned by someone else (a PostgreSQL schema).
std::unique_ptr<ScenarioDatabase> database_at(std::string url);

struct DatabaseParam {
  std::string name;  // the suffix of the test names: "Sqlite", "Postgres"
  std::function<Result<std::unique_ptr<ScenarioDatabase>>()> make;
};

inline void PrintTo(const DatabaseParam& param, std::ostream* os) { *os << param.name; }

inline std::string database_name(const ::testing::TestParamInfo<DatabaseParam>& info) {
  return info.param.name;
}

// A fixture with a fresh database and a store on it (one connection).
class SequenceScenario : public ::testing::TestWithParam<DatabaseParam> {
 protected:
  void SetUp() override;

  std::unique_ptr<ScenarioDatabase> db_;
  std::unique_ptr<TicketStore> store_;
};

}  // namespace snowid::sequence_scenarios
