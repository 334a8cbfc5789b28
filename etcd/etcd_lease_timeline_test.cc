// The lease keeper on a real etcd cluster that stops answering: every member
// is stopped with SIGSTOP, so the renewal's HTTP calls hang rather than fail.
// The keeper must still call the lease lost within one TTL plus one request
// timeout of the send time of its last renewal that succeeded. The figure is
// printed as a "[ measured ]" line.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "mutex.h"
#include "snowid/etcd_registry.h"
#include "snowid/lease_keeper.h"
#include "testing/etcd_cluster.h"

namespace snowid {

using internal::Mutex;
using internal::MutexLock;
namespace {

using namespace std::chrono_literals;
using etcd::testing::EtcdCluster;
using etcd::testing::EtcdClusterOptions;
using Steady = std::chrono::steady_clock;

// The real etcd registry, with the send time of each renewal that
// succeeded noted on the way through.
class SendTimes final : public WorkerRegistry {
 public:
  explicit SendTimes(std::unique_ptr<WorkerRegistry> inner) : inner_(std::move(inner)) {}

  Result<LeaseGrant> acquire(const LeaseRequest& r) override { return inner_->acquire(r); }
  using WorkerRegistry::renew;
  Status renew(const LeaseGrant& g, WallTime high_water, Duration time_left) override {
    const Steady::time_point send = Steady::now();
    const Status s = inner_->renew(g, high_water, time_left);
    if (s.is_ok()) {
      MutexLock lock(mu_);
      last_ok_send_ = send;
      ++renewals_;
    }
    return s;
  }
  Status release(const LeaseGrant& g, WallTime high_water) override {
    return inner_->release(g, high_water);
  }
  void abandon(const LeaseGrant& g) noexcept override { inner_->abandon(g); }
  Result<bool> wait_lost(const LeaseGrant& g, Duration timeout) override {
    return inner_->wait_lost(g, timeout);
  }
  void wake_waiters() noexcept override { inner_->wake_waiters(); }
  Result<std::vector<WorkerRecord>> list(std::optional<std::uint32_t> region) override {
    return inner_->list(region);
  }
  Status fence(WorkerId worker) override { return inner_->fence(worker); }

  std::optional<Steady::time_point> last_ok_send() const {
    MutexLock lock(mu_);
    return last_ok_send_;
  }
  int renewals() const {
    MutexLock lock(mu_);
    return renewals_;
  }

 private:
  std::unique_ptr<WorkerRegistry> inner_;
  mutable Mutex mu_;
  std::optional<Steady::time_point> last_ok_send_ GUARDED_BY(mu_);
  int renewals_ GUARDED_BY(mu_) = 0;
};

// Three members, so that a call that tries each in turn while all hang would
// take three request timeouts if nothing bounded it by the lease.
TEST(EtcdLeaseTimeline, StoppedClusterLeaseIsLostWithinTtlPlusOneRequestTimeoutOfTheLastGoodSend) {
  EtcdClusterOptions co;
  co.members = 3;
  Result<std::unique_ptr<EtcdCluster>> cluster = EtcdCluster::start(co);
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  EtcdCluster& etcd = *cluster.value();

  constexpr Duration kRequestTimeout = 3s;
  EtcdOptions eo;
  eo.endpoints = etcd.endpoints();
  eo.cluster = "timeline";
  ASSERT_TRUE(etcd.initialize_namespace("timeline").is_ok());
  eo.request_timeout = kRequestTimeout;
  Result<std::unique_ptr<WorkerRegistry>> inner = make_etcd_registry(system_clock(), eo);
  ASSERT_TRUE(inner.is_ok()) << inner.status().to_string();
  SendTimes registry(std::move(inner).value());

  std::mutex mu;
  std::condition_variable cv;
  std::optional<Steady::time_point> lost_at;
  std::optional<Steady::time_point> uncertain_at;
  LeaseKeeperOptions ko;
  ko.region = 0;
  ko.holder = HolderInfo{"timeline-test", ::getpid(), system_clock().wall_now(), ""};
  ko.timing.ttl = 2s;
  ko.timing.renew_every = 500ms;
  ko.timing.stop_after = 1500ms;
  ko.retry_every = 200ms;
  ko.on_state = [&](LeaseState s, const Status&) {
    std::lock_guard<std::mutex> lock(mu);
    if (s == LeaseState::kUncertain && !uncertain_at) uncertain_at = Steady::now();
    if (s == LeaseState::kLost && !lost_at) lost_at = Steady::now();
    cv.notify_all();
  };
  Result<std::unique_ptr<LeaseKeeper>> keeper = LeaseKeeper::acquire(system_clock(), registry, ko);
  ASSERT_TRUE(keeper.is_ok()) << keeper.status().to_string();
  keeper.value()->start();
  const Steady::time_point give_up = Steady::now() + 20s;
  while (registry.renewals() < 2 && Steady::now() < give_up) std::this_thread::sleep_for(10ms);
  ASSERT_GE(registry.renewals(), 2) << "the keeper did not renew";

  const Steady::time_point stopped_at = Steady::now();
  for (int i = 0; i < etcd.size(); ++i) ASSERT_TRUE(etcd.signal(i, SIGSTOP).is_ok());
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, 30s, [&] { return lost_at.has_value(); });
  }
  for (int i = 0; i < etcd.size(); ++i) ASSERT_TRUE(etcd.signal(i, SIGCONT).is_ok());
  std::optional<Steady::time_point> lost;
  std::optional<Steady::time_point> uncertain;
  {
    std::lock_guard<std::mutex> lock(mu);
    lost = lost_at;
    uncertain = uncertain_at;
  }
  ASSERT_TRUE(lost) << "the lease was never called lost";
  const std::optional<Steady::time_point> last_ok = registry.last_ok_send();
  ASSERT_TRUE(last_ok);
  auto ms = [](Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf(
      "[ measured ] etcd stopped %.0f ms after the last good send; UNCERTAIN %.0f ms and "
      "LOST %.0f ms after it (TTL 2000 ms, request timeout %lld ms, 3 members)\n",
      ms(stopped_at - *last_ok), uncertain ? ms(*uncertain - *last_ok) : -1.0, ms(*lost - *last_ok),
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(kRequestTimeout).count()));
  std::fflush(stdout);
  EXPECT_LE(*lost - *last_ok, ko.timing.ttl + kRequestTimeout);
  // Not before the lease could have expired.
  EXPECT_GE(*lost - *last_ok, ko.timing.ttl);
  ASSERT_TRUE(uncertain) << "the keeper went from HELD to LOST without UNCERTAIN";
  EXPECT_LT(*uncertain, *lost);
  EXPECT_EQ(keeper.value()->state(), LeaseState::kLost);
}

// One member, stopped: without a bound of the caller's, a renewal waits out
// the whole request timeout; with one, only the time left.
TEST(EtcdLeaseTimeline, ARenewalIsBoundedByTheTimeLeftWhenThatIsShorterThanTheRequestTimeout) {
  Result<std::unique_ptr<EtcdCluster>> cluster = EtcdCluster::start();
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  EtcdCluster& etcd = *cluster.value();
  EtcdOptions eo;
  eo.endpoints = etcd.endpoints();
  eo.cluster = "bounded";
  ASSERT_TRUE(etcd.initialize_namespace("bounded").is_ok());
  eo.request_timeout = 5s;
  Result<std::unique_ptr<WorkerRegistry>> reg = make_etcd_registry(system_clock(), eo);
  ASSERT_TRUE(reg.is_ok()) << reg.status().to_string();
  LeaseRequest r;
  r.holder = HolderInfo{"bounded-test", ::getpid(), system_clock().wall_now(), ""};
  r.high_water = system_clock().wall_now() + r.timing.stop_after;
  Result<LeaseGrant> g = reg.value()->acquire(r);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();

  ASSERT_TRUE(etcd.signal(0, SIGSTOP).is_ok());
  const Steady::time_point sent = Steady::now();
  const Status s = reg.value()->renew(g.value(), system_clock().wall_now() + 8s, 300ms);
  const Steady::duration took = Steady::now() - sent;
  ASSERT_TRUE(etcd.signal(0, SIGCONT).is_ok());
  std::printf(
      "[ measured ] renew with 300 ms left, request timeout 5000 ms, member stopped: "
      "%s after %.0f ms\n",
      std::string(code_name(s.code())).c_str(),
      std::chrono::duration<double, std::milli>(took).count());
  std::fflush(stdout);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.to_string();
  // Far below the request timeout; the slack is for a loaded machine.
  EXPECT_LT(took, 2500ms);
  EXPECT_GE(took, 300ms);
}

}  // namespace
}  // namespace snowid
