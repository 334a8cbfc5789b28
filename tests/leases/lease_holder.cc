// A long-running holder of a leased worker id for the lease scenario tests: a
// real process the tests can stop, kill and fence. It issues ids at a steady
// pace and reports on stdout, one JSON object per line:
//   {"event":"started","wall_ms":W,"netns":"net:[...]","mono_ns":N}  before acquiring
//   {"event":"acquired","region":R,"host":H,"mono_ns":N}
//   {"event":"id","id":"...","mono_ns":N}            every id issued
//   {"event":"refused","code":"LEASE_UNCERTAIN","mono_ns":N}  first refusal of a run
//   {"event":"lease","what":"...","mono_ns":N}        the generator's lease events
//   {"event":"closed","code":"OK","mono_ns":N}        after SIGTERM
// mono_ns is CLOCK_MONOTONIC, which every process on the host shares, so a
// test can compare it with its own readings.
//
// Usage: lease_holder (--etcd URLS | --state-dir DIR) [--region R] [--host H]
//          [--ttl-s N] [--renew-ms N] [--stop-ms N] [--quarantine-ms N]
//          [--skew-ms N] [--every-us N] [--host-lock PREFIX] [--host-dir DIR]
//          [--count N]
// --count N stops after N ids, as SIGTERM does. wall_ms is the wall clock as
// this process reads it (libfaketime may shift it); netns names its network
// namespace.
#include <limits.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "snowid/etcd_registry.h"
#include "snowid/file_registry.h"
#include "snowid/leased_generator.h"

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true); }

long long mono_ns() {
  return static_cast<long long>(snowid::system_clock().mono_now().time_since_epoch().count());
}

void emit(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

std::string netns() {
  char buf[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/ns/net", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("unknown");
}

int fail(const std::string& what) {
  std::fprintf(stderr, "lease_holder: %s\n", what.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string etcd, state_dir, host_lock, host_dir;
  unsigned region = 0;
  long host = -1;
  long ttl_s = 10, renew_ms = 3000, stop_ms = 8000, quarantine_ms = -1, skew_ms = 100;
  long every_us = 1000;
  long count = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* v = argv[i + 1];
    if (flag == "--etcd")
      etcd = v;
    else if (flag == "--state-dir")
      state_dir = v;
    else if (flag == "--region")
      region = static_cast<unsigned>(std::atol(v));
    else if (flag == "--host")
      host = std::atol(v);
    else if (flag == "--ttl-s")
      ttl_s = std::atol(v);
    else if (flag == "--renew-ms")
      renew_ms = std::atol(v);
    else if (flag == "--stop-ms")
      stop_ms = std::atol(v);
    else if (flag == "--quarantine-ms")
      quarantine_ms = std::atol(v);
    else if (flag == "--skew-ms")
      skew_ms = std::atol(v);
    else if (flag == "--every-us")
      every_us = std::atol(v);
    else if (flag == "--host-lock")
      host_lock = v;
    else if (flag == "--host-dir")
      host_dir = v;
    else if (flag == "--count")
      count = std::atol(v);
    else
      return fail("unknown flag " + flag);
  }
  if (etcd.empty() == state_dir.empty()) return fail("give exactly one of --etcd and --state-dir");

  const snowid::Clock& clock = snowid::system_clock();
  snowid::Result<std::unique_ptr<snowid::WorkerRegistry>> registry =
      snowid::Status(snowid::Code::kInvalidArgument, "no registry");
  if (!etcd.empty()) {
    auto endpoints = snowid::parse_etcd_endpoints(etcd);
    if (!endpoints.is_ok()) return fail(endpoints.status().to_string());
    snowid::EtcdOptions o;
    o.endpoints = endpoints.value();
    if (quarantine_ms >= 0) o.quarantine = std::chrono::milliseconds(quarantine_ms);
    o.request_timeout = std::chrono::milliseconds(1000);
    registry = snowid::make_etcd_registry(clock, o);
  } else {
    snowid::FileRegistryOptions o;
    o.dir = state_dir;
    if (!host_lock.empty()) o.host_lock_prefix = host_lock;
    if (!host_dir.empty()) o.host_dir = host_dir;
    if (quarantine_ms >= 0) o.quarantine = std::chrono::milliseconds(quarantine_ms);
    registry = snowid::make_file_registry(clock, o);
  }
  if (!registry.is_ok()) {
    std::fprintf(stderr, "lease_holder: %s\n", registry.status().to_string().c_str());
    return 1;
  }

  snowid::LeasedGeneratorOptions opt;
  opt.lease.region = region;
  if (host >= 0) opt.lease.host = static_cast<std::uint32_t>(host);
  opt.lease.holder.host = "lease-holder";
  opt.lease.holder.pid = static_cast<std::int64_t>(getpid());
  opt.lease.holder.started = clock.wall_now();
  opt.lease.timing.ttl = std::chrono::seconds(ttl_s);
  opt.lease.timing.renew_every = std::chrono::milliseconds(renew_ms);
  opt.lease.timing.stop_after = std::chrono::milliseconds(stop_ms);
  opt.lease.timing.max_clock_skew = std::chrono::milliseconds(skew_ms);
  opt.lease.retry_every = std::chrono::milliseconds(std::min<long>(200, renew_ms));
  opt.reacquire_every = std::chrono::milliseconds(200);
  opt.on_event = [](const snowid::LeaseEvent& event) {
    emit("{\"event\":\"lease\",\"what\":\"" + snowid::to_string(event) + "\",\"code\":\"" +
         std::string(snowid::code_name(event.status.code())) +
         "\",\"mono_ns\":" + std::to_string(mono_ns()) + "}");
  };

  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  emit("{\"event\":\"started\",\"wall_ms\":" + std::to_string(snowid::unix_ms(clock.wall_now())) +
       ",\"netns\":\"" + netns() + "\",\"mono_ns\":" + std::to_string(mono_ns()) + "}");
  auto created = snowid::LeasedGenerator::create(clock, *registry.value(), std::move(opt));
  if (!created.is_ok()) {
    std::fprintf(stderr, "lease_holder: %s\n", created.status().to_string().c_str());
    return 1;
  }
  snowid::LeasedGenerator& gen = *created.value();
  emit("{\"event\":\"acquired\",\"region\":" + std::to_string(gen.worker().region) + ",\"host\":" +
       std::to_string(gen.worker().host) + ",\"mono_ns\":" + std::to_string(mono_ns()) + "}");

  bool refusing = false;
  while (!g_stop.load() && count != 0) {
    const snowid::IdResult r = gen.try_next();
    if (r.ok()) {
      refusing = false;
      if (count > 0) --count;
      emit("{\"event\":\"id\",\"id\":\"" + std::to_string(r.id) +
           "\",\"mono_ns\":" + std::to_string(mono_ns()) + "}");
    } else if (r.code != snowid::Code::kSequenceExhausted && r.code != snowid::Code::kClockBehind &&
               !refusing) {
      refusing = true;
      emit("{\"event\":\"refused\",\"code\":\"" + std::string(snowid::code_name(r.code)) +
           "\",\"mono_ns\":" + std::to_string(mono_ns()) + "}");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(every_us));
  }
  const snowid::Status closed = gen.close();
  emit("{\"event\":\"closed\",\"code\":\"" + std::string(snowid::code_name(closed.code())) +
       "\",\"mono_ns\":" + std::to_string(mono_ns()) + "}");
  return closed.is_ok() ? 0 : 1;
}
