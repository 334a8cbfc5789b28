// A LeasedGenerator on a real etcd whose lease is lost while its clock is
// being waited out, with the wall clock stepped back in a clock injected into
// the generator (etcd and the network run on real time). Figures measured
// along the way are printed as "[ measured ] ..." lines.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "mutex.h"
#include "snowid/etcd_registry.h"
#include "snowid/leased_generator.h"
#include "snowid/testing/memory_fence_store.h"
#include "testing/etcd_cluster.h"

namespace snowid {

using internal::Mutex;
using internal::MutexLock;
namespace {

using namespace std::chrono_literals;
using etcd::testing::EtcdCluster;
using Steady = std::chrono::steady_clock;

// The real clocks, but for a wall clock that the test can step and hold
// still: held, it reads the instant it was stepped to until run() lets it go
// on from there. The monotonic clock is the real one throughout.
class SteppedClock final : public Clock {
 public:
  WallTime wall_now() const noexcept override {
    MutexLock lock(mu_);
    return held_ ? *held_ : system_clock().wall_now() + offset_;
  }
  MonoTime mono_now() const noexcept override { return system_clock().mono_now(); }
  MonoTime mono_coarse_now() const noexcept override { return system_clock().mono_coarse_now(); }
  void pause(Duration hint) const noexcept override { system_clock().pause(hint); }

  // Steps the wall clock by `d` and holds it there.
  void step_and_hold(Duration d) {
    MutexLock lock(mu_);
    held_ = (held_ ? *held_ : system_clock().wall_now() + offset_) + d;
  }
  // Lets a held wall clock run on with real time from where it is held.
  void run() {
    MutexLock lock(mu_);
    if (!held_) return;
    offset_ = *held_ - system_clock().wall_now();
    held_.reset();
  }

 private:
  mutable Mutex mu_;
  Duration offset_ GUARDED_BY(mu_){};
  std::optional<WallTime> held_ GUARDED_BY(mu_);
};

// Issues ids for `d` of real time with next() (which waits out what it may),
// a reserve() of 64 every tenth call; appends them to `out`. Returns the
// refusals other than waits.
int issue_for(LeasedGenerator& g, Duration d, std::vector<std::uint64_t>& out) {
  int refusals = 0;
  const Steady::time_point until = Steady::now() + d;
  for (int i = 0; Steady::now() < until; ++i) {
    if (i % 10 == 9) {
      const IdBatch b = g.reserve(64);
      for (std::uint32_t k = 0; b.ok() && k < b.count; ++k) out.push_back(b.first + k);
      if (!b.ok() && b.code != Code::kClockBehind && b.code != Code::kSequenceExhausted) {
        ++refusals;
      }
    } else {
      const IdResult r = g.next();
      if (r.ok()) out.push_back(r.id);
      if (!r.ok() && r.code != Code::kClockBehind && r.code != Code::kSequenceExhausted) {
        ++refusals;
      }
    }
    std::this_thread::sleep_for(200us);
  }
  return refusals;
}

double ms_of_ids(const Layout& layout, std::uint64_t later, std::uint64_t earlier) {
  const WallTime a = layout.decode(later).value().time;
  const WallTime b = layout.decode(earlier).value().time;
  return std::chrono::duration<double, std::milli>(a - b).count();
}

// Issue 12, case 2: a step back of 95 ms, within max_backward, is being
// waited out when an operator fences the holder. The replacement on a fresh
// worker id used to start from the clock and serve ids 95 ms below those
// already served. The clock is held at the step until the replacement is in
// place, so that the fence lands inside the wait-out however slow the
// machine.
TEST(EtcdLeasedGenerator, FenceDuringAWaitedOutStepBackIsFollowedOnlyByHigherIds) {
  Result<std::unique_ptr<EtcdCluster>> cluster = EtcdCluster::start();
  ASSERT_TRUE(cluster.is_ok()) << cluster.status().to_string();
  EtcdOptions eo;
  eo.endpoints = cluster.value()->endpoints();
  eo.cluster = "continuity";
  ASSERT_TRUE(cluster.value()->initialize_namespace("continuity").is_ok());
  eo.request_timeout = 2s;
  SteppedClock clock;
  Result<std::unique_ptr<WorkerRegistry>> registry = make_etcd_registry(clock, eo);
  ASSERT_TRUE(registry.is_ok()) << registry.status().to_string();
  // The operator's `snowid workers fence`, on a registry of its own.
  Result<std::unique_ptr<WorkerRegistry>> operator_registry =
      make_etcd_registry(system_clock(), eo);
  ASSERT_TRUE(operator_registry.is_ok()) << operator_registry.status().to_string();

  LeasedGeneratorOptions o;
  o.lease.region = 1;
  o.lease.holder = HolderInfo{"continuity-test", ::getpid(), system_clock().wall_now(), ""};
  o.reacquire_every = 100ms;
  // As the daemon has: a fence per worker id.
  o.fence_store_for = [](WorkerId) { return std::make_shared<testing::MemoryFenceStore>(); };
  Result<std::unique_ptr<LeasedGenerator>> created =
      LeasedGenerator::create(clock, *registry.value(), o);
  ASSERT_TRUE(created.is_ok()) << created.status().to_string();
  LeasedGenerator& g = *created.value();
  const Layout& layout = g.layout();
  const WorkerId old = g.worker();

  std::vector<std::uint64_t> before;
  EXPECT_EQ(issue_for(g, 300ms, before), 0);
  ASSERT_FALSE(before.empty());
  clock.step_and_hold(-95ms);
  // Within max_backward: the last tick's sequence goes on, then the clock is
  // waited for.
  const IdResult same_tick = g.try_next();
  if (same_tick.ok()) {
    before.push_back(same_tick.id);
  } else {
    EXPECT_TRUE(same_tick.code == Code::kClockBehind || same_tick.code == Code::kSequenceExhausted)
        << code_name(same_tick.code);
  }

  ASSERT_TRUE(operator_registry.value()->fence(old).is_ok());
  const Steady::time_point fenced = Steady::now();
  while (g.reacquisitions() == 0 && Steady::now() < fenced + 10s) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_EQ(g.reacquisitions(), 1u) << "no fresh id within 10 s of the fence";
  ASSERT_NE(g.worker(), old) << "the fenced id is quarantined";
  const IdResult held = g.try_next();
  EXPECT_FALSE(held.ok()) << "the replacement issued "
                          << ms_of_ids(layout, held.id,
                                       *std::max_element(before.begin(), before.end()))
                          << " ms after the highest earlier id, with the clock still held";

  clock.run();
  std::vector<std::uint64_t> after;
  EXPECT_EQ(issue_for(g, 300ms, after), 0);
  if (held.ok()) after.insert(after.begin(), held.id);
  ASSERT_FALSE(after.empty()) << "nothing issued on the fresh id";
  const std::uint64_t top_before = *std::max_element(before.begin(), before.end());
  const std::uint64_t low_after = *std::min_element(after.begin(), after.end());
  const auto below =
      std::count_if(after.begin(), after.end(), [&](std::uint64_t id) { return id <= top_before; });
  std::printf(
      "[ measured ] %zu ids before the fence, %zu after on worker %u/%u; lowest after minus "
      "highest before: %.0f ms; ids after at or below the highest before: %zu\n",
      before.size(), after.size(), g.worker().region, g.worker().host,
      ms_of_ids(layout, low_after, top_before), static_cast<std::size_t>(below));
  std::fflush(stdout);
  EXPECT_EQ(below, 0);
  EXPECT_GT(low_after, top_before);
  for (std::uint64_t id : after) {
    const DecodedId d = layout.decode(id).value();
    EXPECT_EQ(d.values[static_cast<std::size_t>(layout.index_of(FieldRole::kHost))],
              g.worker().host);
  }
  std::vector<std::uint64_t> all = before;
  all.insert(all.end(), after.begin(), after.end());
  EXPECT_EQ(std::set<std::uint64_t>(all.begin(), all.end()).size(), all.size());
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end())) << "one caller's ids only increase";
  EXPECT_TRUE(g.close().is_ok());
}

}  // namespace
}  // namespace snowid
