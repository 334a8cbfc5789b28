#include "takers_mix.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "client_process.h"
#include "number_checks.h"
#include "snowid/sequence_buffer.h"
#include "snowid/testing/faulty_ticket_store.h"

namespace snowid::sequence_scenarios {
namespace {

using namespace std::chrono_literals;

// How one buffer taker draws its numbers.
enum class Draw { kNext, kNextN, kTryNextN };

struct BufferTaker {
  std::string label;
  SequenceBufferOptions options;
  Draw draw = Draw::kNext;
  std::int64_t max_batch = 1;  // counts 1..max_batch for next_n / try_next_n
  std::int64_t numbers = 0;    // to draw, per thread
  int threads = 1;             // threads sharing the one buffer
  int lose_reply_every = 0;    // lose the reply of a take every this many numbers
};

// What one thread received, in order, and how it went.
struct Received {
  std::string label;
  std::vector<SequenceRange> ranges;
  std::int64_t numbers = 0;
  std::uint64_t errors = 0;
  std::string problem;

  void add(SequenceRange r) {
    numbers += r.size();
    if (!ranges.empty() && ranges.back().end == r.first) {
      ranges.back().end = r.end;
    } else {
      ranges.push_back(r);
    }
  }
  // Each thread's numbers come from one buffer (or one table) in the
  // order taken, so they increase.
  bool increasing() const {
    for (std::size_t i = 1; i < ranges.size(); ++i) {
      if (ranges[i].first < ranges[i - 1].end) return false;
    }
    return true;
  }
};

SequenceBufferOptions base_options(std::int64_t step) {
  SequenceBufferOptions o;
  o.step = step;
  // Ten takers queue on one row (on SQLite, one file, an fsync each).
  o.wait_timeout = 10s;
  o.retry_backoff = 1ms;
  o.retry_backoff_max = 20ms;
  return o;
}

std::vector<BufferTaker> buffer_takers(int scale) {
  std::vector<BufferTaker> takers;
  auto add = [&](std::string label, SequenceBufferOptions o, Draw draw, std::int64_t max_batch,
                 std::int64_t numbers, int threads = 1, int lose_every = 0) {
    takers.push_back({std::move(label), o, draw, max_batch, numbers * scale, threads, lose_every});
  };
  add("step1.next", base_options(1), Draw::kNext, 1, 150);
  add("step7.next_n", base_options(7), Draw::kNextN, 20, 1500);
  // The sequence's own step, counts that cross ranges.
  add("step0.next_n", base_options(0), Draw::kNextN, 300, 30'000);
  add("step50.try_next_n", base_options(50), Draw::kTryNextN, 30, 5000);
  add("step100.shared", base_options(100), Draw::kNext, 1, 3000, 3);
  add("step20.lossy", base_options(20), Draw::kNext, 1, 2000, 1, 100);
  {
    // Starts at the sequence's step (one get() first) and doubles: the
    // ranges last far less than the target.
    SequenceBufferOptions o = base_options(0);
    o.adaptive = true;
    o.min_step = 1;
    o.max_step = 5000;
    o.target_range_life = 1ms;
    add("adaptive.grow", o, Draw::kNext, 1, 20'000);
  }
  {
    // A target so short that ranges mostly outlive it: the step falls to
    // its floor, then grows again when a range of two goes quickly.
    SequenceBufferOptions o = base_options(4000);
    o.adaptive = true;
    o.min_step = 2;
    o.max_step = 4000;
    o.target_range_life = 20us;
    add("adaptive.shrink", o, Draw::kNextN, 3, 1000);
  }
  return takers;
}

// Draws `want` numbers with `draw`; retryable failures are counted and
// retried, a final one ends the thread.
void draw_from(SequenceBuffer& buffer, const BufferTaker& t, testing::FaultyTicketStore* lossy,
               unsigned seed, Received& got) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> batch(1, t.max_batch);
  std::vector<SequenceRange> out;
  std::int64_t next_loss = t.lose_reply_every;
  while (got.numbers < t.numbers) {
    if (lossy != nullptr && got.numbers >= next_loss) {
      lossy->lose_replies(1);
      next_loss += t.lose_reply_every;
    }
    const std::int64_t want = std::min(batch(rng), t.numbers - got.numbers);
    Status status;
    out.clear();
    if (t.draw == Draw::kNext) {
      Result<std::int64_t> n = buffer.next();
      status = n.status();
      if (n.is_ok()) got.add({n.value(), n.value() + 1});
    } else if (t.draw == Draw::kNextN) {
      status = buffer.next_n(want, out);
    } else {
      Result<bool> r = buffer.try_next_n(want, out);
      status = r.status();
      // Nothing buffered now: one number the waiting way.
      if (r.is_ok() && !r.value()) status = buffer.next_n(1, out);
    }
    for (const SequenceRange& r : out) got.add(r);
    if (status.is_ok()) continue;
    if (!status.retryable()) {
      got.problem = got.label + ": " + status.to_string();
      return;
    }
    ++got.errors;
  }
}

// take() calls of 0 (the sequence's step) to 500 numbers, as SEQRANGE makes.
void direct_takes(TicketStore& store, const std::string& sequence, int calls, Received& got,
                  std::uint64_t& store_calls) {
  std::mt19937 rng(99);
  std::uniform_int_distribution<std::int64_t> size(0, 500);
  for (int i = 0; i < calls; ++i) {
    ++store_calls;
    Result<SequenceRange> r = store.take(sequence, size(rng));
    if (r.is_ok()) {
      got.add(r.value());
    } else if (r.status().retryable()) {
      ++got.errors;
    } else {
      got.problem = got.label + ": " + r.status().to_string();
      return;
    }
  }
}

void add_process_numbers(const ClientProcess& client, Received& got) {
  for (const std::int64_t n : client.numbers()) got.add({n, n + 1});
  for (const std::string& line : client.bad_lines()) {
    got.problem += got.label + ": not a number: \"" + line + "\"\n";
  }
}

}  // namespace

MixReport run_mix(const ScenarioDatabase& db, TicketStore& store, const MixOptions& options) {
  MixReport report;
  if (Status s = store.create(options.sequence, options.start, options.step); !s.is_ok()) {
    report.problems.push_back("create: " + s.to_string());
    return report;
  }
  const std::vector<BufferTaker> takers = buffer_takers(options.scale);
  std::vector<std::unique_ptr<Received>> received;
  std::mutex mu;  // guards report.store_calls and report.problems from the threads
  std::vector<std::thread> threads;
  auto record = [&](const std::string& problem) {
    std::lock_guard<std::mutex> lock(mu);
    report.problems.push_back(problem);
  };

  // The processes first: they take a moment to start.
  const std::vector<std::string> common = {
      "--store", db.url(), "--sequence", options.sequence, "--wait-timeout-ms", "10000"};
  auto client_args = [&](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return more;
  };
  ClientProcess batches(SNOWID_SEQUENCE_CLIENT_PATH,
                        client_args({"--count", std::to_string(10'000 * options.scale), "--batch",
                                     "17", "--step", "333"}));
  ClientProcess doomed(SNOWID_SEQUENCE_CLIENT_PATH,
                       client_args({"--step", "5000", "--rate", "20000", "--flush", "100"}));

  unsigned seed = 1;
  for (const BufferTaker& t : takers) {
    // The buffer and its store (behind the fault wrapper for the lossy
    // taker), shared by the taker's threads: the last one to finish closes
    // the buffer.
    struct Shared {
      std::unique_ptr<TicketStore> store;
      std::unique_ptr<testing::FaultyTicketStore> faulty;
      std::unique_ptr<SequenceBuffer> buffer;
    };
    auto shared = std::make_shared<Shared>();
    Result<std::unique_ptr<TicketStore>> opened = db.open();
    if (!opened.is_ok()) {
      record(t.label + ": " + opened.status().to_string());
      continue;
    }
    shared->store = std::move(opened.value());
    TicketStore* under = shared->store.get();
    if (t.lose_reply_every > 0) {
      shared->faulty = std::make_unique<testing::FaultyTicketStore>(*shared->store);
      under = shared->faulty.get();
    }
    Result<std::unique_ptr<SequenceBuffer>> buffer =
        SequenceBuffer::open(*under, options.sequence, system_clock(), t.options);
    if (!buffer.is_ok()) {
      record(t.label + ": " + buffer.status().to_string());
      continue;
    }
    shared->buffer = std::move(buffer.value());
    auto users = std::make_shared<std::atomic<int>>(t.threads);
    for (int i = 0; i < t.threads; ++i) {
      received.push_back(std::make_unique<Received>());
      Received* got = received.back().get();
      got->label = t.label + "#" + std::to_string(i);
      threads.emplace_back([&, t, shared, users, got, s = seed++] {
        draw_from(*shared->buffer, t, shared->faulty.get(), s, *got);
        if (users->fetch_sub(1) != 1) return;
        // The last user closes the buffer (its rest becomes a gap), then
        // its store.
        const SequenceBufferStats stats = shared->buffer->stats();
        shared->buffer.reset();
        std::lock_guard<std::mutex> lock(mu);
        report.store_calls += stats.store_calls;
      });
    }
  }
  received.push_back(std::make_unique<Received>());
  Received* direct = received.back().get();
  direct->label = "direct.take";
  Result<std::unique_ptr<TicketStore>> direct_store = db.open();
  if (direct_store.is_ok()) {
    threads.emplace_back([&, direct, own = direct_store.value().get()] {
      std::uint64_t calls = 0;
      direct_takes(*own, options.sequence, 150 * options.scale, *direct, calls);
      std::lock_guard<std::mutex> lock(mu);
      report.store_calls += calls;
    });
  } else {
    record("direct.take: " + direct_store.status().to_string());
  }

  // Every store is open (and migrated): the disturbance may begin.
  std::atomic<bool> done{false};
  std::thread disturber;
  if (options.disturb) disturber = std::thread([&] { options.disturb(done); });

  // The doomed client dies with SIGKILL once it has handed out some.
  received.push_back(std::make_unique<Received>());
  Received* killed = received.back().get();
  killed->label = "process.killed";
  if (!doomed.wait_for_numbers(2000, 60s)) {
    record("the doomed client wrote too little: " + doomed.err_text());
  }
  doomed.signal(SIGKILL);
  if (doomed.wait_exit(30s) != std::optional<int>(-SIGKILL)) {
    record("the doomed client did not die of SIGKILL: " + doomed.err_text());
  }
  add_process_numbers(doomed, *killed);

  for (std::thread& t : threads) t.join();
  received.push_back(std::make_unique<Received>());
  Received* batched = received.back().get();
  batched->label = "process.batches";
  if (batches.wait_exit(120s) != std::optional<int>(0)) {
    record("the batch client failed: " + batches.err_text());
  }
  add_process_numbers(batches, *batched);
  if (batched->numbers != 10'000 * options.scale) {
    record("the batch client wrote " + std::to_string(batched->numbers) + " numbers");
  }
  if (const std::optional<nlohmann::json> summary = batches.summary()) {
    report.store_calls += summary->value("store_calls", std::uint64_t{0});
  }
  done = true;
  if (disturber.joinable()) disturber.join();

  for (const std::unique_ptr<Received>& r : received) {
    if (!r->problem.empty()) record(r->problem);
    if (!r->increasing()) record(r->label + ": numbers did not increase");
    report.ranges.insert(report.ranges.end(), r->ranges.begin(), r->ranges.end());
    report.numbers += r->numbers;
    report.retryable_errors += r->errors;
    if (r->errors > 0) {
      if (!report.errors_by_taker.empty()) report.errors_by_taker += ", ";
      report.errors_by_taker += r->label + ": " + std::to_string(r->errors);
    }
  }
  return report;
}

void check_mix(MixReport report, TicketStore& store, const MixOptions& options,
               const std::string& label) {
  for (const std::string& p : report.problems) ADD_FAILURE() << p;
  const Overlaps overlaps = sort_and_find_overlaps(report.ranges);
  EXPECT_EQ(overlaps.count, 0u) << "handed out twice: " << overlaps.first;
  Result<SequenceInfo> info = store.get(options.sequence);
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  ASSERT_FALSE(report.ranges.empty());
  EXPECT_GE(report.ranges.front().first, options.start);
  std::int64_t furthest = 0;
  for (const SequenceRange& r : report.ranges) furthest = std::max(furthest, r.end);
  EXPECT_LE(furthest, info->next_value) << "a number at or past the table's next_value";
  report_figure(
      label + ".takers",
      std::to_string(report.numbers) + " numbers in " + std::to_string(report.ranges.size()) +
          " separate runs, " + std::to_string(report.store_calls) + " take() calls, " +
          std::to_string(report.retryable_errors) + " retried refusals" +
          (report.errors_by_taker.empty() ? std::string() : " (" + report.errors_by_taker + ")"));
  report_figure(label + ".gaps",
                to_string(gap_figures(options.start, info->next_value, report.numbers)));
}

}  // namespace snowid::sequence_scenarios
