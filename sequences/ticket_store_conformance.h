// The conformance suite every TicketStore passes: the contract of
// include/snowid/ticket_store.h, run against the memory store, SQLite and
// PostgreSQL. Each test binary instantiates the suites with its backends:
//
//   INSTANTIATE_TEST_SUITE_P(Sqlite, TicketStoreConformance,
//                            ::testing::Values(sqlite_backend()), backend_name);
//
// TicketStoreConformance holds what any store must do; SqlTicketStoreTest
// (sql_ticket_store_test.cc) what needs a database shared by several stores:
// migrations, concurrent takers, the schema's own checks.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "snowid/status.h"
#include "snowid/testing/simulated_clock.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"

namespace snowid::sequences::conformance {

// A fresh, empty database for one test, and stores on it.
class StoreBackend {
 public:
  virtual ~StoreBackend() = default;
  // A new store with a connection of its own on this test's database; with
  // `migrate` false it does not touch the schema. The memory backend makes a
  // new, separate store on each call.
  virtual Result<std::unique_ptr<TicketStore>> open(const Clock& clock, bool migrate) = 0;
  // Runs `sql` on a connection of the test's own, outside any store: the
  // first column of the first row as text, "" when there is none. SQL
  // backends only.
  virtual Result<std::string> query(const std::string& sql) = 0;
};

struct BackendParam {
  std::string name;  // the suffix of the test names: "Memory", "Sqlite", "Postgres"
  std::function<Result<std::unique_ptr<StoreBackend>>()> make;
};

// For gtest's messages: the name, not the bytes.
inline void PrintTo(const BackendParam& param, std::ostream* os) { *os << param.name; }

inline std::string backend_name(const ::testing::TestParamInfo<BackendParam>& info) {
  return info.param.name;
}

// A fixture with a backend, a store on it, migrated (PostgreSQL's store
// would migrate on its first call; SetUp calls migrate() so that the tables
// are there before the test reads them by hand), and the simulated clock
// that stamps its rows.
class StoreFixture : public ::testing::TestWithParam<BackendParam> {
 protected:
  void SetUp() override;

  // 2030-01-02T03:04:05.678Z: milliseconds exact, as the tables keep them.
  snowid::testing::SimulatedClock clock_{wall_from_unix_ms(1'893'553'445'678)};
  std::unique_ptr<StoreBackend> backend_;
  std::unique_ptr<TicketStore> store_;
};

class TicketStoreConformance : public StoreFixture {};
class SqlTicketStoreTest : public StoreFixture {};

}  // namespace snowid::sequences::conformance
