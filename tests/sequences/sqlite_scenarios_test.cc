// The shared scenarios on SQLite files in temporary directories.
#include <gtest/gtest.h>

#include "scenario_database.h"

namespace snowid::sequence_scenarios {
namespace {

INSTANTIATE_TEST_SUITE_P(Sqlite, SequenceScenario,
                         ::testing::Values(DatabaseParam{"Sqlite", sqlite_database}),
                         database_name);

}  // namespace
}  // namespace snowid::sequence_scenarios
