// /metrics: the daemon's counters in the Prometheus text exposition format
// (version 0.0.4). Every family has HELP and TYPE lines; names start with
// snowid_. Families (see docs/daemon.md for the full list):
// (the scalar ones come from the one list in stats.h, which INFO uses too)
//   snowid_ids_issued_total, snowid_ids_dropped_total, snowid_requests_total{kind="single|batch"},
//   snowid_reserve_calls_total, snowid_decodes_total, snowid_decode_errors_total,
//   snowid_borrowed_ticks_total, snowid_lease_losses_total, snowid_refusals_total{reason="<WORD>"}
//   (one series per word, zero included), snowid_clock_behind_total (clock regressions and early
//   ticks waited out), snowid_clock_moved_back_total (refused), snowid_sequence_exhausted_total,
//   snowid_waits_gave_up_total, snowid_lease_renewals_total, snowid_lease_renewal_failures_total,
//   snowid_lease_renewal_latency_seconds{which="last|max"},
//   snowid_lease_state{state="held|uncertain|lost|released"} (1 for the
//   current one), snowid_lease_reacquisitions_total, snowid_ready,
//   snowid_healthy, snowid_worker_info{region,host,layout} 1,
//   snowid_fence_writes_total, snowid_fence_write_failures_total,
//   snowid_connections_total{transport}, snowid_connections_open{transport},
//   snowid_protocol_errors_total{transport},
//   snowid_first_request_timeouts_total{transport}, snowid_http_requests_total{code},
//   snowid_uptime_seconds, snowid_max_batch; the public-id keyring's:
//   snowid_public_id_keys_loaded, snowid_public_id_keyring_reloads_total,
//   snowid_public_id_keyring_reload_failures_total,
//   snowid_public_id_keyring_slots{state}, snowid_public_id_primary_info{slot,fingerprint};
//   the named sequences':
//   snowid_sequence_store_info{kind} 1,
//   snowid_sequence_numbers_issued_total{sequence},
//   snowid_sequence_numbers_lost_total{sequence},
//   snowid_sequence_ranges_fetched_total{sequence},
//   snowid_sequence_ranges_served_total{sequence},
//   snowid_sequence_buffered{sequence} (a series per sequence served since
//   the start), snowid_sequence_store_calls_total,
//   snowid_sequence_store_failures_total,
//   snowid_sequence_store_latency_seconds (histogram, buckets 1 ms to 2.5 s),
//   snowid_sequence_buffer_waits_total,
//   snowid_sequence_buffer_wait_timeouts_total,
//   snowid_sequence_buffer_wait_seconds_total; the clock reference's, when
//   configured: snowid_skew_reference_{offset,delay}_seconds{server},
//   snowid_skew_reference_up{server}, snowid_skew_reference_failures_total{server},
//   snowid_skew_chrony_bound_seconds, snowid_skew_chrony_up,
//   snowid_skew_chrony_failures_total.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "id_service.h"
#include "sequence_service.h"

namespace snowid::daemon {

enum class Transport : std::uint8_t { kUnix = 0, kTcp = 1, kHttp = 2 };
inline constexpr int kTransports = 3;
std::string_view transport_name(Transport t) noexcept;

// What the server counts about connections; updated by the server's threads.
struct ServerCounters {
  std::array<std::atomic<std::uint64_t>, kTransports> connections_total{};
  std::array<std::atomic<std::int64_t>, kTransports> connections_open{};
  std::array<std::atomic<std::uint64_t>, kTransports> protocol_errors{};
  // Connections closed for sending no complete first request within
  // first_request_timeout (TCP RESP and HTTP; the Unix socket has none).
  std::array<std::atomic<std::uint64_t>, kTransports> first_request_timeouts{};
  // HTTP responses by status class index: 2xx, 4xx, 5xx (others counted as 5xx).
  std::atomic<std::uint64_t> http_2xx{0};
  std::atomic<std::uint64_t> http_4xx{0};
  std::atomic<std::uint64_t> http_5xx{0};
};

std::string render_metrics(const ServiceSnapshot& service, const ServerCounters& server,
                           const SequencesSnapshot& sequences = {});

}  // namespace snowid::daemon
