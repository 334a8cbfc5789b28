#include "clock_reference.h"

#include <utility>

#include "chrony_tracking.h"
#include "sntp_client.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;

// A burst per poll: 4 queries 2 ms apart, each given 500 ms.
constexpr skew::SntpBurstOptions kBurst{4, 2ms, 500ms};
// A chrony reading older than this no longer counts (read every second).
constexpr Duration kChronyMaxAge = 10s;

std::string server_name(const std::pair<std::string, std::uint16_t>& s) {
  const bool v6 = s.first.find(':') != std::string::npos;
  return (v6 ? "[" + s.first + "]" : s.first) + ":" + std::to_string(s.second);
}

}  // namespace

ClockReference::ClockReference(const Clock& clock, HostBound& bound, ClockReadings& readings,
                               ClockReferenceOptions options)
    : clock_(clock),
      bound_(bound),
      readings_(readings),
      options_(std::move(options)),
      skip_(options_.servers.size(), 0) {
  ClockReadingsSnapshot s;
  s.chrony_enabled = !options_.chronyc.empty();
  for (const auto& server : options_.servers) {
    ServerReading r;
    r.server = server_name(server);
    s.servers.push_back(std::move(r));
  }
  readings_.set(std::move(s));
}

ClockReference::~ClockReference() { stop(); }

void ClockReference::start() {
  if (!enabled() || thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void ClockReference::stop() {
  {
    internal::MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ClockReference::run() {
  MonoTime next_poll = clock_.mono_now();
  for (;;) {
    ClockReadingsSnapshot s = readings_.snapshot();
    if (!options_.chronyc.empty()) read_chrony(s);
    if (!options_.servers.empty() && clock_.mono_now() >= next_poll) {
      measure(s);
      next_poll = clock_.mono_now() + options_.poll;
    }
    readings_.set(std::move(s));
    internal::MutexLock lock(mu_);
    // Every second, as ClockBound reads chrony; the wait ends early on stop().
    const auto until = std::chrono::steady_clock::now() + 1s;
    while (!stopping_ && cv_.wait_until(mu_, until) != std::cv_status::timeout) {
    }
    if (stopping_) return;
  }
}

void ClockReference::read_chrony(ClockReadingsSnapshot& s) {
  const Result<skew::ChronyTracking> t =
      skew::read_chrony_tracking(options_.chronyc, options_.chrony_socket);
  Result<Duration> bound =
      t.is_ok() ? skew::chrony_bound(t.value(), clock_.wall_now()) : Result<Duration>(t.status());
  if (!bound.is_ok()) {
    bound_.clear();
    s.chrony_ok = false;
    s.chrony_error = bound.status().message();
    ++s.chrony_failures;
    return;
  }
  bound_.set({BoundSource::kChrony, bound.value(), clock_.mono_now(), 50.0, kChronyMaxAge});
  s.chrony_ok = true;
  s.chrony_bound = bound.value();
  s.chrony_error.clear();
}

void ClockReference::measure(ClockReadingsSnapshot& s) {
  for (std::size_t i = 0; i < options_.servers.size() && i < s.servers.size(); ++i) {
    ServerReading& r = s.servers[i];
    if (r.stopped) continue;
    if (skip_[i] > 0) {
      --skip_[i];
      continue;
    }
    const auto& [host, port] = options_.servers[i];
    const skew::SntpResult got = skew::sntp_burst(clock_, {host, port}, kBurst);
    ++r.bursts;
    if (got.ok()) {
      r.ok = r.measured = true;
      r.offset = got.sample.offset;
      r.delay = got.sample.delay;
      r.at = got.sample.t4;
      r.stratum = got.sample.stratum;
      r.failure.clear();
      continue;
    }
    r.ok = false;
    ++r.failures;
    r.failure = std::string(skew::sntp_failure_name(got.failure));
    if (got.stop()) r.stopped = true;
    if (got.slow_down()) skip_[i] = 1;
  }
}

}  // namespace snowid::daemon
