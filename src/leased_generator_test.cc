// LeasedGenerator on a simulated clock and the in-memory registry. Its
// background thread and the keepers' threads run for real, so these tests
// wait for states by polling (with a generous real-time limit), never by
// sleeping a fixed time and hoping.
#include "snowid/leased_generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lease_test_support.h"
#include "mutex.h"
#include "snowid/lease_keeper.h"
#include "snowid/testing/memory_fence_store.h"
#include "snowid/testing/memory_registry.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid {

using internal::Mutex;
using internal::MutexLock;
namespace {

using namespace std::chrono_literals;
using test_support::eventually;
using testing::MemoryRegistry;

struct Decoded {
  WorkerId worker;
  WallTime time;
};

Decoded decode(const Layout& layout, std::uint64_t id) {
  const DecodedId d = layout.decode(id).value();
  const auto field = [&](FieldRole role) {
    return static_cast<std::uint32_t>(d.values[static_cast<std::size_t>(layout.index_of(role))]);
  };
  return Decoded{{field(FieldRole::kRegion), field(FieldRole::kHost)}, d.time};
}

class EventLog {
 public:
  void add(const LeaseEvent& e) {
    MutexLock lock(mu_);
    events_.push_back(to_string(e));
    kinds_.push_back(e.kind);
    codes_.push_back(e.status.code());
  }
  std::vector<LeaseEvent::Kind> kinds() const {
    MutexLock lock(mu_);
    return kinds_;
  }
  std::vector<std::string> events() const {
    MutexLock lock(mu_);
    return events_;
  }
  bool has(const std::string& prefix) const {
    MutexLock lock(mu_);
    return std::any_of(events_.begin(), events_.end(),
                       [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
  }
  std::vector<Code> codes_of(const std::string& prefix) const {
    MutexLock lock(mu_);
    std::vector<Code> out;
    for (std::size_t i = 0; i < events_.size(); ++i) {
      if (events_[i].rfind(prefix, 0) == 0) out.push_back(codes_[i]);
    }
    return out;
  }

 private:
  mutable Mutex mu_;
  std::vector<std::string> events_ GUARDED_BY(mu_);
  std::vector<LeaseEvent::Kind> kinds_ GUARDED_BY(mu_);
  std::vector<Code> codes_ GUARDED_BY(mu_);
};

std::string worker_text(WorkerId w) {
  return std::to_string(w.region) + "/" + std::to_string(w.host);
}

// Threads of this process: the entries of /proc/self/task.
std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ++n;
  }
  return n;
}

// The process's address space in kB (VmSize in /proc/self/status). A thread
// that has finished but was never joined is gone from /proc/self/task, yet
// keeps its stack mapped: only this shows it.
std::int64_t vm_size_kb() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmSize:") {
      std::int64_t kb = 0;
      in >> kb;
      return kb;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

// Fence stores for a LeasedGenerator that all fail to load while `corrupt`
// is set, as an unreadable fence file would.
struct CorruptibleFenceStores {
  std::atomic<bool> corrupt{false};
  std::function<std::shared_ptr<FenceStore>(WorkerId)> factory() {
    return [this](WorkerId) {
      auto store = std::make_shared<testing::MemoryFenceStore>();
      store->set_corrupt(corrupt.load());
      return store;
    };
  }
};

class LeasedGeneratorTest : public test_support::MemoryRegistryFixture {
 protected:
  EventLog log;

  LeasedGeneratorOptions options() {
    LeasedGeneratorOptions o;
    o.generator.random_start_bound = 0;
    o.lease.region = 2;
    o.lease.holder.host = "host-b";
    o.on_event = [this](const LeaseEvent& e) { log.add(e); };
    return o;
  }

  std::unique_ptr<LeasedGenerator> create(LeasedGeneratorOptions o) {
    auto g = LeasedGenerator::create(clock, registry, std::move(o));
    EXPECT_TRUE(g.is_ok()) << g.status().to_string();
    if (!g.is_ok()) return nullptr;
    return std::move(g).value();
  }

  // Issues `n` ids, one per millisecond of simulated time.
  std::vector<std::uint64_t> issue(LeasedGenerator& g, int n) {
    std::vector<std::uint64_t> ids;
    for (int i = 0; i < n; ++i) {
      clock.advance(1ms);
      const IdResult r = g.try_next();
      EXPECT_TRUE(r.ok()) << code_name(r.code);
      if (r.ok()) ids.push_back(r.id);
    }
    return ids;
  }
};

TEST_F(LeasedGeneratorTest, CreateAcquiresAnIdInTheRegionAndIssuesOnIt) {
  auto g = create(options());
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->ready());
  EXPECT_TRUE(g->health().is_ok());
  EXPECT_EQ(g->lease_state(), LeaseState::kHeld);
  const WorkerId w = g->worker();
  EXPECT_EQ(w.region, 2u);
  EXPECT_TRUE(registry.held(w));
  const auto ids = issue(*g, 3);
  ASSERT_EQ(ids.size(), 3u);
  for (std::uint64_t id : ids) EXPECT_EQ(decode(g->layout(), id).worker, w);
  EXPECT_EQ(log.events(), std::vector<std::string>{"acquired worker " + worker_text(w)});
  EXPECT_EQ(g->reacquisitions(), 0u);
}

// Two ids per region; another process holds the second one, so the fenced
// holder's first attempt at a fresh id fails and its refusals can be seen.
TEST_F(LeasedGeneratorTest, FenceRefusesAtOnceThenAFreshIdIsAcquiredAndIssuingResumes) {
  const Layout layout = test_support::worker_block_layout("two_hosts", 2, 1);
  MemoryRegistry two(clock, layout, 5s);
  LeaseKeeperOptions other_options;
  other_options.region = 2;
  auto other = LeaseKeeper::acquire(clock, two, other_options);
  ASSERT_TRUE(other.is_ok());
  LeasedGeneratorOptions o = options();
  o.generator.layout = layout;
  o.reacquire_every = 500ms;
  auto created = LeasedGenerator::create(clock, two, o);
  ASSERT_TRUE(created.is_ok()) << created.status().to_string();
  LeasedGenerator& g = *created.value();
  const WorkerId old = g.worker();
  ASSERT_NE(old, other.value()->worker());
  std::vector<std::uint64_t> ids = issue(g, 20);
  ASSERT_TRUE(two.fence(old).is_ok());
  const WallTime old_mark = *two.record(old)->high_water;

  // The watcher notices within moments; from the first refusal on, nothing
  // more is issued on the old id.
  IdResult r;
  ASSERT_TRUE(eventually([&] {
    r = g.try_next();
    if (r.ok()) ids.push_back(r.id);
    return !r.ok();
  }));
  EXPECT_EQ(r.code, Code::kLeaseUncertain) << code_name(r.code);
  EXPECT_TRUE(is_retryable(r.code)) << "callers retry while a fresh id is acquired";
  EXPECT_FALSE(g.ready());
  ASSERT_TRUE(eventually([&] { return log.has("acquire failed"); }));
  EXPECT_EQ(g.try_next().code, Code::kLeaseUncertain);

  // The other process leaves; its id comes out of quarantine 5 s later.
  ASSERT_TRUE(other.value()->release(clock.wall_now() - 1s).is_ok());
  clock.advance(5s);
  ASSERT_TRUE(eventually([&] {
    clock.advance(1ms);  // the retry timer runs on the simulated clock
    return g.reacquisitions() == 1;
  }));
  const WorkerId fresh = g.worker();
  EXPECT_NE(fresh, old) << "the fenced id is quarantined";
  EXPECT_TRUE(two.held(fresh));
  EXPECT_FALSE(two.held(old));
  EXPECT_TRUE(g.ready());
  EXPECT_EQ(g.lease_state(), LeaseState::kHeld);
  const auto after = issue(g, 20);
  ASSERT_EQ(after.size(), 20u);
  for (std::uint64_t id : after) EXPECT_EQ(decode(layout, id).worker, fresh);
  for (std::uint64_t id : ids) {
    const Decoded d = decode(layout, id);
    EXPECT_EQ(d.worker, old);
    EXPECT_LE(d.time, old_mark);
  }
  ids.insert(ids.end(), after.begin(), after.end());
  EXPECT_EQ(std::set<std::uint64_t>(ids.begin(), ids.end()).size(), ids.size());
  const GeneratorStats stats = g.stats();
  EXPECT_GE(stats.lease_refusals + stats.refusals, 1u) << "summed over both generators";
  EXPECT_TRUE(log.has("lease lost on worker " + worker_text(old)));
  EXPECT_TRUE(log.has("acquired worker " + worker_text(fresh)));
  EXPECT_EQ(log.codes_of("lease lost"), std::vector<Code>{Code::kLeaseLost});
  EXPECT_EQ(log.codes_of("acquire failed")[0], Code::kResourceExhausted);
  // The same story in kinds, which owners switch on.
  const std::vector<LeaseEvent::Kind> kinds = log.kinds();
  ASSERT_GE(kinds.size(), 4u);
  EXPECT_EQ(kinds.front(), LeaseEvent::Kind::kAcquired);
  EXPECT_EQ(kinds[1], LeaseEvent::Kind::kLost);
  EXPECT_EQ(kinds[2], LeaseEvent::Kind::kAcquireFailed);
  EXPECT_EQ(kinds.back(), LeaseEvent::Kind::kAcquired);
  EXPECT_TRUE(g.close().is_ok());
  EXPECT_EQ(log.kinds().back(), LeaseEvent::Kind::kReleased);
}

// A replacement that is quick is seamless: callers may never see a refusal,
// but no id is issued on the fenced worker once the fence is noticed.
TEST_F(LeasedGeneratorTest, FenceWithAFreeIdAvailableSwitchesWorkersWithoutDuplicates) {
  auto g = create(options());
  ASSERT_NE(g, nullptr);
  const WorkerId old = g->worker();
  std::vector<std::uint64_t> ids = issue(*g, 10);
  ASSERT_TRUE(registry.fence(old).is_ok());
  const WallTime old_mark = *registry.record(old)->high_water;
  ASSERT_TRUE(eventually([&] { return g->reacquisitions() == 1; }));
  EXPECT_NE(g->worker(), old);
  const auto after = issue(*g, 10);
  ASSERT_EQ(after.size(), 10u);
  for (std::uint64_t id : after) EXPECT_EQ(decode(g->layout(), id).worker, g->worker());
  for (std::uint64_t id : ids) EXPECT_LE(decode(g->layout(), id).time, old_mark);
  ids.insert(ids.end(), after.begin(), after.end());
  EXPECT_EQ(std::set<std::uint64_t>(ids.begin(), ids.end()).size(), ids.size());
}

// A host held by its owner (the skew monitor, after fencing its clock) takes
// no fresh id after a loss while may_acquire says no: each refusal is told
// as a failed attempt, and the id is taken once it says yes.
TEST_F(LeasedGeneratorTest, MayAcquireHoldsTheReplacementUntilItAllows) {
  std::atomic<bool> allow{false};
  std::atomic<int> asked{0};
  LeasedGeneratorOptions o = options();
  o.may_acquire = [&]() -> Status {
    asked.fetch_add(1);
    if (allow.load()) return Status::ok();
    return Status(Code::kUnavailable, "held: the clock was fenced");
  };
  auto g = create(std::move(o));
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(asked.load(), 0) << "not asked for the first id";
  const WorkerId old = g->worker();
  ASSERT_TRUE(registry.fence(old).is_ok());
  ASSERT_TRUE(eventually([&] { return asked.load() >= 1 && log.has("acquire failed"); }));
  EXPECT_EQ(log.codes_of("acquire failed")[0], Code::kUnavailable);
  for (int i = 0; i < 3; ++i) {
    clock.advance(1s);  // reacquire_every, however often it was refused: asked again
    const int before = asked.load();
    ASSERT_TRUE(eventually([&] {
      clock.advance(1ms);
      return asked.load() > before;
    }));
  }
  EXPECT_EQ(g->reacquisitions(), 0u);
  EXPECT_EQ(g->try_next().code, Code::kLeaseUncertain);
  EXPECT_EQ(g->worker(), old) << "no fresh id while held";
  EXPECT_FALSE(registry.held(old));
  allow.store(true);
  ASSERT_TRUE(eventually([&] {
    clock.advance(1s);
    return g->reacquisitions() == 1;
  }));
  EXPECT_TRUE(g->try_next().ok());
  EXPECT_TRUE(g->close().is_ok());
}

// With the host pinned, the replacement must be the same worker id: it waits
// out the quarantine and then the old holder's mark, so its ids come after
// every id the old holder could have issued.
TEST_F(LeasedGeneratorTest, PinnedHostIsReacquiredOnlyAfterItsMarkAndIssuesPastIt) {
  MemoryRegistry no_quarantine(clock, Layout::snowid_default(), Duration::zero());
  LeasedGeneratorOptions o = options();
  o.lease.host = 7;
  o.reacquire_every = 500ms;
  auto created = LeasedGenerator::create(clock, no_quarantine, o);
  ASSERT_TRUE(created.is_ok()) << created.status().to_string();
  auto& g = created.value();
  const WorkerId w{2, 7};
  ASSERT_EQ(g->worker(), w);
  std::vector<std::uint64_t> before = issue(*g, 10);
  ASSERT_TRUE(no_quarantine.fence(w).is_ok());
  const WallTime mark = *no_quarantine.record(w)->high_water;
  ASSERT_TRUE(eventually([&] { return log.has("acquire failed"); }));
  EXPECT_EQ(log.codes_of("acquire failed")[0], Code::kResourceExhausted);
  EXPECT_EQ(g->try_next().code, Code::kLeaseUncertain);

  // Free again when the wall clock reaches the mark (no quarantine here).
  clock.set_wall(mark);
  ASSERT_TRUE(eventually([&] {
    clock.advance_monotonic(10ms);  // the retry timer runs on the monotonic clock
    return g->reacquisitions() == 1;
  }));
  ASSERT_EQ(g->worker(), w);
  ASSERT_LT(clock.wall_now(), mark + 100ms);
  const IdResult early = g->try_next();
  EXPECT_EQ(early.code, Code::kClockBehind) << "not before the mark plus the allowed skew";
  EXPECT_FALSE(g->ready());
  clock.set_wall(mark + 100ms);
  const IdResult first = g->try_next();
  ASSERT_TRUE(first.ok()) << code_name(first.code);
  EXPECT_TRUE(g->ready());
  const auto after = issue(*g, 10);
  for (std::uint64_t id : before) EXPECT_LE(decode(g->layout(), id).time, mark);
  EXPECT_GT(decode(g->layout(), first.id).time, mark);
  for (std::uint64_t id : after) EXPECT_GT(decode(g->layout(), id).time, mark);
  EXPECT_EQ(g->close().code(), Code::kOk);
}

// --- Ids never go back within a process (issue 12, case 2) -----------------

// The highest of `ids`.
std::uint64_t highest(const std::vector<std::uint64_t>& ids) {
  return *std::max_element(ids.begin(), ids.end());
}

// Issues `n` ids by next() and a batch of `batch` by reserve(), one
// millisecond of simulated time apart; appends every id to `out`.
void issue_ids_and_a_batch(testing::SimulatedClock& clock, LeasedGenerator& g, int n,
                           std::uint32_t batch, std::vector<std::uint64_t>& out) {
  for (int i = 0; i < n; ++i) {
    clock.advance(1ms);
    const IdResult r = g.try_next();
    ASSERT_TRUE(r.ok()) << code_name(r.code);
    out.push_back(r.id);
  }
  clock.advance(1ms);
  const IdBatch b = g.try_reserve(batch);
  ASSERT_TRUE(b.ok()) << code_name(b.code);
  for (std::uint32_t i = 0; i < b.count; ++i) out.push_back(b.first + i);
}

// A step back of 95 ms is being waited out (within max_backward) when the
// lease is fenced. The replacement generator, on another worker id, used to
// start from the clock: its first ids were 95 ms below the ones already
// served. It starts past its predecessor's last tick and waits for the clock
// as its predecessor would have.
TEST_F(LeasedGeneratorTest, ReplacementDuringAWaitedOutStepBackIssuesAboveEveryEarlierId) {
  LeasedGeneratorOptions o = options();
  o.fence_store_for = [](WorkerId) { return std::make_shared<testing::MemoryFenceStore>(); };
  auto g = create(o);
  ASSERT_NE(g, nullptr);
  const WorkerId old = g->worker();
  std::vector<std::uint64_t> before;
  issue_ids_and_a_batch(clock, *g, 20, 100, before);
  const WallTime last = decode(g->layout(), highest(before)).time;
  ASSERT_EQ(last, clock.wall_now());

  clock.step_wall(-95ms);
  // Within max_backward: the last tick's sequence goes on, then the clock is
  // waited for.
  const IdResult same_tick = g->try_next();
  ASSERT_TRUE(same_tick.ok()) << code_name(same_tick.code);
  EXPECT_EQ(decode(g->layout(), same_tick.id).time, last);
  before.push_back(same_tick.id);
  ASSERT_TRUE(registry.fence(old).is_ok());
  ASSERT_TRUE(eventually([&] { return g->reacquisitions() == 1; }));
  ASSERT_NE(g->worker(), old);
  EXPECT_TRUE(g->health().is_ok());

  // Nothing in or before the predecessor's last tick, on the fresh id too.
  const IdResult waiting = g->try_next();
  ASSERT_EQ(waiting.code, Code::kClockBehind)
      << code_name(waiting.code) << ": issued "
      << (waiting.ok() ? format_iso8601(decode(g->layout(), waiting.id).time) : "nothing")
      << " after " << format_iso8601(last);
  EXPECT_GT(waiting.retry_after, 90ms);
  EXPECT_LE(waiting.retry_after, 96ms);
  EXPECT_EQ(g->try_reserve(10).code, Code::kClockBehind);
  clock.advance(95ms);  // back at the last tick: it is used up
  EXPECT_FALSE(g->try_next().ok());

  std::vector<std::uint64_t> after;
  issue_ids_and_a_batch(clock, *g, 20, 100, after);
  const std::uint64_t top = highest(before);
  for (std::uint64_t id : after) {
    EXPECT_GT(id, top);
    EXPECT_EQ(decode(g->layout(), id).worker, g->worker());
  }
  EXPECT_EQ(decode(g->layout(), after.front()).time, last + 1ms);
  EXPECT_TRUE(std::is_sorted(after.begin(), after.end()));
  EXPECT_TRUE(g->close().is_ok());
}

// The same rule as for a step back on one generator: a replacement whose
// clock is behind its predecessor's last tick by more than max_backward
// refuses, turns unhealthy and gives its id back. It used to issue from the
// clock, a second below the ids already served.
TEST_F(LeasedGeneratorTest, ReplacementWithTheClockFarBehindThePredecessorRefusesAndReleases) {
  auto g = create(options());
  ASSERT_NE(g, nullptr);
  const WorkerId old = g->worker();
  const std::vector<std::uint64_t> before = issue(*g, 10);
  ASSERT_EQ(before.size(), 10u);
  ASSERT_TRUE(registry.fence(old).is_ok());
  ASSERT_TRUE(eventually([&] { return g->reacquisitions() == 1; }));
  const WorkerId fresh = g->worker();
  ASSERT_NE(fresh, old);

  clock.step_wall(-1s);
  const IdResult r = g->try_next();
  EXPECT_EQ(r.code, Code::kClockMovedBack)
      << code_name(r.code)
      << (r.ok() && r.id < highest(before) ? ": an id below the earlier ones" : "");
  ASSERT_TRUE(eventually([&] { return !registry.held(fresh); }));
  EXPECT_EQ(g->health().code(), Code::kClockMovedBack);
  EXPECT_EQ(g->try_next().code, Code::kUnhealthy);
  EXPECT_FALSE(g->ready());
  EXPECT_TRUE(log.has("clock moved back: released worker " + worker_text(fresh)));
  EXPECT_TRUE(g->close().is_ok());
}

// The floor is what this process issued, not what the last generator did: a
// replacement that issued nothing before it too was fenced passes the first
// one's last tick on to the next.
TEST_F(LeasedGeneratorTest, FloorOutlivesAReplacementThatIssuedNothing) {
  auto g = create(options());
  ASSERT_NE(g, nullptr);
  std::vector<std::uint64_t> before;
  issue_ids_and_a_batch(clock, *g, 5, 50, before);
  const WallTime last = decode(g->layout(), highest(before)).time;
  clock.step_wall(-95ms);
  for (std::uint64_t n = 1; n <= 2; ++n) {
    const WorkerId w = g->worker();
    ASSERT_TRUE(registry.fence(w).is_ok());
    ASSERT_TRUE(eventually([&] { return g->reacquisitions() == n; }));
    ASSERT_NE(g->worker(), w);
    EXPECT_EQ(g->try_next().code, Code::kClockBehind) << "replacement " << n;
  }
  clock.advance(96ms);
  const IdResult r = g->try_next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_GT(r.id, highest(before));
  EXPECT_EQ(decode(g->layout(), r.id).time, last + 1ms);
  EXPECT_TRUE(g->close().is_ok());
}

TEST_F(LeasedGeneratorTest, ClockStepBackBeyondMaxBackwardReleasesTheIdAndStaysUnhealthy) {
  LeasedGeneratorOptions o = options();
  std::atomic<int> user_callbacks{0};
  std::atomic<bool> held_at_callback{true};
  WorkerId w;
  o.generator.on_unhealthy = [&](const Status& s) {
    EXPECT_EQ(s.code(), Code::kClockMovedBack);
    held_at_callback = registry.held(w);
    ++user_callbacks;
  };
  auto g = create(o);
  ASSERT_NE(g, nullptr);
  w = g->worker();
  const auto ids = issue(*g, 5);
  ASSERT_EQ(ids.size(), 5u);
  const WallTime last = decode(g->layout(), ids.back()).time;
  clock.step_wall(-1s);
  EXPECT_EQ(g->try_next().code, Code::kClockMovedBack);
  EXPECT_FALSE(g->ready());
  EXPECT_EQ(g->health().code(), Code::kClockMovedBack);
  ASSERT_TRUE(eventually([&] { return user_callbacks.load() == 1; }));
  EXPECT_FALSE(held_at_callback) << "the user's callback runs after the release";
  EXPECT_EQ(g->lease_state(), LeaseState::kReleased);
  const auto rec = registry.record(w);
  ASSERT_TRUE(rec.has_value());
  EXPECT_FALSE(rec->holder.has_value());
  EXPECT_EQ(rec->released_at, clock.wall_now());
  EXPECT_EQ(rec->high_water, last) << "the exact last instant issued";
  EXPECT_EQ(g->try_next().code, Code::kUnhealthy);
  EXPECT_TRUE(log.has("clock moved back: released worker " + worker_text(w)));
  // A host whose clock cannot be trusted must not take another id, whatever
  // time passes.
  clock.advance(30s);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(registry.acquires(), 1u);
  EXPECT_EQ(g->reacquisitions(), 0u);
  EXPECT_EQ(g->try_next().code, Code::kUnhealthy);
  EXPECT_TRUE(g->close().is_ok());
  EXPECT_EQ(registry.releases(), 1u) << "released once";
}

TEST_F(LeasedGeneratorTest, CloseReleasesWithTheExactLastInstantIssued) {
  auto g = create(options());
  ASSERT_NE(g, nullptr);
  const WorkerId w = g->worker();
  clock.advance(3s);  // the renewal thread moves the mark 8 s past this
  ASSERT_TRUE(eventually([&] { return registry.renewals() >= 1; }));
  const auto ids = issue(*g, 7);
  ASSERT_EQ(ids.size(), 7u);
  const WallTime last = decode(g->layout(), ids.back()).time;
  ASSERT_GT(registry.record(w)->high_water, last + 7s);
  clock.advance(5ms);
  ASSERT_TRUE(g->close().is_ok());
  const auto rec = registry.record(w);
  EXPECT_EQ(rec->high_water, last);
  EXPECT_EQ(rec->released_at, clock.wall_now());
  EXPECT_FALSE(rec->holder.has_value());
  EXPECT_EQ(g->lease_state(), LeaseState::kReleased);
  EXPECT_FALSE(g->ready());
  EXPECT_TRUE(log.has("released worker " + worker_text(w)));
  EXPECT_EQ(g->try_next().code, Code::kFailedPrecondition) << "closed is not 'uncertain'";
  EXPECT_EQ(g->close().code(), Code::kFailedPrecondition);
}

TEST_F(LeasedGeneratorTest, CloseWithNothingIssuedKeepsTheRecordedMark) {
  auto g = create(options());
  ASSERT_NE(g, nullptr);
  const WorkerId w = g->worker();
  const WallTime mark = *registry.record(w)->high_water;
  ASSERT_TRUE(g->close().is_ok());
  EXPECT_EQ(registry.record(w)->high_water, mark);
  EXPECT_FALSE(registry.held(w));
}

TEST_F(LeasedGeneratorTest, DestroyingWithoutCloseAbandonsWithoutReleasing) {
  auto g = create(options());
  ASSERT_NE(g, nullptr);
  const WorkerId w = g->worker();
  const WallTime mark = *registry.record(w)->high_water;
  g.reset();
  EXPECT_EQ(registry.releases(), 0u);
  EXPECT_EQ(registry.abandons(), 1u);
  EXPECT_FALSE(registry.held(w));
  EXPECT_EQ(registry.record(w)->high_water, mark) << "as after a crash";
  EXPECT_FALSE(registry.record(w)->released_at.has_value());
}

// Each lost lease used to leave its keeper's two threads finished but never
// joined, each keeping its stack mapped: 200 fences grew the address space
// by 3.5 GB.
TEST_F(LeasedGeneratorTest, ThreadsOfLostLeasesAreJoinedWhenTheyAreReplaced) {
  auto g = create(options());
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(eventually([&] { return thread_count() > 1; }));
  const std::size_t threads_at_start = thread_count();
  const std::int64_t vm_at_start = vm_size_kb();
  std::size_t most_threads = threads_at_start;
  // 100 of the region's 256 ids; the fenced ones stay quarantined (the
  // simulated clock does not move).
  constexpr int kFences = 100;
  for (int i = 0; i < kFences; ++i) {
    const WorkerId w = g->worker();
    ASSERT_TRUE(registry.fence(w).is_ok()) << "fence " << i;
    ASSERT_TRUE(eventually([&] {
      return g->reacquisitions() == static_cast<std::uint64_t>(i + 1);
    })) << "no fresh id after fence "
        << i;
    most_threads = std::max(most_threads, thread_count());
  }
  EXPECT_EQ(registry.abandons(), static_cast<std::uint64_t>(kFences));
  const std::size_t threads_at_end = thread_count();
  const std::int64_t vm_growth_mb = (vm_size_kb() - vm_at_start) / 1024;
  std::cout << "after " << kFences << " fences: threads " << threads_at_start << " -> "
            << threads_at_end << " (at most " << most_threads << "), address space grew "
            << vm_growth_mb << " MB\n";
  EXPECT_LT(most_threads, threads_at_start + 20);
  // Leaked stacks would add 2 x 100 x the stack size (8 MB by default).
  EXPECT_LT(vm_growth_mb, 400);
  const IdResult r = g->try_next();
  EXPECT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_TRUE(g->close().is_ok());
}

// A fresh id whose generator cannot be created (its fence cannot be read)
// was released with the full mark of its acquire, keeping it out of reach
// stop_after longer on every retry. Nothing was issued on it: it is released
// with the previous holder's mark.
TEST_F(LeasedGeneratorTest, FailedGeneratorCreationReleasesTheIdWithThePreviousMark) {
  MemoryRegistry no_quarantine(clock, Layout::snowid_default(), Duration::zero());
  CorruptibleFenceStores stores;
  LeasedGeneratorOptions o = options();
  o.lease.host = 7;
  o.reacquire_every = 500ms;
  o.fence_store_for = stores.factory();
  auto created = LeasedGenerator::create(clock, no_quarantine, o);
  ASSERT_TRUE(created.is_ok()) << created.status().to_string();
  auto& g = created.value();
  const WorkerId w{2, 7};
  ASSERT_EQ(issue(*g, 5).size(), 5u);
  stores.corrupt = true;
  ASSERT_TRUE(no_quarantine.fence(w).is_ok());
  const WallTime mark = *no_quarantine.record(w)->high_water;
  ASSERT_TRUE(eventually([&] { return log.has("acquire failed"); }));
  EXPECT_EQ(log.codes_of("acquire failed")[0], Code::kResourceExhausted) << "until the mark";

  clock.set_wall(mark);
  ASSERT_TRUE(eventually([&] {
    clock.advance_monotonic(10ms);  // the retry timer runs on the monotonic clock
    return log.codes_of("acquire failed").size() == 2;
  }));
  EXPECT_EQ(log.codes_of("acquire failed")[1], Code::kDataLoss);
  EXPECT_EQ(no_quarantine.acquires(), 2u);
  EXPECT_EQ(no_quarantine.releases(), 1u);
  const auto rec = no_quarantine.record(w);
  EXPECT_FALSE(rec->holder.has_value());
  EXPECT_EQ(rec->high_water, mark)
      << "not the failed holder's own mark, " << format_iso8601(mark + 8s);
  EXPECT_EQ(rec->released_at, mark);
  EXPECT_FALSE(rec->quarantined_until.has_value()) << "free again at once";
  EXPECT_EQ(g->try_next().code, Code::kLeaseUncertain);

  stores.corrupt = false;
  ASSERT_TRUE(eventually([&] {
    clock.advance_monotonic(10ms);
    return g->reacquisitions() == 1;
  }));
  EXPECT_EQ(g->worker(), w);
  clock.set_wall(mark + 100ms);
  const IdResult r = g->try_next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_GT(decode(g->layout(), r.id).time, mark);
  EXPECT_TRUE(g->close().is_ok());
}

// Failed re-acquisitions are retried after reacquire_every, then twice that,
// and so on; a success starts again from reacquire_every. A fresh id whose
// generator could not be created is released with a mark of the layout's
// epoch: only the quarantine keeps it out of reach, not stop_after more.
TEST_F(LeasedGeneratorTest, FailedReacquisitionsBackOffExponentiallyAndResetOnSuccess) {
  CorruptibleFenceStores stores;
  LeasedGeneratorOptions o = options();
  o.reacquire_every = 1s;
  o.fence_store_for = stores.factory();
  auto g = create(o);
  ASSERT_NE(g, nullptr);
  const WorkerId first = g->worker();
  stores.corrupt = true;
  ASSERT_TRUE(registry.fence(first).is_ok());

  std::size_t failures = 1;
  ASSERT_TRUE(eventually([&] { return log.codes_of("acquire failed").size() == failures; }));
  EXPECT_EQ(log.codes_of("acquire failed")[0], Code::kDataLoss);
  EXPECT_EQ(registry.acquires(), 2u) << "the first attempt follows the loss at once";
  // Waits of 1 s, 2 s, 4 s: nothing a millisecond early, a retry on time.
  for (Duration wait : {1s, 2s, 4s}) {
    clock.advance_monotonic(wait - 1ms);
    std::this_thread::sleep_for(250ms);  // the background thread polls every 100 ms
    EXPECT_EQ(registry.acquires(), failures + 1) << "retried before " << wait.count() << " ns";
    clock.advance_monotonic(1ms);
    ++failures;
    ASSERT_TRUE(eventually([&] { return log.codes_of("acquire failed").size() == failures; }));
    EXPECT_EQ(registry.acquires(), failures + 1);
  }
  // Every failed id: given back with a mark of the epoch, no quarantine from
  // a mark in the future.
  std::size_t failed_ids = 0;
  const std::vector<WorkerRecord> records = registry.list(2u).value();
  for (const WorkerRecord& rec : records) {
    if (rec.worker == first) continue;
    ++failed_ids;
    EXPECT_FALSE(rec.holder.has_value());
    EXPECT_EQ(rec.high_water, g->layout().epoch());
    EXPECT_EQ(rec.released_at, clock.wall_now());
    EXPECT_EQ(rec.quarantined_until, clock.wall_now() + 5s);
  }
  EXPECT_EQ(failed_ids, failures);

  stores.corrupt = false;
  clock.advance_monotonic(8s);
  ASSERT_TRUE(eventually([&] { return g->reacquisitions() == 1; }));
  ASSERT_TRUE(g->try_next().ok());

  // After the success the wait is back to 1 s.
  stores.corrupt = true;
  const std::uint64_t acquires = registry.acquires();
  ASSERT_TRUE(registry.fence(g->worker()).is_ok());
  ++failures;
  ASSERT_TRUE(eventually([&] { return log.codes_of("acquire failed").size() == failures; }));
  EXPECT_EQ(registry.acquires(), acquires + 1);
  clock.advance_monotonic(999ms);
  std::this_thread::sleep_for(250ms);
  EXPECT_EQ(registry.acquires(), acquires + 1);
  clock.advance_monotonic(1ms);
  ASSERT_TRUE(eventually([&] { return registry.acquires() == acquires + 2; }));
  stores.corrupt = false;
  EXPECT_TRUE(g->close().is_ok());
}

// The old generator reports the clock gone back after the background thread
// decided to replace its lost lease, but before the replacement: no fresh id
// may be taken, and the report is handled for the generator that made it
// (it used to release the replacement's lease while its generator issued).
TEST_F(LeasedGeneratorTest, ClockBackReportedWhileALostLeaseIsReplacedTakesNoFreshId) {
  LeasedGeneratorOptions o = options();
  std::atomic<int> user_callbacks{0};
  o.generator.on_unhealthy = [&](const Status& s) {
    EXPECT_EQ(s.code(), Code::kClockMovedBack);
    ++user_callbacks;
  };
  std::atomic<LeasedGenerator*> self{nullptr};
  std::atomic<Code> reported{Code::kOk};
  o.on_event = [&](const LeaseEvent& e) {
    log.add(e);
    // On the background thread, once it handles the loss and before it stops
    // the old generator: a caller of that generator sees the clock go back.
    if (e.kind == LeaseEvent::Kind::kLost && self.load() != nullptr) {
      clock.step_wall(-1s);
      std::thread caller([&] { reported = self.load()->try_next().code; });
      caller.join();
    }
  };
  auto g = create(o);
  ASSERT_NE(g, nullptr);
  const WorkerId w = g->worker();
  ASSERT_EQ(issue(*g, 5).size(), 5u);
  self = g.get();
  ASSERT_TRUE(registry.fence(w).is_ok());
  ASSERT_TRUE(eventually([&] { return user_callbacks.load() == 1; }));
  EXPECT_EQ(reported.load(), Code::kClockMovedBack) << code_name(reported.load());
  EXPECT_EQ(registry.acquires(), 1u) << "a host whose clock went back takes no fresh id";
  EXPECT_EQ(g->reacquisitions(), 0u);
  EXPECT_EQ(g->worker(), w);
  EXPECT_FALSE(registry.held(w));
  EXPECT_EQ(g->try_next().code, Code::kUnhealthy);
  EXPECT_FALSE(g->ready());
  EXPECT_EQ(g->health().code(), Code::kClockMovedBack);
  EXPECT_TRUE(log.has("clock moved back: did not release worker " + worker_text(w)))
      << "its lease was already lost";
  clock.advance(30s);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(registry.acquires(), 1u);
  EXPECT_EQ(user_callbacks.load(), 1);
  EXPECT_TRUE(g->close().is_ok());
  EXPECT_EQ(registry.releases(), 0u);
}

// Issue 12, case 4: a forward step of 10 s left a daemon answering
// LEASE_UNCERTAIN until the next renewal on schedule, 2.6 s later. The
// keeper renews as soon as it sees the wall clock past the mark; here the
// monotonic clock stands still, so nothing else could make it renew.
TEST_F(LeasedGeneratorTest, ForwardStepPastTheMarkIsServedAgainAfterAnEarlyRenewal) {
  auto g = create(options());
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(issue(*g, 5).size(), 5u);
  clock.step_wall(10s);
  const auto stepped = std::chrono::steady_clock::now();
  IdResult r;
  std::set<Code> refusals;
  ASSERT_TRUE(eventually([&] {
    r = g->try_next();
    if (!r.ok()) refusals.insert(r.code);
    return r.ok();
  })) << "still refusing: "
      << code_name(r.code);
  const auto window = std::chrono::steady_clock::now() - stepped;
  std::cout << "[ measured ] forward step of 10 s: ids refused for "
            << std::chrono::duration_cast<std::chrono::milliseconds>(window).count()
            << " ms of real time\n";
  for (Code c : refusals) EXPECT_EQ(c, Code::kLeaseUncertain) << code_name(c);
  EXPECT_EQ(decode(g->layout(), r.id).time, clock.wall_now());
  EXPECT_EQ(registry.renewals(), 1u);
  EXPECT_EQ(g->lease_state(), LeaseState::kHeld);
  EXPECT_TRUE(g->close().is_ok());
}

TEST_F(LeasedGeneratorTest, RegistryUnavailableAtCreateFailsAndIssuesNothing) {
  registry.set_unavailable(true);
  auto g = LeasedGenerator::create(clock, registry, options());
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().code(), Code::kUnavailable);
  registry.set_unavailable(false);
  EXPECT_EQ(registry.acquires(), 0u);
  EXPECT_TRUE(registry.list(std::nullopt).value().empty());
}

TEST_F(LeasedGeneratorTest, BlockFullAtCreateFails) {
  LeasedGeneratorOptions o = options();
  o.lease.host = 3;
  auto first = create(o);
  ASSERT_NE(first, nullptr);
  auto second = LeasedGenerator::create(clock, registry, o);
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), Code::kResourceExhausted);
}

TEST_F(LeasedGeneratorTest, InvalidReacquireEveryIsRefused) {
  LeasedGeneratorOptions o = options();
  o.reacquire_every = Duration::zero();
  EXPECT_EQ(LeasedGenerator::create(clock, registry, o).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(registry.acquires(), 0u);
}

// The registry goes away for good: issuing goes on until 8 s after the last
// good send, stops there, the lease is given up at 10 s, and a fresh id is
// acquired once the registry is back.
TEST_F(LeasedGeneratorTest, LongRegistryOutageStopsIssuingThenLosesThenReacquiresWhenBack) {
  LeasedGeneratorOptions o = options();
  o.reacquire_every = 1s;
  auto g = create(o);
  ASSERT_NE(g, nullptr);
  const WorkerId old = g->worker();
  const MonoTime t0 = clock.mono_now();  // the acquire: the last good send
  registry.set_unavailable(true);
  clock.advance(7999ms);
  EXPECT_TRUE(g->try_next().ok()) << "still inside stop_after";
  clock.advance(1ms);
  EXPECT_EQ(g->try_next().code, Code::kLeaseUncertain) << "stopped at 8 s, by the guard alone";
  ASSERT_TRUE(eventually([&] { return g->lease_state() == LeaseState::kUncertain; }));
  EXPECT_FALSE(g->ready());
  // The state follows the timeline on its own; the renewal thread (woken on
  // real time) must also have tried and failed before the lease runs out.
  ASSERT_TRUE(eventually([&] { return g->lease_stats().renewal_failures >= 1; }));

  clock.advance(2s);
  ASSERT_EQ(clock.mono_now(), t0 + 10s);
  ASSERT_TRUE(eventually([&] { return log.has("acquire failed"); }));
  EXPECT_TRUE(log.has("lease lost on worker " + worker_text(old)));
  EXPECT_EQ(g->try_next().code, Code::kLeaseUncertain) << "replacement pending, not 'lost'";
  EXPECT_EQ(log.codes_of("acquire failed")[0], Code::kUnavailable);

  registry.set_unavailable(false);
  ASSERT_TRUE(eventually([&] {
    clock.advance(10ms);  // the retry timer runs on the simulated clock
    return g->reacquisitions() == 1;
  }));
  const IdResult r = g->try_next();
  ASSERT_TRUE(r.ok()) << code_name(r.code);
  EXPECT_EQ(decode(g->layout(), r.id).worker, g->worker());
  EXPECT_EQ(g->lease_state(), LeaseState::kHeld);
  EXPECT_GE(g->lease_stats().renewal_failures, 1u);
  ASSERT_TRUE(g->close().is_ok());
}

TEST(LeaseEventText, EachKindReadsAsOneLineNamingTheWorker) {
  const WorkerId w{1, 17};
  EXPECT_EQ(to_string({LeaseEvent::Kind::kAcquired, w, Status::ok()}), "acquired worker 1/17");
  EXPECT_EQ(to_string({LeaseEvent::Kind::kAcquireFailed, std::nullopt,
                       Status(Code::kResourceExhausted, "full")}),
            "acquire failed");
  EXPECT_EQ(to_string({LeaseEvent::Kind::kLost, w, Status(Code::kLeaseLost, "fenced")}),
            "lease lost on worker 1/17");
  EXPECT_EQ(to_string({LeaseEvent::Kind::kReleased, w, Status::ok(), true}),
            "released worker 1/17");
  EXPECT_EQ(to_string({LeaseEvent::Kind::kReleased, w, Status(Code::kUnavailable, "x"), false}),
            "release failed for worker 1/17");
  EXPECT_EQ(to_string({LeaseEvent::Kind::kReleasedUnused, w, Status::ok(), true}),
            "released unused worker 1/17");
  EXPECT_EQ(to_string({LeaseEvent::Kind::kClockMovedBack, w, Status::ok(), true}),
            "clock moved back: released worker 1/17");
  EXPECT_EQ(
      to_string({LeaseEvent::Kind::kClockMovedBack, w, Status(Code::kUnavailable, "x"), false}),
      "clock moved back: did not release worker 1/17");
}

}  // namespace
}  // namespace snowid
