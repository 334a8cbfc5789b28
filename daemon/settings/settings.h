// snowidd's settings: one table, one resolved struct (issue 4, "One daemon").
//
// Every setting is one row of settings_table() (settings_table.cc): its TOML
// key, its flag, its SNOWID_* variable, its type and bounds, its default, its
// field of Settings and, if the daemon may change it while running, the hook
// that applies a reloaded value. load_settings() resolves them; nothing else
// in the daemon reads flags, the environment or the configuration file.
// Adding a setting: a field here, a row in settings_table.cc; a runtime one
// also an apply hook there and, if it reaches something new in the daemon, a
// member of RuntimeTargets that main.cc fills in.
//
// Precedence, highest first:
//   1. flags             (--region 2, --region=2)
//   2. environment       (SNOWID_REGION=2)
//   3. the TOML file     (--config FILE, else $SNOWID_CONFIG; none by default)
//   4. embedded defaults (enough to run with no configuration at all)
// The issue lists "TOML file, flags and SNOWID_* environment variables, in
// that order of precedence". We read it as naming the three sources, and
// order them the way most daemons and container platforms do: the file is
// the shared baseline, the environment is set per deployment (a systemd unit,
// a pod spec), and a flag is the most specific, deliberate choice, typed for
// this one invocation. Reading the list as "the environment beats flags"
// would let a stray exported variable silently override a command line.
//
// Every value found at any level is checked, even one that a higher level
// overrides: a broken file is an error whatever the flags say. Empty
// environment variables count as unset.
//
// Errors: kInvalidArgument (kNotFound for a missing --config file) whose
// message starts with the source and names the setting, for example
//   "SNOWID_REGION: region must be 0..3 (layout snowid), not 7"
//   "snowidd.toml:4: socket_mode must be an octal mode 00..0777, not \"01000\""
// The daemon prints it and exits non-zero.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "address.h"
#include "environment.h"
#include "log_level.h"
#include "registry_open.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {

// What the command line asks for besides running.
enum class Action : std::uint8_t { kRun, kHelp, kHelpSettings };

// The resolved settings. Each default is written once, in the table
// (settings_table.cc, listed by describe_settings()), and applied by
// load_settings(): a Settings made any other way holds zeros and empty
// strings, not the defaults. Comments give only what the type does not say.
struct Settings {
  Action action = Action::kRun;
  // The TOML file read, or empty.
  std::string config_file;

  std::string socket;           // Unix socket for RESP
  std::optional<Address> http;  // nullopt: off
  std::optional<Address> tcp;   // RESP over TCP; nullopt: off
  // The registry and the state directory, as the tool gives them to the
  // host library: the settings choice, state_dir (the fences live there
  // too), etcd (the member URLs; empty: the file registry), quarantine
  // (default 0 with the file registry, 10 s with etcd) and etcd_*. The
  // host-wide lock and directory are not settings: registry_config() adds
  // them from the environment.
  host::RegistryConfig registry;
  std::uint32_t region{};             // fits the layout's region field
  std::optional<std::uint32_t> host;  // pinned host id in the region; nullopt: any free one
  std::uint32_t socket_mode{};        // permission bits of `socket`
  std::uint32_t max_batch{};          // largest NEXTIDS n / count=N; runtime
  std::uint32_t threads{};            // event-loop threads
  LogLevel log_level{};               // runtime
  bool log_json{};                    // false: logfmt
  std::string http_token;             // bearer token; empty: no authentication
  // A TCP RESP or HTTP connection that sends no complete first request in
  // this long is closed; the Unix socket is exempt.
  Duration first_request_timeout{};
  Duration lease_ttl{};
  Duration lease_renew{};
  Duration lease_stop{};
  Duration max_clock_skew{};
  Duration max_backward{};
  std::string layout;  // preset name or layout file; never runtime

  // The named sequences (sequence_service.h): the ticket table as
  // sequences/include/ticket_store_url.h reads it ("sqlite:PATH", "postgresql://..."),
  // or "off". May hold a password: log it only through
  // redact_ticket_store_url().
  std::string sequences;
  std::uint32_t sequence_refill{};  // percent of a range left when the next is fetched
  Duration sequence_wait_timeout{};
  std::int64_t sequence_step{};  // 0: each sequence's own step
  bool sequence_adaptive{};
  std::int64_t sequence_min_step{};  // <= sequence_max_step
  std::int64_t sequence_max_step{};
  Duration sequence_range_life{};
  Duration sequence_store_timeout{};
  std::int64_t max_range{};          // largest SEQRANGE size
  std::uint32_t sequence_threads{};  // the pool that waits on the ticket table
  std::uint32_t max_sequences{};     // sequences with a buffer (and a fetcher thread) at once

  // The clock reference (skew/): SNTP servers queried every `sntp_poll`
  // (empty: none), and chrony's tracking read every second through
  // `chronyc` ("off" or empty: not read) on `chrony_socket` (empty:
  // chronyc's default).
  std::vector<Address> sntp_servers;
  Duration sntp_poll{};
  std::string chronyc;
  std::string chrony_socket;
  // The skew monitor (docs/skew.md): on by default wherever etcd is the
  // registry. `host_name` names this host in its holder values and to the
  // monitor (empty: the machine's host name); `probe_address` is what peers
  // probe (nullopt: the tcp listener's address).
  std::string host_name;
  std::optional<Address> probe_address;
  bool skew_monitor{};
  Duration skew_alert{};
  Duration skew_fence{};
  bool skew_dry_run{};
  // Lease nothing, issue nothing: only the skew monitor, for a host whose
  // generators are in-process libraries (needs etcd and a probe address).
  bool monitor_only{};
  // The uniqueness canary (docs/canary.md): issued ids sampled, 1 in
  // `canary_sample` by a hash of the id, into a PostgreSQL table keyed by id
  // (`canary`, a libpq connection string; empty: off), through a queue of
  // `canary_queue` samples that drops what does not fit.
  std::string canary;
  std::uint32_t canary_sample{};
  std::uint32_t canary_queue{};
  // Public ids (docs/public-id.md): the keyring file, re-read on every
  // SIGHUP; empty: off. Who may unwrap: local, token or any (docs/daemon.md).
  std::string public_id_keys;    // runtime
  std::string public_id_unwrap;  // runtime

  // Legal but risky choices (a non-loopback listener without a token, a
  // secret given as a flag), for the daemon to log at start.
  std::vector<std::string> warnings;
};

enum class SettingType : std::uint8_t {
  kString,
  kInteger,    // bounds min..max
  kDuration,   // milliseconds, bounds min..max; "250ms", "10s", "2m", "1h" or a bare number of ms
  kAddress,    // host:port, or "off"
  kMode,       // octal permission bits, bounds min..max
  kEnum,       // one of `choices`
  kBool,       // true/false (flags: --name alone means true)
  kEndpoints,  // URL[,URL...] (TOML: also an array of strings); "" or "off": none
  kAddresses,  // host:port[,host:port...] (TOML: also an array of strings); "" or "off": none
};
std::string_view setting_type_name(SettingType type) noexcept;

// One parsed value before it is stored in its field (setting_values.h).
struct SettingValue;

// How a setting reaches its field of Settings: store a parsed value, compare
// two Settings, copy the field from one to the other. Made by field_of<>
// (setting_values.h) from the field alone.
struct SettingField {
  void (*store)(Settings&, SettingValue&&) = nullptr;
  bool (*same)(const Settings&, const Settings&) = nullptr;
  void (*copy)(Settings& to, const Settings& from) = nullptr;
};

// What the runtime settings change in the running daemon. Each runtime
// setting's apply hook calls one of these; the daemon fills them in.
struct RuntimeTargets {
  std::function<void(LogLevel)> set_log_level;
  std::function<void(std::uint32_t)> set_max_batch;
  std::function<void(const std::string&)> set_public_id_keys;
  std::function<void(const std::string&)> set_public_id_unwrap;
};

// One setting, declared once in settings_table.cc.
struct SettingInfo {
  std::string_view name = {};  // TOML key
  std::string_view flag = {};  // "--name" with '-' for '_'
  std::string_view env = {};   // "SNOWID_NAME"
  SettingType type = SettingType::kString;
  std::int64_t min = 0;  // kInteger, kMode: the value; kDuration: milliseconds
  std::int64_t max = 0;
  std::span<const std::string_view> choices = {};  // kEnum only
  // kInteger: a word accepted besides min..max that leaves the field unset
  // ("any" for host), so that a higher level can undo a lower one's value.
  std::string_view unset_word = {};
  // kString: the problem with `text` ("must not be empty"), or empty if none.
  std::string_view (*check)(std::string_view text) = nullptr;
  bool secret = false;  // never echoed in messages
  // An empty variable is a value (refused by the parser), not "unset": for
  // the registry's settings, where "unset" would quietly mean the file.
  bool empty_env_is_value = false;
  std::string_view env_alias = {};  // a second variable, read when `env` is unset
  // The default in the syntax the setting accepts; for a computed default a
  // description of the rule.
  std::string_view default_text = {};
  // Computes the default from the environment and the settings stored so
  // far (the table is walked in order); null: default_text is the default.
  Status (*compute_default)(Settings&, const host::Environment&) = nullptr;
  SettingField field = {};
  // Applies the setting's value to the running daemon; null: fixed at start.
  void (*apply)(const Settings&, const RuntimeTargets&) = nullptr;
  std::string_view description = {};

  // May change while the daemon runs (SIGHUP).
  constexpr bool runtime() const noexcept { return apply != nullptr; }
  constexpr bool computed_default() const noexcept { return compute_default != nullptr; }
};

// The list, in the order describe_settings() shows it.
std::span<const SettingInfo> settings_table() noexcept;

// Resolves the settings from flags (argv[1..argc-1]), the environment, the
// TOML file and the defaults, in that order of precedence (see above).
// "--help"/"-h" and "--help-settings" set `action` and skip everything else.
Result<Settings> load_settings(int argc, const char* const* argv, const host::Environment& env);

// The table rendered for `snowidd --help-settings` and the docs: for every
// setting its name, flag, variable, type and bounds, default and whether it
// may change at run time, preceded by the precedence rule.
std::string describe_settings();

// "250ms", "10s", "2m", "1h": the largest unit that is exact.
std::string format_duration(Duration d);

// Reload: stores in `running` the runtime settings whose value in `fresh`
// differs, calls their apply hooks and returns their names, comma-separated
// in name order.
std::string apply_runtime(Settings& running, const Settings& fresh, const RuntimeTargets& targets);

// Names of the settings that are fixed at start and differ between `a` and
// `b`, comma-separated, in table order.
std::string fixed_differences(const Settings& a, const Settings& b);

}  // namespace snowid::daemon
