// The skew monitor's store against a real etcd (testing/etcd_cluster.h), with
// the real etcd registry and leased generators as the fleet it watches and
// fences. Each test starts its own etcd. Figures measured along the way are
// printed as "[ measured ] ..." lines; no test asserts a tight time.
#include "skew_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "etcd_kv.h"
#include "gateway_client.h"
#include "gateway_json.h"
#include "skew_keys.h"
#include "snowid/etcd_registry.h"
#include "snowid/lease_rules.h"
#include "snowid/leased_generator.h"
#include "snowid/testing/memory_fence_store.h"
#include "testing/etcd_cluster.h"
#include "worker_keys.h"
#include "worker_values.h"

namespace snowid::etcd {
namespace {

using namespace std::chrono_literals;
using testing::EtcdCluster;
using Steady = std::chrono::steady_clock;

constexpr char kCluster[] = "skew";
constexpr std::uint32_t kRegion = 1;

double ms_between(Steady::time_point a, Steady::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

void report(const std::string& what, double value, const char* unit) {
  std::printf("[ measured ] %s: %.1f %s\n", what.c_str(), value, unit);
  std::fflush(stdout);
  ::testing::Test::RecordProperty(what, std::to_string(value) + " " + unit);
}

// Waits up to `limit` for `done`, checking every millisecond.
template <typename F>
bool eventually(F&& done, Duration limit = 10s) {
  const auto until = Steady::now() + limit;
  while (!done()) {
    if (Steady::now() >= until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

skew::VoteRecord vote_about(std::int64_t holder_revision, Duration deviation = 80ms) {
  skew::VoteRecord v;
  v.offset = {deviation, 40us};
  v.delay = 80us;
  v.measured_at = system_clock().wall_now();
  v.reference = skew::Reading{-5us, 300us};
  v.deviation = {deviation, 60us};
  v.basis = skew::VoteBasis::kBoth;
  v.voter_state = skew::State::kOk;
  v.holder_revision = holder_revision;
  return v;
}

LeaseRequest request_for(const std::string& host, const std::string& address,
                         std::optional<std::uint32_t> pinned = std::nullopt) {
  LeaseRequest r;
  r.region = kRegion;
  r.host = pinned;
  r.holder = HolderInfo{host, ::getpid(), system_clock().wall_now(), address};
  r.high_water = system_clock().wall_now() + r.timing.stop_after;
  return r;
}

const FleetMember* find_member(const std::vector<FleetMember>& members, const std::string& host) {
  const auto it = std::find_if(members.begin(), members.end(),
                               [&](const FleetMember& m) { return m.host == host; });
  return it == members.end() ? nullptr : &*it;
}

class SkewStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<EtcdCluster>> c = EtcdCluster::start();
    ASSERT_TRUE(c.is_ok()) << c.status().to_string();
    cluster_ = std::move(c).value();
    ASSERT_TRUE(cluster_->initialize_namespace(kCluster).is_ok());
    GatewayOptions g;
    g.endpoints = cluster_->endpoints();
    raw_client_ = std::make_unique<GatewayClient>(g);
    raw_ = std::make_unique<EtcdKv>(*raw_client_);
  }

  EtcdOptions etcd_options() const {
    EtcdOptions o;
    o.endpoints = cluster_->endpoints();
    o.cluster = kCluster;
    o.request_timeout = 1s;
    return o;
  }

  SkewStoreOptions store_options(const std::string& host) const {
    SkewStoreOptions o;
    o.gateway.endpoints = cluster_->endpoints();
    o.gateway.request_timeout = 1s;
    o.cluster = kCluster;
    o.region = kRegion;
    o.host = host;
    return o;
  }

  std::unique_ptr<SkewStore> open(SkewStoreOptions o) {
    Result<std::unique_ptr<SkewStore>> s = SkewStore::open(std::move(o));
    EXPECT_TRUE(s.is_ok()) << s.status().to_string();
    return s.is_ok() ? std::move(s).value() : nullptr;
  }
  std::unique_ptr<SkewStore> open(const std::string& host) { return open(store_options(host)); }

  std::unique_ptr<WorkerRegistry> registry() {
    Result<std::unique_ptr<WorkerRegistry>> r = make_etcd_registry(system_clock(), etcd_options());
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r.is_ok() ? std::move(r).value() : nullptr;
  }

  // Writes `value` at `key` (no lease), as a foreign or broken writer would.
  void put_raw(const std::string& key, const std::string& value) {
    Result<TxnReply> r = raw_->txn({}, {Op::put(key, value)}, {});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  }
  std::optional<KeyValue> get_raw(const std::string& key) {
    Result<std::optional<KeyValue>> kv = raw_->get(key);
    EXPECT_TRUE(kv.is_ok()) << kv.status().to_string();
    return kv.is_ok() ? kv.value() : std::nullopt;
  }

  // The member `host` as a fresh members() shows it.
  std::optional<FleetMember> member(SkewStore& store, const std::string& host) {
    Result<std::vector<FleetMember>> all = store.members();
    EXPECT_TRUE(all.is_ok()) << all.status().to_string();
    if (!all.is_ok()) return std::nullopt;
    const FleetMember* m = find_member(all.value(), host);
    return m ? std::optional<FleetMember>(*m) : std::nullopt;
  }

  const WorkerKeys worker_keys_{"/snowid", kCluster};
  const SkewKeys skew_keys_{"/snowid", kCluster, kRegion};
  std::unique_ptr<EtcdCluster> cluster_;
  std::unique_ptr<GatewayClient> raw_client_;
  std::unique_ptr<EtcdKv> raw_;
};

// --- Options -------------------------------------------------------------------

TEST_F(SkewStoreTest, OpenRefusesBadOptionsBeforeSendingAnything) {
  auto refused = [&](SkewStoreOptions o, const std::string& what) {
    Result<std::unique_ptr<SkewStore>> s = SkewStore::open(std::move(o));
    ASSERT_FALSE(s.is_ok()) << what;
    EXPECT_EQ(s.status().code(), Code::kInvalidArgument) << what << ": " << s.status().to_string();
  };
  SkewStoreOptions o = store_options("h1");
  o.host = "";
  refused(o, "empty host");
  o.host = std::string(254, 'h');
  refused(o, "host of 254 bytes");
  o.host = "rack/h1";
  refused(o, "host with '/'");
  o = store_options("h1");
  o.prefix = "snowid";
  refused(o, "prefix without a leading '/'");
  o.prefix = "/snowid/";
  refused(o, "prefix with a trailing '/'");
  o.prefix = "/a//b";
  refused(o, "prefix with '//'");
  o = store_options("h1");
  o.cluster = "a/b";
  refused(o, "cluster with '/'");
  o = store_options("h1");
  o.gateway.endpoints.clear();
  refused(o, "no endpoint");
  o = store_options("h1");
  o.gateway.endpoints = {"localhost:2379"};
  refused(o, "endpoint without a scheme");
  o = store_options("h1");
  o.lease_ttl = 1s;
  refused(o, "lease_ttl of 1 s");
  o.lease_ttl = 2500ms;
  refused(o, "lease_ttl of 2.5 s");
  o.lease_ttl = 2h;
  refused(o, "lease_ttl of 2 hours");
  o = store_options("h1");
  o.gateway.request_timeout = 0s;
  refused(o, "request_timeout of 0");

  o = store_options("h1");
  o.gateway.endpoints = {"http://127.0.0.1:1"};
  o.gateway.request_timeout = 200ms;
  Result<std::unique_ptr<SkewStore>> down = SkewStore::open(o);
  ASSERT_FALSE(down.is_ok());
  EXPECT_EQ(down.status().code(), Code::kUnavailable) << down.status().to_string();
}

// --- Members -------------------------------------------------------------------

TEST_F(SkewStoreTest, MembersGroupTheRegistrysHolderKeysByHostAndAddAgents) {
  auto reg = registry();
  ASSERT_NE(reg, nullptr);
  // Two ids on web-a (the lower one without an address), one on web-b, one
  // on web-c in another region.
  Result<LeaseGrant> a1 = reg->acquire(request_for("web-a", "", 9));
  Result<LeaseGrant> a2 = reg->acquire(request_for("web-a", "127.0.0.1:7001", 12));
  Result<LeaseGrant> b1 = reg->acquire(request_for("web-b", "127.0.0.1:7002"));
  LeaseRequest elsewhere = request_for("web-c", "127.0.0.1:7003");
  elsewhere.region = 2;
  Result<LeaseGrant> c1 = reg->acquire(elsewhere);
  for (const auto* g : {&a1, &a2, &b1, &c1}) ASSERT_TRUE(g->is_ok()) << g->status().to_string();
  // A holder value nobody can read, and a foreign key in the region.
  put_raw(worker_keys_.holder({kRegion, 77}), "not json");
  put_raw(worker_keys_.region(kRegion) + "x/holder", R"({"host":"ghost","lease":"1"})");

  // A monitor-only agent, and web-b's own snowidd announcing itself too.
  SkewStoreOptions agent = store_options("lib-host");
  agent.agent_address = "127.0.0.1:9100";
  auto lib = open(agent);
  SkewStoreOptions b_agent = store_options("web-b");
  b_agent.agent_address = "127.0.0.1:9200";
  auto b_store = open(b_agent);
  auto observer = open("observer");  // not an agent: no key, not a member
  ASSERT_NE(lib, nullptr);
  ASSERT_NE(b_store, nullptr);
  ASSERT_NE(observer, nullptr);

  Result<std::vector<FleetMember>> all = observer->members();
  ASSERT_TRUE(all.is_ok()) << all.status().to_string();
  std::vector<std::string> hosts;
  for (const FleetMember& m : all.value()) hosts.push_back(m.host);
  EXPECT_EQ(hosts, (std::vector<std::string>{"lib-host", "web-a", "web-b"}));

  const FleetMember* web_a = find_member(all.value(), "web-a");
  ASSERT_NE(web_a, nullptr);
  EXPECT_FALSE(web_a->agent);
  EXPECT_EQ(web_a->address, "127.0.0.1:7001") << "the lowest id's address that is not empty";
  ASSERT_EQ(web_a->workers.size(), 2u);
  EXPECT_EQ(web_a->workers[0].worker, (WorkerId{kRegion, 9}));
  EXPECT_EQ(web_a->workers[1].worker, (WorkerId{kRegion, 12}));
  for (const HeldWorker& w : web_a->workers) {
    const std::optional<KeyValue> kv = get_raw(worker_keys_.holder(w.worker));
    ASSERT_TRUE(kv.has_value());
    EXPECT_EQ(w.lease, kv->lease);
    EXPECT_EQ(w.create_revision, kv->create_revision);
    EXPECT_EQ(w.mod_revision, kv->mod_revision);
    EXPECT_GT(w.lease, 0);
  }
  EXPECT_EQ(web_a->holder_revision(),
            std::max(web_a->workers[0].mod_revision, web_a->workers[1].mod_revision));

  const FleetMember* web_b = find_member(all.value(), "web-b");
  ASSERT_NE(web_b, nullptr);
  EXPECT_TRUE(web_b->agent);
  EXPECT_EQ(web_b->address, "127.0.0.1:9200") << "the agent's announced address";
  ASSERT_EQ(web_b->workers.size(), 1u);
  EXPECT_EQ(web_b->workers[0].worker, b1->worker);

  const FleetMember* lib_host = find_member(all.value(), "lib-host");
  ASSERT_NE(lib_host, nullptr);
  EXPECT_TRUE(lib_host->agent);
  EXPECT_EQ(lib_host->address, "127.0.0.1:9100");
  EXPECT_TRUE(lib_host->workers.empty());
  EXPECT_EQ(lib_host->holder_revision(), 0);

  // A released id leaves its host's workers.
  ASSERT_TRUE(reg->release(a1.value(), system_clock().wall_now()).is_ok());
  const std::optional<FleetMember> after = member(*observer, "web-a");
  ASSERT_TRUE(after.has_value());
  ASSERT_EQ(after->workers.size(), 1u);
  EXPECT_EQ(after->workers[0].worker, (WorkerId{kRegion, 12}));
}

// --- Votes ---------------------------------------------------------------------

TEST_F(SkewStoreTest, VotesRoundTripAndUnparsableOnesAreCountedAsUnreadable) {
  auto h1 = open("h1");
  auto h2 = open("h2");
  ASSERT_NE(h1, nullptr);
  ASSERT_NE(h2, nullptr);
  const skew::VoteRecord v1 = vote_about(42, 70ms);
  const skew::VoteRecord v2 = vote_about(42, -90ms);
  ASSERT_TRUE(h2->cast_vote("target", v2).is_ok());
  ASSERT_TRUE(h1->cast_vote("target", v1).is_ok());
  ASSERT_TRUE(h1->cast_vote("other", v1).is_ok());
  // Stored as the vote record's own text, under the voter's lease.
  const std::optional<KeyValue> stored = get_raw(skew_keys_.vote("target", "h1"));
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->value, skew::encode_vote(v1));
  EXPECT_GT(stored->lease, 0);
  // Garbage from a broken voter, and a key that is not a vote at all.
  put_raw(skew_keys_.vote("target", "h9"), R"({"v":1})");
  put_raw(skew_keys_.votes("target") + "rack/h8", skew::encode_vote(v1));

  Result<SkewStore::Votes> read = h2->votes("target");
  ASSERT_TRUE(read.is_ok()) << read.status().to_string();
  ASSERT_EQ(read->votes.size(), 2u);
  ASSERT_EQ(read->mod_revisions.size(), 2u);
  EXPECT_EQ(read->votes[0].voter, "h1");
  EXPECT_EQ(read->votes[1].voter, "h2");
  EXPECT_EQ(skew::encode_vote(read->votes[0].record), skew::encode_vote(v1));
  EXPECT_EQ(skew::encode_vote(read->votes[1].record), skew::encode_vote(v2));
  EXPECT_EQ(read->mod_revisions[0], stored->mod_revision);
  EXPECT_EQ(read->unreadable, 1u);

  // Casting again replaces the vote (a new mod revision); withdrawing
  // deletes it, twice is fine; other targets are untouched.
  ASSERT_TRUE(h1->cast_vote("target", vote_about(43)).is_ok());
  Result<SkewStore::Votes> recast = h2->votes("target");
  ASSERT_TRUE(recast.is_ok());
  ASSERT_EQ(recast->votes.size(), 2u);
  EXPECT_EQ(recast->votes[0].record.holder_revision, 43);
  EXPECT_GT(recast->mod_revisions[0], read->mod_revisions[0]);
  ASSERT_TRUE(h1->withdraw_vote("target").is_ok());
  ASSERT_TRUE(h1->withdraw_vote("target").is_ok());
  Result<SkewStore::Votes> withdrawn = h2->votes("target");
  ASSERT_TRUE(withdrawn.is_ok());
  ASSERT_EQ(withdrawn->votes.size(), 1u);
  EXPECT_EQ(withdrawn->votes[0].voter, "h2");
  Result<SkewStore::Votes> other = h2->votes("other");
  ASSERT_TRUE(other.is_ok());
  ASSERT_EQ(other->votes.size(), 1u);
  EXPECT_EQ(other->unreadable, 0u);

  Result<SkewStore::Votes> none = h2->votes("nobody");
  ASSERT_TRUE(none.is_ok());
  EXPECT_TRUE(none->votes.empty());
  EXPECT_EQ(none->unreadable, 0u);
}

TEST_F(SkewStoreTest, CastVoteRefusesTargetsTheKeysCannotCarryAndVotesNobodyCouldRead) {
  auto h1 = open("h1");
  ASSERT_NE(h1, nullptr);
  EXPECT_EQ(h1->cast_vote("rack/web-1", vote_about(5)).code(), Code::kInvalidArgument);
  EXPECT_EQ(h1->cast_vote("", vote_about(5)).code(), Code::kInvalidArgument);
  EXPECT_EQ(h1->withdraw_vote("a/b").code(), Code::kInvalidArgument);
  EXPECT_EQ(h1->votes("a/b").status().code(), Code::kInvalidArgument);
  skew::VoteRecord bad = vote_about(0);  // a revision below 1
  EXPECT_EQ(h1->cast_vote("web-1", bad).code(), Code::kInvalidArgument);
  bad = vote_about(5);
  bad.voter_state = skew::State::kSuspect;
  EXPECT_EQ(h1->cast_vote("web-1", bad).code(), Code::kInvalidArgument);
  EXPECT_FALSE(get_raw(skew_keys_.vote("web-1", "h1")).has_value());
}

// --- The fence -------------------------------------------------------------------

// Issue 14: a peer fence on fresh votes stops the target's generator at once,
// as `snowid workers fence` does, and says why.
TEST_F(SkewStoreTest, FenceOnFreshVotesStopsTheTargetsGeneratorAndRecordsWhy) {
  auto target_registry = registry();
  auto other_registry = registry();
  auto observer_registry = registry();
  ASSERT_NE(target_registry, nullptr);
  ASSERT_NE(other_registry, nullptr);
  ASSERT_NE(observer_registry, nullptr);

  // The bad host: a leased generator (as snowidd runs one), and a second id
  // it holds through a plain grant whose wait_lost() watches.
  std::atomic<std::int64_t> lost_at{0};  // steady ns of the kLost event
  std::atomic<bool> fence_started{false};
  LeasedGeneratorOptions go;
  go.lease.region = kRegion;
  go.lease.holder = HolderInfo{"bad-host", ::getpid(), system_clock().wall_now(), "127.0.0.1:7100"};
  go.reacquire_every = 100ms;
  go.fence_store_for = [](WorkerId) {
    return std::make_shared<snowid::testing::MemoryFenceStore>();
  };
  go.on_event = [&](const LeaseEvent& e) {
    if (e.kind == LeaseEvent::Kind::kLost && lost_at.load() == 0) {
      lost_at.store(Steady::now().time_since_epoch().count());
    }
  };
  Result<std::unique_ptr<LeasedGenerator>> created =
      LeasedGenerator::create(system_clock(), *target_registry, go);
  ASSERT_TRUE(created.is_ok()) << created.status().to_string();
  LeasedGenerator& generator = *created.value();
  const WorkerId generator_id = generator.worker();
  ASSERT_TRUE(generator.next().ok());
  Result<LeaseGrant> second = other_registry->acquire(request_for("bad-host", "127.0.0.1:7100"));
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  // A good host, which must come through untouched.
  Result<LeaseGrant> good = observer_registry->acquire(request_for("good-host", "127.0.0.1:7200"));
  ASSERT_TRUE(good.is_ok()) << good.status().to_string();

  std::optional<Result<bool>> lost;
  Steady::time_point lost_returned;
  std::atomic<bool> returned{false};
  std::thread watcher([&] {
    lost = other_registry->wait_lost(second.value(), 20s);
    lost_returned = Steady::now();
    returned.store(true);
  });
  // The generator's refusal, seen by a caller polling it.
  std::atomic<bool> polling{true};
  std::atomic<std::int64_t> refused_at{0};
  std::atomic<int> refusal_code{0};
  std::thread caller([&] {
    while (polling.load()) {
      const IdResult r = generator.try_next();
      if (!r.ok() && fence_started.load() && refused_at.load() == 0 &&
          (r.code == Code::kLeaseUncertain || r.code == Code::kLeaseLost)) {
        refusal_code.store(static_cast<int>(r.code));
        refused_at.store(Steady::now().time_since_epoch().count());
      }
      std::this_thread::sleep_for(100us);
    }
  });

  auto h1 = open("h1");
  auto h2 = open("h2");
  auto h3 = open("h3");
  ASSERT_NE(h1, nullptr);
  ASSERT_NE(h2, nullptr);
  ASSERT_NE(h3, nullptr);
  const std::optional<FleetMember> target = member(*h1, "bad-host");
  ASSERT_TRUE(target.has_value());
  ASSERT_EQ(target->workers.size(), 2u);
  ASSERT_TRUE(h1->cast_vote("bad-host", vote_about(target->holder_revision(), 80ms)).is_ok());
  ASSERT_TRUE(h2->cast_vote("bad-host", vote_about(target->holder_revision(), 75ms)).is_ok());
  // h3's vote is read but not counted (say, too old): it is not compared.
  ASSERT_TRUE(h3->cast_vote("bad-host", vote_about(target->holder_revision(), 60ms)).is_ok());
  Result<SkewStore::Votes> votes = h1->votes("bad-host");
  ASSERT_TRUE(votes.is_ok()) << votes.status().to_string();
  ASSERT_EQ(votes->votes.size(), 3u);
  std::this_thread::sleep_for(200ms);  // let the watches start
  EXPECT_FALSE(returned.load()) << "wait_lost returned while the lease was held";

  const WallTime wall_before = system_clock().wall_now();
  const std::string reason = "skew decision=fence target=bad-host reason=\"peers and reference\"";
  fence_started.store(true);
  const Steady::time_point t0 = Steady::now();
  Result<FenceOutcome> fenced = h1->fence(*target, votes.value(), {"h1", "h2"}, reason);
  const Steady::time_point t1 = Steady::now();
  const WallTime wall_after = system_clock().wall_now();
  ASSERT_TRUE(fenced.is_ok()) << fenced.status().to_string();
  ASSERT_EQ(fenced.value(), FenceOutcome::kFenced);

  watcher.join();
  ASSERT_TRUE(lost.has_value());
  ASSERT_TRUE(lost->is_ok()) << lost->status().to_string();
  EXPECT_TRUE(lost->value()) << "the fenced holder's watch fires";
  ASSERT_TRUE(eventually([&] { return lost_at.load() != 0; }))
      << "the generator never reported its lease lost";
  ASSERT_TRUE(eventually([&] { return refused_at.load() != 0 || generator.reacquisitions() > 0; }));
  polling.store(false);
  caller.join();

  report("fence() call", ms_between(t0, t1), "ms");
  report("fence() start to the holder's wait_lost() return", ms_between(t0, lost_returned), "ms");
  const Steady::time_point lost_event{Steady::duration(lost_at.load())};
  report("fence() start to the leased generator's lease-lost event", ms_between(t0, lost_event),
         "ms");
  if (refused_at.load() != 0) {
    report("fence() start to the leased generator's first refusal",
           ms_between(t0, Steady::time_point{Steady::duration(refused_at.load())}), "ms");
    EXPECT_TRUE(refusal_code.load() == static_cast<int>(Code::kLeaseUncertain) ||
                refusal_code.load() == static_cast<int>(Code::kLeaseLost));
  }

  // The holders' leases are revoked (nobody else revoked the second one's):
  // renewing it is refused.
  const Result<GrantToken> second_token = decode_token(second->token);
  ASSERT_TRUE(second_token.is_ok());
  Result<std::string> ttl =
      raw_client_->call("/v3/lease/timetolive", time_to_live_body(second_token->lease));
  ASSERT_TRUE(ttl.is_ok()) << ttl.status().to_string();
  const Result<TimeToLiveReply> left = parse_time_to_live(ttl.value());
  ASSERT_TRUE(left.is_ok());
  EXPECT_EQ(left->ttl, -1) << "the fenced holder's lease lives on";
  EXPECT_EQ(other_registry->renew(second.value(), system_clock().wall_now()).code(),
            Code::kLeaseLost);
  // The generator goes on under a fresh id; the fenced one is quarantined.
  ASSERT_TRUE(eventually([&] { return generator.reacquisitions() == 1; }));
  EXPECT_NE(generator.worker(), generator_id);

  // Each fenced id's mark now says when: its quarantine runs from the fence.
  Result<std::vector<WorkerRecord>> listed = observer_registry->list(kRegion);
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  int marked = 0;
  for (const WorkerRecord& rec : listed.value()) {
    if (!(rec.worker == generator_id || rec.worker == second->worker)) continue;
    ++marked;
    EXPECT_FALSE(rec.holder.has_value()) << to_string(rec.worker);
    ASSERT_TRUE(rec.released_at.has_value()) << to_string(rec.worker);
    EXPECT_GE(*rec.released_at, wall_before - 1ms) << to_string(rec.worker);
    EXPECT_LE(*rec.released_at, wall_after + 1ms) << to_string(rec.worker);
    EXPECT_TRUE(rec.high_water.has_value()) << "the fence keeps the high-water mark";
    EXPECT_TRUE(rec.quarantined_until.has_value()) << to_string(rec.worker);
  }
  EXPECT_EQ(marked, 2);
  // The good host holds on.
  EXPECT_TRUE(observer_registry->renew(good.value(), system_clock().wall_now()).is_ok());

  // The record, with every field, as any monitor of the region reads it.
  Result<std::vector<FenceRecord>> records = h3->fences();
  ASSERT_TRUE(records.is_ok()) << records.status().to_string();
  ASSERT_EQ(records->size(), 1u);
  const FenceRecord& r = records->front();
  EXPECT_EQ(r.target, "bad-host");
  EXPECT_EQ(r.fencer, "h1");
  EXPECT_GE(r.at, wall_before);
  EXPECT_LE(r.at, wall_after);
  ASSERT_EQ(r.votes.size(), 2u);
  EXPECT_EQ(r.votes[0].voter, "h1");
  EXPECT_EQ(r.votes[1].voter, "h2");
  EXPECT_EQ(skew::encode_vote(r.votes[0].record), skew::encode_vote(votes->votes[0].record));
  EXPECT_EQ(skew::encode_vote(r.votes[1].record), skew::encode_vote(votes->votes[1].record));
  std::vector<WorkerId> expected;
  for (const HeldWorker& w : target->workers) expected.push_back(w.worker);
  EXPECT_EQ(r.workers, expected);
  EXPECT_EQ(r.reason, reason);
  const std::optional<KeyValue> raw = get_raw(skew_keys_.fence("bad-host"));
  ASSERT_TRUE(raw.has_value());
  EXPECT_EQ(raw->lease, 0) << "the record outlives every lease";

  // The monitor's next round sees the fenced holder keys gone; a second
  // fence on the old picture changes nothing.
  Result<FenceOutcome> again = h2->fence(*target, votes.value(), {"h1", "h2"}, reason);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(again.value(), FenceOutcome::kNothingHeld);
  EXPECT_TRUE(generator.close().is_ok());
}

TEST_F(SkewStoreTest, FenceIsChangedWhenAVoteIsWithdrawnOrReplacedAfterItWasRead) {
  auto reg = registry();
  ASSERT_NE(reg, nullptr);
  Result<LeaseGrant> held = reg->acquire(request_for("bad-host", ""));
  ASSERT_TRUE(held.is_ok()) << held.status().to_string();
  auto h1 = open("h1");
  auto h2 = open("h2");
  ASSERT_NE(h1, nullptr);
  ASSERT_NE(h2, nullptr);
  const std::optional<FleetMember> target = member(*h1, "bad-host");
  ASSERT_TRUE(target.has_value());
  ASSERT_TRUE(h1->cast_vote("bad-host", vote_about(target->holder_revision())).is_ok());
  ASSERT_TRUE(h2->cast_vote("bad-host", vote_about(target->holder_revision())).is_ok());

  // Withdrawn after votes() read it.
  Result<SkewStore::Votes> read = h1->votes("bad-host");
  ASSERT_TRUE(read.is_ok());
  ASSERT_TRUE(h2->withdraw_vote("bad-host").is_ok());
  Result<FenceOutcome> outcome = h1->fence(*target, read.value(), {"h1", "h2"}, "test");
  ASSERT_TRUE(outcome.is_ok()) << outcome.status().to_string();
  EXPECT_EQ(outcome.value(), FenceOutcome::kChanged);

  // Replaced after votes() read it (the voter's next round).
  ASSERT_TRUE(h2->cast_vote("bad-host", vote_about(target->holder_revision())).is_ok());
  read = h1->votes("bad-host");
  ASSERT_TRUE(read.is_ok());
  ASSERT_TRUE(h2->cast_vote("bad-host", vote_about(target->holder_revision())).is_ok());
  outcome = h1->fence(*target, read.value(), {"h1", "h2"}, "test");
  ASSERT_TRUE(outcome.is_ok()) << outcome.status().to_string();
  EXPECT_EQ(outcome.value(), FenceOutcome::kChanged);

  // Neither failed fence touched the holder or wrote a record.
  EXPECT_TRUE(reg->renew(held.value(), system_clock().wall_now()).is_ok());
  EXPECT_FALSE(get_raw(skew_keys_.fence("bad-host")).has_value());
  Result<std::vector<FenceRecord>> records = h1->fences();
  ASSERT_TRUE(records.is_ok());
  EXPECT_TRUE(records->empty());

  // Read afresh, the same votes fence.
  read = h1->votes("bad-host");
  ASSERT_TRUE(read.is_ok());
  outcome = h1->fence(*target, read.value(), {"h1", "h2"}, "test");
  ASSERT_TRUE(outcome.is_ok()) << outcome.status().to_string();
  EXPECT_EQ(outcome.value(), FenceOutcome::kFenced);
  EXPECT_EQ(reg->renew(held.value(), system_clock().wall_now()).code(), Code::kLeaseLost);
}

TEST_F(SkewStoreTest, FenceIsChangedWhenTheTargetReacquiredItsIdSinceTheVotes) {
  auto reg = registry();
  ASSERT_NE(reg, nullptr);
  Result<LeaseGrant> first = reg->acquire(request_for("bad-host", "", 5));
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  auto h1 = open("h1");
  ASSERT_NE(h1, nullptr);
  const std::optional<FleetMember> seen = member(*h1, "bad-host");
  ASSERT_TRUE(seen.has_value());
  ASSERT_TRUE(h1->cast_vote("bad-host", vote_about(seen->holder_revision())).is_ok());
  Result<SkewStore::Votes> read = h1->votes("bad-host");
  ASSERT_TRUE(read.is_ok());

  // The host gives the id back cleanly and takes it again: a newer holder
  // key, which the votes were not about. (A clean release frees the id at
  // its release time, rounded up to the millisecond.)
  ASSERT_TRUE(reg->release(first.value(), system_clock().wall_now()).is_ok());
  std::this_thread::sleep_for(5ms);
  Result<LeaseGrant> again = reg->acquire(request_for("bad-host", "", 5));
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  Result<FenceOutcome> outcome = h1->fence(*seen, read.value(), {"h1"}, "test");
  ASSERT_TRUE(outcome.is_ok()) << outcome.status().to_string();
  EXPECT_EQ(outcome.value(), FenceOutcome::kChanged);
  EXPECT_TRUE(reg->renew(again.value(), system_clock().wall_now()).is_ok())
      << "the later holder is not fenced";
  EXPECT_FALSE(get_raw(skew_keys_.fence("bad-host")).has_value());
}

TEST_F(SkewStoreTest, FenceOfAHostThatHoldsNothingIsNothingHeld) {
  auto reg = registry();
  ASSERT_NE(reg, nullptr);
  SkewStoreOptions agent = store_options("lib-host");
  agent.agent_address = "127.0.0.1:9100";
  auto lib = open(agent);
  auto h1 = open("h1");
  ASSERT_NE(lib, nullptr);
  ASSERT_NE(h1, nullptr);
  // An agent holds no id.
  const std::optional<FleetMember> agent_only = member(*h1, "lib-host");
  ASSERT_TRUE(agent_only.has_value());
  Result<FenceOutcome> outcome = h1->fence(*agent_only, {}, {}, "test");
  ASSERT_TRUE(outcome.is_ok()) << outcome.status().to_string();
  EXPECT_EQ(outcome.value(), FenceOutcome::kNothingHeld);

  // A host that let go of everything after members() saw it.
  Result<LeaseGrant> held = reg->acquire(request_for("leaving-host", ""));
  ASSERT_TRUE(held.is_ok()) << held.status().to_string();
  const std::optional<FleetMember> seen = member(*h1, "leaving-host");
  ASSERT_TRUE(seen.has_value());
  ASSERT_TRUE(h1->cast_vote("leaving-host", vote_about(seen->holder_revision())).is_ok());
  Result<SkewStore::Votes> read = h1->votes("leaving-host");
  ASSERT_TRUE(read.is_ok());
  ASSERT_TRUE(reg->release(held.value(), system_clock().wall_now()).is_ok());
  outcome = h1->fence(*seen, read.value(), {"h1"}, "test");
  ASSERT_TRUE(outcome.is_ok()) << outcome.status().to_string();
  EXPECT_EQ(outcome.value(), FenceOutcome::kNothingHeld);
  Result<std::vector<FenceRecord>> records = h1->fences();
  ASSERT_TRUE(records.is_ok());
  EXPECT_TRUE(records->empty());
}

TEST_F(SkewStoreTest, FenceRefusesCountedVotersThatAreNotAmongTheVotesRead) {
  auto reg = registry();
  ASSERT_NE(reg, nullptr);
  Result<LeaseGrant> held = reg->acquire(request_for("bad-host", ""));
  ASSERT_TRUE(held.is_ok()) << held.status().to_string();
  auto h1 = open("h1");
  ASSERT_NE(h1, nullptr);
  const std::optional<FleetMember> target = member(*h1, "bad-host");
  ASSERT_TRUE(target.has_value());
  ASSERT_TRUE(h1->cast_vote("bad-host", vote_about(target->holder_revision())).is_ok());
  Result<SkewStore::Votes> read = h1->votes("bad-host");
  ASSERT_TRUE(read.is_ok());

  auto refused = [&](const FleetMember& t, const SkewStore::Votes& v,
                     const std::vector<std::string>& counted, const char* what) {
    Result<FenceOutcome> r = h1->fence(t, v, counted, "test");
    ASSERT_FALSE(r.is_ok()) << what;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << what;
  };
  refused(*target, read.value(), {"h1", "h2"}, "a voter without a vote");
  refused(*target, read.value(), {"h1", "h1"}, "a voter counted twice");
  SkewStore::Votes uneven = read.value();
  uneven.mod_revisions.clear();
  refused(*target, uneven, {"h1"}, "votes without their revisions");
  FleetMember other_region = *target;
  other_region.workers[0].worker.region = kRegion + 1;
  refused(other_region, read.value(), {"h1"}, "a worker of another region");
  FleetMember twice = *target;
  twice.workers.push_back(twice.workers[0]);
  refused(twice, read.value(), {"h1"}, "a worker listed twice");
  FleetMember unnamed = *target;
  unnamed.host = "rack/bad-host";
  refused(unnamed, read.value(), {"h1"}, "a host the keys cannot carry");
  EXPECT_TRUE(reg->renew(held.value(), system_clock().wall_now()).is_ok());
}

TEST_F(SkewStoreTest, FencesAreListedNewestFirstAndAnUnreadableOneIsDataLoss) {
  auto reg = registry();
  ASSERT_NE(reg, nullptr);
  auto h1 = open("h1");
  ASSERT_NE(h1, nullptr);
  for (const std::string host : {"web-b", "web-a", "web-c"}) {
    Result<LeaseGrant> held = reg->acquire(request_for(host, ""));
    ASSERT_TRUE(held.is_ok()) << held.status().to_string();
    const std::optional<FleetMember> target = member(*h1, host);
    ASSERT_TRUE(target.has_value());
    // A host fencing itself records it without votes.
    Result<FenceOutcome> outcome = h1->fence(*target, {}, {}, "self-fence of " + host);
    ASSERT_TRUE(outcome.is_ok()) << outcome.status().to_string();
    ASSERT_EQ(outcome.value(), FenceOutcome::kFenced);
    std::this_thread::sleep_for(2ms);  // distinct instants
  }
  // A foreign key below fences/ is skipped.
  put_raw(skew_keys_.fences() + "web-x/old", "junk");
  Result<std::vector<FenceRecord>> records = h1->fences();
  ASSERT_TRUE(records.is_ok()) << records.status().to_string();
  std::vector<std::string> order;
  for (const FenceRecord& r : records.value()) {
    order.push_back(r.target);
    EXPECT_EQ(r.reason, "self-fence of " + r.target);
    EXPECT_TRUE(r.votes.empty());
    EXPECT_EQ(r.workers.size(), 1u);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"web-c", "web-a", "web-b"}));

  // The blast-radius cap counts these records: one it cannot read stops the
  // listing rather than vanishing from it.
  put_raw(skew_keys_.fence("web-d"), R"({"v":1,"target":"web-d"})");
  Result<std::vector<FenceRecord>> broken = h1->fences();
  ASSERT_FALSE(broken.is_ok());
  EXPECT_EQ(broken.status().code(), Code::kDataLoss);
  EXPECT_NE(broken.status().message().find(skew_keys_.fence("web-d")), std::string::npos)
      << broken.status().message();
  FenceRecord elsewhere;
  elsewhere.target = "web-f";
  put_raw(skew_keys_.fence("web-d"), encode_fence_record(elsewhere));
  EXPECT_EQ(h1->fences().status().code(), Code::kDataLoss) << "a record under another target";
}

// --- The store's own lease ----------------------------------------------------------

TEST_F(SkewStoreTest, ClosingTheStoreRevokesItsLeaseWithItsVotesAndAgentKey) {
  auto h1 = open("h1");
  ASSERT_NE(h1, nullptr);
  SkewStoreOptions agent = store_options("lib-host");
  agent.agent_address = "127.0.0.1:9100";
  auto lib = open(agent);
  ASSERT_NE(lib, nullptr);
  ASSERT_TRUE(lib->cast_vote("web-1", vote_about(7)).is_ok());
  ASSERT_TRUE(lib->cast_vote("web-2", vote_about(8)).is_ok());
  const std::optional<KeyValue> agent_key = get_raw(skew_keys_.agent("lib-host"));
  ASSERT_TRUE(agent_key.has_value());
  EXPECT_GT(agent_key->lease, 0);
  ASSERT_TRUE(member(*h1, "lib-host").has_value());

  lib.reset();
  // Gone at once (revoked, not expired after the 10 s TTL).
  EXPECT_FALSE(get_raw(skew_keys_.agent("lib-host")).has_value());
  EXPECT_FALSE(member(*h1, "lib-host").has_value());
  Result<SkewStore::Votes> votes = h1->votes("web-1");
  ASSERT_TRUE(votes.is_ok());
  EXPECT_TRUE(votes->votes.empty());
  EXPECT_FALSE(get_raw(skew_keys_.vote("web-2", "lib-host")).has_value());
  Result<std::string> ttl =
      raw_client_->call("/v3/lease/timetolive", time_to_live_body(agent_key->lease));
  ASSERT_TRUE(ttl.is_ok()) << ttl.status().to_string();
  Result<TimeToLiveReply> t = parse_time_to_live(ttl.value());
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t->ttl, -1) << "the lease itself is gone";
}

TEST_F(SkewStoreTest, TheKeepaliveHoldsTheLeasePastItsTtl) {
  SkewStoreOptions o = store_options("h1");
  o.lease_ttl = 2s;
  auto h1 = open(o);
  ASSERT_NE(h1, nullptr);
  ASSERT_TRUE(h1->cast_vote("web-1", vote_about(7)).is_ok());
  std::this_thread::sleep_for(5s);  // two and a half TTLs
  const std::optional<KeyValue> vote = get_raw(skew_keys_.vote("web-1", "h1"));
  ASSERT_TRUE(vote.has_value()) << "the vote expired with its lease";
  Result<std::string> ttl =
      raw_client_->call("/v3/lease/timetolive", time_to_live_body(vote->lease));
  ASSERT_TRUE(ttl.is_ok());
  Result<TimeToLiveReply> t = parse_time_to_live(ttl.value());
  ASSERT_TRUE(t.is_ok());
  EXPECT_GT(t->ttl, 0);
  EXPECT_EQ(t->granted_ttl, 2);
}

TEST_F(SkewStoreTest, ALeaseEtcdLostIsReplacedAndTheAgentKeyPutBack) {
  SkewStoreOptions o = store_options("lib-host");
  o.agent_address = "127.0.0.1:9100";
  // A keepalive every 10 s: what replaces the lease below is the vote's
  // report, not the next keepalive.
  o.lease_ttl = 30s;
  auto lib = open(o);
  ASSERT_NE(lib, nullptr);
  ASSERT_TRUE(lib->cast_vote("web-1", vote_about(7)).is_ok());
  const std::optional<KeyValue> before = get_raw(skew_keys_.agent("lib-host"));
  ASSERT_TRUE(before.has_value());
  // An operator (or a restored etcd) ends the lease behind the store's back.
  ASSERT_TRUE(raw_->revoke(before->lease).is_ok());
  EXPECT_FALSE(get_raw(skew_keys_.vote("web-1", "lib-host")).has_value());

  // The next vote finds the lease gone and says so; a fresh lease follows.
  // (Unless a keepalive came in between and replaced it first.)
  const Status refused = lib->cast_vote("web-1", vote_about(7));
  if (!refused.is_ok()) {
    EXPECT_EQ(refused.code(), Code::kUnavailable) << refused.to_string();
  }
  const Steady::time_point t0 = Steady::now();
  ASSERT_TRUE(eventually([&] {
    const std::optional<KeyValue> now = get_raw(skew_keys_.agent("lib-host"));
    return now && now->lease != before->lease;
  })) << "the agent key was not put back on a fresh lease";
  report("lost lease to the agent key back on a fresh one", ms_between(t0, Steady::now()), "ms");
  ASSERT_TRUE(lib->cast_vote("web-1", vote_about(7)).is_ok());
  const std::optional<KeyValue> vote = get_raw(skew_keys_.vote("web-1", "lib-host"));
  ASSERT_TRUE(vote.has_value());
  EXPECT_NE(vote->lease, before->lease);
}

}  // namespace
}  // namespace snowid::etcd
