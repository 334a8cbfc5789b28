// The one list of the service's scalar counters and gauges. INFO (its
// Server, Lease, Health and Stats sections) and /metrics are both generated
// from it, so a series cannot be on one side only: each row names its INFO
// key and its Prometheus series (a family, with at most one label), its type,
// its help text and how to read it from a ServiceSnapshot.
//
// The series with a structure of their own are written beside the list, on
// both sides where the daemon has them: refusals by word (INFO
// refusals_<word>, only when non-zero; /metrics snowid_refusals_total{reason}),
// the lease state (INFO lease_state; /metrics snowid_lease_state{state}, one
// hot), the worker and layout (INFO Worker and Layout; snowid_worker_info),
// and the named sequences (INFO sums; /metrics per sequence). The server's
// connection counters are in /metrics only: a RESP session does not see them.
//
// Adding a counter: a field in the snapshot, and one row here.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "id_service.h"
#include "snowid/time.h"

namespace snowid::daemon {

enum class StatType : std::uint8_t { kCounter, kGauge };

// How a value is written. INFO: a count is an integer, kMillis milliseconds
// with three decimals, kSeconds whole seconds, kFlag 0 or 1. /metrics: a
// count or flag as an integer, either duration in seconds.
enum class StatUnit : std::uint8_t { kCount, kMillis, kSeconds, kFlag };

struct StatValue {
  std::uint64_t count = 0;  // kCount, kFlag
  Duration duration = Duration::zero();
};

struct StatRow {
  std::string_view section;      // INFO section title: "Stats"
  std::string_view info;         // INFO key: "ids_issued"
  std::string_view metric;       // Prometheus family: "snowid_ids_issued_total"
  std::string_view label;        // one label of the family's series, or empty
  std::string_view label_value;  //
  StatType type;
  StatUnit unit;
  // The family's help; rows of one family (consecutive) share the first's.
  std::string_view help;
  StatValue (*read)(const ServiceSnapshot&);
};

// Every row, in INFO's order within each section; rows of one family are
// consecutive.
std::span<const StatRow> service_stats() noexcept;

}  // namespace snowid::daemon
