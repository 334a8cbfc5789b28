// Everything that can take from one sequence, at once, trying to make two
// of them share a number: buffers asking for 1 to 5,000 numbers a range,
// adaptive ones that grow and shrink their step, one buffer shared by three
// threads, next(), next_n() and try_next_n(), direct take() calls (what
// SEQRANGE does), a buffer whose store loses replies after they committed,
// and client processes, one of them killed with SIGKILL mid-range.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scenario_database.h"
#include "snowid/ticket_store.h"

namespace snowid::sequence_scenarios {

struct MixOptions {
  std::string sequence = "mixed";
  std::int64_t start = 7;
  std::int64_t step = 1000;  // the sequence's own step
  // Multiplies every taker's share: each round trip costs an fsync on
  // SQLite, far less on the scratch PostgreSQL.
  int scale = 1;
  // Runs on a thread of its own while the takers run, until `done`: a
  // disturbance (killing the takers' connections, say). Optional.
  std::function<void(const std::atomic<bool>& done)> disturb;
};

struct MixReport {
  // Every number any taker received, as ranges (single numbers merged).
  std::vector<SequenceRange> ranges;
  std::int64_t numbers = 0;
  std::uint64_t retryable_errors = 0;  // calls refused with kUnavailable, retried
  std::string errors_by_taker;         // "label: N, ..." for the takers with any
  std::uint64_t store_calls = 0;       // take() calls: the buffers', the direct ones, the
                                       // batch client's (not the killed client's)
  // A final error, a taker whose numbers did not increase, a client
  // process that failed: one line each. Empty when all went as promised.
  std::vector<std::string> problems;
};

// Creates the sequence and runs the mix on `db` (a store per taker).
MixReport run_mix(const ScenarioDatabase& db, TicketStore& store, const MixOptions& options);

// Fails the running test for each problem, for any number two takers share,
// and for any number outside [start, the table's next_value); reports the
// figures under `label`.
void check_mix(MixReport report, TicketStore& store, const MixOptions& options,
               const std::string& label);

}  // namespace snowid::sequence_scenarios
