#include "settings.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <variant>

#include "snowid/layout.h"
#include "snowid/ticket_store.h"
#include "state_dir.h"

// toml++ header-only, without exceptions: errors come back as values, as in
// the rest of snowid, and nothing is thrown across this file's functions.
#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t ms(Duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

constexpr std::array<std::string_view, 4> kLogLevels = {"debug", "info", "warn", "error"};
constexpr std::array<std::string_view, 3> kRegistries = {"auto", "file", "etcd"};

// One parsed value, before it is stored in its field.
using Value = std::variant<std::string, std::int64_t, Duration, std::optional<Address>, bool,
                           std::vector<std::string>>;
using Store = void (*)(Settings&, Value&&);

struct Entry {
  SettingInfo info;
  Store store;
};

template <typename T>
T take(Value&& v) {
  return std::get<T>(std::move(v));
}

// clang-format off
#define SNOWID_STORE(field, type) [](Settings& s, Value&& v) { s.field = take<type>(std::move(v)); }
#define SNOWID_STORE_U32(field) \
  [](Settings& s, Value&& v) { s.field = static_cast<std::uint32_t>(take<std::int64_t>(std::move(v))); }
// clang-format on

constexpr std::int64_t kHourMs = 3600 * 1000;

#if SNOWID_DAEMON_SEQUENCE_STORES
constexpr std::string_view kSequencesDefaultText = "sqlite:<state_dir>/sequences.db";
#else
// Built without the SQLite and PostgreSQL stores: nothing to open.
constexpr std::string_view kSequencesDefaultText = "off (built without the sequence stores)";
#endif

constexpr std::array<Entry, 41> kTable = {{
    {{"socket",
      "--socket",
      "SNOWID_SOCKET",
      SettingType::kString,
      0,
      0,
      {},
      "$XDG_RUNTIME_DIR/snowid/snowidd.sock, else /run/snowid/snowidd.sock as root, else "
      "/tmp/snowid-<uid>/snowidd.sock",
      true,
      false,
      false,
      "Unix socket that serves the Redis protocol (RESP)."},
     SNOWID_STORE(socket, std::string)},
    {{"http",
      "--http",
      "SNOWID_HTTP",
      SettingType::kAddress,
      0,
      0,
      {},
      "127.0.0.1:7390",
      false,
      false,
      false,
      "HTTP/JSON listener (host:port, or off)."},
     SNOWID_STORE(http, std::optional<Address>)},
    {{"tcp",
      "--tcp",
      "SNOWID_TCP",
      SettingType::kAddress,
      0,
      0,
      {},
      "off",
      false,
      false,
      false,
      "RESP over TCP for pods that cannot share the socket file (host:port, or off)."},
     SNOWID_STORE(tcp, std::optional<Address>)},
    {{"etcd",
      "--etcd",
      "SNOWID_ETCD",
      SettingType::kEndpoints,
      0,
      0,
      {},
      "off",
      false,
      false,
      false,
      "etcd member URLs (URL[,URL...]); off: the file registry in state_dir."},
     SNOWID_STORE(etcd, std::vector<std::string>)},
    {{"registry", "--registry", "SNOWID_REGISTRY", SettingType::kEnum, 0, 0, kRegistries, "auto",
      false, false, false,
      "Worker-id registry: etcd, file, or auto (etcd when etcd is set, else the file registry, "
      "which auto refuses under a container orchestrator such as Kubernetes: choose file "
      "there only for a process alone on its host)."},
     SNOWID_STORE(registry, std::string)},
    {{"region",
      "--region",
      "SNOWID_REGION",
      SettingType::kInteger,
      0,
      1023,
      {},
      "0",
      false,
      false,
      false,
      "Region block of worker ids; must fit the layout's region field."},
     SNOWID_STORE_U32(region)},
    {{"host",
      "--host",
      "SNOWID_HOST",
      SettingType::kInteger,
      0,
      65535,
      {},
      "any",
      false,
      false,
      false,
      "Host id to pin in the region's block; any: the registry picks a free one. Must fit "
      "the layout's host field; a pinned id that another holder has fails the start."},
     [](Settings& s, Value&& v) {
       const std::int64_t host = take<std::int64_t>(std::move(v));
       s.host =
           host < 0 ? std::nullopt : std::optional<std::uint32_t>(static_cast<std::uint32_t>(host));
     }},
    {{"state_dir",
      "--state-dir",
      "SNOWID_STATE_DIR",
      SettingType::kString,
      0,
      0,
      {},
      "$XDG_STATE_HOME/snowid, else $HOME/.local/state/snowid, else /var/lib/snowid as root",
      true,
      false,
      false,
      "Directory for time fences and the file registry."},
     SNOWID_STORE(state_dir, std::string)},
    {{"socket_mode",
      "--socket-mode",
      "SNOWID_SOCKET_MODE",
      SettingType::kMode,
      0,
      0777,
      {},
      "0660",
      false,
      false,
      false,
      "Permission bits of the Unix socket file."},
     SNOWID_STORE_U32(socket_mode)},
    {{"max_batch",
      "--max-batch",
      "SNOWID_MAX_BATCH",
      SettingType::kInteger,
      1,
      100000,
      {},
      "10000",
      false,
      true,
      false,
      "Largest batch: NEXTIDS n and /v1/ids?count=N."},
     SNOWID_STORE_U32(max_batch)},
    {{"threads",
      "--threads",
      "SNOWID_THREADS",
      SettingType::kInteger,
      1,
      64,
      {},
      "2",
      false,
      false,
      false,
      "Event-loop threads."},
     SNOWID_STORE_U32(threads)},
    {{"log_level", "--log-level", "SNOWID_LOG_LEVEL", SettingType::kEnum, 0, 0, kLogLevels, "info",
      false, true, false, "Least severe level logged."},
     [](Settings& s, Value&& v) {
       const std::string name = take<std::string>(std::move(v));
       for (std::size_t i = 0; i < kLogLevels.size(); ++i) {
         if (kLogLevels[i] == name) s.log_level = static_cast<LogLevel>(i);
       }
     }},
    {{"log_json",
      "--log-json",
      "SNOWID_LOG_JSON",
      SettingType::kBool,
      0,
      0,
      {},
      "true",
      false,
      false,
      false,
      "Log one JSON object per line; false: logfmt."},
     SNOWID_STORE(log_json, bool)},
    {{"http_token",
      "--http-token",
      "SNOWID_HTTP_TOKEN",
      SettingType::kString,
      0,
      0,
      {},
      "",
      false,
      false,
      true,
      "Bearer token the HTTP service requires; empty: none."},
     SNOWID_STORE(http_token, std::string)},
    {{"first_request_timeout",
      "--first-request-timeout",
      "SNOWID_FIRST_REQUEST_TIMEOUT",
      SettingType::kDuration,
      100,
      kHourMs,
      {},
      "10s",
      false,
      false,
      false,
      "A TCP RESP or HTTP connection that sends no complete first request in this long is "
      "closed. The Unix socket is exempt: local pooled clients open connections ahead of use."},
     SNOWID_STORE(first_request_timeout, Duration)},
    {{"lease_ttl",
      "--lease-ttl",
      "SNOWID_LEASE_TTL",
      SettingType::kDuration,
      2000,
      kHourMs,
      {},
      "10s",
      false,
      false,
      false,
      "Lifetime of a worker-id lease without renewal; whole seconds."},
     SNOWID_STORE(lease_ttl, Duration)},
    {{"lease_renew",
      "--lease-renew",
      "SNOWID_LEASE_RENEW",
      SettingType::kDuration,
      100,
      kHourMs,
      {},
      "3s",
      false,
      false,
      false,
      "Time between lease renewals; less than lease_stop."},
     SNOWID_STORE(lease_renew, Duration)},
    {{"lease_stop",
      "--lease-stop",
      "SNOWID_LEASE_STOP",
      SettingType::kDuration,
      100,
      kHourMs,
      {},
      "8s",
      false,
      false,
      false,
      "Stop issuing this long after the last renewal that succeeded; less than lease_ttl."},
     SNOWID_STORE(lease_stop, Duration)},
    {{"quarantine",
      "--quarantine",
      "SNOWID_QUARANTINE",
      SettingType::kDuration,
      0,
      kHourMs,
      {},
      "0 with the file registry, 10s with etcd",
      true,
      false,
      false,
      "How long a released worker id rests before reuse."},
     SNOWID_STORE(quarantine, Duration)},
    {{"max_clock_skew",
      "--max-clock-skew",
      "SNOWID_MAX_CLOCK_SKEW",
      SettingType::kDuration,
      0,
      60 * 1000,
      {},
      "100ms",
      false,
      false,
      false,
      "Largest clock difference allowed between hosts of the fleet."},
     SNOWID_STORE(max_clock_skew, Duration)},
    {{"max_backward",
      "--max-backward",
      "SNOWID_MAX_BACKWARD",
      SettingType::kDuration,
      0,
      kHourMs,
      {},
      "100ms",
      false,
      false,
      false,
      "Largest backward clock step waited out; a larger one is refused."},
     SNOWID_STORE(max_backward, Duration)},
    {{"etcd_prefix",
      "--etcd-prefix",
      "SNOWID_ETCD_PREFIX",
      SettingType::kString,
      0,
      0,
      {},
      "/snowid",
      false,
      false,
      false,
      "etcd key prefix; keys live under <prefix>/<cluster>/."},
     SNOWID_STORE(etcd_prefix, std::string)},
    {{"etcd_cluster",
      "--etcd-cluster",
      "SNOWID_ETCD_CLUSTER",
      SettingType::kString,
      0,
      0,
      {},
      "default",
      false,
      false,
      false,
      "Cluster name under the etcd prefix."},
     SNOWID_STORE(etcd_cluster, std::string)},
    {{"etcd_ca",
      "--etcd-ca",
      "SNOWID_ETCD_CA",
      SettingType::kString,
      0,
      0,
      {},
      "",
      false,
      false,
      false,
      "CA bundle to verify etcd members; empty: the system's CAs."},
     SNOWID_STORE(etcd_ca, std::string)},
    {{"etcd_cert",
      "--etcd-cert",
      "SNOWID_ETCD_CERT",
      SettingType::kString,
      0,
      0,
      {},
      "",
      false,
      false,
      false,
      "Client certificate for mutual TLS with etcd."},
     SNOWID_STORE(etcd_cert, std::string)},
    {{"etcd_key",
      "--etcd-key",
      "SNOWID_ETCD_KEY",
      SettingType::kString,
      0,
      0,
      {},
      "",
      false,
      false,
      false,
      "Client key for mutual TLS with etcd."},
     SNOWID_STORE(etcd_key, std::string)},
    {{"etcd_user",
      "--etcd-user",
      "SNOWID_ETCD_USER",
      SettingType::kString,
      0,
      0,
      {},
      "",
      false,
      false,
      false,
      "etcd user; empty: no authentication."},
     SNOWID_STORE(etcd_user, std::string)},
    {{"etcd_password",
      "--etcd-password",
      "SNOWID_ETCD_PASSWORD",
      SettingType::kString,
      0,
      0,
      {},
      "",
      false,
      false,
      true,
      "etcd password."},
     SNOWID_STORE(etcd_password, std::string)},
    {{"layout",
      "--layout",
      "SNOWID_LAYOUT",
      SettingType::kString,
      0,
      0,
      {},
      "snowid",
      false,
      false,
      false,
      "Id layout: a preset name or a layout file. Never changes at run time."},
     SNOWID_STORE(layout, std::string)},
    {{"sequences",
      "--sequences",
      "SNOWID_SEQUENCES",
      SettingType::kString,
      0,
      0,
      {},
      kSequencesDefaultText,
      true,
      false,
      true,
      "The ticket table of the named sequences: sqlite:PATH, a postgresql:// URL, or off. "
      "A password in it is never logged."},
     SNOWID_STORE(sequences, std::string)},
    {{"sequence_refill",
      "--sequence-refill",
      "SNOWID_SEQUENCE_REFILL",
      SettingType::kInteger,
      1,
      99,
      {},
      "20",
      false,
      false,
      false,
      "Percent of a sequence's range left when the next range is fetched in the background."},
     SNOWID_STORE_U32(sequence_refill)},
    {{"sequence_wait_timeout",
      "--sequence-wait-timeout",
      "SNOWID_SEQUENCE_WAIT_TIMEOUT",
      SettingType::kDuration,
      1,
      60 * 1000,
      {},
      "1s",
      false,
      false,
      false,
      "How long a request waits for each range it needs from a sequence whose buffers are dry, "
      "before UNAVAILABLE."},
     SNOWID_STORE(sequence_wait_timeout, Duration)},
    {{"sequence_step",
      "--sequence-step",
      "SNOWID_SEQUENCE_STEP",
      SettingType::kInteger,
      0,
      kMaxSequenceRange,
      {},
      "0",
      false,
      false,
      false,
      "Range size the buffers ask the table for; 0: each sequence's own step."},
     SNOWID_STORE(sequence_step, std::int64_t)},
    {{"sequence_adaptive",
      "--sequence-adaptive",
      "SNOWID_SEQUENCE_ADAPTIVE",
      SettingType::kBool,
      0,
      0,
      {},
      "false",
      false,
      false,
      false,
      "Double the range size when a range lasts less than half of sequence_range_life, halve "
      "it when it lasts more than twice, within sequence_min_step..sequence_max_step."},
     SNOWID_STORE(sequence_adaptive, bool)},
    {{"sequence_min_step",
      "--sequence-min-step",
      "SNOWID_SEQUENCE_MIN_STEP",
      SettingType::kInteger,
      1,
      kMaxSequenceRange,
      {},
      "100",
      false,
      false,
      false,
      "Smallest range size of the adaptive step; at most sequence_max_step."},
     SNOWID_STORE(sequence_min_step, std::int64_t)},
    {{"sequence_max_step",
      "--sequence-max-step",
      "SNOWID_SEQUENCE_MAX_STEP",
      SettingType::kInteger,
      1,
      kMaxSequenceRange,
      {},
      "100000",
      false,
      false,
      false,
      "Largest range size of the adaptive step."},
     SNOWID_STORE(sequence_max_step, std::int64_t)},
    {{"sequence_range_life",
      "--sequence-range-life",
      "SNOWID_SEQUENCE_RANGE_LIFE",
      SettingType::kDuration,
      1000,
      24 * kHourMs,
      {},
      "1m",
      false,
      false,
      false,
      "How long the adaptive step aims for one range to last."},
     SNOWID_STORE(sequence_range_life, Duration)},
    {{"sequence_store_timeout",
      "--sequence-store-timeout",
      "SNOWID_SEQUENCE_STORE_TIMEOUT",
      SettingType::kDuration,
      100,
      5 * 60 * 1000,
      {},
      "5s",
      false,
      false,
      false,
      "Bound on one call to the ticket table: SQLite's busy timeout, PostgreSQL's connect "
      "and statement timeouts."},
     SNOWID_STORE(sequence_store_timeout, Duration)},
    {{"max_range",
      "--max-range",
      "SNOWID_MAX_RANGE",
      SettingType::kInteger,
      1,
      kMaxSequenceRange,
      {},
      "1000000",
      false,
      false,
      false,
      "Largest range a client may take at once: SEQRANGE and /v1/sequences/{name}/range."},
     SNOWID_STORE(max_range, std::int64_t)},
    {{"sequence_threads",
      "--sequence-threads",
      "SNOWID_SEQUENCE_THREADS",
      SettingType::kInteger,
      1,
      64,
      {},
      "4",
      false,
      false,
      false,
      "Threads that wait on the ticket table for requests, so that the event loops never do."},
     SNOWID_STORE_U32(sequence_threads)},
    {{"max_sequences",
      "--max-sequences",
      "SNOWID_MAX_SEQUENCES",
      SettingType::kInteger,
      1,
      100000,
      {},
      "1000",
      false,
      false,
      false,
      "Most sequences served at once, each with a buffer and a fetcher thread. A request for one "
      "more is refused with RESOURCE_EXHAUSTED (HTTP 503, not retryable)."},
     SNOWID_STORE_U32(max_sequences)},
}};

#undef SNOWID_STORE
#undef SNOWID_STORE_U32

constexpr std::array<SettingInfo, kTable.size()> make_infos() {
  std::array<SettingInfo, kTable.size()> infos{};
  for (std::size_t i = 0; i < kTable.size(); ++i) infos[i] = kTable[i].info;
  return infos;
}

constexpr std::array<SettingInfo, kTable.size()> kInfos = make_infos();

const Entry* find_by(std::string_view SettingInfo::*member, std::string_view key) {
  for (const Entry& e : kTable) {
    if (e.info.*member == key) return &e;
  }
  return nullptr;
}

Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

std::string shown(const SettingInfo& info, std::string_view text) {
  if (info.secret) return "(secret)";
  return "\"" + std::string(text) + "\"";
}

std::optional<std::int64_t> parse_int(std::string_view text, int base = 10) {
  std::int64_t v = 0;
  if (text.empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<Duration> parse_duration_text(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  const std::optional<std::int64_t> n = parse_int(text.substr(0, digits));
  if (!n) return std::nullopt;
  const std::string_view unit = text.substr(digits);
  std::int64_t scale = 0;
  if (unit.empty() || unit == "ms") {
    scale = 1;
  } else if (unit == "s") {
    scale = 1000;
  } else if (unit == "m") {
    scale = 60 * 1000;
  } else if (unit == "h") {
    scale = kHourMs;
  } else {
    return std::nullopt;
  }
  // 100 days in ms fits easily; anything larger is out of every bound anyway.
  if (*n > 100LL * 24 * kHourMs / scale) return std::chrono::hours(24 * 1000);
  return std::chrono::milliseconds(*n * scale);
}

std::string format_bounds(const SettingInfo& info) {
  switch (info.type) {
    case SettingType::kInteger:
      return std::to_string(info.min) + ".." + std::to_string(info.max);
    case SettingType::kDuration:
      return format_duration(std::chrono::milliseconds(info.min)) + ".." +
             format_duration(std::chrono::milliseconds(info.max));
    case SettingType::kMode: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0%llo..0%llo", static_cast<unsigned long long>(info.min),
                    static_cast<unsigned long long>(info.max));
      return buf;
    }
    case SettingType::kEnum: {
      std::string out;
      for (std::string_view c : info.choices) out += (out.empty() ? "" : "|") + std::string(c);
      return out;
    }
    default:
      return "";
  }
}

Result<std::vector<std::string>> parse_endpoints(std::string_view text) {
  std::vector<std::string> out;
  if (text == "off") return out;
  // Never read as "no etcd": an empty value is most often a variable that a
  // deployment meant to fill, and the file registry in its place would give
  // every pod the same worker id.
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return invalid("is empty; give etcd member URLs (URL[,URL...]), or off for the file registry");
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view url = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const bool http = url.starts_with("http://") && url.size() > 7;
    const bool https = url.starts_with("https://") && url.size() > 8;
    if (!http && !https) {
      return invalid("must be http:// or https:// URLs separated by commas, not \"" +
                     std::string(url) + "\"");
    }
    out.emplace_back(url);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// The forms of sequences/ticket_store_url.h, which the daemon checks again
// when it opens the store; checked here too so that a mistake names its
// source like every other setting's.
bool sequences_form(std::string_view text) {
  if (text == "off") return true;
  if (text.starts_with("sqlite:")) return text.size() > 7;
  return (text.starts_with("postgresql://") && text.size() > 13) ||
         (text.starts_with("postgres://") && text.size() > 11);
}

// Parses `text` for `info`'s type and bounds; the error names the setting.
Result<Value> parse_value(const SettingInfo& info, std::string_view text) {
  auto fail = [&](std::string problem) -> Result<Value> {
    return invalid(std::string(info.name) + " " + problem);
  };
  switch (info.type) {
    case SettingType::kString:
      if (text.find('\0') != std::string_view::npos) return fail("must not contain NUL");
      if (info.name == "socket" || info.name == "state_dir" || info.name == "layout") {
        if (text.empty()) return fail("must not be empty");
      }
      if (info.name == "sequences" && !sequences_form(text)) {
        // Not echoed: the value may hold a password.
        return fail("must be sqlite:PATH, a postgresql:// (or postgres://) URL, or off");
      }
      return Value(std::string(text));
    case SettingType::kInteger: {
      // host: "any" (the default) unpins it, so that a deployment can undo a
      // pin made at a lower level of precedence.
      if (info.name == "host" && text == "any") return Value(std::int64_t{-1});
      const std::optional<std::int64_t> v = parse_int(text);
      if (!v || *v < info.min || *v > info.max) {
        const std::string_view any = info.name == "host" ? "any or " : "";
        return fail("must be " + std::string(any) + format_bounds(info) + ", not " +
                    shown(info, text));
      }
      return Value(*v);
    }
    case SettingType::kDuration: {
      const std::optional<Duration> d = parse_duration_text(text);
      if (!d) {
        return fail("must be a duration such as 250ms, 10s or 2m (a bare number is ms), not " +
                    shown(info, text));
      }
      if (ms(*d) < info.min || ms(*d) > info.max) {
        return fail("must be " + format_bounds(info) + ", not " + format_duration(*d));
      }
      return Value(*d);
    }
    case SettingType::kAddress: {
      if (text == "off") return Value(std::optional<Address>());
      Result<Address> a = parse_address(text);
      if (!a.is_ok()) return fail(a.status().message());
      return Value(std::optional<Address>(std::move(a).value()));
    }
    case SettingType::kMode: {
      std::string_view digits = text;
      if (digits.starts_with("0o")) digits.remove_prefix(2);
      const std::optional<std::int64_t> v = parse_int(digits, 8);
      if (!v || *v < info.min || *v > info.max) {
        return fail("must be an octal mode " + format_bounds(info) + ", not " + shown(info, text));
      }
      return Value(*v);
    }
    case SettingType::kEnum:
      for (std::string_view c : info.choices) {
        if (c == text) return Value(std::string(text));
      }
      return fail("must be one of " + format_bounds(info) + ", not " + shown(info, text));
    case SettingType::kBool:
      if (text == "true") return Value(true);
      if (text == "false") return Value(false);
      return fail("must be true or false, not " + shown(info, text));
    case SettingType::kEndpoints: {
      Result<std::vector<std::string>> urls = parse_endpoints(text);
      if (!urls.is_ok()) return fail(urls.status().message());
      return Value(std::move(urls).value());
    }
  }
  return fail("has an unknown type");
}

// One value found for a setting, and where.
struct Found {
  std::string source;  // "--region", "SNOWID_REGION", "snowidd.toml:3"
  Value value;
};

using FoundTable = std::array<std::optional<Found>, kTable.size()>;

std::size_t index_of(const Entry* e) { return static_cast<std::size_t>(e - kTable.data()); }

Status record(FoundTable& found, const Entry& e, std::string source, std::string_view text) {
  Result<Value> v = parse_value(e.info, text);
  if (!v.is_ok()) return invalid(source + ": " + v.status().message());
  found[index_of(&e)] = Found{std::move(source), std::move(v).value()};
  return Status::ok();
}

// The TOML node as text in the syntax of the setting's type, or an error.
Result<std::string> toml_text(const SettingInfo& info, const toml::node& node) {
  auto wrong = [&](std::string_view want) -> Result<std::string> {
    return invalid(std::string(info.name) + " must be " + std::string(want));
  };
  switch (info.type) {
    case SettingType::kString:
    case SettingType::kAddress:
    case SettingType::kEnum:
      if (const auto* s = node.as_string()) return s->get();
      return wrong("a string");
    case SettingType::kInteger:
      if (const auto* i = node.as_integer()) return std::to_string(i->get());
      if (info.name == "host") {
        if (const auto* s = node.as_string(); s != nullptr && s->get() == "any") return s->get();
        return wrong("an integer or \"any\"");
      }
      return wrong("an integer");
    case SettingType::kDuration:
      if (const auto* i = node.as_integer()) {
        if (i->get() < 0) return wrong("at least 0, not " + std::to_string(i->get()));
        return std::to_string(i->get());
      }
      if (const auto* s = node.as_string()) return s->get();
      return wrong("an integer (milliseconds) or a string such as \"10s\"");
    case SettingType::kMode:
      if (const auto* s = node.as_string()) return s->get();
      if (const auto* i = node.as_integer()) {
        if ((i->flags() & toml::value_flags::format_as_octal) == toml::value_flags::none ||
            i->get() < 0) {
          return wrong("octal: write 0o660 or \"0660\", not " + std::to_string(i->get()));
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "0%llo", static_cast<unsigned long long>(i->get()));
        return std::string(buf);
      }
      return wrong("an octal mode: 0o660 or \"0660\"");
    case SettingType::kBool:
      if (const auto* b = node.as_boolean()) return std::string(b->get() ? "true" : "false");
      return wrong("true or false");
    case SettingType::kEndpoints:
      if (const auto* s = node.as_string()) return s->get();
      if (const auto* a = node.as_array()) {
        std::string joined;
        for (const toml::node& item : *a) {
          const auto* s = item.as_string();
          if (s == nullptr) return wrong("a string or an array of strings");
          joined += (joined.empty() ? "" : ",") + s->get();
        }
        return joined;
      }
      return wrong("a string or an array of strings");
  }
  return wrong("of a known type");
}

Status read_toml(const std::string& path, const host::Environment& env, FoundTable& found) {
  Result<std::string> text = env.read_file(path);
  if (!text.is_ok()) return text.status();
  toml::parse_result parsed = toml::parse(text.value(), path);
  if (!parsed) {
    const toml::parse_error& err = parsed.error();
    return invalid(path + ":" + std::to_string(err.source().begin.line) +
                   ": not valid TOML: " + std::string(err.description()));
  }
  for (const auto& [key, node] : parsed.table()) {
    const std::string at = path + ":" + std::to_string(node.source().begin.line);
    const Entry* e = find_by(&SettingInfo::name, key.str());
    if (e == nullptr) {
      return invalid(at + ": unknown setting \"" + std::string(key.str()) +
                     "\" (snowidd --help-settings lists them)");
    }
    Result<std::string> t = toml_text(e->info, node);
    if (!t.is_ok()) return invalid(at + ": " + t.status().message());
    if (Status s = record(found, *e, at, t.value()); !s.is_ok()) return s;
  }
  return Status::ok();
}

std::string default_socket(const host::Environment& env) {
  if (auto run = host::nonempty(env, "XDG_RUNTIME_DIR"); run && run->front() == '/') {
    return *run + "/snowid/snowidd.sock";
  }
  if (env.uid() == 0) return "/run/snowid/snowidd.sock";
  return "/tmp/snowid-" + std::to_string(env.uid()) + "/snowidd.sock";
}

// The source of a setting's value, for messages about combinations.
std::string source_of(const FoundTable& found, std::string_view name) {
  const std::optional<Found>& f = found[index_of(find_by(&SettingInfo::name, name))];
  return f ? f->source : "default";
}

Status check_combinations(const Settings& s, const FoundTable& found) {
  if (s.lease_ttl % std::chrono::seconds(1) != Duration::zero()) {
    return invalid(source_of(found, "lease_ttl") + ": lease_ttl must be whole seconds, not " +
                   format_duration(s.lease_ttl));
  }
  if (!(s.lease_renew < s.lease_stop)) {
    return invalid(source_of(found, "lease_renew") + ": lease_renew (" +
                   format_duration(s.lease_renew) + ") must be less than lease_stop (" +
                   format_duration(s.lease_stop) + ")");
  }
  if (!(s.lease_stop < s.lease_ttl)) {
    return invalid(source_of(found, "lease_stop") + ": lease_stop (" +
                   format_duration(s.lease_stop) + ") must be less than lease_ttl (" +
                   format_duration(s.lease_ttl) + ")");
  }
  if (s.sequence_min_step > s.sequence_max_step) {
    return invalid(source_of(found, "sequence_min_step") + ": sequence_min_step (" +
                   std::to_string(s.sequence_min_step) + ") must be at most sequence_max_step (" +
                   std::to_string(s.sequence_max_step) + ")");
  }
  // A layout file is checked when the daemon reads it; a preset here.
  if (Result<Layout> layout = preset(s.layout); layout.is_ok()) {
    const std::uint64_t regions = layout->regions();
    if (s.region >= regions) {
      return invalid(source_of(found, "region") + ": region must be 0.." +
                     std::to_string(regions - 1) + " (layout " + s.layout + "), not " +
                     std::to_string(s.region));
    }
    const std::uint64_t hosts = layout->workers_per_region();
    if (s.host && *s.host >= hosts) {
      return invalid(source_of(found, "host") + ": host must be 0.." + std::to_string(hosts - 1) +
                     " (layout " + s.layout + "), not " + std::to_string(*s.host));
    }
  }
  return Status::ok();
}

// A password in a PostgreSQL URL: postgresql://user:password@host/... or a
// password=... parameter.
bool has_password(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme != std::string_view::npos) {
    const std::string_view rest = url.substr(scheme + 3);
    const std::size_t at = rest.find('@');
    if (at != std::string_view::npos && rest.substr(0, at).find(':') != std::string_view::npos) {
      return true;
    }
  }
  return url.find("password=") != std::string_view::npos;
}

void add_warnings(Settings& s, const FoundTable& found) {
  auto open = [&](const std::optional<Address>& a, std::string_view name, std::string_view why) {
    if (a && !a->is_loopback()) {
      s.warnings.push_back(std::string(name) + " listens on " + a->to_string() + ", not loopback" +
                           std::string(why));
    }
  };
  if (s.http_token.empty())
    open(s.http, "http", " and without http_token: anyone reaching it can take ids");
  open(s.tcp, "tcp", ": RESP has no authentication, anyone reaching it can take ids");
  for (std::string_view secret : {"http_token", "etcd_password"}) {
    if (source_of(found, secret).starts_with("--")) {
      s.warnings.push_back(std::string(secret) +
                           " given as a flag is visible in the process list; prefer the "
                           "environment or the file");
    }
  }
  if (source_of(found, "sequences").starts_with("--") && has_password(s.sequences)) {
    s.warnings.push_back(
        "sequences given as a flag with a password is visible in the process list; prefer the "
        "environment, the file, or a password file (PGPASSFILE)");
  }
}

}  // namespace

bool Address::is_loopback() const noexcept {
  if (ipv6) {
    in6_addr a{};
    return ::inet_pton(AF_INET6, host.c_str(), &a) == 1 && IN6_IS_ADDR_LOOPBACK(&a);
  }
  return host.starts_with("127.");
}

std::string Address::to_string() const {
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<Address> parse_address(std::string_view text) {
  auto fail = [&](std::string why) -> Result<Address> {
    return invalid("must be host:port (A.B.C.D:PORT, [IPV6]:PORT or localhost:PORT), " + why +
                   ": \"" + std::string(text) + "\"");
  };
  Address out;
  std::string_view port;
  if (text.starts_with("[")) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return fail("no closing ]");
    out.host = std::string(text.substr(1, close - 1));
    out.ipv6 = true;
    in6_addr a{};
    if (::inet_pton(AF_INET6, out.host.c_str(), &a) != 1) return fail("not an IPv6 address");
    if (close + 1 >= text.size() || text[close + 1] != ':') return fail("no port");
    port = text.substr(close + 2);
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return fail("no port");
    out.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
    if (out.host == "localhost") out.host = "127.0.0.1";
    in_addr a{};
    if (out.host.find(':') != std::string::npos) return fail("IPv6 needs brackets");
    if (::inet_pton(AF_INET, out.host.c_str(), &a) != 1) return fail("not an IPv4 address");
  }
  const std::optional<std::int64_t> p = port.size() <= 5 ? parse_int(port) : std::nullopt;
  if (!p || *p < 0 || *p > 65535) return fail("port must be 0..65535");
  out.port = static_cast<std::uint16_t>(*p);
  return out;
}

std::string_view log_level_name(LogLevel level) noexcept {
  return kLogLevels[static_cast<std::size_t>(level)];
}

std::string_view setting_type_name(SettingType type) noexcept {
  switch (type) {
    case SettingType::kString:
      return "string";
    case SettingType::kInteger:
      return "integer";
    case SettingType::kDuration:
      return "duration";
    case SettingType::kAddress:
      return "address";
    case SettingType::kMode:
      return "mode";
    case SettingType::kEnum:
      return "enum";
    case SettingType::kBool:
      return "bool";
    case SettingType::kEndpoints:
      return "urls";
  }
  return "?";
}

std::span<const SettingInfo> settings_table() noexcept { return kInfos; }

std::string format_duration(Duration d) {
  const std::int64_t n = ms(d);
  if (n != 0 && n % kHourMs == 0) return std::to_string(n / kHourMs) + "h";
  if (n != 0 && n % 60000 == 0) return std::to_string(n / 60000) + "m";
  if (n != 0 && n % 1000 == 0) return std::to_string(n / 1000) + "s";
  return std::to_string(n) + "ms";
}

Result<Settings> load_settings(int argc, const char* const* argv, const host::Environment& env) {
  Settings settings;
  FoundTable flags;
  std::optional<std::string> config_flag;

  // 1. Flags, checked first so that --help works whatever else is broken.
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      settings.action = Action::kHelp;
      return settings;
    }
    if (arg == "--help-settings") {
      settings.action = Action::kHelpSettings;
      return settings;
    }
    if (!arg.starts_with("--")) return invalid("unexpected argument \"" + std::string(arg) + "\"");
    const std::size_t eq = arg.find('=');
    const std::string_view flag = arg.substr(0, eq);
    std::optional<std::string_view> value;
    if (eq != std::string_view::npos) value = arg.substr(eq + 1);
    const Entry* e = find_by(&SettingInfo::flag, flag);
    if (e == nullptr && flag != "--config") {
      return invalid("unknown flag " + std::string(flag) + " (snowidd --help-settings lists them)");
    }
    if (!value) {
      if (e != nullptr && e->info.type == SettingType::kBool) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return invalid(std::string(flag) + " needs a value");
      }
    }
    if (e == nullptr) {
      if (value->empty()) return invalid("--config needs a file name");
      config_flag = std::string(*value);
      continue;
    }
    if (Status s = record(flags, *e, std::string(flag), *value); !s.is_ok()) return s;
  }

  // 2. The environment.
  FoundTable vars;
  for (const Entry& e : kTable) {
    // An empty variable counts as unset, except for the registry's: there it
    // is refused (parse_endpoints), never taken as "use the file registry".
    const bool registry = e.info.name == "etcd" || e.info.name == "registry";
    if (std::optional<std::string> v =
            registry ? env.get(e.info.env) : host::nonempty(env, e.info.env)) {
      if (Status s = record(vars, e, std::string(e.info.env), *v); !s.is_ok()) return s;
    } else if (e.info.name == "etcd") {
      // The name the snowid tool reads, so that one environment serves both.
      if (std::optional<std::string> alias = env.get("SNOWID_ETCD_ENDPOINTS")) {
        if (Status s = record(vars, e, "SNOWID_ETCD_ENDPOINTS", *alias); !s.is_ok()) return s;
      }
    }
  }

  // 3. The TOML file.
  FoundTable file;
  if (!config_flag) config_flag = host::nonempty(env, "SNOWID_CONFIG");
  if (config_flag) {
    if (Status s = read_toml(*config_flag, env, file); !s.is_ok()) return s;
    settings.config_file = *config_flag;
  }

  // Merge, highest precedence first; then apply (4) the defaults.
  FoundTable found;
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    if (flags[i]) {
      found[i] = std::move(flags[i]);
    } else if (vars[i]) {
      found[i] = std::move(vars[i]);
    } else if (file[i]) {
      found[i] = std::move(file[i]);
    }
  }
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    const Entry& e = kTable[i];
    if (found[i]) {
      e.store(settings, std::move(found[i]->value));
      continue;
    }
    if (e.info.computed_default) continue;
    Result<Value> v = parse_value(e.info, e.info.default_text);
    assert(v.is_ok());  // the table's own defaults are tested
    if (v.is_ok()) e.store(settings, std::move(v).value());
  }
  const auto unset = [&](std::string_view name) {
    return !found[index_of(find_by(&SettingInfo::name, name))];
  };
  if (unset("socket")) settings.socket = default_socket(env);
  if (unset("state_dir")) {
    Result<std::string> dir = host::default_state_dir(env, host::StateDirFallback::kSystemForRoot);
    if (!dir.is_ok()) return invalid("state_dir: " + dir.status().message());
    settings.state_dir = std::move(dir).value();
  }
  if (unset("sequences")) {
#if SNOWID_DAEMON_SEQUENCE_STORES
    settings.sequences = "sqlite:" + settings.state_dir + "/sequences.db";
#else
    settings.sequences = "off";
#endif
  }
  if (unset("quarantine")) {
    settings.quarantine = settings.etcd.empty() ? Duration::zero() : Duration(10s);
  }

  if (Status s = check_combinations(settings, found); !s.is_ok()) return s;
  add_warnings(settings, found);
  return settings;
}

std::string describe_settings() {
  std::string out =
      "snowidd settings. Precedence, highest first: flags, SNOWID_* environment variables,\n"
      "the TOML file (--config FILE or SNOWID_CONFIG), the defaults below. Durations take\n"
      "ms, s, m or h (a bare number is milliseconds). \"runtime\" settings may change while\n"
      "the daemon runs; the others, the layout above all, are fixed at start.\n";
  for (const SettingInfo& info : kInfos) {
    out += "\n" + std::string(info.name) + "  " + std::string(info.flag) + "  " +
           std::string(info.env) + "\n";
    out += "    " + std::string(setting_type_name(info.type));
    if (const std::string bounds = format_bounds(info); !bounds.empty()) out += " " + bounds;
    out += "; default: ";
    out += info.default_text.empty() ? "(empty)" : std::string(info.default_text);
    out += info.runtime ? "; runtime\n" : "; fixed\n";
    out += "    " + std::string(info.description) + "\n";
  }
  return out;
}

}  // namespace snowid::daemon
