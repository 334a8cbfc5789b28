// Many threads on sequence buffers while the store misbehaves at random:
// failures, replies lost after commit, delays. Whatever happens, no number
// is handed out twice, every number lies in a range the store returned to
// the buffer, and each thread's numbers increase. Run under ThreadSanitizer.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <random>
#include <thread>
#include <vector>

#include "mutex.h"
#include "snowid/sequence_buffer.h"
#include "snowid/testing/faulty_ticket_store.h"
#include "snowid/testing/memory_ticket_store.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid {

using internal::Mutex;
using internal::MutexLock;
namespace {

using namespace std::chrono_literals;
using testing::FaultyTicketStore;
using testing::MemoryTicketStore;
using testing::SimulatedClock;

// Forwards to another store and records every range it returns: the ranges
// the buffers above it actually received.
class RecordingStore final : public TicketStore {
 public:
  explicit RecordingStore(TicketStore& inner) : inner_(inner) {}
  Status migrate() override { return inner_.migrate(); }
  Status create(std::string_view name, std::int64_t start, std::int64_t step) override {
    return inner_.create(name, start, step);
  }
  Result<SequenceRange> take(std::string_view name, std::int64_t size) override {
    Result<SequenceRange> r = inner_.take(name, size);
    if (r.is_ok()) {
      MutexLock lock(mu_);
      ranges_.push_back(r.value());
    }
    return r;
  }
  Result<SequenceInfo> get(std::string_view name) override { return inner_.get(name); }
  Result<std::vector<SequenceInfo>> list() override { return inner_.list(); }
  std::string_view kind() const noexcept override { return inner_.kind(); }

  // Sorted by first number.
  std::vector<SequenceRange> ranges() const {
    MutexLock lock(mu_);
    std::vector<SequenceRange> out = ranges_;
    std::sort(out.begin(), out.end(),
              [](const SequenceRange& a, const SequenceRange& b) { return a.first < b.first; });
    return out;
  }

 private:
  TicketStore& inner_;
  mutable Mutex mu_;
  std::vector<SequenceRange> ranges_ GUARDED_BY(mu_);
};

// Injects faults into `store` at random until stopped. Only retryable
// faults: a final one would end the test's sequence.
class Chaos {
 public:
  Chaos(FaultyTicketStore& store, unsigned seed) : store_(store), rng_(seed) {
    thread_ = std::thread([this] { run(); });
  }
  ~Chaos() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    store_.set_failure(Status::ok());
    store_.set_delay(Duration::zero());
    store_.lose_replies(0);
  }

 private:
  void run() {
    std::uniform_int_distribution<int> pick(0, 9);
    std::uniform_int_distribution<int> micros(0, 300);
    while (!stop_) {
      switch (pick(rng_)) {
        case 0:
          store_.set_failure(Status(Code::kUnavailable, "injected outage"));
          break;
        case 1:
        case 2:
          store_.set_failure(Status::ok());
          break;
        case 3:
          store_.lose_replies(1 + pick(rng_) % 3);
          break;
        case 4:
          store_.set_delay(std::chrono::microseconds(micros(rng_)));
          break;
        default:
          store_.set_delay(Duration::zero());
          break;
      }
      // Paces the faults; not a synchronisation.
      std::this_thread::sleep_for(std::chrono::microseconds(micros(rng_)));
    }
  }

  FaultyTicketStore& store_;
  std::mt19937 rng_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

SequenceBufferOptions chaos_options() {
  SequenceBufferOptions o;
  o.wait_timeout = 2ms;  // short: callers see timeouts (and next_n() its failure path)
  o.retry_backoff = 50us;
  o.retry_backoff_max = 500us;
  return o;
}

// What one caller thread received.
struct Taken {
  std::vector<std::int64_t> numbers;
  std::uint64_t unavailable = 0;
};

// Calls next() until `count` numbers are received; when `batch` > 0,
// next_n() with counts 1..batch instead; when `batch` < 0, try_next_n() with
// counts 1..-batch, falling back to next() when it takes nothing. Retries
// kUnavailable, fails on anything else.
Taken take_numbers(SequenceBuffer& buffer, std::int64_t count, int batch, unsigned seed) {
  Taken t;
  t.numbers.reserve(static_cast<std::size_t>(count));
  std::mt19937 rng(seed);
  std::vector<SequenceRange> out;
  while (static_cast<std::int64_t>(t.numbers.size()) < count) {
    if (batch == 0) {
      Result<std::int64_t> r = buffer.next();
      if (r.is_ok()) {
        t.numbers.push_back(r.value());
        continue;
      }
      EXPECT_EQ(r.status().code(), Code::kUnavailable) << r.status().to_string();
      if (r.status().code() != Code::kUnavailable) return t;
      ++t.unavailable;
      continue;
    }
    const std::int64_t want =
        std::uniform_int_distribution<std::int64_t>(1, batch > 0 ? batch : -batch)(rng);
    out.clear();
    if (batch < 0) {
      Result<bool> r = buffer.try_next_n(want, out);
      EXPECT_TRUE(r.is_ok()) << r.status().to_string();
      if (!r.is_ok()) return t;
      if (!r.value()) {
        EXPECT_TRUE(out.empty()) << "takes nothing when it cannot take all";
        Result<std::int64_t> one = buffer.next();
        if (one.is_ok()) t.numbers.push_back(one.value());
        continue;
      }
    }
    const Status s = batch < 0 ? Status::ok() : buffer.next_n(want, out);
    if (!s.is_ok()) {
      EXPECT_EQ(s.code(), Code::kUnavailable) << s.to_string();
      EXPECT_TRUE(out.empty()) << "all or nothing";
      if (s.code() != Code::kUnavailable) return t;
      ++t.unavailable;
      continue;
    }
    std::int64_t got = 0;
    for (const SequenceRange& r : out) {
      EXPECT_GT(r.size(), 0);
      for (std::int64_t n = r.first; n < r.end; ++n) t.numbers.push_back(n);
      got += r.size();
    }
    EXPECT_EQ(got, want);
  }
  return t;
}

// Checks the guarantees over everything the threads received.
void check(const std::vector<Taken>& taken, const std::vector<SequenceRange>& ranges,
           std::size_t expected_total) {
  std::vector<std::int64_t> all;
  for (const Taken& t : taken) {
    for (std::size_t i = 1; i < t.numbers.size(); ++i) {
      ASSERT_LT(t.numbers[i - 1], t.numbers[i]) << "a thread's numbers increase";
    }
    all.insert(all.end(), t.numbers.begin(), t.numbers.end());
  }
  ASSERT_EQ(all.size(), expected_total);
  std::sort(all.begin(), all.end());
  ASSERT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a number handed out twice";
  // Every number inside a range the store returned (ranges sorted, disjoint).
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    ASSERT_LE(ranges[i - 1].end, ranges[i].first) << "the store returned overlapping ranges";
  }
  std::size_t r = 0;
  for (std::int64_t n : all) {
    while (r < ranges.size() && ranges[r].end <= n) ++r;
    ASSERT_TRUE(r < ranges.size() && ranges[r].first <= n) << n << " is in no range taken";
  }
}

class SequenceBufferConcurrencyTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(memory.create("orders", 0, 7).is_ok()); }

  std::unique_ptr<SequenceBuffer> open(TicketStore& store) {
    auto b = SequenceBuffer::open(store, "orders", clock, chaos_options());
    EXPECT_TRUE(b.is_ok()) << b.status().to_string();
    return b.is_ok() ? std::move(b).value() : nullptr;
  }

  SimulatedClock clock{wall_from_unix_ms(1'780'000'000'000)};
  MemoryTicketStore memory{clock};
  FaultyTicketStore faulty{memory};
  RecordingStore recording{faulty};
};

TEST_F(SequenceBufferConcurrencyTest, EightThreadsOnOneBufferUnderFaultsNeverShareANumber) {
  constexpr int kThreads = 8;
  constexpr std::int64_t kEach = 1500;
  auto buffer = open(recording);
  ASSERT_NE(buffer, nullptr);
  std::vector<Taken> taken(kThreads);
  {
    Chaos chaos(faulty, 1);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] { taken[i] = take_numbers(*buffer, kEach, 0, 100 + i); });
    }
    for (std::thread& t : threads) t.join();
  }
  check(taken, recording.ranges(), kThreads * kEach);
  const SequenceBufferStats s = buffer->stats();
  EXPECT_EQ(s.numbers_issued, static_cast<std::uint64_t>(kThreads * kEach));
  EXPECT_GT(s.ranges_fetched, 100u) << "step 7 forces many refills";
  std::cout << "ranges " << s.ranges_fetched << ", store failures " << s.store_failures
            << ", waits " << s.waits << ", wait timeouts " << s.wait_timeouts << "\n";
}

TEST_F(SequenceBufferConcurrencyTest, BatchesFromManyThreadsUnderFaultsNeverShareANumber) {
  constexpr int kThreads = 8;
  constexpr std::int64_t kEach = 2000;
  auto buffer = open(recording);
  ASSERT_NE(buffer, nullptr);
  std::vector<Taken> taken(kThreads);
  {
    Chaos chaos(faulty, 2);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      // Batches of up to 20 (several ranges of 7), single numbers, and
      // batches of up to 5 taken only when buffered, all on the same buffer.
      const int batch = i % 4 == 3 ? -5 : i % 2 == 0 ? 20 : 0;
      threads.emplace_back(
          [&, i, batch] { taken[i] = take_numbers(*buffer, kEach, batch, 200 + i); });
    }
    for (std::thread& t : threads) t.join();
  }
  // A batch may overshoot kEach by up to 19.
  std::size_t total = 0;
  for (const Taken& t : taken) total += t.numbers.size();
  check(taken, recording.ranges(), total);
  const SequenceBufferStats s = buffer->stats();
  EXPECT_EQ(s.numbers_issued, total);
  std::cout << "ranges " << s.ranges_fetched << ", numbers lost by failed next_n() "
            << s.numbers_lost << ", wait timeouts " << s.wait_timeouts << "\n";
}

TEST_F(SequenceBufferConcurrencyTest, FourBuffersOnOneStoreNeverShareANumber) {
  constexpr int kBuffers = 4;
  constexpr int kThreadsPerBuffer = 2;
  constexpr std::int64_t kEach = 1500;
  std::vector<std::unique_ptr<SequenceBuffer>> buffers;
  for (int i = 0; i < kBuffers; ++i) {
    buffers.push_back(open(recording));
    ASSERT_NE(buffers.back(), nullptr);
  }
  std::vector<Taken> taken(kBuffers * kThreadsPerBuffer);
  {
    Chaos chaos(faulty, 3);
    std::vector<std::thread> threads;
    for (int i = 0; i < kBuffers * kThreadsPerBuffer; ++i) {
      SequenceBuffer& b = *buffers[i % kBuffers];
      const int batch = i < kBuffers ? 0 : 10;
      threads.emplace_back([&, i, batch] { taken[i] = take_numbers(b, kEach, batch, 300 + i); });
    }
    for (std::thread& t : threads) t.join();
  }
  std::size_t total = 0;
  for (const Taken& t : taken) total += t.numbers.size();
  check(taken, recording.ranges(), total);
}

TEST_F(SequenceBufferConcurrencyTest, CallersWaitingOnAStalledStoreAllProceedWhenItReturns) {
  constexpr int kThreads = 8;
  SequenceBufferOptions o;
  o.wait_timeout = 30s;  // the stall is released long before
  faulty.set_stalled(true);
  auto b = SequenceBuffer::open(recording, "orders", clock, o);
  ASSERT_TRUE(b.is_ok());
  auto buffer = std::move(b).value();
  std::vector<Taken> taken(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { taken[i] = take_numbers(*buffer, 50, 0, 400 + i); });
  }
  // Every caller is waiting: the first range is held by the stall.
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (buffer->stats().waits < kThreads && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(buffer->stats().waits, static_cast<std::uint64_t>(kThreads));
  EXPECT_EQ(buffer->stats().numbers_issued, 0u);
  faulty.set_stalled(false);
  for (std::thread& t : threads) t.join();
  check(taken, recording.ranges(), kThreads * 50);
  EXPECT_EQ(buffer->stats().wait_timeouts, 0u);
}

}  // namespace
}  // namespace snowid
