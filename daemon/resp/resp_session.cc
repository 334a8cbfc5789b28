#include "resp_session.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "ascii.h"
#include "resp_args.h"
#include "resp_commands.h"
#include "secret.h"
#include "snowid/layout.h"
#include "snowid/lease_keeper.h"
#include "snowid/status.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"
#include "stats.h"

#ifndef SNOWID_VERSION
#define SNOWID_VERSION "dev"
#endif

namespace snowid::daemon {
namespace {

constexpr std::string_view kVersion = SNOWID_VERSION;
constexpr std::string_view kNoAuth = "Authentication required.";
constexpr std::string_view kWrongPass = "invalid username-password pair or user is disabled.";
// At most this many arguments, each cut to kQuotedArgumentBytes, are quoted
// back in the error for an unknown command.
constexpr std::size_t kQuotedArguments = 3;
constexpr std::size_t kQuotedArgumentBytes = 32;

// Redis refuses connection names with spaces, line ends or other bytes
// outside '!'..'~', so that CLIENT LIST stays one line per client.
bool valid_client_name(std::string_view name) noexcept {
  return std::all_of(name.begin(), name.end(), [](char c) { return c >= '!' && c <= '~'; });
}

void unknown_subcommand(RespWriter& w, std::string_view command, std::string_view sub) {
  std::string message = "unknown subcommand '";
  message.append(sub.substr(0, kQuotedArgumentBytes));
  message += "'. Try ";
  message += command;
  message += " HELP.";
  w.error("ERR", message);
}

void unknown_command(RespWriter& w, const RespCommand& command) {
  std::string message = "unknown command '";
  message.append(std::string_view(command[0]).substr(0, kQuotedArgumentBytes));
  message += "', with args beginning with: ";
  const std::size_t quoted = std::min(command.size() - 1, kQuotedArguments);
  for (std::size_t i = 1; i <= quoted; ++i) {
    message += '\'';
    message.append(std::string_view(command[i]).substr(0, kQuotedArgumentBytes));
    message += "' ";
  }
  w.error("ERR", message);
}

// --- INFO -------------------------------------------------------------------

// INFO sections, as bits of a set.
constexpr unsigned kServer = 1U << 0;
constexpr unsigned kLayout = 1U << 1;
constexpr unsigned kWorker = 1U << 2;
constexpr unsigned kLease = 1U << 3;
constexpr unsigned kHealth = 1U << 4;
constexpr unsigned kStats = 1U << 5;
constexpr unsigned kSequences = 1U << 6;
constexpr unsigned kClock = 1U << 7;
constexpr unsigned kPublicIds = 1U << 8;
constexpr unsigned kSkew = 1U << 9;
constexpr unsigned kCanary = 1U << 10;
constexpr unsigned kAllSections = (1U << 11) - 1;

unsigned section_of(std::string_view name) noexcept {
  if (same_word(name, "server")) return kServer;
  if (same_word(name, "layout")) return kLayout;
  if (same_word(name, "worker")) return kWorker;
  if (same_word(name, "lease")) return kLease;
  if (same_word(name, "health")) return kHealth;
  if (same_word(name, "stats")) return kStats;
  if (same_word(name, "sequences")) return kSequences;
  if (same_word(name, "clock")) return kClock;
  if (same_word(name, "publicids")) return kPublicIds;
  if (same_word(name, "skew")) return kSkew;
  if (same_word(name, "canary")) return kCanary;
  if (same_word(name, "all") || same_word(name, "everything") || same_word(name, "default"))
    return kAllSections;
  return 0;
}

class InfoText {
 public:
  void section(std::string_view title) {
    if (!text_.empty()) text_ += "\r\n";
    text_ += "# ";
    text_ += title;
    text_ += "\r\n";
  }
  void line(std::string_view key, std::string_view value) {
    text_ += key;
    text_ += ':';
    // A value is one line: a line end in it would start a fake key.
    for (const char c : value) text_ += (c == '\r' || c == '\n') ? ' ' : c;
    text_ += "\r\n";
  }
  template <typename Int>
  void number(std::string_view key, Int value) {
    char buf[24];
    const char* end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    line(key, std::string_view(buf, static_cast<std::size_t>(end - buf)));
  }
  // Milliseconds with three decimals.
  void millis(std::string_view key, Duration d) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    const std::int64_t whole = us / 1000;
    const std::int64_t frac = us % 1000;
    std::string v = std::to_string(whole) + '.';
    if (frac < 100) v += '0';
    if (frac < 10) v += '0';
    v += std::to_string(frac < 0 ? -frac : frac);
    line(key, v);
  }
  // The rows of stats.h in section `title`.
  void stats(std::string_view title, const ServiceSnapshot& s) {
    for (const StatRow& row : service_stats()) {
      if (row.section != title) continue;
      const StatValue v = row.read(s);
      switch (row.unit) {
        case StatUnit::kCount:
        case StatUnit::kFlag:
          number(row.info, v.count);
          break;
        case StatUnit::kMillis:
          millis(row.info, v.duration);
          break;
        case StatUnit::kSeconds:
          number(row.info, std::chrono::duration_cast<std::chrono::seconds>(v.duration).count());
          break;
      }
    }
  }
  const std::string& text() const noexcept { return text_; }

 private:
  std::string text_;
};

// Signed milliseconds with three decimals: "-0.250".
std::string signed_millis(Duration d) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  const std::int64_t mag = us < 0 ? -us : us;
  std::string frac = std::to_string(mag % 1000);
  frac.insert(0, 3 - frac.size(), '0');
  return (us < 0 ? "-" : "") + std::to_string(mag / 1000) + "." + frac;
}

// The Clock section: the host's bound as SNOWID.CLOCK reports it, chrony's
// reading, and one line per SNTP server (as Redis writes a replica).
void info_clock(InfoText& info, const IdService& ids, const ClockReadingsSnapshot& c) {
  info.section("Clock");
  const BoundNow b = ids.host_bound().at(ids.clock().mono_now());
  info.line("clock_bound_source", bound_source_name(b.source));
  if (b.known()) info.line("clock_bound_ms", signed_millis(b.bound));
  info.line("chrony", c.chrony_enabled ? "on" : "off");
  if (c.chrony_enabled) {
    info.number("chrony_ok", c.chrony_ok ? 1 : 0);
    if (c.chrony_ok) info.line("chrony_bound_ms", signed_millis(c.chrony_bound));
    if (!c.chrony_error.empty()) info.line("chrony_error", c.chrony_error);
    info.number("chrony_failures", c.chrony_failures);
  }
  info.number("sntp_servers", c.servers.size());
  for (std::size_t i = 0; i < c.servers.size(); ++i) {
    const ServerReading& r = c.servers[i];
    std::string v = "server=" + r.server + ",ok=" + (r.ok ? "1" : "0");
    if (r.measured) {
      v += ",offset_ms=" + signed_millis(r.offset) + ",delay_ms=" + signed_millis(r.delay) +
           ",stratum=" + std::to_string(r.stratum);
    }
    if (!r.failure.empty()) v += ",failure=" + r.failure;
    v += ",bursts=" + std::to_string(r.bursts) + ",failures=" + std::to_string(r.failures);
    info.line("sntp" + std::to_string(i), v);
  }
}

// The Skew section: the monitor's view of this host and, one line each, of
// the hosts of its region (offset from this host, as the monitor holds it).
void info_skew(InfoText& info, const SkewSnapshot* k) {
  info.section("Skew");
  info.line("skew_monitor", k != nullptr ? "on" : "off");
  if (k == nullptr) return;
  info.line("skew_host", k->self);
  info.line("skew_state", skew::state_name(k->self_state));
  info.number("skew_held", k->held ? 1 : 0);
  if (k->held) info.line("skew_hold_reason", k->hold_reason);
  info.number("skew_dry_run", k->dry_run ? 1 : 0);
  if (k->reference) {
    info.line("skew_reference_ms",
              signed_millis(k->reference->value) + "+-" + signed_millis(k->reference->uncertainty));
  }
  info.number("skew_rounds", k->rounds);
  info.number("skew_fences", k->fences_total);
  info.number("skew_vetoes", k->vetoes_total);
  info.number("skew_would_fence", k->would_fence_total);
  info.number("skew_mass_skew", k->mass_skew_total);
  info.number("skew_hosts", k->peers.size());
  for (std::size_t i = 0; i < k->peers.size(); ++i) {
    const SkewPeerView& p = k->peers[i];
    std::string v = "host=" + p.host + ",state=" + std::string(skew::state_name(p.state));
    if (p.self) v += ",self=1";
    if (p.offset) {
      v += ",offset_ms=" + signed_millis(p.offset->value) +
           ",uncertainty_ms=" + signed_millis(p.offset->uncertainty);
    }
    if (p.rtt) v += ",rtt_ms=" + signed_millis(*p.rtt);
    v += ",observers=" + std::to_string(p.observers);
    if (!p.votes_against.empty()) v += ",voted_against=1";
    info.line("skew_host" + std::to_string(i), v);
  }
}

// The Sequences section: the ticket table and the counters summed over the
// sequences this daemon serves.
void info_sequences(InfoText& info, const SequenceService* sequences) {
  info.section("Sequences");
  if (sequences == nullptr || !sequences->enabled()) {
    info.line("sequences_store", "off");
  } else {
    const SequencesSnapshot q = sequences->snapshot();
    std::uint64_t issued = 0, lost = 0, fetched = 0, served = 0;
    for (const SequenceCounters& c : q.sequences) {
      issued += c.numbers_issued;
      lost += c.numbers_lost;
      fetched += c.ranges_fetched;
      served += c.ranges_served;
    }
    info.line("sequences_store", q.store_kind);
    info.line("sequences_url", q.store);
    info.number("sequences_buffered", q.buffers);
    info.number("sequences_numbers_issued", issued);
    info.number("sequences_numbers_lost", lost);
    info.number("sequences_ranges_fetched", fetched);
    info.number("sequences_ranges_served", served);
    info.number("sequences_store_calls", q.store_calls);
    info.number("sequences_store_failures", q.store_failures);
    info.number("sequences_buffer_waits", q.buffer_waits);
    info.number("sequences_buffer_wait_timeouts", q.buffer_wait_timeouts);
  }
}

std::string info_text(IdService& ids, const SequenceService* sequences, unsigned sections) {
  const ServiceSnapshot s = ids.snapshot();
  InfoText info;
  if (sections & kServer) {
    info.section("Server");
    info.line("snowid_version", kVersion);
    info.number("process_id", static_cast<std::int64_t>(::getpid()));
    // As Redis names it: what the daemon's wall clock reads, in microseconds
    // since the Unix epoch, so that an operator can compare it with others.
    info.number(
        "server_time_usec",
        std::chrono::duration_cast<std::chrono::microseconds>(s.now.time_since_epoch()).count());
    info.stats("Server", s);
  }
  if (sections & kLayout) {
    info.section("Layout");
    info.line("layout_name", s.layout.name());
    info.line("layout_epoch", format_iso8601(s.layout.epoch()));
    info.number("layout_unit_ms", s.layout.unit_ms());
    for (const FieldInfo& f : s.layout.fields()) info.number("layout_bits_" + f.name, f.width);
  }
  if (sections & kWorker) {
    info.section("Worker");
    info.number("region", s.worker.region);
    info.number("host", s.worker.host);
  }
  if (sections & kLease) {
    info.section("Lease");
    info.line("lease_state", lease_state_label(s.lease_state));
    info.stats("Lease", s);
  }
  if (sections & kHealth) {
    info.section("Health");
    info.stats("Health", s);
    info.line("reason", s.ready ? std::string() : ids.not_ready_reason());
  }
  if (sections & kStats) {
    const ServiceCounters& c = s.counters;
    info.section("Stats");
    info.stats("Stats", s);
    for (std::size_t i = 0; i < c.refusals_by_code.size(); ++i) {
      if (c.refusals_by_code[i] == 0) continue;
      const auto code = static_cast<Code>(i);
      info.number("refusals_" + lower_ascii(error_word(code)), c.refusals_by_code[i]);
    }
  }
  if (sections & kSequences) info_sequences(info, sequences);
  if (sections & kClock) info_clock(info, ids, s.clock);
  if (sections & kSkew) info_skew(info, s.skew.get());
  if (sections & kPublicIds) {
    info.section("PublicIds");
    info.stats("PublicIds", s);
    info.line("public_id_primary_fingerprint", s.public_ids.primary_fingerprint);
  }
  if (sections & kCanary) {
    info.section("Canary");
    info.stats("Canary", s);
  }
  return info.text();
}

}  // namespace

RespSession::RespSession(IdService& ids, RespSessionOptions options)
    : ids_(ids),
      options_(std::move(options)),
      table_(ids, options_.sequences, options_.public_ids),
      parser_(options_.limits),
      authenticated_(options_.token.empty()) {}

bool RespSession::on_bytes(std::string_view in, std::string& out) {
  if (closing_) return false;
  parser_.feed(in);
  if (awaiting_ || deferred_) {
    // The deferred command's reply comes first.
    pending_ = true;
    return true;
  }
  pending_ = false;
  const std::size_t start = out.size();
  for (;;) {
    // A few bytes of NEXTIDS commands can ask for megabytes of replies: stop
    // at the budget and let the server send them before answering the rest.
    if (out.size() - start >= options_.output_budget) {
      pending_ = true;
      return true;
    }
    switch (parser_.next(command_)) {
      case RespParser::Status::kNeedMore:
        return true;
      case RespParser::Status::kError:
        RespWriter(out, version_).protocol_error(parser_.error());
        closing_ = true;
        return false;
      case RespParser::Status::kCommand:
        ++commands_;
        dispatch(command_, out);
        if (closing_) return false;
        if (deferred_) {
          pending_ = true;
          return true;
        }
        break;
    }
  }
}

DeferredReply RespSession::take_deferred() {
  if (!deferred_) return {};
  awaiting_ = true;
  return std::exchange(deferred_, nullptr);
}

void RespSession::complete_deferred(std::string_view reply, std::string& out) {
  out.append(reply);
  awaiting_ = false;
}

void RespSession::defer(DeferredReply work, RespWriter& w) {
  if (options_.defer) {
    deferred_ = std::move(work);
    return;
  }
  w.output() += work();
}

void RespSession::ping_command(const RespCommand& command, RespWriter& w) {
  const std::string_view name = command[0];
  const std::size_t argc = command.size();
  if (!authenticated_) return w.error("NOAUTH", kNoAuth);
  if (argc > 2) return arity_error(w, name);
  if (argc == 2) return w.bulk_string(command[1]);
  return w.simple_string("PONG");
}

void RespSession::hello_command(const RespCommand& command, RespWriter& w) {
  const std::size_t argc = command.size();
  std::int64_t proto = static_cast<std::int64_t>(version_);
  if (argc >= 2) {
    if (!parse_int64(command[1], proto)) {
      return w.error("ERR", "Protocol version is not an integer or out of range");
    }
    if (proto < 2 || proto > 3) return w.error("NOPROTO", "unsupported protocol version");
  }
  const std::string* password = nullptr;
  const std::string* setname = nullptr;
  for (std::size_t j = 2; j < argc; ++j) {
    const std::size_t more = argc - 1 - j;
    if (same_word(command[j], "auth") && more >= 2) {
      password = &command[j + 2];
      j += 2;
    } else if (same_word(command[j], "setname") && more >= 1) {
      setname = &command[j + 1];
      ++j;
    } else {
      return w.error("ERR", "Syntax error in HELLO option '" + command[j] + "'");
    }
  }
  if (password != nullptr && !options_.token.empty()) {
    // Any user name will do: the token is the one secret.
    if (!same_secret(*password, options_.token)) return w.error("WRONGPASS", kWrongPass);
    authenticated_ = true;
  }
  if (!authenticated_) return w.error("NOAUTH", kNoAuth);
  if (setname != nullptr) {
    if (!valid_client_name(*setname)) {
      return w.error("ERR", "Client names cannot contain spaces, newlines or special characters.");
    }
    name_ = *setname;
  }
  version_ = proto == 3 ? RespVersion::kResp3 : RespVersion::kResp2;
  RespWriter hw(w.output(), version_, wide_);
  hw.map_header(7);
  hw.bulk_string("server");
  hw.bulk_string("snowid");
  hw.bulk_string("version");
  hw.bulk_string(kVersion);
  hw.bulk_string("proto");
  hw.integer(proto);
  hw.bulk_string("id");
  hw.unsigned_integer(options_.client_id);
  hw.bulk_string("mode");
  hw.bulk_string("standalone");
  hw.bulk_string("role");
  hw.bulk_string("master");
  hw.bulk_string("modules");
  hw.array_header(0);
  return;
}

void RespSession::auth_command(const RespCommand& command, RespWriter& w) {
  const std::string_view name = command[0];
  const std::size_t argc = command.size();
  if (argc != 2 && argc != 3) return arity_error(w, name);
  if (options_.token.empty()) {
    // As Redis with no password for the default user: the password-only
    // form is a configuration mistake; the user-and-password form succeeds.
    if (argc == 2) {
      return w.error("ERR",
                     "AUTH <password> called without any password configured for the default "
                     "user. Are you sure your configuration is correct?");
    }
    return w.simple_string("OK");
  }
  if (!same_secret(command[argc - 1], options_.token)) return w.error("WRONGPASS", kWrongPass);
  authenticated_ = true;
  return w.simple_string("OK");
}

void RespSession::idformat_command(const RespCommand& command, RespWriter& w) {
  const std::string_view name = command[0];
  const std::size_t argc = command.size();
  if (argc == 1) return w.simple_string(wide_ == WideFormat::kString ? "STRING" : "INTEGER");
  if (argc != 2) return arity_error(w, name);
  if (same_word(command[1], "string")) {
    wide_ = WideFormat::kString;
  } else if (same_word(command[1], "integer")) {
    wide_ = WideFormat::kInteger;
  } else {
    return w.error("ERR", "IDFORMAT takes STRING (the default: ids as bulk strings) or INTEGER");
  }
  return w.simple_string("OK");
}

void RespSession::echo_command(const RespCommand& command, RespWriter& w) {
  const std::string_view name = command[0];
  const std::size_t argc = command.size();
  if (argc != 2) return arity_error(w, name);
  return w.bulk_string(command[1]);
}

void RespSession::info_command(const RespCommand& command, RespWriter& w) {
  const std::size_t argc = command.size();
  unsigned sections = argc == 1 ? kAllSections : 0;
  for (std::size_t i = 1; i < argc; ++i) sections |= section_of(command[i]);
  if (sections == 0) return w.bulk_string({});
  return w.bulk_string(info_text(ids_, options_.sequences, sections));
}

void RespSession::client_command(const RespCommand& command, RespWriter& w) {
  const std::string_view name = command[0];
  const std::size_t argc = command.size();
  if (argc < 2) return arity_error(w, name);
  const std::string_view sub = command[1];
  if (same_word(sub, "id")) {
    if (argc != 2) return arity_error(w, "client|id");
    return w.unsigned_integer(options_.client_id);
  }
  if (same_word(sub, "getname")) {
    if (argc != 2) return arity_error(w, "client|getname");
    if (name_.empty()) return w.null();
    return w.bulk_string(name_);
  }
  if (same_word(sub, "setname")) {
    if (argc != 3) return arity_error(w, "client|setname");
    if (!valid_client_name(command[2])) {
      return w.error("ERR", "Client names cannot contain spaces, newlines or special characters.");
    }
    name_ = command[2];
    return w.simple_string("OK");
  }
  if (same_word(sub, "setinfo")) {
    // Client libraries announce their name and version; nothing to keep.
    if (argc != 4) return arity_error(w, "client|setinfo");
    return w.simple_string("OK");
  }
  if (same_word(sub, "info")) {
    if (argc != 2) return arity_error(w, "client|info");
    std::string text = "id=" + std::to_string(options_.client_id) + " name=" + name_ +
                       " db=0 resp=" + std::to_string(static_cast<int>(version_)) +
                       " idformat=" + (wide_ == WideFormat::kString ? "string" : "integer") + "\n";
    return w.bulk_string(text);
  }
  return unknown_subcommand(w, "CLIENT", sub);
}

void RespSession::select_command(const RespCommand& command, RespWriter& w) {
  const std::string_view name = command[0];
  const std::size_t argc = command.size();
  if (argc != 2) return arity_error(w, name);
  std::int64_t db = 0;
  if (!parse_int64(command[1], db)) return w.error("ERR", kNotInteger);
  if (db != 0) return w.error("ERR", "DB index is out of range");
  return w.simple_string("OK");
}

void RespSession::config_command(const RespCommand& command, RespWriter& w) {
  const std::string_view name = command[0];
  const std::size_t argc = command.size();
  if (argc < 2) return arity_error(w, name);
  if (same_word(command[1], "get")) {
    if (argc < 3) return arity_error(w, "config|get");
    // No settings are exposed this way, except the two that
    // redis-benchmark reads at start (it warns when they are missing):
    // nothing is persisted. RESP3 answers CONFIG GET with a map.
    const std::string_view pattern = command[2];
    if (argc == 3 && same_word(pattern, "save")) {
      w.map_header(1);
      w.bulk_string("save");
      return w.bulk_string("");
    }
    if (argc == 3 && same_word(pattern, "appendonly")) {
      w.map_header(1);
      w.bulk_string("appendonly");
      return w.bulk_string("no");
    }
    return w.map_header(0);
  }
  return unknown_subcommand(w, "CONFIG", command[1]);
}

void RespSession::command_command(const RespCommand& command, RespWriter& w) {
  const std::size_t argc = command.size();
  if (argc == 1) return w.array_header(0);
  const std::string_view sub = command[1];
  if (same_word(sub, "count")) {
    if (argc != 2) return arity_error(w, "command|count");
    return w.integer(0);
  }
  if (same_word(sub, "docs")) return w.map_header(0);
  if (same_word(sub, "info") || same_word(sub, "list")) return w.array_header(0);
  return unknown_subcommand(w, "COMMAND", sub);
}

void RespSession::dispatch(const RespCommand& command, std::string& out) {
  RespWriter w(out, version_, wide_);
  const std::string_view name = command[0];

  // The table's commands first (the hot ones among them), before anything
  // that could allocate.
  if (const CommandRow* row = find_resp_command(name)) {
    if (!authenticated_) return w.error("NOAUTH", kNoAuth);
    DeferredReply work;
    const PublicIdCaller caller{.unix_socket = options_.unix_socket,
                                .loopback = options_.loopback_peer,
                                .token = !options_.token.empty() && authenticated_};
    run_resp_command(table_, *row, command, w, work, caller);
    if (work) defer(std::move(work), w);
    return;
  }
  if (same_word(name, "ping")) return ping_command(command, w);
  if (same_word(name, "quit")) {
    closing_ = true;
    return w.simple_string("OK");
  }
  if (same_word(name, "hello")) return hello_command(command, w);
  if (same_word(name, "auth")) return auth_command(command, w);

  if (!authenticated_) return w.error("NOAUTH", kNoAuth);

  if (same_word(name, "idformat")) return idformat_command(command, w);
  if (same_word(name, "echo")) return echo_command(command, w);
  if (same_word(name, "info")) return info_command(command, w);
  if (same_word(name, "client")) return client_command(command, w);
  if (same_word(name, "select")) return select_command(command, w);
  if (same_word(name, "config")) return config_command(command, w);
  if (same_word(name, "command")) return command_command(command, w);
  return unknown_command(w, command);
}

}  // namespace snowid::daemon
