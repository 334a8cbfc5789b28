// The settings list: every setting of snowidd, declared once. Each row
// gives the TOML key, the flag, the variable, the type and bounds, the
// default (or the hook that computes it), the field of Settings it fills and,
// for a runtime setting, the hook that applies a reloaded value. Parsing,
// --help-settings, reload and the check for changed fixed settings all walk
// this list (settings.cc, setting_values.cc).
#include <array>
#include <chrono>
#include <string>
#include <string_view>

#include "setting_values.h"
#include "settings.h"
#include "snowid/ticket_store.h"
#include "state_dir.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;
using enum SettingType;

constexpr std::int64_t kHourMs = 3600 * 1000;

constexpr std::array<std::string_view, 3> kRegistries = {"auto", "file", "etcd"};
constexpr std::array<std::string_view, 3> kUnwrapCallers = {"local", "token", "any"};

// The checks of string settings.
std::string_view not_empty(std::string_view text) {
  return text.empty() ? "must not be empty" : "";
}

// The forms of sequences/include/ticket_store_url.h, which the daemon checks again
// when it opens the store; checked here too so that a mistake names its
// source like every other setting's.
std::string_view sequences_form(std::string_view text) {
  const bool ok = text == "off" || (text.starts_with("sqlite:") && text.size() > 7) ||
                  (text.starts_with("postgresql://") && text.size() > 13) ||
                  (text.starts_with("postgres://") && text.size() > 11);
  return ok ? "" : "must be sqlite:PATH, a postgresql:// (or postgres://) URL, or off";
}

// The computed defaults, run in list order once every value found is stored.
Status default_socket(Settings& s, const host::Environment& env) {
  if (auto run = host::nonempty(env, "XDG_RUNTIME_DIR"); run && run->front() == '/') {
    s.socket = *run + "/snowid/snowidd.sock";
  } else if (env.uid() == 0) {
    s.socket = "/run/snowid/snowidd.sock";
  } else {
    s.socket = "/tmp/snowid-" + std::to_string(env.uid()) + "/snowidd.sock";
  }
  return Status::ok();
}

Status default_state_dir(Settings& s, const host::Environment& env) {
  Result<std::string> dir = host::default_state_dir(env, host::StateDirFallback::kSystemForRoot);
  if (!dir.is_ok()) return invalid("state_dir: " + dir.status().message());
  s.registry.state_dir = std::move(dir).value();
  return Status::ok();
}

Status default_quarantine(Settings& s, const host::Environment&) {
  s.registry.quarantine = s.registry.etcd_endpoints.empty() ? Duration::zero() : Duration(10s);
  return Status::ok();
}

#if SNOWID_DAEMON_SEQUENCE_STORES
constexpr std::string_view kSequencesDefaultText = "sqlite:<state_dir>/sequences.db";
// After state_dir, which comes earlier in the list.
Status default_sequences(Settings& s, const host::Environment&) {
  s.sequences = "sqlite:" + s.registry.state_dir + "/sequences.db";
  return Status::ok();
}
#else
// Built without the SQLite and PostgreSQL stores: nothing to open.
constexpr std::string_view kSequencesDefaultText = "off (built without the sequence stores)";
Status default_sequences(Settings& s, const host::Environment&) {
  s.sequences = "off";
  return Status::ok();
}
#endif

// The apply hooks of the runtime settings.
void apply_max_batch(const Settings& s, const RuntimeTargets& t) { t.set_max_batch(s.max_batch); }
void apply_log_level(const Settings& s, const RuntimeTargets& t) { t.set_log_level(s.log_level); }
void apply_public_id_keys(const Settings& s, const RuntimeTargets& t) {
  t.set_public_id_keys(s.public_id_keys);
}
void apply_public_id_unwrap(const Settings& s, const RuntimeTargets& t) {
  t.set_public_id_unwrap(s.public_id_unwrap);
}

// clang-format off
constexpr SettingInfo kSettings[] = {
    {.name = "socket", .flag = "--socket", .env = "SNOWID_SOCKET",
     .type = kString, .check = not_empty,
     .default_text = "$XDG_RUNTIME_DIR/snowid/snowidd.sock, else /run/snowid/snowidd.sock as root, "
                     "else "
                     "/tmp/snowid-<uid>/snowidd.sock",
     .compute_default = default_socket,
     .field = field_of<&Settings::socket>,
     .description = "Unix socket that serves the Redis protocol (RESP)."},
    {.name = "http", .flag = "--http", .env = "SNOWID_HTTP",
     .type = kAddress,
     .default_text = "127.0.0.1:7390",
     .field = field_of<&Settings::http>,
     .description = "HTTP/JSON listener (host:port, or off)."},
    {.name = "tcp", .flag = "--tcp", .env = "SNOWID_TCP",
     .type = kAddress,
     .default_text = "off",
     .field = field_of<&Settings::tcp>,
     .description =
         "RESP over TCP for pods that cannot share the socket file (host:port, or off)."},
    // SNOWID_ETCD_ENDPOINTS is the name the snowid tool reads, so that one
    // environment serves both. An empty SNOWID_ETCD or SNOWID_REGISTRY is
    // refused, never taken as "use the file registry".
    {.name = "etcd", .flag = "--etcd", .env = "SNOWID_ETCD",
     .type = kEndpoints, .empty_env_is_value = true, .env_alias = "SNOWID_ETCD_ENDPOINTS",
     .default_text = "off",
     .field = field_of<&Settings::registry, &host::RegistryConfig::etcd_endpoints>,
     .description = "etcd member URLs (URL[,URL...]); off: the file registry in state_dir."},
    {.name = "registry", .flag = "--registry", .env = "SNOWID_REGISTRY",
     .type = kEnum, .choices = kRegistries, .empty_env_is_value = true,
     .default_text = "auto",
     .field = field_of<&Settings::registry, &host::RegistryConfig::choice>,
     .description =
         "Worker-id registry: etcd, file, or auto (etcd when etcd is set, else the file registry, "
         "which auto refuses under a container orchestrator such as Kubernetes: choose file "
         "there only for a process alone on its host)."},
    {.name = "region", .flag = "--region", .env = "SNOWID_REGION",
     .type = kInteger, .max = 1023,
     .default_text = "0",
     .field = field_of<&Settings::region>,
     .description = "Region block of worker ids; must fit the layout's region field."},
    {.name = "host", .flag = "--host", .env = "SNOWID_HOST",
     .type = kInteger, .max = 65535, .unset_word = "any",
     .default_text = "any",
     .field = field_of<&Settings::host>,
     .description =
         "Host id to pin in the region's block; any: the registry picks a free one. Must fit "
         "the layout's host field; a pinned id that another holder has fails the start."},
    {.name = "state_dir", .flag = "--state-dir", .env = "SNOWID_STATE_DIR",
     .type = kString, .check = not_empty,
     .default_text = "$XDG_STATE_HOME/snowid, else $HOME/.local/state/snowid, else /var/lib/snowid "
                     "as root",
     .compute_default = default_state_dir,
     .field = field_of<&Settings::registry, &host::RegistryConfig::state_dir>,
     .description = "Directory for time fences and the file registry."},
    {.name = "socket_mode", .flag = "--socket-mode", .env = "SNOWID_SOCKET_MODE",
     .type = kMode, .max = 0777,
     .default_text = "0660",
     .field = field_of<&Settings::socket_mode>,
     .description = "Permission bits of the Unix socket file."},
    {.name = "max_batch", .flag = "--max-batch", .env = "SNOWID_MAX_BATCH",
     .type = kInteger, .min = 1, .max = 100000,
     .default_text = "10000",
     .field = field_of<&Settings::max_batch>, .apply = apply_max_batch,
     .description = "Largest batch: NEXTIDS n and /v1/ids?count=N."},
    {.name = "threads", .flag = "--threads", .env = "SNOWID_THREADS",
     .type = kInteger, .min = 1, .max = 64,
     .default_text = "2",
     .field = field_of<&Settings::threads>,
     .description = "Event-loop threads."},
    {.name = "log_level", .flag = "--log-level", .env = "SNOWID_LOG_LEVEL",
     .type = kEnum, .choices = kLogLevelNames,
     .default_text = "info",
     .field = field_of<&Settings::log_level>, .apply = apply_log_level,
     .description = "Least severe level logged."},
    {.name = "log_json", .flag = "--log-json", .env = "SNOWID_LOG_JSON",
     .type = kBool,
     .default_text = "true",
     .field = field_of<&Settings::log_json>,
     .description = "Log one JSON object per line; false: logfmt."},
    {.name = "http_token", .flag = "--http-token", .env = "SNOWID_HTTP_TOKEN",
     .type = kString, .secret = true,
     .default_text = "",
     .field = field_of<&Settings::http_token>,
     .description = "Bearer token the HTTP service requires; empty: none."},
    {.name = "first_request_timeout", .flag = "--first-request-timeout",
     .env = "SNOWID_FIRST_REQUEST_TIMEOUT",
     .type = kDuration, .min = 100, .max = kHourMs,
     .default_text = "10s",
     .field = field_of<&Settings::first_request_timeout>,
     .description =
         "A TCP RESP or HTTP connection that sends no complete first request in this long is "
         "closed. The Unix socket is exempt: local pooled clients open connections ahead of use."},
    {.name = "lease_ttl", .flag = "--lease-ttl", .env = "SNOWID_LEASE_TTL",
     .type = kDuration, .min = 2000, .max = kHourMs,
     .default_text = "10s",
     .field = field_of<&Settings::lease_ttl>,
     .description = "Lifetime of a worker-id lease without renewal; whole seconds."},
    {.name = "lease_renew", .flag = "--lease-renew", .env = "SNOWID_LEASE_RENEW",
     .type = kDuration, .min = 100, .max = kHourMs,
     .default_text = "3s",
     .field = field_of<&Settings::lease_renew>,
     .description = "Time between lease renewals; less than lease_stop."},
    {.name = "lease_stop", .flag = "--lease-stop", .env = "SNOWID_LEASE_STOP",
     .type = kDuration, .min = 100, .max = kHourMs,
     .default_text = "8s",
     .field = field_of<&Settings::lease_stop>,
     .description =
         "Stop issuing this long after the last renewal that succeeded; less than lease_ttl."},
    {.name = "quarantine", .flag = "--quarantine", .env = "SNOWID_QUARANTINE",
     .type = kDuration, .max = kHourMs,
     .default_text = "0 with the file registry, 10s with etcd",
     .compute_default = default_quarantine,
     .field = field_of<&Settings::registry, &host::RegistryConfig::quarantine>,
     .description = "How long a released worker id rests before reuse."},
    {.name = "max_clock_skew", .flag = "--max-clock-skew", .env = "SNOWID_MAX_CLOCK_SKEW",
     .type = kDuration, .max = 60 * 1000,
     .default_text = "100ms",
     .field = field_of<&Settings::max_clock_skew>,
     .description = "Largest clock difference allowed between hosts of the fleet."},
    {.name = "max_backward", .flag = "--max-backward", .env = "SNOWID_MAX_BACKWARD",
     .type = kDuration, .max = kHourMs,
     .default_text = "100ms",
     .field = field_of<&Settings::max_backward>,
     .description = "Largest backward clock step waited out; a larger one is refused."},
    {.name = "etcd_prefix", .flag = "--etcd-prefix", .env = "SNOWID_ETCD_PREFIX",
     .type = kString,
     .default_text = "/snowid",
     .field = field_of<&Settings::registry, &host::RegistryConfig::etcd_prefix>,
     .description = "etcd key prefix; keys live under <prefix>/<cluster>/."},
    {.name = "etcd_cluster", .flag = "--etcd-cluster", .env = "SNOWID_ETCD_CLUSTER",
     .type = kString,
     .default_text = "default",
     .field = field_of<&Settings::registry, &host::RegistryConfig::etcd_cluster>,
     .description = "Cluster name under the etcd prefix."},
    {.name = "etcd_ca", .flag = "--etcd-ca", .env = "SNOWID_ETCD_CA",
     .type = kString,
     .default_text = "",
     .field = field_of<&Settings::registry, &host::RegistryConfig::etcd_ca>,
     .description = "CA bundle to verify etcd members; empty: the system's CAs."},
    {.name = "etcd_cert", .flag = "--etcd-cert", .env = "SNOWID_ETCD_CERT",
     .type = kString,
     .default_text = "",
     .field = field_of<&Settings::registry, &host::RegistryConfig::etcd_cert>,
     .description = "Client certificate for mutual TLS with etcd."},
    {.name = "etcd_key", .flag = "--etcd-key", .env = "SNOWID_ETCD_KEY",
     .type = kString,
     .default_text = "",
     .field = field_of<&Settings::registry, &host::RegistryConfig::etcd_key>,
     .description = "Client key for mutual TLS with etcd."},
    {.name = "etcd_user", .flag = "--etcd-user", .env = "SNOWID_ETCD_USER",
     .type = kString,
     .default_text = "",
     .field = field_of<&Settings::registry, &host::RegistryConfig::etcd_user>,
     .description = "etcd user; empty: no authentication."},
    {.name = "etcd_password", .flag = "--etcd-password", .env = "SNOWID_ETCD_PASSWORD",
     .type = kString, .secret = true,
     .default_text = "",
     .field = field_of<&Settings::registry, &host::RegistryConfig::etcd_password>,
     .description = "etcd password."},
    {.name = "layout", .flag = "--layout", .env = "SNOWID_LAYOUT",
     .type = kString, .check = not_empty,
     .default_text = "snowid",
     .field = field_of<&Settings::layout>,
     .description = "Id layout: a preset name or a layout file. Never changes at run time."},
    {.name = "sequences", .flag = "--sequences", .env = "SNOWID_SEQUENCES",
     .type = kString, .check = sequences_form, .secret = true,
     .default_text = kSequencesDefaultText, .compute_default = default_sequences,
     .field = field_of<&Settings::sequences>,
     .description =
         "The ticket table of the named sequences: sqlite:PATH, a postgresql:// URL, or off. "
         "A password in it is never logged."},
    {.name = "sequence_refill", .flag = "--sequence-refill", .env = "SNOWID_SEQUENCE_REFILL",
     .type = kInteger, .min = 1, .max = 99,
     .default_text = "20",
     .field = field_of<&Settings::sequence_refill>,
     .description =
         "Percent of a sequence's range left when the next range is fetched in the background."},
    {.name = "sequence_wait_timeout", .flag = "--sequence-wait-timeout",
     .env = "SNOWID_SEQUENCE_WAIT_TIMEOUT",
     .type = kDuration, .min = 1, .max = 60 * 1000,
     .default_text = "1s",
     .field = field_of<&Settings::sequence_wait_timeout>,
     .description =
         "How long a request waits for each range it needs from a sequence whose buffers are dry, "
         "before UNAVAILABLE."},
    {.name = "sequence_step", .flag = "--sequence-step", .env = "SNOWID_SEQUENCE_STEP",
     .type = kInteger, .max = kMaxSequenceRange,
     .default_text = "0",
     .field = field_of<&Settings::sequence_step>,
     .description = "Range size the buffers ask the table for; 0: each sequence's own step."},
    {.name = "sequence_adaptive", .flag = "--sequence-adaptive", .env = "SNOWID_SEQUENCE_ADAPTIVE",
     .type = kBool,
     .default_text = "false",
     .field = field_of<&Settings::sequence_adaptive>,
     .description =
         "Double the range size when a range lasts less than half of sequence_range_life, halve "
         "it when it lasts more than twice, within sequence_min_step..sequence_max_step."},
    {.name = "sequence_min_step", .flag = "--sequence-min-step", .env = "SNOWID_SEQUENCE_MIN_STEP",
     .type = kInteger, .min = 1, .max = kMaxSequenceRange,
     .default_text = "100",
     .field = field_of<&Settings::sequence_min_step>,
     .description = "Smallest range size of the adaptive step; at most sequence_max_step."},
    {.name = "sequence_max_step", .flag = "--sequence-max-step", .env = "SNOWID_SEQUENCE_MAX_STEP",
     .type = kInteger, .min = 1, .max = kMaxSequenceRange,
     .default_text = "100000",
     .field = field_of<&Settings::sequence_max_step>,
     .description = "Largest range size of the adaptive step."},
    {.name = "sequence_range_life", .flag = "--sequence-range-life",
     .env = "SNOWID_SEQUENCE_RANGE_LIFE",
     .type = kDuration, .min = 1000, .max = 24 * kHourMs,
     .default_text = "1m",
     .field = field_of<&Settings::sequence_range_life>,
     .description = "How long the adaptive step aims for one range to last."},
    {.name = "sequence_store_timeout", .flag = "--sequence-store-timeout",
     .env = "SNOWID_SEQUENCE_STORE_TIMEOUT",
     .type = kDuration, .min = 100, .max = 5 * 60 * 1000,
     .default_text = "5s",
     .field = field_of<&Settings::sequence_store_timeout>,
     .description =
         "Bound on one call to the ticket table: SQLite's busy timeout, PostgreSQL's connect "
         "and statement timeouts."},
    {.name = "max_range", .flag = "--max-range", .env = "SNOWID_MAX_RANGE",
     .type = kInteger, .min = 1, .max = kMaxSequenceRange,
     .default_text = "1000000",
     .field = field_of<&Settings::max_range>,
     .description =
         "Largest range a client may take at once: SEQRANGE and /v1/sequences/{name}/range."},
    {.name = "sequence_threads", .flag = "--sequence-threads", .env = "SNOWID_SEQUENCE_THREADS",
     .type = kInteger, .min = 1, .max = 64,
     .default_text = "4",
     .field = field_of<&Settings::sequence_threads>,
     .description =
         "Threads that wait on the ticket table for requests, so that the event loops never do."},
    {.name = "max_sequences", .flag = "--max-sequences", .env = "SNOWID_MAX_SEQUENCES",
     .type = kInteger, .min = 1, .max = 100000,
     .default_text = "1000",
     .field = field_of<&Settings::max_sequences>,
     .description =
         "Most sequences served at once, each with a buffer and a fetcher thread. A request for "
         "one more is refused with RESOURCE_EXHAUSTED (HTTP 503, not retryable)."},
    {.name = "sntp_servers", .flag = "--sntp-servers", .env = "SNOWID_SNTP_SERVERS",
     .type = kAddresses,
     .default_text = "off",
     .field = field_of<&Settings::sntp_servers>,
     .description =
         "NTP servers to measure this host's clock against (host:port[,host:port...]), each "
         "with a burst of 4 queries every sntp_poll; off: none. Burst only servers you run."},
    {.name = "sntp_poll", .flag = "--sntp-poll", .env = "SNOWID_SNTP_POLL",
     .type = kDuration, .min = 1000, .max = kHourMs,
     .default_text = "16s",
     .field = field_of<&Settings::sntp_poll>,
     .description =
         "Time between bursts to each SNTP server; at least 15s for a server shared with "
         "others (RFC 4330)."},
    {.name = "chronyc", .flag = "--chronyc", .env = "SNOWID_CHRONYC",
     .default_text = "off",
     .field = field_of<&Settings::chronyc>,
     .description =
         "chronyc, run every second (chronyc -c tracking) for the host's error bound that "
         "SNOWID.CLOCK reports; off: not read, the bound is unknown."},
    {.name = "chrony_socket", .flag = "--chrony-socket", .env = "SNOWID_CHRONY_SOCKET",
     .field = field_of<&Settings::chrony_socket>,
     .description = "chronyd's command socket for chronyc -h; empty: chronyc's default."},
    // The skew monitor.
    {.name = "host_name", .flag = "--host-name", .env = "SNOWID_HOST_NAME",
     .default_text = "",
     .field = field_of<&Settings::host_name>,
     .description =
         "This host's name in its holder values and to the skew monitor; empty: the machine's "
         "host name. Daemons that share a clock share a name; 1 to 253 bytes without '/'."},
    {.name = "probe_address", .flag = "--probe-address", .env = "SNOWID_PROBE_ADDRESS",
     .type = kAddress,
     .default_text = "off",
     .field = field_of<&Settings::probe_address>,
     .description =
         "host:port at which peers' skew monitors reach this daemon's RESP listener (with "
         "http_token, if set); off: the tcp listener's own address. Without either, peers "
         "cannot judge this host's clock."},
    {.name = "skew_monitor", .flag = "--skew-monitor", .env = "SNOWID_SKEW_MONITOR",
     .type = kBool,
     .default_text = "true",
     .field = field_of<&Settings::skew_monitor>,
     .description =
         "Run the clock-skew monitor when etcd is the registry: probe the peers every second, "
         "fence this host when its clock is beyond skew_fence, vote against peers that are."},
    {.name = "skew_alert", .flag = "--skew-alert", .env = "SNOWID_SKEW_ALERT",
     .type = kDuration, .min = 1, .max = 1000,
     .default_text = "5ms",
     .field = field_of<&Settings::skew_alert>,
     .description = "A clock this far from its peers or the reference in 3 bursts running is "
                    "alerted on."},
    {.name = "skew_fence", .flag = "--skew-fence", .env = "SNOWID_SKEW_FENCE",
     .type = kDuration, .min = 4, .max = 60000,
     .default_text = "50ms",
     .field = field_of<&Settings::skew_fence>,
     .description =
         "A clock surely this far off in 2 of 3 bursts is fenced: at least 4 x skew_alert, at "
         "most max_clock_skew (the margin the leases rely on)."},
    {.name = "skew_dry_run", .flag = "--skew-dry-run", .env = "SNOWID_SKEW_DRY_RUN",
     .type = kBool,
     .default_text = "false",
     .field = field_of<&Settings::skew_dry_run>,
     .description = "Log and count the fences the monitor would make, and make none."},
    {.name = "monitor_only", .flag = "--monitor-only", .env = "SNOWID_MONITOR_ONLY",
     .type = kBool,
     .default_text = "false",
     .field = field_of<&Settings::monitor_only>,
     .description =
         "Lease no worker id and issue nothing: run only the skew monitor, for a host whose "
         "generators are in-process libraries (its fence revokes their leases). Needs etcd, and "
         "tcp or probe_address so that peers can probe it."},
    // The uniqueness canary.
    {.name = "canary", .flag = "--canary", .env = "SNOWID_CANARY",
     .secret = true,
     .default_text = "",
     .field = field_of<&Settings::canary>,
     .description =
         "A PostgreSQL connection string (postgresql://user@host/db): sample issued ids into its "
         "table snowid_canary_ids, keyed by id, and count and log any id stored twice "
         "(docs/canary.md); empty: off. Never slows issuing: samples that do not fit the queue "
         "are dropped and counted."},
    {.name = "canary_sample", .flag = "--canary-sample", .env = "SNOWID_CANARY_SAMPLE",
     .type = kInteger, .min = 1, .max = 1000000000,
     .default_text = "1000",
     .field = field_of<&Settings::canary_sample>,
     .description = "The canary keeps 1 id in this many, chosen by a hash of the id so that every "
                    "copy of a duplicated id is sampled alike; 1: every id."},
    {.name = "canary_queue", .flag = "--canary-queue", .env = "SNOWID_CANARY_QUEUE",
     .type = kInteger, .min = 16, .max = 16777216,
     .default_text = "65536",
     .field = field_of<&Settings::canary_queue>,
     .description = "Samples waiting for the canary's database at most; more are dropped, "
                    "counted (snowid_canary_samples_dropped_total)."},
    // Public ids.
    {.name = "public_id_keys", .flag = "--public-id-keys", .env = "SNOWID_PUBLIC_ID_KEYS",
     .type = kString,
     .default_text = "",
     .field = field_of<&Settings::public_id_keys>, .apply = apply_public_id_keys,
     .description =
         "The public-id keyring file (mode 0600 or stricter); empty: public ids are off. Re-read "
         "on every SIGHUP: a valid file replaces the keyring, an invalid one is logged and the "
         "running keyring kept. At start an invalid or group- or world-readable file is exit 2."},
    {.name = "public_id_unwrap", .flag = "--public-id-unwrap", .env = "SNOWID_PUBLIC_ID_UNWRAP",
     .type = kEnum, .choices = kUnwrapCallers,
     .default_text = "local",
     .field = field_of<&Settings::public_id_unwrap>, .apply = apply_public_id_unwrap,
     .description =
         "Who may unwrap public ids: local (the Unix socket, and TCP RESP or HTTP connections "
         "from a loopback address), token (an HTTP request with the bearer token, or a RESP "
         "connection after AUTH with it; the Unix socket too; without http_token, only the Unix "
         "socket) or any."},
};
// clang-format on

}  // namespace

std::span<const SettingInfo> settings_table() noexcept { return kSettings; }

}  // namespace snowid::daemon
