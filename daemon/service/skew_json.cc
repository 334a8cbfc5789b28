#include "skew_json.h"

#include <string_view>

#include "json_text.h"

namespace snowid::daemon {
namespace {

class Writer {
 public:
  void key(std::string_view k) {
    comma();
    append_json_string(out_, k);
    out_ += ':';
    fresh_ = true;
  }
  void open(char c) {
    comma();
    out_ += c;
    fresh_ = true;
  }
  void close(char c) {
    out_ += c;
    fresh_ = false;
  }
  void string(std::string_view v) {
    comma();
    append_json_string(out_, v);
  }
  void integer(std::int64_t v) {
    comma();
    out_ += std::to_string(v);
  }
  void boolean(bool v) {
    comma();
    out_ += v ? "true" : "false";
  }
  void null() {
    comma();
    out_ += "null";
  }
  // An instant since the Unix epoch, as a string of nanoseconds.
  void instant(WallTime t) { string(std::to_string(t.time_since_epoch().count())); }
  // A duration in nanoseconds, as a string: a clock set to another year is
  // off by more than 2^53 ns, past what a JavaScript number keeps exact.
  void nanos(Duration d) { string(std::to_string(d.count())); }

  std::string take() && { return std::move(out_); }

 private:
  void comma() {
    if (!fresh_ && !out_.empty()) out_ += ',';
    fresh_ = false;
  }
  std::string out_;
  bool fresh_ = true;
};

void reading(Writer& w, std::string_view value_key, std::string_view uncertainty_key,
             const std::optional<skew::Reading>& r) {
  w.key(value_key);
  if (r) {
    w.nanos(r->value);
  } else {
    w.null();
  }
  w.key(uncertainty_key);
  if (r) {
    w.nanos(r->uncertainty);
  } else {
    w.null();
  }
}

void workers(Writer& w, const std::vector<WorkerId>& ids) {
  w.key("workers");
  w.open('[');
  for (const WorkerId& id : ids) {
    w.open('{');
    w.key("region");
    w.integer(id.region);
    w.key("host");
    w.integer(id.host);
    w.close('}');
  }
  w.close(']');
}

void strings(Writer& w, std::string_view key, const std::vector<std::string>& values) {
  w.key(key);
  w.open('[');
  for (const std::string& v : values) w.string(v);
  w.close(']');
}

}  // namespace

std::string skew_json(const SkewSnapshot& s, bool history) {
  Writer w;
  w.open('{');
  w.key("at_ns");
  w.instant(s.at);
  w.key("self");
  w.string(s.self);
  w.key("region");
  w.integer(s.region);
  w.key("state");
  w.string(skew::state_name(s.self_state));
  w.key("held");
  w.boolean(s.held);
  w.key("hold_reason");
  w.string(s.hold_reason);
  w.key("dry_run");
  w.boolean(s.dry_run);
  w.key("monitor_only");
  w.boolean(s.monitor_only);
  w.key("reference");
  if (s.reference) {
    w.open('{');
    w.key("server");
    w.string(s.reference_server);
    reading(w, "offset_ns", "uncertainty_ns", s.reference);
    w.close('}');
  } else {
    w.null();
  }
  w.key("rounds");
  w.integer(static_cast<std::int64_t>(s.rounds));
  w.key("fences_total");
  w.integer(static_cast<std::int64_t>(s.fences_total));
  w.key("vetoes_total");
  w.integer(static_cast<std::int64_t>(s.vetoes_total));
  w.key("would_fence_total");
  w.integer(static_cast<std::int64_t>(s.would_fence_total));
  w.key("mass_skew_total");
  w.integer(static_cast<std::int64_t>(s.mass_skew_total));

  w.key("hosts");
  w.open('[');
  for (const SkewPeerView& p : s.peers) {
    w.open('{');
    w.key("host");
    w.string(p.host);
    w.key("self");
    w.boolean(p.self);
    w.key("address");
    w.string(p.address);
    w.key("monitor");
    w.boolean(p.monitor);
    workers(w, p.workers);
    reading(w, "offset_ns", "uncertainty_ns", p.offset);
    w.key("rtt_ns");
    if (p.rtt) {
      w.nanos(*p.rtt);
    } else {
      w.null();
    }
    reading(w, "deviation_ns", "deviation_uncertainty_ns", p.deviation);
    w.key("state");
    w.string(skew::state_name(p.state));
    w.key("observers");
    w.integer(static_cast<std::int64_t>(p.observers));
    strings(w, "votes_against", p.votes_against);
    w.key("probe_failures");
    w.integer(static_cast<std::int64_t>(p.probe_failures));
    w.close('}');
  }
  w.close(']');

  w.key("fences");
  w.open('[');
  for (const SkewFenceView& f : s.fences) {
    w.open('{');
    w.key("target");
    w.string(f.target);
    w.key("fencer");
    w.string(f.fencer);
    w.key("at_ns");
    w.instant(f.at);
    strings(w, "voters", f.voters);
    workers(w, f.workers);
    w.key("reason");
    w.string(f.reason);
    w.close('}');
  }
  w.close(']');

  if (history) {
    w.key("history");
    w.open('[');
    for (const SkewSample& h : s.history) {
      w.open('{');
      w.key("at_ns");
      w.instant(h.at);
      w.key("offsets_ns");
      w.open('{');
      for (const auto& [host, offset] : h.offsets) {
        w.key(host);
        w.nanos(offset);
      }
      w.close('}');
      w.close('}');
    }
    w.close(']');
  }
  w.close('}');
  return std::move(w).take();
}

}  // namespace snowid::daemon
