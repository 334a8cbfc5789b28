// The etcd registry against real etcd processes (testing/etcd_cluster.h):
// one member, a 3-member cluster, authentication and TLS. Each test starts
// its own cluster. Figures measured along the way are printed as
// "[ measured ] ..." lines.
#include "snowid/etcd_registry.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "etcd_registry_internal.h"
#include "gateway_client.h"
#include "gateway_json.h"
#include "snowid/testing/simulated_clock.h"
#include "testing/etcd_cluster.h"
#include "worker_keys.h"
#include "worker_values.h"

namespace snowid {
namespace {

using namespace std::chrono_literals;
using etcd::testing::EtcdCluster;
using etcd::testing::EtcdClusterOptions;
using Steady = std::chrono::steady_clock;

double ms_between(Steady::time_point a, Steady::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

void report(const std::string& what, double value, const char* unit) {
  std::printf("[ measured ] %s: %.1f %s\n", what.c_str(), value, unit);
  std::fflush(stdout);
  ::testing::Test::RecordProperty(what, std::to_string(value) + " " + unit);
}

// time 41 · region 2 · host `host_bits` · sequence: blocks of 2^host_bits ids.
Layout small_layout(int host_bits) {
  LayoutSpec spec;
  spec.name = "small";
  spec.fields = {{"time", FieldRole::kTime, 41},
                 {"region", FieldRole::kRegion, 2},
                 {"host", FieldRole::kHost, host_bits},
                 {"sequence", FieldRole::kSequence, 63 - 41 - 2 - host_bits}};
  return Layout::create(spec).value();
}

LeaseTiming short_timing() {
  LeaseTiming t;
  t.ttl = 2s;
  t.renew_every = 500ms;
  t.stop_after = 1500ms;
  return t;
}

LeaseRequest request_for(const Clock& clock, std::uint32_t region, std::string host = "test-host",
                         LeaseTiming timing = {}) {
  LeaseRequest r;
  r.region = region;
  r.holder = HolderInfo{std::move(host), ::getpid(), clock.wall_now(), "127.0.0.1:7000"};
  r.timing = timing;
  r.high_water = clock.wall_now() + timing.stop_after;
  return r;
}

class EtcdRegistryTest : public ::testing::Test {
 protected:
  void start(EtcdClusterOptions o = {}) {
    Result<std::unique_ptr<EtcdCluster>> c = EtcdCluster::start(std::move(o));
    ASSERT_TRUE(c.is_ok()) << c.status().to_string();
    cluster_ = std::move(c).value();
    ASSERT_TRUE(cluster_->initialize_namespace("test").is_ok());
  }
  void SetUp() override { start(); }

  EtcdOptions options() const {
    EtcdOptions o;
    o.endpoints = cluster_->endpoints();
    o.cluster = "test";
    o.quarantine = 10s;
    o.request_timeout = 1s;
    return o;
  }

  // A connected registry, or null after recording the failure.
  std::unique_ptr<WorkerRegistry> make(EtcdOptions o, const Clock& clock = system_clock()) {
    Result<std::unique_ptr<WorkerRegistry>> r = make_etcd_registry(clock, std::move(o));
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r.is_ok() ? std::move(r).value() : nullptr;
  }
  std::unique_ptr<WorkerRegistry> make() { return make(options()); }

  std::unique_ptr<EtcdCluster> cluster_;
};

// --- Many acquirers ----------------------------------------------------------

// `threads` acquirers, each with its own registry (its own connections), all
// asking for an id in region 1 at once. Returns the grants and the refusals.
struct Race {
  std::vector<LeaseGrant> grants;
  std::vector<Status> refusals;
  double seconds = 0;
};

Race race(const EtcdOptions& options, int threads) {
  std::vector<std::unique_ptr<WorkerRegistry>> registries;
  for (int i = 0; i < threads; ++i) {
    Result<std::unique_ptr<WorkerRegistry>> r = make_etcd_registry(system_clock(), options);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    if (!r.is_ok()) return {};
    registries.push_back(std::move(r).value());
  }
  std::vector<std::optional<Result<LeaseGrant>>> results(static_cast<std::size_t>(threads));
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      const auto k = static_cast<std::size_t>(i);
      const LeaseRequest req = request_for(system_clock(), 1, "host-" + std::to_string(i));
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      results[k] = registries[k]->acquire(req);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const auto t0 = Steady::now();
  go.store(true);
  for (std::thread& t : pool) t.join();
  Race out;
  out.seconds = ms_between(t0, Steady::now()) / 1000;
  for (auto& r : results) {
    if (r->is_ok()) {
      out.grants.push_back(r->value());
    } else {
      out.refusals.push_back(r->status());
    }
  }
  return out;
}

TEST_F(EtcdRegistryTest, ConcurrentAcquirersAllGetDistinctIds) {
  const Race r = race(options(), 40);
  ASSERT_EQ(r.grants.size(), 40u);
  std::set<std::uint32_t> hosts;
  for (const LeaseGrant& g : r.grants) {
    EXPECT_EQ(g.worker.region, 1u);
    EXPECT_LT(g.worker.host, 256u);
    hosts.insert(g.worker.host);
  }
  EXPECT_EQ(hosts.size(), 40u) << "two acquirers got the same worker id";
  report("40 concurrent acquirers, 256-id block: grants per second", 40 / r.seconds, "/s");

  auto reg = make();
  ASSERT_NE(reg, nullptr);
  Result<std::vector<WorkerRecord>> listed = reg->list(1);
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  EXPECT_EQ(listed->size(), 40u);
}

TEST_F(EtcdRegistryTest, MoreAcquirersThanTheBlockGetDistinctIdsOrAClearError) {
  EtcdOptions o = options();
  o.layout = small_layout(5);  // 32 ids per region
  const Race r = race(o, 40);
  ASSERT_EQ(r.grants.size() + r.refusals.size(), 40u);
  EXPECT_EQ(r.grants.size(), 32u);
  std::set<std::uint32_t> hosts;
  for (const LeaseGrant& g : r.grants) hosts.insert(g.worker.host);
  EXPECT_EQ(hosts.size(), r.grants.size()) << "two acquirers got the same worker id";
  for (const Status& s : r.refusals) {
    EXPECT_EQ(s.code(), Code::kResourceExhausted) << s.to_string();
    EXPECT_NE(s.message().find("region 1"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("32 held"), std::string::npos) << s.message();
  }
  report("40 acquirers racing for a 32-id block: seconds until all answered", r.seconds, "s");
}

TEST_F(EtcdRegistryTest, OneMoreThanTheBlockIsRefusedNamingHeldAndQuarantinedIds) {
  EtcdOptions o = options();
  o.layout = small_layout(2);  // 4 ids per region
  auto reg = make(o);
  ASSERT_NE(reg, nullptr);
  std::vector<LeaseGrant> grants;
  for (int i = 0; i < 4; ++i) {
    Result<LeaseGrant> g = reg->acquire(request_for(system_clock(), 2));
    ASSERT_TRUE(g.is_ok()) << g.status().to_string();
    grants.push_back(g.value());
  }
  // Abandoned, it rests out the quarantine (a clean release would not).
  reg->abandon(grants[0]);
  Result<LeaseGrant> fifth = reg->acquire(request_for(system_clock(), 2));
  ASSERT_FALSE(fifth.is_ok());
  EXPECT_EQ(fifth.status().code(), Code::kResourceExhausted);
  EXPECT_NE(fifth.status().message().find("region 2: all 4 are taken (3 held, 1 quarantined)"),
            std::string::npos)
      << fifth.status().message();
  EXPECT_NE(fifth.status().message().find("leaves quarantine at"), std::string::npos);
  // The other regions are separate blocks.
  EXPECT_TRUE(reg->acquire(request_for(system_clock(), 3)).is_ok());
}

// --- Marks, quarantine, pinning ----------------------------------------------

// The mark of `worker` as stored, read with a client of its own.
etcd::MarkValue stored_mark(const EtcdCluster& cluster, WorkerId worker) {
  etcd::GatewayOptions o;
  o.endpoints = cluster.endpoints();
  etcd::GatewayClient client(o);
  EXPECT_TRUE(client.connect().is_ok());
  const etcd::WorkerKeys keys("/snowid", "test");
  Result<std::string> body = client.call("/v3/kv/range", etcd::range_body(keys.mark(worker)));
  EXPECT_TRUE(body.is_ok()) << body.status().to_string();
  if (!body.is_ok()) return {};
  Result<etcd::RangeReply> r = etcd::parse_range(body.value());
  EXPECT_TRUE(r.is_ok() && !r->kvs.empty())
      << "no mark for " << worker.region << "/" << worker.host;
  if (!r.is_ok() || r->kvs.empty()) return {};
  Result<etcd::MarkValue> m = etcd::decode_mark(r->kvs.front().value);
  EXPECT_TRUE(m.is_ok()) << m.status().to_string();
  return m.is_ok() ? m.value() : etcd::MarkValue{};
}

// Writes `value` as the mark of `worker`, as another version of snowid would.
void put_mark(const EtcdCluster& cluster, WorkerId worker, const std::string& value) {
  etcd::GatewayOptions o;
  o.endpoints = cluster.endpoints();
  etcd::GatewayClient client(o);
  ASSERT_TRUE(client.connect().is_ok());
  const etcd::WorkerKeys keys("/snowid", "test");
  Result<std::string> body =
      client.call("/v3/kv/txn", etcd::txn_body({}, {etcd::Op::put(keys.mark(worker), value)}, {}));
  ASSERT_TRUE(body.is_ok()) << body.status().to_string();
}

WallTime ceil_ms(WallTime t) { return std::chrono::ceil<std::chrono::milliseconds>(t); }

// Issue 12, case 4: the release kept the larger of the exact last instant
// and the holder's renewal mark (up to stop_after ahead), and the 10 s
// quarantine counted from that: a pinned restart waited about 18 s. A clean
// release records the exact instant, and the id is free once the acquirer's
// clock is past it and the release time.
TEST_F(EtcdRegistryTest, CleanReleaseRecordsTheExactLastInstantAndTheIdIsFreeWithoutQuarantine) {
  testing::SimulatedClock clock(system_clock().wall_now());
  auto reg = make(options(), clock);
  ASSERT_NE(reg, nullptr);
  const WallTime t0 = clock.wall_now();
  LeaseRequest req = request_for(clock, 0);
  req.host = 5;
  req.high_water = t0 + 8s;
  Result<LeaseGrant> g = reg->acquire(req);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(g->worker, (WorkerId{0, 5}));
  EXPECT_FALSE(g->previous_high_water.has_value()) << "a never-used id has no previous mark";
  ASSERT_TRUE(reg->renew(g.value(), t0 + 9s).is_ok());
  EXPECT_EQ(stored_mark(*cluster_, g->worker).high_water, ceil_ms(t0 + 9s));

  // The holder issued its last id at t0 + 5 ms and released at t0 + 20 ms.
  const WallTime last = t0 + 5ms;
  clock.advance(20ms);
  const WallTime released = clock.wall_now();
  ASSERT_TRUE(reg->release(g.value(), last).is_ok());
  const etcd::MarkValue mark = stored_mark(*cluster_, g->worker);
  EXPECT_EQ(mark.high_water, ceil_ms(last)) << "not the renewal mark, t0 + 9 s";
  EXPECT_EQ(mark.released_at, ceil_ms(released));
  EXPECT_EQ(mark.clean_release, ceil_ms(last));
  EXPECT_TRUE(etcd::released_clean(mark));
  Result<std::vector<WorkerRecord>> listed = reg->list(0);
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_FALSE(listed->front().holder.has_value());
  EXPECT_EQ(listed->front().high_water, ceil_ms(last));
  EXPECT_EQ(listed->front().quarantined_until, ceil_ms(released)) << "the later of the two";

  // Free once the acquirer's clock is past the release time: no quarantine.
  clock.set_wall(ceil_ms(released) - 1ns);
  Result<LeaseGrant> early = reg->acquire(req);
  ASSERT_FALSE(early.is_ok());
  EXPECT_EQ(early.status().code(), Code::kResourceExhausted);
  EXPECT_NE(early.status().message().find("worker 0/5 is quarantined until"), std::string::npos)
      << early.status().message();
  clock.set_wall(ceil_ms(released));
  req.high_water = clock.wall_now() + 8s;
  Result<LeaseGrant> again = reg->acquire(req);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(again->previous_high_water, ceil_ms(last))
      << "the successor waits past this plus max_clock_skew";
  const etcd::MarkValue held = stored_mark(*cluster_, g->worker);
  EXPECT_EQ(held.high_water, ceil_ms(req.high_water));
  EXPECT_FALSE(etcd::released_clean(held)) << "held again: the mark is the new holder's";
}

// The released mark is the exact last instant, but never below what the
// previous holders left: that is what the grant carries.
TEST_F(EtcdRegistryTest, CleanReleaseNeverRecordsLessThanThePreviousHoldersMark) {
  testing::SimulatedClock clock(system_clock().wall_now());
  auto reg = make(options(), clock);
  ASSERT_NE(reg, nullptr);
  const WallTime t0 = clock.wall_now();
  LeaseRequest req = request_for(clock, 0);
  req.host = 6;
  Result<LeaseGrant> first = reg->acquire(req);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  ASSERT_TRUE(reg->release(first.value(), t0 + 500ms).is_ok());
  clock.set_wall(t0 + 600ms);
  req.high_water = clock.wall_now() + 8s;
  Result<LeaseGrant> second = reg->acquire(req);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  ASSERT_EQ(second->previous_high_water, ceil_ms(t0 + 500ms));
  // A caller that passes less than the grant's previous mark (its clock was
  // behind) still leaves that mark.
  ASSERT_TRUE(reg->release(second.value(), t0 + 100ms).is_ok());
  const etcd::MarkValue mark = stored_mark(*cluster_, second->worker);
  EXPECT_EQ(mark.high_water, ceil_ms(t0 + 500ms));
  EXPECT_TRUE(etcd::released_clean(mark));
}

// A holder after a clean release that is then fenced (or expires) did not
// stop cleanly: the id rests out the quarantine from its mark, although the
// mark still carries the earlier release's clean_release_ms, which no
// longer matches.
TEST_F(EtcdRegistryTest, AFencedHolderAfterACleanReleaseKeepsTheQuarantine) {
  testing::SimulatedClock clock(system_clock().wall_now());
  auto reg = make(options(), clock);
  ASSERT_NE(reg, nullptr);
  const WallTime t0 = clock.wall_now();
  LeaseRequest req = request_for(clock, 0);
  req.host = 7;
  Result<LeaseGrant> first = reg->acquire(req);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  ASSERT_TRUE(reg->release(first.value(), t0).is_ok());
  clock.advance(1s);
  req.high_water = clock.wall_now() + 8s;
  Result<LeaseGrant> second = reg->acquire(req);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  ASSERT_TRUE(reg->fence(second->worker).is_ok());
  const etcd::MarkValue mark = stored_mark(*cluster_, second->worker);
  EXPECT_EQ(mark.clean_release, ceil_ms(t0)) << "left behind by acquire and fence";
  EXPECT_FALSE(etcd::released_clean(mark));
  Result<std::vector<WorkerRecord>> listed = reg->list(0);
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->front().quarantined_until, ceil_ms(req.high_water) + 10s);
  clock.set_wall(ceil_ms(req.high_water) + 10s - 1ms);
  EXPECT_EQ(reg->acquire(req).status().code(), Code::kResourceExhausted);
  clock.set_wall(ceil_ms(req.high_water) + 10s);
  EXPECT_TRUE(reg->acquire(req).is_ok());
}

// A mark written before clean releases were recorded ({"high_water_ms",
// "released_at_ms"} only) reads as not clean: the quarantine applies.
TEST_F(EtcdRegistryTest, AMarkWithoutACleanReleaseKeepsTheQuarantine) {
  testing::SimulatedClock clock(system_clock().wall_now());
  auto reg = make(options(), clock);
  ASSERT_NE(reg, nullptr);
  const std::int64_t ms = unix_ms(ceil_ms(clock.wall_now()));
  put_mark(*cluster_, {0, 9},
           R"({"high_water_ms":)" + std::to_string(ms) + R"(,"released_at_ms":)" +
               std::to_string(ms) + "}");
  Result<std::vector<WorkerRecord>> listed = reg->list(0);
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->front().quarantined_until, wall_from_unix_ms(ms) + 10s);
  LeaseRequest req = request_for(clock, 0);
  req.host = 9;
  clock.set_wall(wall_from_unix_ms(ms) + 9s);
  EXPECT_EQ(reg->acquire(req).status().code(), Code::kResourceExhausted);
}

TEST_F(EtcdRegistryTest, PinnedHostIsTakenExactlyOrRefusedWhileHeld) {
  auto reg = make();
  ASSERT_NE(reg, nullptr);
  LeaseRequest req = request_for(system_clock(), 1, "pinned-host");
  req.host = 200;
  Result<LeaseGrant> g = reg->acquire(req);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(g->worker, (WorkerId{1, 200}));
  Result<LeaseGrant> second = reg->acquire(req);
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), Code::kResourceExhausted);
  EXPECT_NE(second.status().message().find("worker 1/200 is held by pinned-host"),
            std::string::npos)
      << second.status().message();

  req.host = 256;
  EXPECT_EQ(reg->acquire(req).status().code(), Code::kInvalidArgument);
  req.host.reset();
  req.region = 4;
  EXPECT_EQ(reg->acquire(req).status().code(), Code::kInvalidArgument);
  req.region = 1;
  req.timing.stop_after = req.timing.ttl;
  EXPECT_EQ(reg->acquire(req).status().code(), Code::kInvalidArgument);
}

TEST_F(EtcdRegistryTest, RenewKeepsTheLeaseAliveAndOnlyRaisesTheMark) {
  auto reg = make();
  ASSERT_NE(reg, nullptr);
  const LeaseTiming timing = short_timing();  // 2 s TTL
  Result<LeaseGrant> g = reg->acquire(request_for(system_clock(), 0, "renewer", timing));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  const WallTime base = system_clock().wall_now();
  // Renewals span more than the TTL: the lease lives on.
  for (int i = 1; i <= 4; ++i) {
    std::this_thread::sleep_for(600ms);
    const Status s = reg->renew(g.value(), base + std::chrono::seconds(10 * i));
    ASSERT_TRUE(s.is_ok()) << s.to_string();
  }
  ASSERT_TRUE(reg->renew(g.value(), base).is_ok());  // lower: the mark stays
  Result<std::vector<WorkerRecord>> listed = reg->list(0);
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  ASSERT_EQ(listed->size(), 1u);
  const WorkerRecord& rec = listed->front();
  ASSERT_TRUE(rec.holder.has_value());
  EXPECT_EQ(rec.holder->host, "renewer");
  EXPECT_EQ(rec.holder->pid, ::getpid());
  EXPECT_EQ(rec.holder->address, "127.0.0.1:7000");
  EXPECT_EQ(rec.high_water, std::chrono::ceil<std::chrono::milliseconds>(base + 40s));
  ASSERT_TRUE(rec.ttl_left.has_value());
  EXPECT_GT(*rec.ttl_left, 0s);
  EXPECT_LE(*rec.ttl_left, 2s);
  EXPECT_FALSE(rec.quarantined_until.has_value());
}

TEST_F(EtcdRegistryTest, ALeaseLeftToExpireIsLostAndItsIdQuarantined) {
  auto reg = make();
  ASSERT_NE(reg, nullptr);
  Result<LeaseGrant> g = reg->acquire(request_for(system_clock(), 0, "quiet", short_timing()));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  const auto t0 = Steady::now();
  Result<bool> lost = reg->wait_lost(g.value(), 10s);
  ASSERT_TRUE(lost.is_ok()) << lost.status().to_string();
  EXPECT_TRUE(lost.value());
  report("2 s lease left unrenewed: wait_lost returned after", ms_between(t0, Steady::now()), "ms");
  const Status renew = reg->renew(g.value(), system_clock().wall_now());
  EXPECT_EQ(renew.code(), Code::kLeaseLost) << renew.to_string();
  Result<std::vector<WorkerRecord>> listed = reg->list(0);
  ASSERT_TRUE(listed.is_ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_FALSE(listed->front().holder.has_value());
  EXPECT_TRUE(listed->front().quarantined_until.has_value());
}

TEST_F(EtcdRegistryTest, WaitLostReturnsFalseWhenTheTimeoutPassesWhileHeld) {
  auto reg = make();
  ASSERT_NE(reg, nullptr);
  Result<LeaseGrant> g = reg->acquire(request_for(system_clock(), 0));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  const auto t0 = Steady::now();
  Result<bool> lost = reg->wait_lost(g.value(), 300ms);
  const auto waited = Steady::now() - t0;
  ASSERT_TRUE(lost.is_ok()) << lost.status().to_string();
  EXPECT_FALSE(lost.value());
  EXPECT_GE(waited, 300ms);
  EXPECT_TRUE(reg->renew(g.value(), system_clock().wall_now()).is_ok());
}

// A watch slice that merely timed out proves nothing about the member (one
// cut off from the leader lets watches time out quietly too): calls must
// still start at the member that last completed one.
TEST_F(EtcdRegistryTest, AWatchThatTimedOutDoesNotSteerCalls) {
  etcd::GatewayOptions o;
  o.endpoints = {cluster_->endpoint(0), cluster_->endpoint(0)};  // two names, one member
  o.request_timeout = 1s;
  etcd::GatewayClient client(o);
  ASSERT_TRUE(client.connect().is_ok());
  ASSERT_EQ(client.preferred_endpoint(), 0u);
  int lines = 0;
  const etcd::GatewayClient::StreamResult r = client.stream(
      1, "/v3/watch", etcd::watch_create_body("/quiet", 0), 300ms,
      [&](std::string_view) { return ++lines > 0; }, nullptr);
  EXPECT_EQ(r.end, etcd::GatewayClient::StreamEnd::kTimedOut) << r.error;
  EXPECT_EQ(lines, 1) << "the watch was created and then nothing came";
  EXPECT_EQ(client.preferred_endpoint(), 0u);
  client.prefer(1);
  EXPECT_EQ(client.preferred_endpoint(), 1u);
}

// Runs wait_lost(grant, 30 s) on a thread, calls wake_waiters() `after` it
// started, and returns how long wait_lost took to return from then on.
double wake_latency_ms(WorkerRegistry& reg, const LeaseGrant& grant, Duration after) {
  Result<bool> lost(Status(Code::kUnavailable, "not yet"));
  Steady::time_point returned_at;
  std::thread watcher([&] {
    lost = reg.wait_lost(grant, 30s);
    returned_at = Steady::now();
  });
  std::this_thread::sleep_for(after);
  const auto woken_at = Steady::now();
  reg.wake_waiters();
  watcher.join();
  EXPECT_TRUE(lost.is_ok()) << lost.status().to_string();
  EXPECT_FALSE(lost.is_ok() && lost.value()) << "woken is not lost";
  return ms_between(woken_at, returned_at);
}

// The keeper's watch slices are 30 s long; it stops its watcher with
// wake_waiters(), whatever the watcher is doing at that moment.
TEST_F(EtcdRegistryTest, WakeWaitersEndsAWaitLostPromptlyWhateverItIsDoing) {
  EtcdOptions o = options();
  o.request_timeout = 1s;
  auto reg = make(o);
  ASSERT_NE(reg, nullptr);
  Result<LeaseGrant> g = reg->acquire(request_for(system_clock(), 0));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  auto worst_of = [&](int rounds) {
    double worst = 0;
    for (int i = 0; i < rounds; ++i) {
      worst = std::max(worst, wake_latency_ms(*reg, g.value(), 150ms + i * 23ms));
    }
    return worst;
  };

  // A watch open on a member that answers.
  const double watching = worst_of(5);
  // Waiting for the first byte from a member that is stopped.
  ASSERT_TRUE(cluster_->signal(0, SIGSTOP).is_ok());
  const double stopped = worst_of(5);
  ASSERT_TRUE(cluster_->signal(0, SIGCONT).is_ok());
  // The member is gone: each connection is refused at once, so the watcher
  // spends nearly all its time in the pause between rounds of members.
  ASSERT_TRUE(cluster_->signal(0, SIGKILL).is_ok());
  const double pausing = worst_of(8);

  report("wake_waiters() to wait_lost() return, watching (worst of 5)", watching, "ms");
  report("wake_waiters() to wait_lost() return, member stopped (worst of 5)", stopped, "ms");
  report("wake_waiters() to wait_lost() return, between broken streams (worst of 8)", pausing,
         "ms");
  EXPECT_LT(watching, 100.0);
  EXPECT_LT(stopped, 100.0);
  // The pause is cut short at once (it used to be a plain 100 ms sleep).
  EXPECT_LT(pausing, 50.0);
}

// --- Abandon -----------------------------------------------------------------

TEST_F(EtcdRegistryTest, AbandonFreesTheIdAtOnceAndLeavesTheMark) {
  testing::SimulatedClock clock(system_clock().wall_now());
  EtcdOptions o = options();
  o.quarantine = 0s;
  auto reg = make(o, clock);
  ASSERT_NE(reg, nullptr);
  const WallTime t0 = clock.wall_now();
  LeaseRequest req = request_for(clock, 1, "abandoner");
  req.host = 7;
  req.high_water = t0 + 2s;
  Result<LeaseGrant> g = reg->acquire(req);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  ASSERT_TRUE(reg->renew(g.value(), t0 + 3s).is_ok());
  const WallTime hw = std::chrono::ceil<std::chrono::milliseconds>(t0 + 3s);

  const auto started = Steady::now();
  reg->abandon(g.value());
  report("abandon() of a held lease took", ms_between(started, Steady::now()), "ms");

  // The holder key went with the lease, long before its 10 s TTL.
  Result<bool> lost = reg->wait_lost(g.value(), 1s);
  ASSERT_TRUE(lost.is_ok()) << lost.status().to_string();
  EXPECT_TRUE(lost.value());
  EXPECT_EQ(reg->renew(g.value(), t0 + 4s).code(), Code::kLeaseLost);
  Result<std::vector<WorkerRecord>> listed = reg->list(1);
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_FALSE(listed->front().holder.has_value());
  EXPECT_EQ(listed->front().high_water, hw) << "the mark stays as last renewed";
  EXPECT_FALSE(listed->front().released_at.has_value()) << "abandon records no release";
  EXPECT_EQ(listed->front().quarantined_until, hw) << "quarantine 0: free once past the mark";

  // Harmless on a lease that is already gone, and on a token it cannot read.
  reg->abandon(g.value());
  LeaseGrant garbled = g.value();
  garbled.token = "not a token";
  reg->abandon(garbled);

  clock.set_wall(hw);
  Result<LeaseGrant> again = reg->acquire(req);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(again->worker, (WorkerId{1, 7}));
  EXPECT_EQ(again->previous_high_water, hw);
}

TEST_F(EtcdRegistryTest, AbandonIsBriefWhenNoMemberAnswers) {
  EtcdOptions o = options();
  o.request_timeout = 2s;
  auto reg = make(o);
  ASSERT_NE(reg, nullptr);
  Result<LeaseGrant> g = reg->acquire(request_for(system_clock(), 0));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  ASSERT_TRUE(cluster_->signal(0, SIGSTOP).is_ok());
  const auto t0 = Steady::now();
  reg->abandon(g.value());
  const double ms = ms_between(t0, Steady::now());
  ASSERT_TRUE(cluster_->signal(0, SIGCONT).is_ok());
  report("SIGSTOP of the only member: abandon() returned after", ms, "ms");
  EXPECT_LT(ms, 1000.0) << "500 ms per member, not the 2 s request timeout";
  EXPECT_TRUE(reg->list(0).is_ok()) << "the registry serves on";
}

// --- Fencing -----------------------------------------------------------------

TEST_F(EtcdRegistryTest, FenceEndsTheLeaseAndWaitLostSeesItPromptly) {
  auto holder = make();
  auto operator_ = make();
  ASSERT_NE(holder, nullptr);
  ASSERT_NE(operator_, nullptr);
  std::vector<double> latencies;
  for (int round = 0; round < 5; ++round) {
    Result<LeaseGrant> g = holder->acquire(request_for(system_clock(), 3));
    ASSERT_TRUE(g.is_ok()) << g.status().to_string();
    std::atomic<bool> returned{false};
    Result<bool> lost(Status(Code::kUnavailable, "not yet"));
    Steady::time_point returned_at;
    std::thread watcher([&] {
      lost = holder->wait_lost(g.value(), 10s);
      returned_at = Steady::now();
      returned.store(true);
    });
    std::this_thread::sleep_for(200ms);  // let the watch start
    EXPECT_FALSE(returned.load()) << "wait_lost returned while the lease was held";
    const auto fenced_at = Steady::now();
    const Status f = operator_->fence(g->worker);
    watcher.join();
    ASSERT_TRUE(f.is_ok()) << f.to_string();
    ASSERT_TRUE(lost.is_ok()) << lost.status().to_string();
    EXPECT_TRUE(lost.value());
    latencies.push_back(ms_between(fenced_at, returned_at));

    const Status renew = holder->renew(g.value(), system_clock().wall_now());
    EXPECT_EQ(renew.code(), Code::kLeaseLost) << renew.to_string();
    EXPECT_EQ(holder->release(g.value(), system_clock().wall_now()).code(), Code::kLeaseLost);
    EXPECT_EQ(operator_->fence(g->worker).code(), Code::kNotFound);
    Result<std::vector<WorkerRecord>> listed = operator_->list(3);
    ASSERT_TRUE(listed.is_ok());
    for (const WorkerRecord& rec : listed.value()) {
      if (!(rec.worker == g->worker)) continue;
      EXPECT_FALSE(rec.holder.has_value());
      EXPECT_TRUE(rec.released_at.has_value()) << "fence records the release time";
      EXPECT_TRUE(rec.high_water.has_value()) << "fence keeps the mark";
      EXPECT_TRUE(rec.quarantined_until.has_value());
    }
  }
  std::sort(latencies.begin(), latencies.end());
  report("fence() start to wait_lost() return, median of 5", latencies[2], "ms");
  report("fence() start to wait_lost() return, worst of 5", latencies.back(), "ms");
  EXPECT_LT(latencies[2], 100.0) << "the target is 100 ms";
}

// --- Unknown outcomes ----------------------------------------------------------

// Drops the reply (or the request) of the first `count` acquire transactions
// and, optionally, of the range that checks the outcome.
struct LostTxn {
  etcd::Fault fault = etcd::Fault::kDropReply;
  int count = 1;
  bool drop_check = false;
  std::atomic<int> txns{0};
  std::atomic<int> checks{0};

  etcd::FaultHook hook() {
    return [this](std::string_view path, std::string_view body) {
      if (path == "/v3/kv/txn" && body.find("request_put") != std::string_view::npos &&
          txns.fetch_add(1) < count) {
        return fault;
      }
      if (path == "/v3/kv/range" && txns.load() > 0 && drop_check &&
          body.find("range_end") == std::string_view::npos && checks.fetch_add(1) == 0) {
        return etcd::Fault::kDropReply;
      }
      return etcd::Fault::kNone;
    };
  }
};

std::vector<WorkerRecord> held_records(WorkerRegistry& reg, std::uint32_t region) {
  Result<std::vector<WorkerRecord>> listed = reg.list(region);
  EXPECT_TRUE(listed.is_ok()) << listed.status().to_string();
  std::vector<WorkerRecord> held;
  if (listed.is_ok()) {
    for (const WorkerRecord& r : listed.value()) {
      if (r.holder) held.push_back(r);
    }
  }
  return held;
}

TEST_F(EtcdRegistryTest, AcquireWhoseReplyIsLostFindsItsOwnHolderAndTakesNoSecondId) {
  auto plain = make();
  ASSERT_NE(plain, nullptr);
  // Give host 9 a previous mark, so that the grant must report it.
  LeaseRequest first = request_for(system_clock(), 2);
  first.host = 9;
  first.high_water = system_clock().wall_now() - 1h;
  Result<LeaseGrant> old = plain->acquire(first);
  ASSERT_TRUE(old.is_ok());
  ASSERT_TRUE(plain->release(old.value(), first.high_water).is_ok());
  EtcdOptions o = options();
  o.quarantine = 0s;

  LostTxn lost;
  Result<std::unique_ptr<WorkerRegistry>> reg =
      etcd::make_etcd_registry_with_faults(system_clock(), o, lost.hook());
  ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
  LeaseRequest req = request_for(system_clock(), 2, "unlucky");
  req.host = 9;
  Result<LeaseGrant> g = reg.value()->acquire(req);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(lost.txns.load(), 1) << "the outcome was checked instead of sending another txn";
  EXPECT_EQ(g->worker, (WorkerId{2, 9}));
  EXPECT_EQ(g->previous_high_water, std::chrono::ceil<std::chrono::milliseconds>(first.high_water))
      << "the previous mark, not our own";

  const std::vector<WorkerRecord> held = held_records(*plain, 2);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].holder->host, "unlucky");
  // The token is right: renew and release work with it.
  EXPECT_TRUE(reg.value()->renew(g.value(), system_clock().wall_now()).is_ok());
  EXPECT_TRUE(reg.value()->release(g.value(), system_clock().wall_now()).is_ok());
  EXPECT_TRUE(held_records(*plain, 2).empty());
}

TEST_F(EtcdRegistryTest, AcquireWhoseRequestIsLostTriesTheSameIdAgain) {
  LostTxn lost;
  lost.fault = etcd::Fault::kDropRequest;
  Result<std::unique_ptr<WorkerRegistry>> reg =
      etcd::make_etcd_registry_with_faults(system_clock(), options(), lost.hook());
  ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
  Result<LeaseGrant> g = reg.value()->acquire(request_for(system_clock(), 2, "retrier"));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(lost.txns.load(), 2);
  auto plain = make();
  ASSERT_NE(plain, nullptr);
  const std::vector<WorkerRecord> held = held_records(*plain, 2);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].worker, g->worker);
  EXPECT_TRUE(reg.value()->renew(g.value(), system_clock().wall_now()).is_ok());
}

TEST_F(EtcdRegistryTest, AcquireWhoseOutcomeCannotBeCheckedFailsAndLeavesNoHolder) {
  LostTxn lost;
  lost.drop_check = true;
  Result<std::unique_ptr<WorkerRegistry>> reg =
      etcd::make_etcd_registry_with_faults(system_clock(), options(), lost.hook());
  ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
  Result<LeaseGrant> g = reg.value()->acquire(request_for(system_clock(), 2));
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().code(), Code::kUnavailable);
  EXPECT_NE(g.status().message().find("outcome is unknown"), std::string::npos)
      << g.status().message();
  // The transaction did write a holder; revoking the lease took it away.
  auto plain = make();
  ASSERT_NE(plain, nullptr);
  EXPECT_TRUE(held_records(*plain, 2).empty());
}

// Drops the reply of the first release transaction (the one that deletes
// the holder key) after etcd has applied it.
struct LostRelease {
  std::atomic<int> txns{0};

  etcd::FaultHook hook() {
    return [this](std::string_view path, std::string_view body) {
      if (path == "/v3/kv/txn" && body.find("request_delete_range") != std::string_view::npos &&
          txns.fetch_add(1) == 0) {
        return etcd::Fault::kDropReply;
      }
      return etcd::Fault::kNone;
    };
  }
};

// Checks that `worker` is free with the mark and release time of a release.
void expect_released(WorkerRegistry& reg, WorkerId worker, WallTime high_water) {
  Result<std::vector<WorkerRecord>> listed = reg.list(worker.region);
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  for (const WorkerRecord& rec : listed.value()) {
    if (!(rec.worker == worker)) continue;
    EXPECT_FALSE(rec.holder.has_value());
    EXPECT_EQ(rec.high_water, std::chrono::ceil<std::chrono::milliseconds>(high_water));
    EXPECT_TRUE(rec.released_at.has_value());
    return;
  }
  ADD_FAILURE() << "no record of the worker";
}

// Acquires an id on a registry of `options` whose first release reply is
// lost, releases it, and checks that the release is reported done and
// recorded; `txns` release transactions must have been sent (`why`).
void expect_release_with_lost_reply_done(const EtcdOptions& options, int txns, const char* why) {
  LostRelease lost;
  Result<std::unique_ptr<WorkerRegistry>> reg =
      etcd::make_etcd_registry_with_faults(system_clock(), options, lost.hook());
  ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
  Result<LeaseGrant> g = reg.value()->acquire(request_for(system_clock(), 2));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  const WallTime hw = system_clock().wall_now() + 1h;
  const Status s = reg.value()->release(g.value(), hw);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  EXPECT_EQ(lost.txns.load(), txns) << why;
  expect_released(*reg.value(), g->worker, hw);
}

TEST_F(EtcdRegistryTest, ReleaseWhoseReplyIsLostIsStillReportedDone) {
  expect_release_with_lost_reply_done(options(), 1, "reading the mark showed that it landed");
}

// --- etcd unreachable -----------------------------------------------------------

TEST(EtcdRegistryDown, NothingListeningIsUnavailableAtOnce) {
  // Privileged ports that nothing listens on here.
  EtcdOptions o;
  o.endpoints = {"http://127.0.0.1:1", "http://127.0.0.1:9"};
  const auto t0 = Steady::now();
  Result<std::unique_ptr<WorkerRegistry>> r = make_etcd_registry(system_clock(), o);
  const double ms = ms_between(t0, Steady::now());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_NE(r.status().message().find("http://127.0.0.1:1"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("http://127.0.0.1:9"), std::string::npos);
  EXPECT_LT(ms, 1000.0);
  report("etcd down at start: make_etcd_registry answered after", ms, "ms");
}

TEST(EtcdRegistryOptions, BadOptionsAreInvalidArgument) {
  auto code_of = [](EtcdOptions o) {
    return make_etcd_registry(system_clock(), std::move(o)).status().code();
  };
  EtcdOptions good;
  good.endpoints = {"http://127.0.0.1:1"};
  EtcdOptions o = good;
  o.endpoints.clear();
  EXPECT_EQ(code_of(o), Code::kInvalidArgument);
  o = good;
  o.endpoints = {"127.0.0.1:2379"};
  EXPECT_EQ(code_of(o), Code::kInvalidArgument);
  o = good;
  o.prefix = "snowid";
  EXPECT_EQ(code_of(o), Code::kInvalidArgument);
  o = good;
  o.prefix = "/snowid/";
  EXPECT_EQ(code_of(o), Code::kInvalidArgument);
  o = good;
  o.cluster = "a/b";
  EXPECT_EQ(code_of(o), Code::kInvalidArgument);
  o = good;
  o.quarantine = 2h;
  EXPECT_EQ(code_of(o), Code::kInvalidArgument);
  o = good;
  o.request_timeout = 0s;
  EXPECT_EQ(code_of(o), Code::kInvalidArgument);
  o = good;
  o.key_file = "client.key";
  EXPECT_EQ(code_of(o), Code::kInvalidArgument);
  o = good;
  o.password = "secret";
  EXPECT_EQ(code_of(o), Code::kInvalidArgument);
  EXPECT_EQ(code_of(good), Code::kUnavailable);
}

TEST_F(EtcdRegistryTest, AStoppedMemberMakesRenewUnavailableWithinTheRequestTimeout) {
  EtcdOptions o = options();
  o.request_timeout = 500ms;
  auto reg = make(o);
  ASSERT_NE(reg, nullptr);
  Result<LeaseGrant> g = reg->acquire(request_for(system_clock(), 0));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  ASSERT_TRUE(cluster_->signal(0, SIGSTOP).is_ok());
  const auto t0 = Steady::now();
  const Status renew = reg->renew(g.value(), system_clock().wall_now());
  const double ms = ms_between(t0, Steady::now());
  EXPECT_EQ(renew.code(), Code::kUnavailable) << renew.to_string();
  report("SIGSTOP of the only member: renew() answered UNAVAILABLE after", ms, "ms");
  EXPECT_LT(ms, 1500.0);
  EXPECT_EQ(reg->acquire(request_for(system_clock(), 0)).status().code(), Code::kUnavailable);
  Result<bool> lost = reg->wait_lost(g.value(), 300ms);
  EXPECT_TRUE(lost.is_ok() && !lost.value()) << "a silent member is not a lost lease";

  ASSERT_TRUE(cluster_->signal(0, SIGCONT).is_ok());
  // The 10 s lease outlived the pause.
  const Status after = reg->renew(g.value(), system_clock().wall_now());
  EXPECT_TRUE(after.is_ok()) << after.to_string();
}

// --- Three members ------------------------------------------------------------

class EtcdThreeMembersTest : public EtcdRegistryTest {
 protected:
  void SetUp() override {
    EtcdClusterOptions o;
    o.members = 3;
    start(o);
  }
};

TEST_F(EtcdThreeMembersTest, KillingTheLeaderDoesNotInterruptRenewalsOrAcquires) {
  Result<int> leader = cluster_->leader_index();
  ASSERT_TRUE(leader.is_ok()) << leader.status().to_string();
  // The leader first, so that the registry talks to it when it dies.
  EtcdOptions o = options();
  o.endpoints.clear();
  for (int k = 0; k < 3; ++k) o.endpoints.push_back(cluster_->endpoint((leader.value() + k) % 3));
  auto reg = make(o);
  auto other = make(o);
  ASSERT_NE(reg, nullptr);
  ASSERT_NE(other, nullptr);
  const LeaseTiming timing;  // 10 s TTL, renew every 3 s, stop after 8 s
  Result<LeaseGrant> g = reg->acquire(request_for(system_clock(), 1, "survivor", timing));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();

  // Renew far more often than every 3 s, to see the gap the failover causes.
  std::atomic<bool> stop{false};
  std::vector<Steady::time_point> successes;
  std::vector<std::string> failures;
  bool lease_lost = false;
  std::thread renewer([&] {
    while (!stop.load()) {
      const Status s = reg->renew(g.value(), system_clock().wall_now() + timing.stop_after);
      if (s.is_ok()) {
        successes.push_back(Steady::now());
      } else {
        failures.push_back(s.to_string());
        if (s.code() == Code::kLeaseLost) lease_lost = true;
      }
      std::this_thread::sleep_for(100ms);
    }
  });
  // The watch of the holder key starts on the leader too.
  Result<bool> lost(Status(Code::kUnavailable, "not yet"));
  std::thread watcher([&] { lost = reg->wait_lost(g.value(), 30s); });

  std::this_thread::sleep_for(1s);
  const auto killed_at = Steady::now();
  ASSERT_TRUE(cluster_->signal(leader.value(), SIGKILL).is_ok());
  // An acquire right after the kill goes on once a new leader is elected.
  Result<LeaseGrant> second = Status(Code::kUnavailable, "not tried");
  while (Steady::now() - killed_at < 15s) {
    second = other->acquire(request_for(system_clock(), 1, "newcomer", timing));
    if (second.is_ok() || second.status().code() != Code::kUnavailable) break;
  }
  const double acquire_ms = ms_between(killed_at, Steady::now());
  EXPECT_TRUE(second.is_ok()) << second.status().to_string();
  std::this_thread::sleep_for(3s);
  stop.store(true);
  renewer.join();

  EXPECT_FALSE(lease_lost) << "the lease was lost in the failover";
  ASSERT_GE(successes.size(), 2u);
  double gap = 0;
  for (std::size_t i = 1; i < successes.size(); ++i) {
    gap = std::max(gap, ms_between(successes[i - 1], successes[i]));
  }
  report("3 members, leader SIGKILLed: longest gap between successful renewals", gap, "ms");
  report("3 members, leader SIGKILLed: failed renewals during the failover",
         static_cast<double>(failures.size()), "");
  report("3 members, leader SIGKILLed: kill to first successful acquire", acquire_ms, "ms");
  // The holder's generator stops stop_after (8 s) past the send time of its
  // last good renewal; with renewals every 3 s it never pauses while every
  // gap stays below 8 s - 3 s.
  EXPECT_LT(gap, 5000.0);
  EXPECT_TRUE(successes.back() > killed_at);

  // The watch moved to a surviving member: a fence still reaches the holder.
  const auto fenced_at = Steady::now();
  ASSERT_TRUE(other->fence(g->worker).is_ok());
  watcher.join();
  ASSERT_TRUE(lost.is_ok()) << lost.status().to_string();
  EXPECT_TRUE(lost.value());
  report("3 members after the leader's death: fence to wait_lost return",
         ms_between(fenced_at, Steady::now()), "ms");

  // The killed member comes back and the cluster serves on.
  ASSERT_TRUE(cluster_->restart(leader.value()).is_ok());
  ASSERT_TRUE(second.is_ok());
  EXPECT_TRUE(other->renew(second.value(), system_clock().wall_now()).is_ok());
}

// call() fails over inside one request: the member that applied the release
// lost its reply, and the next member's compare fails because the holder key
// is gone. That is still our release, not a lost lease.
TEST_F(EtcdThreeMembersTest, ReleaseAppliedByAMemberWhoseReplyWasLostIsNotReportedLost) {
  expect_release_with_lost_reply_done(options(), 2,
                                      "the second member was sent the same transaction");
}

// A partition, played with signals: members 1 and 2 stop, so member 0 is cut
// off from any leader; then member 0 stops and the other two serve again.
// Watches require a leader, so member 0 ends the holder's watch, and the
// watcher finds the majority side and sees the fence there. Without that, it
// would hang on member 0 until its timeout.
TEST_F(EtcdThreeMembersTest, AWatchOnAMemberCutOffFromTheLeaderMovesToTheOthers) {
  EtcdOptions o = options();  // member 0 first: the holder's calls go there
  o.request_timeout = 500ms;
  auto reg = make(o);
  ASSERT_NE(reg, nullptr);
  LeaseTiming timing;  // a long lease: nothing here may expire it
  timing.ttl = 120s;
  timing.renew_every = 30s;
  timing.stop_after = 90s;
  Result<LeaseGrant> g = reg->acquire(request_for(system_clock(), 1, "cut-off", timing));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();

  // A watch of its own on member 0 shows when that member gives up its watches.
  etcd::GatewayOptions probe_options;
  probe_options.endpoints = {cluster_->endpoint(0)};
  probe_options.request_timeout = 1s;
  etcd::GatewayClient probe(probe_options);
  std::atomic<bool> probe_open{false};
  std::string probe_error;
  etcd::GatewayClient::StreamResult probe_end;
  std::thread prober([&] {
    probe_end = probe.stream(
        0, "/v3/watch", etcd::watch_create_body("/probe", 0), 60s,
        [&](std::string_view line) {
          if (const std::optional<etcd::GatewayError> e = etcd::parse_error(line)) {
            probe_error = e->message;
            return false;
          }
          probe_open.store(true);
          return true;
        },
        nullptr);
  });

  std::atomic<bool> returned{false};
  Result<bool> lost(Status(Code::kUnavailable, "not yet"));
  Steady::time_point returned_at;
  std::thread watcher([&] {
    lost = reg->wait_lost(g.value(), 60s);
    returned_at = Steady::now();
    returned.store(true);
  });
  for (int i = 0; i < 100 && !probe_open.load(); ++i) std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(probe_open.load()) << "the probe watch did not start";
  std::this_thread::sleep_for(200ms);  // the holder's watch is open too

  const auto cut_at = Steady::now();
  ASSERT_TRUE(cluster_->signal(1, SIGSTOP).is_ok());
  ASSERT_TRUE(cluster_->signal(2, SIGSTOP).is_ok());
  prober.join();
  const double cut_ms = ms_between(cut_at, Steady::now());
  EXPECT_EQ(probe_end.end, etcd::GatewayClient::StreamEnd::kStopped);
  EXPECT_NE(probe_error.find("no leader"), std::string::npos) << probe_error;
  report("3 members, two SIGSTOPped: the cut-off member ended its watches after", cut_ms, "ms");
  EXPECT_FALSE(returned.load()) << "a member without a leader is not a lost lease";

  ASSERT_TRUE(cluster_->signal(0, SIGSTOP).is_ok());
  ASSERT_TRUE(cluster_->signal(1, SIGCONT).is_ok());
  ASSERT_TRUE(cluster_->signal(2, SIGCONT).is_ok());
  EtcdOptions majority = options();
  majority.endpoints = {cluster_->endpoint(1), cluster_->endpoint(2)};
  auto operator_ = make(majority);
  ASSERT_NE(operator_, nullptr);
  Status fenced(Code::kUnavailable, "not tried");
  const auto resumed_at = Steady::now();
  auto fenced_at = resumed_at;  // the start of the fence that succeeded
  while (Steady::now() - resumed_at < 20s) {
    fenced_at = Steady::now();
    fenced = operator_->fence(g->worker);
    if (fenced.code() != Code::kUnavailable) break;
  }
  ASSERT_TRUE(fenced.is_ok()) << fenced.to_string();
  watcher.join();
  ASSERT_TRUE(lost.is_ok()) << lost.status().to_string();
  EXPECT_TRUE(lost.value()) << "the watcher never left the cut-off member";
  report("3 members, the majority serving again: fence() start to wait_lost return",
         ms_between(fenced_at, returned_at), "ms");
  ASSERT_TRUE(cluster_->signal(0, SIGCONT).is_ok());
}

// --- Authentication and TLS ----------------------------------------------------

class EtcdAuthTest : public EtcdRegistryTest {
 protected:
  void SetUp() override {
    EtcdClusterOptions o;
    o.extra_args = {"--auth-token-ttl=1"};  // tokens expire after 1 s idle
    start(o);
    if (cluster_ != nullptr) {
      const Status s = cluster_->enable_auth("s3cret");
      ASSERT_TRUE(s.is_ok()) << s.to_string();
    }
  }
};

TEST_F(EtcdAuthTest, UserAndPasswordWorkAndExpiredTokensAreRenewed) {
  EtcdOptions o = options();
  o.user = "root";
  o.password = "s3cret";
  auto reg = make(o);
  ASSERT_NE(reg, nullptr);
  Result<LeaseGrant> g = reg->acquire(request_for(system_clock(), 0));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  std::this_thread::sleep_for(2500ms);  // past the token's TTL
  Status s = reg->renew(g.value(), system_clock().wall_now());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  Result<std::vector<WorkerRecord>> listed = reg->list(std::nullopt);
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  EXPECT_EQ(listed->size(), 1u);

  Result<bool> lost(Status(Code::kUnavailable, "not yet"));
  std::thread watcher([&] { lost = reg->wait_lost(g.value(), 10s); });
  std::this_thread::sleep_for(200ms);
  auto operator_ = make(o);
  ASSERT_NE(operator_, nullptr);
  EXPECT_TRUE(operator_->fence(g->worker).is_ok());
  watcher.join();
  ASSERT_TRUE(lost.is_ok()) << lost.status().to_string();
  EXPECT_TRUE(lost.value());
}

TEST_F(EtcdAuthTest, AWrongPasswordOrNoUserIsAClearError) {
  EtcdOptions o = options();
  o.user = "root";
  o.password = "wrong";
  Result<std::unique_ptr<WorkerRegistry>> r = make_etcd_registry(system_clock(), o);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("etcd refused user \"root\""), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("authentication failed"), std::string::npos);

  // Without a user, the first call that etcd checks is refused clearly: the
  // status call at the start where etcd checks it too (3.5.35, 3.6 and later),
  // else the acquire (3.4).
  Result<std::unique_ptr<WorkerRegistry>> anonymous = make_etcd_registry(system_clock(), options());
  const Status refused = anonymous.is_ok()
                             ? anonymous.value()->acquire(request_for(system_clock(), 0)).status()
                             : anonymous.status();
  EXPECT_EQ(refused.code(), Code::kInvalidArgument) << refused.to_string();
  EXPECT_NE(refused.message().find("etcd requires authentication"), std::string::npos)
      << refused.message();
}

class EtcdTlsTest : public EtcdRegistryTest {
 protected:
  void SetUp() override {
    EtcdClusterOptions o;
    o.tls = true;
    o.client_cert_auth = true;
    start(o);
  }
};

TEST_F(EtcdTlsTest, HttpsWithTheClusterCaAndAClientCertificateWorks) {
  ASSERT_EQ(cluster_->endpoint(0).rfind("https://", 0), 0u);
  EtcdOptions o = options();
  o.ca_file = cluster_->ca_file();
  o.cert_file = cluster_->client_cert_file();
  o.key_file = cluster_->client_key_file();
  auto reg = make(o);
  ASSERT_NE(reg, nullptr);
  Result<LeaseGrant> g = reg->acquire(request_for(system_clock(), 0));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_TRUE(reg->renew(g.value(), system_clock().wall_now()).is_ok());
  Result<bool> lost(Status(Code::kUnavailable, "not yet"));
  std::thread watcher([&] { lost = reg->wait_lost(g.value(), 10s); });
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(reg->fence(g->worker).is_ok());
  watcher.join();
  ASSERT_TRUE(lost.is_ok()) << lost.status().to_string();
  EXPECT_TRUE(lost.value());
}

TEST_F(EtcdTlsTest, AnUnknownCaOrAMissingClientCertificateIsRefused) {
  EtcdOptions o = options();
  Result<std::unique_ptr<WorkerRegistry>> no_ca = make_etcd_registry(system_clock(), o);
  ASSERT_FALSE(no_ca.is_ok());
  EXPECT_EQ(no_ca.status().code(), Code::kUnavailable);
  EXPECT_NE(no_ca.status().message().find("certificate"), std::string::npos)
      << no_ca.status().message();

  o.ca_file = cluster_->ca_file();
  Result<std::unique_ptr<WorkerRegistry>> no_cert = make_etcd_registry(system_clock(), o);
  EXPECT_FALSE(no_cert.is_ok()) << "the members require a client certificate";
}

}  // namespace
}  // namespace snowid
