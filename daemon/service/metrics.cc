#include "metrics.h"

#include <atomic>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "snowid/lease_keeper.h"
#include "snowid/status.h"
#include "stats.h"

namespace snowid::daemon {
namespace {

// Every Code a request can be refused with: all but kOk. Keep in step with
// snowid/status.h (metrics_test checks it against code_name()).
constexpr Code kRefusalCodes[] = {
    Code::kSequenceExhausted,  Code::kClockBehind,   Code::kUnavailable, Code::kLeaseUncertain,
    Code::kClockMovedBack,     Code::kUnhealthy,     Code::kOutOfRange,  Code::kInvalidArgument,
    Code::kFailedPrecondition, Code::kDataLoss,      Code::kNotFound,    Code::kLeaseLost,
    Code::kResourceExhausted,  Code::kAlreadyExists,
};

constexpr LeaseState kLeaseStates[] = {LeaseState::kHeld, LeaseState::kUncertain, LeaseState::kLost,
                                       LeaseState::kReleased};

// Builds the exposition text. Each family is declared once, before its
// samples; label values are escaped as the format requires.
class Exposition {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    // HELP text escapes only backslash and newline.
    for (char c : help) {
      if (c == '\\') {
        out_ += "\\\\";
      } else if (c == '\n') {
        out_ += "\\n";
      } else {
        out_ += c;
      }
    }
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }

  // One sample: `labels` are name/value pairs; `value` is already text.
  void sample(std::string_view name,
              std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
              std::string_view value) {
    out_ += name;
    if (labels.size() != 0) {
      out_ += '{';
      bool first = true;
      for (const auto& [label, label_value] : labels) {
        if (!first) out_ += ',';
        first = false;
        out_ += label;
        out_ += "=\"";
        for (char c : label_value) {
          if (c == '\\') {
            out_ += "\\\\";
          } else if (c == '"') {
            out_ += "\\\"";
          } else if (c == '\n') {
            out_ += "\\n";
          } else {
            out_ += c;
          }
        }
        out_ += '"';
      }
      out_ += '}';
    }
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  }

  // A family with one unlabelled sample.
  void single(std::string_view name, std::string_view type, std::string_view help,
              std::string_view value) {
    family(name, type, help);
    sample(name, {}, value);
  }

  std::string take() && { return std::move(out_); }

 private:
  std::string out_;
};

template <typename Int>
std::string number(Int v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string boolean(bool v) { return v ? "1" : "0"; }

// A duration in seconds, exact to the nanosecond, with at least one
// fractional digit: 1.5 ms -> "0.0015", 0 -> "0.0".
std::string seconds(Duration d) {
  const std::int64_t ns = d.count();
  // Magnitude as unsigned, so that the most negative value stays exact.
  const std::uint64_t mag =
      ns < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  std::string out = ns < 0 ? "-" : "";
  out += number(mag / 1'000'000'000u);
  std::string frac = number(mag % 1'000'000'000u);
  frac.insert(0, 9 - frac.size(), '0');
  while (frac.size() > 1 && frac.back() == '0') frac.pop_back();
  out += '.';
  out += frac;
  return out;
}

template <typename T>
T load(const std::atomic<T>& a) noexcept {
  return a.load(std::memory_order_relaxed);
}

// A bucket's upper bound in seconds, in the shortest form that reads back
// exactly: 2.5 ms -> "0.0025".
std::string bound_seconds(double ms) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, ms / 1000.0);
  return std::string(buf, r.ptr);
}

// The snowid_sequence_* families. The per-sequence ones have a series for
// each sequence this daemon has served (bounded by the ticket table's rows:
// see sequence_service.h), none before the first; the names are validated
// words, escaped anyway like every label value.
void render_sequences(Exposition& e, const SequencesSnapshot& q) {
  e.family("snowid_sequence_store_info", "gauge",
           "The ticket table the named sequences use (kind: sqlite, postgresql, or off).");
  e.sample("snowid_sequence_store_info", {{"kind", q.store_kind}}, "1");

  const auto per_sequence = [&](std::string_view name, std::string_view type, std::string_view help,
                                auto value) {
    e.family(name, type, help);
    for (const SequenceCounters& c : q.sequences) {
      e.sample(name, {{"sequence", c.name}}, number(value(c)));
    }
  };
  per_sequence("snowid_sequence_numbers_issued_total", "counter",
               "Numbers handed out from the sequence's buffer (NEXTSEQ, /next).",
               [](const SequenceCounters& c) { return c.numbers_issued; });
  per_sequence("snowid_sequence_numbers_lost_total", "counter",
               "Numbers taken from the ticket table and never handed out (gaps).",
               [](const SequenceCounters& c) { return c.numbers_lost; });
  per_sequence("snowid_sequence_ranges_fetched_total", "counter",
               "Ranges the sequence's buffer took from the ticket table.",
               [](const SequenceCounters& c) { return c.ranges_fetched; });
  per_sequence("snowid_sequence_ranges_served_total", "counter",
               "Ranges handed to clients that buffer themselves (SEQRANGE, /range).",
               [](const SequenceCounters& c) { return c.ranges_served; });
  per_sequence("snowid_sequence_buffered", "gauge", "Numbers of the sequence held in memory now.",
               [](const SequenceCounters& c) { return c.buffered; });

  e.single("snowid_sequence_store_calls_total", "counter",
           "Round trips to the ticket table, failed ones included.", number(q.store_calls));
  e.single("snowid_sequence_store_failures_total", "counter",
           "Round trips to the ticket table that failed.", number(q.store_failures));

  constexpr std::string_view kLatency = "snowid_sequence_store_latency_seconds";
  e.family(kLatency, "histogram", "Latency of round trips to the ticket table.");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kStoreLatencyBoundsMs.size(); ++i) {
    cumulative += q.store_latency[i];
    e.sample("snowid_sequence_store_latency_seconds_bucket",
             {{"le", bound_seconds(kStoreLatencyBoundsMs[i])}}, number(cumulative));
  }
  cumulative += q.store_latency.back();
  e.sample("snowid_sequence_store_latency_seconds_bucket", {{"le", "+Inf"}}, number(cumulative));
  e.sample("snowid_sequence_store_latency_seconds_sum", {}, seconds(q.store_latency_total));
  e.sample("snowid_sequence_store_latency_seconds_count", {}, number(cumulative));

  e.single("snowid_sequence_buffer_waits_total", "counter",
           "Requests that found a sequence's buffers dry and waited for the ticket table.",
           number(q.buffer_waits));
  e.single("snowid_sequence_buffer_wait_timeouts_total", "counter",
           "Waits for a dry buffer that gave up (answered UNAVAILABLE).",
           number(q.buffer_wait_timeouts));
  e.single("snowid_sequence_buffer_wait_seconds_total", "counter",
           "Time requests spent waiting for dry buffers.", seconds(q.buffer_wait_time));
}

// The clock reference: per SNTP server (a series for each configured one)
// and chrony's bound, each only when configured.
void render_clock(Exposition& e, const ClockReadingsSnapshot& c) {
  if (!c.servers.empty()) {
    e.family("snowid_skew_reference_offset_seconds", "gauge",
             "The SNTP server's clock minus this host's, from the last burst's sample of least "
             "delay; the true offset is within half the delay of it.");
    for (const ServerReading& r : c.servers) {
      if (r.measured) {
        e.sample("snowid_skew_reference_offset_seconds", {{"server", r.server}}, seconds(r.offset));
      }
    }
    e.family("snowid_skew_reference_delay_seconds", "gauge",
             "The round trip of that sample, less the server's own time.");
    for (const ServerReading& r : c.servers) {
      if (r.measured) {
        e.sample("snowid_skew_reference_delay_seconds", {{"server", r.server}}, seconds(r.delay));
      }
    }
    e.family("snowid_skew_reference_up", "gauge", "1 if the server's last burst gave a sample.");
    for (const ServerReading& r : c.servers) {
      e.sample("snowid_skew_reference_up", {{"server", r.server}}, boolean(r.ok));
    }
    e.family("snowid_skew_reference_failures_total", "counter",
             "Bursts to the server that gave no sample (timeout, Kiss-o'-Death, leap alarm, ...).");
    for (const ServerReading& r : c.servers) {
      e.sample("snowid_skew_reference_failures_total", {{"server", r.server}}, number(r.failures));
    }
  }
  if (c.chrony_enabled) {
    if (c.chrony_ok) {
      e.single("snowid_skew_chrony_bound_seconds", "gauge",
               "chrony's error bound for this host's clock: |system time| + root dispersion + "
               "root delay / 2, grown by 50 ppm of the last update's age.",
               seconds(c.chrony_bound));
    }
    e.single("snowid_skew_chrony_up", "gauge",
             "1 if the last read of chrony's tracking gave a bound (synchronised and fresh).",
             boolean(c.chrony_ok));
    e.single("snowid_skew_chrony_failures_total", "counter",
             "Reads of chrony's tracking that gave no bound.", number(c.chrony_failures));
  }
}

// The skew monitor's view (docs/skew.md, "Metrics"): this host's state and
// hold, and per host it observes its offset, uncertainty, round trip and
// state. Nothing when the monitor is off.
void render_skew(Exposition& e, const SkewSnapshot* skew) {
  if (skew == nullptr) return;
  e.family("snowid_skew_state", "gauge",
           "This host's clock state as its own monitor judges it: 1 for the current state.");
  for (const skew::State st : {skew::State::kOk, skew::State::kAlert, skew::State::kSuspect,
                               skew::State::kFenced, skew::State::kUnmeasurable}) {
    e.sample("snowid_skew_state", {{"state", skew::state_name(st)}},
             boolean(skew->self_state == st));
  }
  e.single("snowid_skew_held", "gauge",
           "1 while the monitor holds this host after fencing its clock: no ids are issued and "
           "no fresh worker id is taken.",
           boolean(skew->held));
  e.family("snowid_skew_peer_offset_seconds", "gauge",
           "A peer's clock minus this host's, the held estimate of its bursts.");
  for (const SkewPeerView& p : skew->peers) {
    if (p.offset && !p.self) {
      e.sample("snowid_skew_peer_offset_seconds", {{"peer", p.host}}, seconds(p.offset->value));
    }
  }
  e.family("snowid_skew_peer_uncertainty_seconds", "gauge",
           "How far the true offset may be from the estimate: half the round trip, the clocks' "
           "resolution and 50 ppm of the estimate's age.");
  for (const SkewPeerView& p : skew->peers) {
    if (p.offset && !p.self) {
      e.sample("snowid_skew_peer_uncertainty_seconds", {{"peer", p.host}},
               seconds(p.offset->uncertainty));
    }
  }
  e.family("snowid_skew_peer_rtt_seconds", "gauge",
           "The round trip of the probe the estimate comes from, less the peer's own time.");
  for (const SkewPeerView& p : skew->peers) {
    if (p.rtt) e.sample("snowid_skew_peer_rtt_seconds", {{"peer", p.host}}, seconds(*p.rtt));
  }
  e.family("snowid_skew_peer_state", "gauge",
           "A peer's clock state as this host judges it: 1 for the current state.");
  for (const SkewPeerView& p : skew->peers) {
    if (!p.self) {
      e.sample("snowid_skew_peer_state", {{"peer", p.host}, {"state", skew::state_name(p.state)}},
               "1");
    }
  }
  e.family("snowid_skew_peer_probe_failures_total", "counter",
           "Bursts of probes to a peer that no answer came back from.");
  for (const SkewPeerView& p : skew->peers) {
    if (!p.self) {
      e.sample("snowid_skew_peer_probe_failures_total", {{"peer", p.host}},
               number(p.probe_failures));
    }
  }
  e.single("snowid_skew_fences_total", "counter",
           "Fences this monitor made: itself, or a peer on a majority of votes.",
           number(skew->fences_total));
  e.single("snowid_skew_vetoes_total", "counter",
           "Judgements where peer and reference evidence disagreed, so nothing was fenced.",
           number(skew->vetoes_total));
  e.single("snowid_skew_would_fence_total", "counter",
           "Fences the dry run counted and did not make.", number(skew->would_fence_total));
  e.single("snowid_skew_mass_skew_total", "counter",
           "Peer fences refused by the blast-radius cap (the mass-skew alarm).",
           number(skew->mass_skew_total));
  e.single("snowid_skew_rounds_total", "counter", "Rounds the monitor has run.",
           number(skew->rounds));
}

// The rows of stats.h, a family's HELP and TYPE before its first row.
void render_stats(Exposition& e, const ServiceSnapshot& service) {
  std::string_view family;
  for (const StatRow& row : service_stats()) {
    if (row.metric != family) {
      family = row.metric;
      e.family(row.metric, row.type == StatType::kCounter ? "counter" : "gauge", row.help);
    }
    const StatValue v = row.read(service);
    const std::string value = row.unit == StatUnit::kCount || row.unit == StatUnit::kFlag
                                  ? number(v.count)
                                  : seconds(v.duration);
    if (row.label.empty()) {
      e.sample(row.metric, {}, value);
    } else {
      e.sample(row.metric, {{row.label, row.label_value}}, value);
    }
  }
}

}  // namespace

std::string_view transport_name(Transport t) noexcept {
  switch (t) {
    case Transport::kUnix:
      return "unix";
    case Transport::kTcp:
      return "tcp";
    case Transport::kHttp:
      return "http";
  }
  return "unknown";
}

std::string render_metrics(const ServiceSnapshot& service, const ServerCounters& server,
                           const SequencesSnapshot& sequences) {
  const ServiceCounters& c = service.counters;
  Exposition e;
  render_stats(e, service);

  // One series per word, zeros included. Codes that share a word (none
  // today) add up into one series, so no series is repeated.
  e.family("snowid_refusals_total", "counter",
           "Requests refused, by the error word the client saw.");
  std::vector<std::pair<std::string_view, std::uint64_t>> by_word;
  for (Code code : kRefusalCodes) {
    const std::string_view word = error_word(code);
    const auto index = static_cast<std::size_t>(code);
    const std::uint64_t n = index < c.refusals_by_code.size() ? c.refusals_by_code[index] : 0;
    bool merged = false;
    for (auto& [w, total] : by_word) {
      if (w == word) {
        total += n;
        merged = true;
      }
    }
    if (!merged) by_word.emplace_back(word, n);
  }
  for (const auto& [word, n] : by_word) {
    e.sample("snowid_refusals_total", {{"reason", word}}, number(n));
  }
  e.single("snowid_clock_moved_back_total", "counter",
           "Requests refused because the clock went back beyond the threshold.",
           number(c.refusals_by_code[static_cast<std::size_t>(Code::kClockMovedBack)]));

  render_clock(e, service.clock);
  render_skew(e, service.skew.get());

  e.family("snowid_lease_state", "gauge", "The worker-id lease's state: 1 for the current one.");
  for (LeaseState s : kLeaseStates) {
    e.sample("snowid_lease_state", {{"state", lease_state_label(s)}},
             boolean(s == service.lease_state));
  }
  e.family("snowid_worker_info", "gauge", "The worker id this daemon issues with, and its layout.");
  e.sample("snowid_worker_info",
           {{"region", number(service.worker.region)},
            {"host", number(service.worker.host)},
            {"layout", service.layout.name()}},
           "1");

  e.family("snowid_public_id_primary_info", "gauge",
           "The public-id keyring's primary slot and its key's fingerprint; 0 with empty labels "
           "while public ids are off.");
  const PublicIdKeyringStats& keys = service.public_ids;
  e.sample("snowid_public_id_primary_info",
           {{"slot", keys.on ? number(static_cast<std::uint64_t>(keys.primary_slot)) : ""},
            {"fingerprint", keys.primary_fingerprint}},
           boolean(keys.on));

  constexpr Transport kAll[] = {Transport::kUnix, Transport::kTcp, Transport::kHttp};
  e.family("snowid_connections_total", "counter", "Connections accepted, by transport.");
  for (Transport t : kAll) {
    e.sample("snowid_connections_total", {{"transport", transport_name(t)}},
             number(load(server.connections_total[static_cast<std::size_t>(t)])));
  }
  e.family("snowid_connections_open", "gauge", "Connections open now, by transport.");
  for (Transport t : kAll) {
    e.sample("snowid_connections_open", {{"transport", transport_name(t)}},
             number(load(server.connections_open[static_cast<std::size_t>(t)])));
  }
  e.family("snowid_protocol_errors_total", "counter",
           "Malformed frames or requests, by transport.");
  for (Transport t : kAll) {
    e.sample("snowid_protocol_errors_total", {{"transport", transport_name(t)}},
             number(load(server.protocol_errors[static_cast<std::size_t>(t)])));
  }

  e.family("snowid_first_request_timeouts_total", "counter",
           "Connections closed for sending no complete first request in time, by transport.");
  for (Transport t : kAll) {
    e.sample("snowid_first_request_timeouts_total", {{"transport", transport_name(t)}},
             number(load(server.first_request_timeouts[static_cast<std::size_t>(t)])));
  }

  e.family("snowid_http_requests_total", "counter", "HTTP responses sent, by status class.");
  e.sample("snowid_http_requests_total", {{"code", "2xx"}}, number(load(server.http_2xx)));
  e.sample("snowid_http_requests_total", {{"code", "4xx"}}, number(load(server.http_4xx)));
  e.sample("snowid_http_requests_total", {{"code", "5xx"}}, number(load(server.http_5xx)));

  render_sequences(e, sequences);
  return std::move(e).take();
}

}  // namespace snowid::daemon
