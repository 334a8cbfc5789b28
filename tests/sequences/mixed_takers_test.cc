// Every kind of taker on one sequence at once (takers_mix.h): no number is
// handed out twice, none lies outside what the table gave out.
#include <gtest/gtest.h>

#include <string>

#include "scenario_database.h"
#include "takers_mix.h"

namespace snowid::sequence_scenarios {
namespace {

TEST_P(SequenceScenario, EveryKindOfTakerAtOnceNeverSharesANumber) {
  MixOptions options;
  // A round trip costs an fsync on SQLite; the scratch PostgreSQL runs
  // without: it gets ten times the work in about the same time.
  options.scale = db_->url().rfind("sqlite:", 0) == 0 ? 1 : 10;
  check_mix(run_mix(*db_, *store_, options), *store_, options, "mix");
}

}  // namespace
}  // namespace snowid::sequence_scenarios
