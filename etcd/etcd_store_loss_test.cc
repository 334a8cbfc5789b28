// etcd losing its data, against real etcd: a member restarted on an empty
// data directory, and one restored from a backup taken earlier. Holders issue
// as fast as they can; an acquirer whose clock is 95 ms behind (inside the
// allowed 100 ms skew) takes the id that a holder of the lost store may still
// be issuing on. No id may come out twice.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "mutex.h"
#include "snowid/etcd_registry.h"
#include "snowid/lease_keeper.h"
#include "snowid/leased_generator.h"
#include "snowid/testing/shifted_clock.h"
#include "testing/etcd_cluster.h"

namespace snowid {

using internal::Mutex;
using internal::MutexLock;
namespace {

using etcd::testing::EtcdCluster;
using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

// A host whose clock is off by a given offset, within what the fleet allows.
using snowid::testing::ShiftedClock;

// Short leases, so that a holder of the lost store stops within seconds.
LeaseTiming short_timing() {
  LeaseTiming t;
  t.ttl = 3s;
  t.renew_every = 1s;
  t.stop_after = 2s;
  t.max_clock_skew = 100ms;
  return t;
}

// A leased generator, on one id if `host` is set, and a thread that issues
// on it as fast as it can until stopped, keeping every id. The holders of
// the lost store take any id, so that after finding their lease lost they
// are unlikely to race the successor for the one it is given.
class Issuer {
 public:
  Issuer(const Clock& clock, EtcdOptions options, std::optional<std::uint32_t> host,
         const char* name) {
    Result<std::unique_ptr<WorkerRegistry>> r = make_etcd_registry(clock, std::move(options));
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    if (!r.is_ok()) return;
    registry_ = std::move(r).value();
    LeasedGeneratorOptions o;
    o.lease.region = 0;
    o.lease.host = host;
    o.lease.holder = HolderInfo{name, ::getpid(), clock.wall_now(), ""};
    o.lease.timing = short_timing();
    o.lease.retry_every = 200ms;
    o.reacquire_every = 100ms;
    Result<std::unique_ptr<LeasedGenerator>> g = LeasedGenerator::create(clock, *registry_, o);
    EXPECT_TRUE(g.is_ok()) << g.status().to_string();
    if (!g.is_ok()) return;
    generator_ = std::move(g).value();
    created_ = Steady::now();
    thread_ = std::thread([this] {
      std::vector<std::uint64_t> mine;
      while (!stop_.load(std::memory_order_relaxed)) {
        const IdResult issued = generator_->try_next();
        if (issued.ok()) {
          if (mine.empty()) first_ns_.store((Steady::now() - created_).count());
          mine.push_back(issued.id);
          // A short breath now and then keeps the id count (and the check's
          // memory) moderate; hundreds of ids a millisecond remain.
          if (mine.size() % 256 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
        } else {
          std::this_thread::yield();
        }
      }
      MutexLock lock(mu_);
      ids_ = std::move(mine);
    });
  }
  ~Issuer() { stop(); }

  bool ok() const { return generator_ != nullptr; }
  LeasedGenerator& generator() { return *generator_; }
  // Stops the thread (idempotent) and returns every id issued.
  const std::vector<std::uint64_t>& stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    MutexLock lock(mu_);
    return ids_;
  }
  // How long after create() the first id came; nullopt if none did.
  std::optional<double> first_id_after_ms() const {
    const std::int64_t ns = first_ns_.load();
    if (ns < 0) return std::nullopt;
    return static_cast<double>(ns) / 1e6;
  }

 private:
  std::unique_ptr<WorkerRegistry> registry_;
  std::unique_ptr<LeasedGenerator> generator_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  Mutex mu_;
  std::vector<std::uint64_t> ids_ GUARDED_BY(mu_);
  Steady::time_point created_;
  std::atomic<std::int64_t> first_ns_{-1};  // since created_; -1: none yet
};

// Ids that appear more than once in a and b together.
std::size_t duplicates(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
  std::vector<std::uint64_t> all(a);
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  return all.size() - static_cast<std::size_t>(std::unique(all.begin(), all.end()) - all.begin());
}

class EtcdStoreLoss : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<EtcdCluster>> c = EtcdCluster::start();
    ASSERT_TRUE(c.is_ok()) << c.status().to_string();
    etcd_ = std::move(c).value();
    options_.endpoints = etcd_->endpoints();
    options_.cluster = "store-loss";
    options_.request_timeout = 1s;
    ASSERT_TRUE(initialize_etcd_namespace(system_clock(), options_).is_ok());
  }
  // Waits on real time for `done`, at most `limit`.
  template <typename F>
  static bool eventually(F done, Duration limit) {
    const auto give_up = Steady::now() + limit;
    while (!done()) {
      if (Steady::now() > give_up) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }

  std::unique_ptr<EtcdCluster> etcd_;
  EtcdOptions options_;
  ShiftedClock behind_{-95ms};
};

TEST_F(EtcdStoreLoss, AfterARestartOnAnEmptyDataDirectoryTheNextHolderWaitsPastTheLastOnesIds) {
  Issuer old_holder(system_clock(), options_, std::nullopt, "old-holder");
  ASSERT_TRUE(old_holder.ok());
  const std::uint32_t host = old_holder.generator().worker().host;
  std::this_thread::sleep_for(300ms);

  ASSERT_TRUE(etcd_->restart_on(0, "").is_ok());
  // The same id, taken at once through the new store by a host whose clock
  // is 95 ms behind, while the old holder has not yet noticed anything.
  Issuer successor(behind_, options_, host, "successor");
  ASSERT_TRUE(successor.ok());
  ASSERT_TRUE(eventually(
      [&] { return successor.first_id_after_ms() && old_holder.generator().reacquisitions() > 0; },
      20s))
      << "the successor never issued, or the old holder never found its lease lost";
  std::this_thread::sleep_for(200ms);

  const std::vector<std::uint64_t>& a = old_holder.stop();
  const std::vector<std::uint64_t>& b = successor.stop();
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  const std::size_t dups = duplicates(a, b);
  std::printf(
      "[ measured ] empty data directory: old holder %zu ids, successor %zu ids, "
      "%zu duplicates; the successor's first id %.0f ms after it took the id "
      "(the default stop_after 8000 ms + skew 100 ms - 95 ms)\n",
      a.size(), b.size(), dups, *successor.first_id_after_ms());
  EXPECT_EQ(dups, 0u);
  // It waited out the old store's holders: a stop deadline (the default's, as
  // the longer one; a process cannot know the others' timing), less the
  // 95 ms its clock is behind, give or take scheduling.
  EXPECT_GE(*successor.first_id_after_ms(), 7500.0);
}

// A backup taken while one holder ran; a second holder started after it. The
// restore brings back the first one's lease, not the second's, and leaves the
// second's id looking unused. An operator declares the restore at once.
TEST_F(EtcdStoreLoss, ARestoreDeclaredByTheOperatorMakesTheNextHolderWaitPastWhatWasIssuedSince) {
  const std::string backup = etcd_->dir() + "/backup";
  Issuer before(system_clock(), options_, std::nullopt, "before-backup");
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(etcd_->back_up(0, backup).is_ok());
  Issuer since(system_clock(), options_, std::nullopt, "since-backup");
  ASSERT_TRUE(since.ok());
  const std::uint32_t host = since.generator().worker().host;
  ASSERT_TRUE(eventually([&] { return since.first_id_after_ms().has_value(); }, 10s));
  std::this_thread::sleep_for(300ms);

  ASSERT_TRUE(etcd_->restart_on(0, backup).is_ok());
  const Result<WallTime> until =
      declare_etcd_data_lost(system_clock(), options_, short_timing().stop_after);
  ASSERT_TRUE(until.is_ok()) << until.status().to_string();
  Issuer successor(behind_, options_, host, "successor");
  ASSERT_TRUE(successor.ok());
  ASSERT_TRUE(eventually(
      [&] { return successor.first_id_after_ms() && since.generator().reacquisitions() > 0; },
      20s));
  std::this_thread::sleep_for(200ms);

  const std::vector<std::uint64_t>& a = since.stop();
  const std::vector<std::uint64_t>& b = successor.stop();
  const std::size_t dups = duplicates(a, b);
  std::printf(
      "[ measured ] restore declared: holder since the backup %zu ids, successor %zu "
      "ids, %zu duplicates; the successor's first id %.0f ms after it took the id\n",
      a.size(), b.size(), dups, *successor.first_id_after_ms());
  EXPECT_EQ(dups, 0u);
}

// Nobody declares the restore: the holder whose lease came back notices at its
// next renewal that etcd's revision went back, and records the loss, so that
// an acquirer after that waits as if it had been declared.
TEST_F(EtcdStoreLoss, AHolderThatSeesTheRevisionGoBackMakesLaterAcquirersWait) {
  const std::string backup = etcd_->dir() + "/backup";
  Issuer survivor(system_clock(), options_, std::nullopt, "survivor");
  ASSERT_TRUE(survivor.ok());
  ASSERT_TRUE(etcd_->back_up(0, backup).is_ok());
  // Writes after the backup, which the restore takes back; that holder is
  // gone by then (its lease revoked), as a crashed one would be.
  auto since = std::make_unique<Issuer>(system_clock(), options_, std::nullopt, "since-backup");
  ASSERT_TRUE(since->ok());
  const std::uint32_t host = since->generator().worker().host;
  std::this_thread::sleep_for(500ms);
  since.reset();
  // The survivor can only notice the loss if it has seen the store past the
  // backup: one renewal (a read and a write) after the other holder's writes.
  // Without it, nothing this process saw was lost, and the test would race
  // the renewal period against the time the backup and release take.
  const std::uint64_t before_restore = survivor.generator().lease_stats().renewals;
  ASSERT_TRUE(eventually(
      [&] { return survivor.generator().lease_stats().renewals >= before_restore + 1; }, 10s))
      << "the survivor did not renew after the backup";

  ASSERT_TRUE(etcd_->restart_on(0, backup).is_ok());
  const WallTime restored_at = system_clock().wall_now();
  // Its lease came back with the backup; etcd 3.5.16 and later give a
  // restored lease the time it had left at its last checkpoint, so it may also
  // expire soon after and be replaced. Either way this process has read the
  // rolled-back store by the time it has renewed twice since.
  const std::uint64_t renewals = survivor.generator().lease_stats().renewals;
  ASSERT_TRUE(
      eventually([&] { return survivor.generator().lease_stats().renewals >= renewals + 2; }, 10s))
      << "the survivor did not renew after the restore";

  Result<std::unique_ptr<WorkerRegistry>> registry = make_etcd_registry(behind_, options_);
  ASSERT_TRUE(registry.is_ok());
  LeaseKeeperOptions ko;
  ko.region = 0;
  ko.host = host;
  ko.holder = HolderInfo{"acquirer", ::getpid(), behind_.wall_now(), ""};
  ko.timing = short_timing();
  Result<std::unique_ptr<LeaseKeeper>> keeper =
      LeaseKeeper::acquire(behind_, *registry.value(), ko);
  ASSERT_TRUE(keeper.is_ok()) << keeper.status().to_string();
  const std::optional<WallTime> wait = keeper.value()->wait_until();
  ASSERT_TRUE(wait) << "the acquirer of an id the restore made look unused does not wait";
  std::printf(
      "[ measured ] revision went back: the acquirer waits until %lld ms after the "
      "restore (the default stop_after 8000 ms + skew 100 ms)\n",
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(*wait - restored_at).count()));
  EXPECT_GE(*wait, restored_at + LeaseTiming{}.stop_after);
  EXPECT_TRUE(keeper.value()->release(std::nullopt).is_ok());
}

TEST_F(EtcdStoreLoss, ANewNamespaceMakesItsFirstHolderWaitUnlessInitialized) {
  const LeaseTiming timing = short_timing();
  auto acquire = [&](const EtcdOptions& o) {
    Result<std::unique_ptr<WorkerRegistry>> r = make_etcd_registry(system_clock(), o);
    EXPECT_TRUE(r.is_ok());
    LeaseKeeperOptions ko;
    ko.holder = HolderInfo{"first", ::getpid(), system_clock().wall_now(), ""};
    ko.timing = timing;
    Result<std::unique_ptr<LeaseKeeper>> k = LeaseKeeper::acquire(system_clock(), *r.value(), ko);
    EXPECT_TRUE(k.is_ok()) << k.status().to_string();
    const std::optional<WallTime> wait = k.value()->wait_until();
    EXPECT_TRUE(k.value()->release(std::nullopt).is_ok());
    return wait;
  };
  // Initialized in SetUp: nothing to wait for.
  EXPECT_FALSE(acquire(options_));
  EXPECT_EQ(initialize_etcd_namespace(system_clock(), options_).code(), Code::kAlreadyExists);

  EtcdOptions fresh = options_;
  fresh.cluster = "never-initialized";
  const WallTime before = system_clock().wall_now();
  const std::optional<WallTime> wait = acquire(fresh);
  ASSERT_TRUE(wait) << "a namespace with neither a record nor keys may be one that etcd lost";
  EXPECT_GE(*wait, before + LeaseTiming{}.stop_after);
  // Only the first: the record is there now.
  const std::optional<WallTime> second = acquire(fresh);
  ASSERT_TRUE(second);
  // The record holds it rounded up to the millisecond.
  EXPECT_LE(*second, *wait + std::chrono::milliseconds(1));
}

}  // namespace
}  // namespace snowid
