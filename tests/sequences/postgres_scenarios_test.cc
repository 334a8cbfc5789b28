// The shared scenarios on a real PostgreSQL, each test in a schema of its
// own; and the mix of every taker while another connection keeps killing
// theirs, so that takes break mid-flight and the store's retry on a fresh
// connection runs for real.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "number_checks.h"
#include "postgres_database.h"
#include "scenario_database.h"
#include "takers_mix.h"

namespace snowid::sequence_scenarios {
namespace {

using namespace std::chrono_literals;

INSTANTIATE_TEST_SUITE_P(Postgres, SequenceScenario, ::testing::Values(postgres_database_param()),
                         database_name);

TEST(PostgresMixScenario, EveryKindOfTakerWhileTheirConnectionsAreKilled) {
  Result<std::string> schema = fresh_postgres_schema();
  ASSERT_TRUE(schema.is_ok()) << schema.status().to_string();
  // The takers' connections carry a name of their own, so that the killer
  // spares everyone else's on the shared server.
  const std::string app = "snowid_mix_" + std::to_string(::getpid());
  std::unique_ptr<ScenarioDatabase> db = database_at(schema.value() + "&application_name=" + app);
  Result<std::unique_ptr<TicketStore>> store = db->open();
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();

  std::atomic<int> killed{0};
  std::string killer_error;
  MixOptions options;
  options.scale = 4;
  options.disturb = [&](const std::atomic<bool>& done) {
    const std::string kill_them =
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '" +
        app + "'";
    while (!done.load()) {
      Result<std::string> n = run_sql(schema.value(), kill_them);
      if (!n.is_ok()) {
        killer_error = n.status().to_string();
        return;
      }
      killed += std::stoi(n.value());
      // Paces the disturbance: the takers get some work done in between.
      std::this_thread::sleep_for(5ms);
    }
  };
  check_mix(run_mix(*db, *store.value(), options), *store.value(), options, "mix_killed");
  EXPECT_EQ(killer_error, "");
  // Without a kill the test would prove nothing more than the plain mix.
  EXPECT_GT(killed.load(), 0);
  report_figure("mix_killed.connections_killed", std::to_string(killed.load()));
}

}  // namespace
}  // namespace snowid::sequence_scenarios
