#include "stats.h"

namespace snowid::daemon {
namespace {

using S = const ServiceSnapshot&;
constexpr StatType kCounter = StatType::kCounter;
constexpr StatType kGauge = StatType::kGauge;
constexpr StatUnit kCount = StatUnit::kCount;

StatValue count(std::uint64_t n) { return StatValue{n, Duration::zero()}; }
StatValue duration(Duration d) { return StatValue{0, d}; }

constexpr StatRow kStats[] = {
    // Stats
    {"Stats", "ids_issued", "snowid_ids_issued_total", "", "", kCounter, kCount,
     "Ids handed out to clients.", [](S s) { return count(s.counters.ids_issued); }},
    {"Stats", "ids_dropped", "snowid_ids_dropped_total", "", "", kCounter, kCount,
     "Ids taken for a batch that was then refused; never handed out (gaps).",
     [](S s) { return count(s.counters.ids_dropped); }},
    {"Stats", "single_requests", "snowid_requests_total", "kind", "single", kCounter, kCount,
     "Requests for ids: single (NEXTID, count=1) or batch (NEXTIDS n, count=N).",
     [](S s) { return count(s.counters.single_requests); }},
    {"Stats", "batch_requests", "snowid_requests_total", "kind", "batch", kCounter, kCount, "",
     [](S s) { return count(s.counters.batch_requests); }},
    {"Stats", "reserve_calls", "snowid_reserve_calls_total", "", "", kCounter, kCount,
     "Generator reserve() calls made for batches.",
     [](S s) { return count(s.counters.reserve_calls); }},
    {"Stats", "decodes", "snowid_decodes_total", "", "", kCounter, kCount,
     "Ids decoded (DECODE, /v1/ids/{id}).", [](S s) { return count(s.counters.decodes); }},
    {"Stats", "decode_errors", "snowid_decode_errors_total", "", "", kCounter, kCount,
     "Decodes refused: malformed text or a number beyond the layout.",
     [](S s) { return count(s.counters.decode_errors); }},
    {"Stats", "sequence_exhausted", "snowid_sequence_exhausted_total", "", "", kCounter, kCount,
     "Times a tick's sequence was used up and the generator waited for the next tick.",
     [](S s) { return count(s.generator.sequence_exhausted); }},
    {"Stats", "clock_behind", "snowid_clock_behind_total", "", "", kCounter, kCount,
     "Clock regressions and early ticks waited out (the clock behind the last issued time).",
     [](S s) { return count(s.generator.clock_behind); }},
    {"Stats", "waits_gave_up", "snowid_waits_gave_up_total", "", "", kCounter, kCount,
     "Waits for the clock or the sequence that reached the longest allowed wait.",
     [](S s) { return count(s.generator.waits_gave_up); }},
    {"Stats", "borrowed_ticks", "snowid_borrowed_ticks_total", "", "", kCounter, kCount,
     "Ticks started ahead of the clock (borrowed from the future).",
     [](S s) { return count(s.generator.borrowed_ticks); }},
    {"Stats", "fence_writes", "snowid_fence_writes_total", "", "", kCounter, kCount,
     "Time fences stored.", [](S s) { return count(s.generator.fence_writes); }},
    {"Stats", "fence_write_failures", "snowid_fence_write_failures_total", "", "", kCounter, kCount,
     "Time fence stores that failed.", [](S s) { return count(s.generator.fence_write_failures); }},
    // Server
    {"Server", "uptime_in_seconds", "snowid_uptime_seconds", "", "", kGauge, StatUnit::kSeconds,
     "Seconds since the daemon started.", [](S s) { return duration(s.uptime); }},
    {"Server", "max_batch", "snowid_max_batch", "", "", kGauge, kCount,
     "The most ids one request may ask for.", [](S s) { return count(s.max_batch); }},
    // Lease
    {"Lease", "lease_renewals", "snowid_lease_renewals_total", "", "", kCounter, kCount,
     "Worker-id lease renewals that succeeded.", [](S s) { return count(s.lease.renewals); }},
    {"Lease", "lease_renewal_failures", "snowid_lease_renewal_failures_total", "", "", kCounter,
     kCount, "Worker-id lease renewals that failed.",
     [](S s) { return count(s.lease.renewal_failures); }},
    {"Lease", "lease_last_renewal_latency_ms", "snowid_lease_renewal_latency_seconds", "which",
     "last", kGauge, StatUnit::kMillis,
     "Latency of lease renewals: the last successful one and the largest seen.",
     [](S s) { return duration(s.lease.last_renewal_latency); }},
    {"Lease", "lease_max_renewal_latency_ms", "snowid_lease_renewal_latency_seconds", "which",
     "max", kGauge, StatUnit::kMillis, "",
     [](S s) { return duration(s.lease.max_renewal_latency); }},
    {"Lease", "lease_reacquisitions", "snowid_lease_reacquisitions_total", "", "", kCounter, kCount,
     "Worker-id leases acquired again after one was lost.",
     [](S s) { return count(s.reacquisitions); }},
    {"Lease", "lease_losses", "snowid_lease_losses_total", "", "", kCounter, kCount,
     "Worker-id leases lost while running.", [](S s) { return count(s.lease_losses); }},
    // Health
    {"Health", "ready", "snowid_ready", "", "", kGauge, StatUnit::kFlag,
     "1 while ids can be issued: the lease is held and the clock guard satisfied.",
     [](S s) { return count(s.ready ? 1 : 0); }},
    {"Health", "healthy", "snowid_healthy", "", "", kGauge, StatUnit::kFlag,
     "1 while the generator is healthy (no refusal that stands, such as a clock moved back).",
     [](S s) { return count(s.health.is_ok() ? 1 : 0); }},
    // PublicIds (the primary's fingerprint is written beside the list)
    {"PublicIds", "public_id_keys", "snowid_public_id_keys_loaded", "", "", kGauge, StatUnit::kFlag,
     "1 while a public-id keyring is in use.", [](S s) { return count(s.public_ids.on ? 1 : 0); }},
    {"PublicIds", "public_id_keyring_reloads", "snowid_public_id_keyring_reloads_total", "", "",
     kCounter, kCount, "SIGHUP reloads that put a public-id keyring file in use.",
     [](S s) { return count(s.public_ids.reloads); }},
    {"PublicIds", "public_id_keyring_reload_failures",
     "snowid_public_id_keyring_reload_failures_total", "", "", kCounter, kCount,
     "SIGHUP reloads of the public-id keyring refused; the keyring in use was kept.",
     [](S s) { return count(s.public_ids.reload_failures); }},
    {"PublicIds", "public_id_slots_primary", "snowid_public_id_keyring_slots", "state", "primary",
     kGauge, kCount, "Public-id keyring slots in use, by state.",
     [](S s) { return count(s.public_ids.slots_by_state[0]); }},
    {"PublicIds", "public_id_slots_active", "snowid_public_id_keyring_slots", "state", "active",
     kGauge, kCount, "", [](S s) { return count(s.public_ids.slots_by_state[1]); }},
    {"PublicIds", "public_id_slots_decrypt", "snowid_public_id_keyring_slots", "state", "decrypt",
     kGauge, kCount, "", [](S s) { return count(s.public_ids.slots_by_state[2]); }},
    {"PublicIds", "public_id_slots_retired", "snowid_public_id_keyring_slots", "state", "retired",
     kGauge, kCount, "", [](S s) { return count(s.public_ids.slots_by_state[3]); }},
    {"PublicIds", "public_ids_wrapped", "snowid_public_id_wraps_total", "result", "ok", kCounter,
     kCount, "Ids wrapped into public ids (ok), and wrap requests refused (refused).",
     [](S s) { return count(s.public_ids.wrapped); }},
    {"PublicIds", "public_id_wrap_refusals", "snowid_public_id_wraps_total", "result", "refused",
     kCounter, kCount, "", [](S s) { return count(s.public_ids.wrap_refusals); }},
    {"PublicIds", "public_ids_unwrapped", "snowid_public_id_unwraps_total", "result", "ok",
     kCounter, kCount,
     "Public ids unwrapped (ok), refused by the keyring (refused: UNKNOWN_KEY, FORGED...), and "
     "unwrap requests from callers public_id_unwrap does not allow (denied).",
     [](S s) { return count(s.public_ids.unwrapped); }},
    {"PublicIds", "public_id_unwrap_refusals", "snowid_public_id_unwraps_total", "result",
     "refused", kCounter, kCount, "", [](S s) { return count(s.public_ids.unwrap_refusals); }},
    {"PublicIds", "public_id_unwraps_denied", "snowid_public_id_unwraps_total", "result", "denied",
     kCounter, kCount, "", [](S s) { return count(s.public_ids.unwrap_denied); }},
    // Canary
    {"Canary", "canary", "snowid_canary_enabled", "", "", kGauge, StatUnit::kFlag,
     "1 when issued ids are sampled into the canary's PostgreSQL table (canary).",
     [](S s) { return count(s.canary_on ? 1 : 0); }},
    {"Canary", "canary_store_up", "snowid_canary_store_up", "", "", kGauge, StatUnit::kFlag,
     "1 while the canary's last attempt to reach its database worked.",
     [](S s) { return count(s.canary.store_up ? 1 : 0); }},
    {"Canary", "canary_sampled", "snowid_canary_samples_total", "", "", kCounter, kCount,
     "Issued ids chosen for the canary (1 in canary_sample, by a hash of the id).",
     [](S s) { return count(s.canary.sampled); }},
    {"Canary", "canary_stored", "snowid_canary_samples_stored_total", "", "", kCounter, kCount,
     "Samples the canary's table took as new ids.", [](S s) { return count(s.canary.stored); }},
    {"Canary", "canary_violations", "snowid_canary_violations_total", "", "", kCounter, kCount,
     "Samples whose id the canary's table already had: an id issued twice (docs/canary.md).",
     [](S s) { return count(s.canary.violations); }},
    {"Canary", "canary_dropped_queue_full", "snowid_canary_samples_dropped_total", "reason",
     "queue_full", kCounter, kCount,
     "Samples not checked: the queue was full (the database slow or down), or they were not "
     "stored (refused by the database, or queued at shutdown).",
     [](S s) { return count(s.canary.dropped_full); }},
    {"Canary", "canary_dropped_unstored", "snowid_canary_samples_dropped_total", "reason",
     "unstored", kCounter, kCount, "", [](S s) { return count(s.canary.dropped_unstored); }},
    {"Canary", "canary_store_failures", "snowid_canary_store_failures_total", "", "", kCounter,
     kCount, "Connections and statements of the canary that failed.",
     [](S s) { return count(s.canary.store_failures); }},
    {"Canary", "canary_queued", "snowid_canary_queue_depth", "", "", kGauge, kCount,
     "Samples waiting for the canary's writer.", [](S s) { return count(s.canary.queued); }},
};

}  // namespace

std::span<const StatRow> service_stats() noexcept { return kStats; }

}  // namespace snowid::daemon
