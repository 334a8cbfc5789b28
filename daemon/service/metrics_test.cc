#include "metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sequence_service.h"
#include "snowid/layout.h"
#include "snowid/lease_keeper.h"
#include "snowid/sequence_buffer.h"
#include "snowid/status.h"

namespace snowid::daemon {
namespace {

using Labels = std::map<std::string, std::string>;

struct Sample {
  Labels labels;
  double value = 0;
  std::string suffix;  // a histogram's: "_bucket", "_sum" or "_count"
};

struct Family {
  std::string type;
  std::string help;
  bool has_help = false;
  std::vector<Sample> samples;
};

// The exposition read back, or what is wrong with it.
struct Exposition {
  std::vector<std::string> order;  // families in the order declared
  std::map<std::string, Family> families;
  std::string error;  // empty when the text is valid

  // The value of the one sample of `name` with exactly `labels` (`suffix`:
  // of a histogram, which of its samples).
  std::optional<double> value(const std::string& name, const Labels& labels = {},
                              const std::string& suffix = "") const {
    const auto f = families.find(name);
    if (f == families.end()) return std::nullopt;
    for (const Sample& s : f->second.samples) {
      if (s.labels == labels && s.suffix == suffix) return s.value;
    }
    return std::nullopt;
  }
};

bool is_metric_name(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool is_label_name(std::string_view s) {
  return is_metric_name(s) && s.find(':') == std::string_view::npos && !s.starts_with("__");
}

// A value as the format writes it: a Go float, "NaN", "+Inf" or "-Inf".
std::optional<double> parse_value(const std::string& s) {
  if (s == "NaN") return std::nan("");
  if (s == "+Inf") return HUGE_VAL;
  if (s == "-Inf") return -HUGE_VAL;
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isnan(v) || std::isinf(v)) return std::nullopt;
  return v;
}

// A validator of the Prometheus text format 0.0.4, strict where the format
// is: every line is a comment, blank, or `name{labels} value [timestamp]`;
// HELP and TYPE come at most once per family and before its samples; the
// samples of a family are together; label values use only the escapes \\,
// \" and \n; no series appears twice. A counter's or gauge's sample has its
// family's name; a histogram's has the family's name and _bucket (with an le
// label), _sum or _count.
Exposition parse_exposition(std::string_view text) {
  Exposition out;
  auto fail = [&](std::string why, std::string_view line) {
    out.error = std::move(why) + " in line: " + std::string(line);
    return out;
  };
  if (!text.empty() && text.back() != '\n') return fail("no final newline", text);
  std::set<std::string> series;
  std::string current;  // family whose samples are being read
  std::set<std::string> finished;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::string_view line = text.substr(start, nl - start);
    start = nl + 1;
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (!line.starts_with("# HELP ") && !line.starts_with("# TYPE ")) continue;  // a comment
      const bool help = line.starts_with("# HELP ");
      const std::string_view rest = line.substr(7);
      const std::size_t sp = rest.find(' ');
      if (sp == std::string_view::npos) return fail("HELP/TYPE without text", line);
      const std::string name(rest.substr(0, sp));
      const std::string_view arg = rest.substr(sp + 1);
      if (!is_metric_name(name)) return fail("bad family name", line);
      if (finished.count(name) || name == current) return fail("declaration after samples", line);
      Family& f = out.families[name];
      if (f.type.empty() && !f.has_help) out.order.push_back(name);
      if (help) {
        if (f.has_help) return fail("second HELP", line);
        f.has_help = true;
        for (std::size_t i = 0; i < arg.size(); ++i) {
          if (arg[i] != '\\') {
            f.help += arg[i];
          } else if (i + 1 < arg.size() && arg[i + 1] == '\\') {
            f.help += '\\';
            ++i;
          } else if (i + 1 < arg.size() && arg[i + 1] == 'n') {
            f.help += '\n';
            ++i;
          } else {
            return fail("bad escape in HELP", line);
          }
        }
      } else {
        if (!f.type.empty()) return fail("second TYPE", line);
        if (arg != "counter" && arg != "gauge" && arg != "histogram" && arg != "summary" &&
            arg != "untyped") {
          return fail("unknown TYPE", line);
        }
        f.type = arg;
      }
      continue;
    }

    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    const std::string sample_name(line.substr(0, i));
    if (!is_metric_name(sample_name)) return fail("bad metric name", line);
    std::string name = sample_name;
    auto fam = out.families.find(name);
    std::string suffix;
    if (fam == out.families.end()) {
      for (const char* s : {"_bucket", "_sum", "_count"}) {
        if (sample_name.ends_with(s)) {
          name = sample_name.substr(0, sample_name.size() - std::string_view(s).size());
          suffix = s;
        }
      }
      fam = out.families.find(name);
      if (fam != out.families.end() && fam->second.type != "histogram") {
        return fail("suffixed sample of a family that is not a histogram", line);
      }
    }
    if (fam == out.families.end() || fam->second.type.empty()) {
      return fail("sample of an undeclared family", line);
    }
    if (fam->second.type == "histogram" && suffix.empty()) {
      return fail("histogram sample without _bucket, _sum or _count", line);
    }
    if (name != current) {
      if (finished.count(name)) return fail("family's samples are split", line);
      if (!current.empty()) finished.insert(current);
      current = name;
    }
    Sample sample;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const std::size_t eq = line.find('=', i);
        if (eq == std::string_view::npos) return fail("label without '='", line);
        const std::string label(line.substr(i, eq - i));
        if (!is_label_name(label)) return fail("bad label name", line);
        i = eq + 1;
        if (i >= line.size() || line[i] != '"') return fail("label value not quoted", line);
        ++i;
        std::string value;
        for (;;) {
          if (i >= line.size()) return fail("unterminated label value", line);
          const char c = line[i++];
          if (c == '"') break;
          if (c != '\\') {
            value += c;
            continue;
          }
          if (i >= line.size()) return fail("unterminated escape", line);
          const char e = line[i++];
          if (e == '\\' || e == '"') {
            value += e;
          } else if (e == 'n') {
            value += '\n';
          } else {
            return fail("bad escape in label value", line);
          }
        }
        if (!sample.labels.emplace(label, value).second) return fail("repeated label", line);
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) return fail("unterminated labels", line);
      ++i;  // '}'
    }
    if (i >= line.size() || line[i] != ' ') return fail("no space before the value", line);
    ++i;
    std::string_view rest = line.substr(i);
    const std::size_t sp = rest.find(' ');
    const std::string value_text(rest.substr(0, sp));
    if (sp != std::string_view::npos) {
      const std::string_view ts = rest.substr(sp + 1);
      if (ts.empty() || ts.find_first_not_of("-0123456789") != std::string_view::npos) {
        return fail("bad timestamp", line);
      }
    }
    const std::optional<double> value = parse_value(value_text);
    if (!value) return fail("bad value", line);
    if (fam->second.type == "counter" && !(*value >= 0)) return fail("negative counter", line);
    if ((suffix == "_bucket") != (sample.labels.count("le") == 1)) {
      return fail("le on a sample that is not a bucket, or a bucket without it", line);
    }
    sample.value = *value;
    sample.suffix = suffix;
    std::string key = sample_name;
    for (const auto& [k, v] : sample.labels) key += "\x01" + k + "\x02" + v;
    if (!series.insert(key).second) return fail("repeated series", line);
    fam->second.samples.push_back(std::move(sample));
  }
  for (const auto& [name, f] : out.families) {
    if (!f.has_help) return fail("family without HELP", name);
    if (f.type.empty()) return fail("family without TYPE", name);
  }
  return out;
}

TEST(ExpositionValidator, RefusesMalformedText) {
  const std::string ok = "# HELP a_total Things.\n# TYPE a_total counter\na_total{x=\"1\"} 3\n";
  EXPECT_EQ(parse_exposition(ok).error, "");
  EXPECT_EQ(parse_exposition(ok).value("a_total", {{"x", "1"}}), 3.0);
  const char* bad[] = {
      "a_total 3\n",                                                     // undeclared
      "# HELP a Things.\n# TYPE a gauge\na 1",                           // no final newline
      "# HELP a Things.\n# TYPE a gauge\na x\n",                         // bad value
      "# HELP a Things.\n# TYPE a gauge\na{x=\"a\"b\"} 1\n",             // unescaped quote
      "# HELP a Things.\n# TYPE a gauge\na{x=\"a\\tb\"} 1\n",            // bad escape
      "# HELP a Things.\n# TYPE a gauge\na{x=\"1\"} 1\na{x=\"1\"} 2\n",  // repeated series
      "# HELP 1a Things.\n# TYPE 1a gauge\n1a 1\n",                      // bad name
      "# HELP a Things.\n# TYPE a gauge\na 1\n# HELP b B.\n# TYPE b gauge\nb 1\na 2\n",  // split
      "# HELP a Things.\n# TYPE a gauge\n# TYPE a counter\na 1\n",  // second TYPE
      "# TYPE a gauge\na 1\n",                                      // no HELP
      "# HELP a Things.\n# TYPE a gauge\na{x=\"1\"}1\n",            // no space
  };
  for (const char* text : bad) EXPECT_NE(parse_exposition(text).error, "") << text;
}

// A snapshot with every counter set to a different value, so that a value
// shown in the wrong series is caught.
ServiceSnapshot populated_snapshot() {
  ServiceSnapshot s;
  s.worker = {.region = 2, .host = 17};
  s.lease_state = LeaseState::kHeld;
  s.ready = true;
  s.counters.ids_issued = 42;
  s.counters.ids_dropped = 6;
  s.counters.single_requests = 30;
  s.counters.batch_requests = 5;
  s.counters.reserve_calls = 7;
  s.counters.refusals_by_code[static_cast<std::size_t>(Code::kClockBehind)] = 3;
  s.counters.refusals_by_code[static_cast<std::size_t>(Code::kClockMovedBack)] = 2;
  s.counters.refusals_by_code[static_cast<std::size_t>(Code::kLeaseLost)] = 9;
  s.counters.refusals_by_code[static_cast<std::size_t>(Code::kInvalidArgument)] = 11;
  s.generator.clock_behind = 13;
  s.generator.sequence_exhausted = 14;
  s.generator.waits_gave_up = 15;
  s.generator.fence_writes = 16;
  s.generator.fence_write_failures = 17;
  s.lease.renewals = 18;
  s.lease.renewal_failures = 19;
  s.lease.last_renewal_latency = std::chrono::microseconds(1500);
  s.lease.max_renewal_latency = std::chrono::milliseconds(250);
  s.reacquisitions = 20;
  s.max_batch = 10000;
  s.uptime = std::chrono::hours(1) + std::chrono::minutes(2) + std::chrono::milliseconds(3250);
  return s;
}

void populate(ServerCounters& c) {
  c.connections_total[static_cast<std::size_t>(Transport::kUnix)] = 21;
  c.connections_total[static_cast<std::size_t>(Transport::kTcp)] = 22;
  c.connections_total[static_cast<std::size_t>(Transport::kHttp)] = 23;
  c.connections_open[static_cast<std::size_t>(Transport::kUnix)] = 4;
  c.connections_open[static_cast<std::size_t>(Transport::kHttp)] = 6;
  c.protocol_errors[static_cast<std::size_t>(Transport::kTcp)] = 24;
  c.first_request_timeouts[static_cast<std::size_t>(Transport::kTcp)] = 27;
  c.first_request_timeouts[static_cast<std::size_t>(Transport::kHttp)] = 28;
  c.http_2xx = 100;
  c.http_4xx = 25;
  c.http_5xx = 26;
}

// Two sequences with every counter different, and the store's figures.
SequencesSnapshot populated_sequences() {
  SequencesSnapshot q;
  q.enabled = true;
  q.store_kind = "sqlite";
  q.store = "sqlite:/var/lib/snowid/sequences.db";
  q.buffers = 1;
  SequenceCounters orders;
  orders.name = "orders";
  orders.numbers_issued = 31;
  orders.numbers_lost = 32;
  orders.ranges_fetched = 33;
  orders.ranges_served = 34;
  orders.buffered = 35;
  orders.has_buffer = true;
  SequenceCounters invoices;
  invoices.name = "in.voi-ces_2";
  invoices.ranges_served = 36;
  q.sequences = {invoices, orders};
  q.store_calls = 40;
  q.store_failures = 4;
  q.store_latency[0] = 10;      // <= 1 ms
  q.store_latency[3] = 20;      // <= 10 ms
  q.store_latency.back() = 10;  // > 2.5 s
  q.store_latency_total = std::chrono::milliseconds(30250);
  q.buffer_waits = 41;
  q.buffer_wait_timeouts = 42;
  q.buffer_wait_time = std::chrono::milliseconds(1500);
  return q;
}

Exposition render_and_parse(const ServiceSnapshot& s, const ServerCounters& c,
                            const SequencesSnapshot& q = {}) {
  const std::string text = render_metrics(s, c, q);
  Exposition e = parse_exposition(text);
  EXPECT_EQ(e.error, "") << text;
  return e;
}

TEST(Metrics, TransportNames) {
  EXPECT_EQ(transport_name(Transport::kUnix), "unix");
  EXPECT_EQ(transport_name(Transport::kTcp), "tcp");
  EXPECT_EQ(transport_name(Transport::kHttp), "http");
}

TEST(Metrics, ExactlyTheDocumentedFamiliesWithTheirTypes) {
  ServerCounters server;
  const Exposition e = render_and_parse(populated_snapshot(), server, populated_sequences());
  const std::vector<std::pair<std::string, std::string>> want = {
      {"snowid_ids_issued_total", "counter"},
      {"snowid_ids_dropped_total", "counter"},
      {"snowid_requests_total", "counter"},
      {"snowid_reserve_calls_total", "counter"},
      {"snowid_decodes_total", "counter"},
      {"snowid_decode_errors_total", "counter"},
      {"snowid_sequence_exhausted_total", "counter"},
      {"snowid_clock_behind_total", "counter"},
      {"snowid_waits_gave_up_total", "counter"},
      {"snowid_borrowed_ticks_total", "counter"},
      {"snowid_fence_writes_total", "counter"},
      {"snowid_fence_write_failures_total", "counter"},
      {"snowid_uptime_seconds", "gauge"},
      {"snowid_max_batch", "gauge"},
      {"snowid_lease_renewals_total", "counter"},
      {"snowid_lease_renewal_failures_total", "counter"},
      {"snowid_lease_renewal_latency_seconds", "gauge"},
      {"snowid_lease_reacquisitions_total", "counter"},
      {"snowid_lease_losses_total", "counter"},
      {"snowid_ready", "gauge"},
      {"snowid_healthy", "gauge"},
      {"snowid_public_id_keys_loaded", "gauge"},
      {"snowid_public_id_keyring_reloads_total", "counter"},
      {"snowid_public_id_keyring_reload_failures_total", "counter"},
      {"snowid_public_id_keyring_slots", "gauge"},
      {"snowid_public_id_wraps_total", "counter"},
      {"snowid_public_id_unwraps_total", "counter"},
      {"snowid_canary_enabled", "gauge"},
      {"snowid_canary_store_up", "gauge"},
      {"snowid_canary_samples_total", "counter"},
      {"snowid_canary_samples_stored_total", "counter"},
      {"snowid_canary_violations_total", "counter"},
      {"snowid_canary_samples_dropped_total", "counter"},
      {"snowid_canary_store_failures_total", "counter"},
      {"snowid_canary_queue_depth", "gauge"},
      {"snowid_refusals_total", "counter"},
      {"snowid_clock_moved_back_total", "counter"},
      {"snowid_lease_state", "gauge"},
      {"snowid_worker_info", "gauge"},
      {"snowid_public_id_primary_info", "gauge"},
      {"snowid_connections_total", "counter"},
      {"snowid_connections_open", "gauge"},
      {"snowid_protocol_errors_total", "counter"},
      {"snowid_first_request_timeouts_total", "counter"},
      {"snowid_http_requests_total", "counter"},
      {"snowid_sequence_store_info", "gauge"},
      {"snowid_sequence_numbers_issued_total", "counter"},
      {"snowid_sequence_numbers_lost_total", "counter"},
      {"snowid_sequence_ranges_fetched_total", "counter"},
      {"snowid_sequence_ranges_served_total", "counter"},
      {"snowid_sequence_buffered", "gauge"},
      {"snowid_sequence_store_calls_total", "counter"},
      {"snowid_sequence_store_failures_total", "counter"},
      {"snowid_sequence_store_latency_seconds", "histogram"},
      {"snowid_sequence_buffer_waits_total", "counter"},
      {"snowid_sequence_buffer_wait_timeouts_total", "counter"},
      {"snowid_sequence_buffer_wait_seconds_total", "counter"},
  };
  std::vector<std::pair<std::string, std::string>> got;
  for (const std::string& name : e.order) got.emplace_back(name, e.families.at(name).type);
  EXPECT_EQ(got, want);
  for (const auto& [name, f] : e.families) {
    EXPECT_FALSE(f.help.empty()) << name;
    EXPECT_FALSE(f.samples.empty()) << name;
    EXPECT_EQ(f.type == "counter", name.ends_with("_total")) << name;
  }
}

TEST(Metrics, SequenceCountersAreShownPerSequence) {
  ServerCounters server;
  const Exposition e = render_and_parse(populated_snapshot(), server, populated_sequences());
  const Labels orders = {{"sequence", "orders"}};
  const Labels invoices = {{"sequence", "in.voi-ces_2"}};
  EXPECT_EQ(e.value("snowid_sequence_store_info", {{"kind", "sqlite"}}), 1.0);
  EXPECT_EQ(e.value("snowid_sequence_numbers_issued_total", orders), 31.0);
  EXPECT_EQ(e.value("snowid_sequence_numbers_lost_total", orders), 32.0);
  EXPECT_EQ(e.value("snowid_sequence_ranges_fetched_total", orders), 33.0);
  EXPECT_EQ(e.value("snowid_sequence_ranges_served_total", orders), 34.0);
  EXPECT_EQ(e.value("snowid_sequence_buffered", orders), 35.0);
  EXPECT_EQ(e.value("snowid_sequence_ranges_served_total", invoices), 36.0);
  EXPECT_EQ(e.value("snowid_sequence_numbers_issued_total", invoices), 0.0);
  EXPECT_EQ(e.families.at("snowid_sequence_buffered").samples.size(), 2u);
  EXPECT_EQ(e.value("snowid_sequence_store_calls_total"), 40.0);
  EXPECT_EQ(e.value("snowid_sequence_store_failures_total"), 4.0);
  EXPECT_EQ(e.value("snowid_sequence_buffer_waits_total"), 41.0);
  EXPECT_EQ(e.value("snowid_sequence_buffer_wait_timeouts_total"), 42.0);
  EXPECT_EQ(e.value("snowid_sequence_buffer_wait_seconds_total"), 1.5);
}

TEST(Metrics, StoreLatencyIsACumulativeHistogramInSeconds) {
  ServerCounters server;
  const std::string text = render_metrics(populated_snapshot(), server, populated_sequences());
  const Exposition e = parse_exposition(text);
  ASSERT_EQ(e.error, "") << text;
  const std::string name = "snowid_sequence_store_latency_seconds";
  const std::vector<std::pair<std::string, double>> want = {
      {"0.001", 10}, {"0.0025", 10}, {"0.005", 10}, {"0.01", 30}, {"0.025", 30}, {"0.05", 30},
      {"0.1", 30},   {"0.25", 30},   {"0.5", 30},   {"1", 30},    {"2.5", 30},   {"+Inf", 40}};
  std::vector<std::pair<std::string, double>> got;
  for (const Sample& s : e.families.at(name).samples) {
    if (s.suffix == "_bucket") got.emplace_back(s.labels.at("le"), s.value);
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(e.value(name, {}, "_count"), 40.0);
  EXPECT_EQ(e.value(name, {}, "_sum"), 30.25);
  EXPECT_NE(text.find("\nsnowid_sequence_store_latency_seconds_bucket{le=\"+Inf\"} 40\n"),
            std::string::npos)
      << text;
}

TEST(Metrics, WithoutSequencesTheirFamiliesAreDeclaredWithoutSeriesPerSequence) {
  ServerCounters server;
  const Exposition e = render_and_parse(populated_snapshot(), server);
  EXPECT_EQ(e.value("snowid_sequence_store_info", {{"kind", "off"}}), 1.0);
  EXPECT_TRUE(e.families.at("snowid_sequence_numbers_issued_total").samples.empty());
  EXPECT_TRUE(e.families.at("snowid_sequence_buffered").samples.empty());
  EXPECT_EQ(e.value("snowid_sequence_store_calls_total"), 0.0);
  EXPECT_EQ(e.value("snowid_sequence_store_latency_seconds", {}, "_count"), 0.0);
}

TEST(Metrics, CountersShowTheirValues) {
  ServerCounters server;
  populate(server);
  const Exposition e = render_and_parse(populated_snapshot(), server);
  EXPECT_EQ(e.value("snowid_ids_issued_total"), 42.0);
  EXPECT_EQ(e.value("snowid_ids_dropped_total"), 6.0);
  EXPECT_EQ(e.value("snowid_requests_total", {{"kind", "single"}}), 30.0);
  EXPECT_EQ(e.value("snowid_requests_total", {{"kind", "batch"}}), 5.0);
  EXPECT_EQ(e.value("snowid_reserve_calls_total"), 7.0);
  EXPECT_EQ(e.value("snowid_clock_behind_total"), 13.0);
  EXPECT_EQ(e.value("snowid_clock_moved_back_total"), 2.0);
  EXPECT_EQ(e.value("snowid_sequence_exhausted_total"), 14.0);
  EXPECT_EQ(e.value("snowid_waits_gave_up_total"), 15.0);
  EXPECT_EQ(e.value("snowid_fence_writes_total"), 16.0);
  EXPECT_EQ(e.value("snowid_fence_write_failures_total"), 17.0);
  EXPECT_EQ(e.value("snowid_lease_renewals_total"), 18.0);
  EXPECT_EQ(e.value("snowid_lease_renewal_failures_total"), 19.0);
  EXPECT_EQ(e.value("snowid_lease_reacquisitions_total"), 20.0);
  EXPECT_EQ(e.value("snowid_max_batch"), 10000.0);
  EXPECT_EQ(e.value("snowid_ready"), 1.0);
  EXPECT_EQ(e.value("snowid_healthy"), 1.0);
  EXPECT_EQ(e.value("snowid_worker_info", {{"region", "2"}, {"host", "17"}, {"layout", "snowid"}}),
            1.0);
  EXPECT_EQ(e.value("snowid_connections_total", {{"transport", "unix"}}), 21.0);
  EXPECT_EQ(e.value("snowid_connections_total", {{"transport", "tcp"}}), 22.0);
  EXPECT_EQ(e.value("snowid_connections_total", {{"transport", "http"}}), 23.0);
  EXPECT_EQ(e.value("snowid_connections_open", {{"transport", "unix"}}), 4.0);
  EXPECT_EQ(e.value("snowid_connections_open", {{"transport", "tcp"}}), 0.0);
  EXPECT_EQ(e.value("snowid_connections_open", {{"transport", "http"}}), 6.0);
  EXPECT_EQ(e.value("snowid_protocol_errors_total", {{"transport", "unix"}}), 0.0);
  EXPECT_EQ(e.value("snowid_protocol_errors_total", {{"transport", "tcp"}}), 24.0);
  EXPECT_EQ(e.value("snowid_protocol_errors_total", {{"transport", "http"}}), 0.0);
  EXPECT_EQ(e.value("snowid_first_request_timeouts_total", {{"transport", "unix"}}), 0.0);
  EXPECT_EQ(e.value("snowid_first_request_timeouts_total", {{"transport", "tcp"}}), 27.0);
  EXPECT_EQ(e.value("snowid_first_request_timeouts_total", {{"transport", "http"}}), 28.0);
  EXPECT_EQ(e.value("snowid_http_requests_total", {{"code", "2xx"}}), 100.0);
  EXPECT_EQ(e.value("snowid_http_requests_total", {{"code", "4xx"}}), 25.0);
  EXPECT_EQ(e.value("snowid_http_requests_total", {{"code", "5xx"}}), 26.0);
}

TEST(Metrics, TheTextIsPlain) {
  ServerCounters server;
  const std::string text = render_metrics(populated_snapshot(), server);
  EXPECT_NE(text.find("\nsnowid_ids_issued_total 42\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE snowid_ids_issued_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nsnowid_requests_total{kind=\"single\"} 30\n"), std::string::npos) << text;
  EXPECT_TRUE(text.starts_with("# HELP snowid_ids_issued_total ")) << text;
}

TEST(Metrics, OneRefusalSeriesPerWordZerosIncluded) {
  ServerCounters server;
  const ServiceSnapshot s = populated_snapshot();
  const Exposition e = render_and_parse(s, server);
  const Family& f = e.families.at("snowid_refusals_total");
  // Every code the core defines (code_name knows it), except kOk.
  std::map<std::string, double> want;
  for (int v = 1; v < 256; ++v) {
    const Code code = static_cast<Code>(v);
    if (code_name(code) == "UNKNOWN") continue;
    want[std::string(error_word(code))] +=
        static_cast<double>(static_cast<std::size_t>(v) < s.counters.refusals_by_code.size()
                                ? s.counters.refusals_by_code[static_cast<std::size_t>(v)]
                                : 0);
  }
  std::map<std::string, double> got;
  for (const Sample& sample : f.samples) {
    ASSERT_EQ(sample.labels.size(), 1u);
    ASSERT_EQ(sample.labels.begin()->first, "reason");
    got[sample.labels.begin()->second] = sample.value;
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.count("OK"), 0u);
  EXPECT_EQ(e.value("snowid_refusals_total", {{"reason", "CLOCK_BEHIND"}}), 3.0);
  EXPECT_EQ(e.value("snowid_refusals_total", {{"reason", "CLOCK_MOVED_BACK"}}), 2.0);
  EXPECT_EQ(e.value("snowid_refusals_total", {{"reason", "LEASE_LOST"}}), 9.0);
  EXPECT_EQ(e.value("snowid_refusals_total", {{"reason", "INVALID_ARGUMENT"}}), 11.0);
  EXPECT_EQ(e.value("snowid_refusals_total", {{"reason", "SEQUENCE_EXHAUSTED"}}), 0.0);
  EXPECT_EQ(e.value("snowid_refusals_total", {{"reason", "SHUTTING_DOWN"}}), 0.0);
}

TEST(Metrics, LeaseStateIsOneHot) {
  const std::pair<LeaseState, std::string> states[] = {{LeaseState::kHeld, "held"},
                                                       {LeaseState::kUncertain, "uncertain"},
                                                       {LeaseState::kLost, "lost"},
                                                       {LeaseState::kReleased, "released"}};
  ServerCounters server;
  for (const auto& [state, name] : states) {
    ServiceSnapshot s = populated_snapshot();
    s.lease_state = state;
    const Exposition e = render_and_parse(s, server);
    ASSERT_EQ(e.families.at("snowid_lease_state").samples.size(), 4u);
    for (const auto& [other, other_name] : states) {
      EXPECT_EQ(e.value("snowid_lease_state", {{"state", other_name}}), other == state ? 1.0 : 0.0)
          << name << " / " << other_name;
    }
  }
}

TEST(Metrics, NotReadyAndUnhealthy) {
  ServiceSnapshot s = populated_snapshot();
  s.ready = false;
  s.health = Status(Code::kClockMovedBack, "the clock went back 2000 ms");
  ServerCounters server;
  const Exposition e = render_and_parse(s, server);
  EXPECT_EQ(e.value("snowid_ready"), 0.0);
  EXPECT_EQ(e.value("snowid_healthy"), 0.0);
}

TEST(Metrics, DurationsAreSeconds) {
  ServerCounters server;
  const std::string text = render_metrics(populated_snapshot(), server);
  EXPECT_NE(text.find("\nsnowid_lease_renewal_latency_seconds{which=\"last\"} 0.0015\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nsnowid_lease_renewal_latency_seconds{which=\"max\"} 0.25\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nsnowid_uptime_seconds 3723.25\n"), std::string::npos) << text;

  ServiceSnapshot s = populated_snapshot();
  s.lease.last_renewal_latency = Duration::zero();
  s.lease.max_renewal_latency = std::chrono::nanoseconds(1);
  s.uptime = std::chrono::seconds(5);
  const Exposition e = render_and_parse(s, server);
  EXPECT_EQ(e.value("snowid_lease_renewal_latency_seconds", {{"which", "last"}}), 0.0);
  EXPECT_EQ(e.value("snowid_lease_renewal_latency_seconds", {{"which", "max"}}), 1e-9);
  EXPECT_EQ(e.value("snowid_uptime_seconds"), 5.0);
}

TEST(Metrics, LabelValuesAreEscaped) {
  LayoutSpec spec;
  spec.name = "a\\b \"q\"\nz";
  spec.fields = {{"time", FieldRole::kTime, 41},
                 {"region", FieldRole::kRegion, 2},
                 {"host", FieldRole::kHost, 8},
                 {"sequence", FieldRole::kSequence, 12}};
  Result<Layout> layout = Layout::create(spec);
  ASSERT_TRUE(layout.is_ok()) << layout.status().to_string();
  ServiceSnapshot s = populated_snapshot();
  s.layout = layout.value();
  ServerCounters server;
  const std::string text = render_metrics(s, server);
  EXPECT_NE(text.find("layout=\"a\\\\b \\\"q\\\"\\nz\""), std::string::npos) << text;
  const Exposition e = render_and_parse(s, server);
  EXPECT_EQ(e.value("snowid_worker_info", {{"region", "2"}, {"host", "17"}, {"layout", spec.name}}),
            1.0);
}

TEST(Metrics, SequenceLabelValuesAreEscapedToo) {
  SequencesSnapshot q = populated_sequences();
  q.sequences[0].name = "q\"\\\n";  // never a valid sequence name; escaped anyway
  ServerCounters server;
  const std::string text = render_metrics(populated_snapshot(), server, q);
  EXPECT_NE(text.find("sequence=\"q\\\"\\\\\\n\""), std::string::npos) << text;
  const Exposition e = parse_exposition(text);
  ASSERT_EQ(e.error, "") << text;
  EXPECT_EQ(e.value("snowid_sequence_ranges_served_total", {{"sequence", "q\"\\\n"}}), 36.0);
}

TEST(Metrics, PublicIdKeyringFiguresAndThePrimaryFingerprint) {
  ServiceSnapshot s{};
  s.public_ids.on = true;
  s.public_ids.reloads = 3;
  s.public_ids.reload_failures = 2;
  s.public_ids.slots_by_state = {1, 1, 0, 2};
  s.public_ids.primary_slot = 1;
  s.public_ids.primary_fingerprint = "5e6f7a8b";
  s.public_ids.wrapped = 40;
  s.public_ids.wrap_refusals = 4;
  s.public_ids.unwrapped = 30;
  s.public_ids.unwrap_refusals = 3;
  s.public_ids.unwrap_denied = 2;
  ServerCounters server;
  const Exposition e = render_and_parse(s, server);
  EXPECT_EQ(e.value("snowid_public_id_wraps_total", {{"result", "ok"}}), 40.0);
  EXPECT_EQ(e.value("snowid_public_id_wraps_total", {{"result", "refused"}}), 4.0);
  EXPECT_EQ(e.value("snowid_public_id_unwraps_total", {{"result", "ok"}}), 30.0);
  EXPECT_EQ(e.value("snowid_public_id_unwraps_total", {{"result", "refused"}}), 3.0);
  EXPECT_EQ(e.value("snowid_public_id_unwraps_total", {{"result", "denied"}}), 2.0);
  EXPECT_EQ(e.value("snowid_public_id_keys_loaded"), 1.0);
  EXPECT_EQ(e.value("snowid_public_id_keyring_reloads_total"), 3.0);
  EXPECT_EQ(e.value("snowid_public_id_keyring_reload_failures_total"), 2.0);
  EXPECT_EQ(e.value("snowid_public_id_keyring_slots", {{"state", "primary"}}), 1.0);
  EXPECT_EQ(e.value("snowid_public_id_keyring_slots", {{"state", "decrypt"}}), 0.0);
  EXPECT_EQ(e.value("snowid_public_id_keyring_slots", {{"state", "retired"}}), 2.0);
  EXPECT_EQ(e.value("snowid_public_id_primary_info", {{"slot", "1"}, {"fingerprint", "5e6f7a8b"}}),
            1.0);
}

TEST(Metrics, AnEmptySnapshotIsStillComplete) {
  const ServiceSnapshot s{};
  ServerCounters server;
  const Exposition e = render_and_parse(s, server);
  EXPECT_EQ(e.families.size(), 57u);
  EXPECT_EQ(e.value("snowid_public_id_keys_loaded"), 0.0);
  EXPECT_EQ(e.value("snowid_public_id_primary_info", {{"slot", ""}, {"fingerprint", ""}}), 0.0);
  EXPECT_EQ(e.value("snowid_ids_issued_total"), 0.0);
  EXPECT_EQ(e.value("snowid_lease_state", {{"state", "held"}}), 1.0);
  EXPECT_EQ(e.value("snowid_uptime_seconds"), 0.0);
}

}  // namespace
}  // namespace snowid::daemon
