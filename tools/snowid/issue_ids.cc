#include "issue_ids.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

#include "diagnostics.h"
#include "fence_file.h"
#include "mutex.h"
#include "number_text.h"
#include "snowid/lease_rules.h"
#include "snowid/leased_generator.h"

namespace snowid::cli {
namespace {

// Ids asked for per reserve(); a tick's sequence bounds what one call returns.
constexpr std::uint32_t kBatch = 4096;
constexpr std::size_t kFlushBytes = 1 << 16;
// Longest sleep between retries, so that a clock that catches up is noticed soon.
constexpr Duration kMaxRetrySleep = std::chrono::milliseconds(100);
// How often a pinned id that is not free is tried again, and after how long
// the wait is worth a warning.
constexpr Duration kPinnedRetry = std::chrono::milliseconds(20);
constexpr Duration kPinnedWarnAfter = std::chrono::seconds(1);
// After a lost lease, how soon the generator tries to lease a fresh id.
constexpr Duration kReacquireEvery = std::chrono::milliseconds(200);
constexpr std::uint64_t kMaxRequest = 1'000'000;
constexpr std::size_t kMaxRequestLine = 64;

class IdWriter {
 public:
  explicit IdWriter(std::FILE* out) : out_(out) {}

  void add(std::uint64_t first, std::uint32_t count) {
    for (std::uint32_t i = 0; i < count; ++i) {
      char buf[24];
      const auto r = std::to_chars(buf, buf + sizeof buf - 1, first + i);
      *r.ptr = '\n';
      buffer_.append(buf, static_cast<std::size_t>(r.ptr + 1 - buf));
    }
    if (buffer_.size() >= kFlushBytes) flush();
  }

  // Writes what is buffered; false (with errno_ set) once any write failed.
  bool flush() {
    if (!buffer_.empty() && ok_) {
      if (std::fwrite(buffer_.data(), 1, buffer_.size(), out_) != buffer_.size()) fail();
    }
    buffer_.clear();
    if (ok_ && std::fflush(out_) != 0) fail();
    return ok_;
  }

  Status error() const {
    return Status(Code::kUnavailable, std::string("cannot write ids: ") + std::strerror(errno_));
  }

 private:
  void fail() {
    ok_ = false;
    errno_ = errno;
  }

  std::FILE* out_;
  std::string buffer_;
  bool ok_ = true;
  int errno_ = 0;
};

// How a batch of issuing ended.
struct Outcome {
  Status status;
  // The generator refused after the run started (a failure of the run,
  // exit 1); otherwise setting up failed and the status says how bad.
  bool refused = false;
};

// One era at a time: its registry, and a leased generator on it.
class Issuer {
 public:
  Issuer(const IssueRequest& request, IdWriter& writer, bool follow)
      : r_(request), writer_(writer), follow_(follow), era_(request.era), fences_(r_.state_dir) {}
  ~Issuer() { close(); }

  // Leases a worker id for the current era if none is held.
  Status open() {
    if (gen_ != nullptr) return Status::ok();
    const Layout& layout = r_.history->eras()[era_].layout;
    if (Status s = layout.check_worker({r_.region, r_.host.value_or(0)}); !s.is_ok()) return s;
    Result<std::unique_ptr<WorkerRegistry>> registry = r_.open_registry(layout);
    if (!registry.is_ok()) return registry.status();
    registry_ = std::move(registry).value();

    LeasedGeneratorOptions o;
    o.generator.layout = layout;
    o.generator.not_before = r_.history->eras()[era_].cutover;
    o.lease.region = r_.region;
    o.lease.host = r_.host;
    o.lease.holder = r_.holder;
    o.lease.timing = r_.timing;
    o.reacquire_every = kReacquireEvery;
    o.fence_store_for = [this](WorkerId w) { return fences_.store_for(w); };
    o.on_event = [this](const LeaseEvent& e) {
      const std::string event = to_string(e);
      const Status& status = e.status;
      // Events during create() are in its result; later ones happen while
      // ids are being issued and are worth telling.
      if (!live_.load(std::memory_order_acquire)) return;
      if (status.is_ok() && !follow_) return;
      const std::string text = status.is_ok() ? event : event + ": " + status.to_string();
      // A failing re-acquisition is retried every kReacquireEvery; once is
      // enough to say so.
      internal::MutexLock lock(mu_);
      if (text == last_event_) return;
      last_event_ = text;
      if (status.is_ok()) {
        print_info(text);
      } else {
        print_warning(text);
      }
    };
    const MonoTime start = system_clock().mono_now();
    bool warned = false;
    for (;;) {
      Result<std::unique_ptr<LeasedGenerator>> gen =
          LeasedGenerator::create(system_clock(), *registry_, o);
      if (gen.is_ok()) {
        gen_ = std::move(gen).value();
        break;
      }
      // A pinned id that is held or resting: wait for it, as two runs of
      // one worker take turns.
      const Duration waited = system_clock().mono_now() - start;
      if (!r_.host || gen.status().code() != Code::kResourceExhausted || waited >= r_.pinned_wait) {
        return gen.status();
      }
      if (!warned && waited >= kPinnedWarnAfter) {
        warned = true;
        print_warning("waiting for worker " + to_string({r_.region, *r_.host}) + ": " +
                      gen.status().message());
      }
      std::this_thread::sleep_for(kPinnedRetry);
    }
    live_.store(true, std::memory_order_release);
    if (follow_) print_info("leased worker " + to_string(gen_->worker()));
    return Status::ok();
  }

  // Issues `n` ids into the writer, moving to the next era at its cut-over.
  Outcome issue(std::uint64_t n) {
    const auto& eras = r_.history->eras();
    while (n > 0) {
      if (Status s = open(); !s.is_ok()) return {s, false};
      const Layout& layout = eras[era_].layout;
      const auto want = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, kBatch));
      const IdBatch b = reserve_with_retry(want);
      if (!b.ok()) return {refusal(b.code), true};
      // Ids of a tick at or past the next cut-over would decode as the next
      // era's; drop them and move on to that era, with a lease of its own.
      const auto ticks = static_cast<std::int64_t>(b.first >> layout.fields()[0].shift);
      if (era_ + 1 < eras.size() && layout.time_of_ticks(ticks) >= eras[era_ + 1].cutover) {
        close();
        ++era_;
        continue;
      }
      writer_.add(b.first, b.count);
      n -= b.count;
    }
    return {Status::ok(), false};
  }

  // Stops issuing, records the exact last instant and releases the lease.
  void close() {
    if (gen_ == nullptr) return;
    // Lease events past this point are the shutdown's own.
    live_.store(false, std::memory_order_release);
    if (Status s = gen_->close(); !s.is_ok()) {
      print_warning("could not record the end of this run (" + s.to_string() +
                    "); the next run of this worker may wait a few seconds");
    } else if (follow_) {
      print_info("released worker " + to_string(gen_->worker()));
    }
    gen_.reset();
    registry_.reset();
  }

 private:
  // A lost lease is replaced within about the lease's TTL (a pinned id rests
  // until its mark passes); other refusals get the shorter retry budget.
  Duration budget_for(Code code) const {
    return code == Code::kLeaseUncertain ? r_.timing.ttl + std::chrono::seconds(2)
                                         : r_.retry_budget;
  }

  IdBatch reserve_with_retry(std::uint32_t n) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      IdBatch b = gen_->reserve(n);
      if (b.ok() || !is_retryable(b.code) ||
          std::chrono::steady_clock::now() - start >= budget_for(b.code)) {
        return b;
      }
      std::this_thread::sleep_for(
          std::clamp<Duration>(b.retry_after, std::chrono::milliseconds(1), kMaxRetrySleep));
    }
  }

  // Why a batch was refused, as precisely as the generator and the fence say.
  Status refusal(Code code) {
    if (Status health = gen_->health(); !health.is_ok()) return health;
    const std::string waited =
        std::to_string(budget_for(code) / std::chrono::milliseconds(1)) + " ms";
    switch (code) {
      case Code::kUnavailable:
        if (Status fence = fences_.last_failure_of(gen_->worker()); !fence.is_ok()) return fence;
        return Status(code, "the time fence could not be stored");
      case Code::kClockBehind:
      case Code::kSequenceExhausted:
        return Status(code, "still refused after retrying for " + waited +
                                "; is the system clock stopped or far behind?");
      case Code::kLeaseUncertain:
        return Status(code, "no confirmed worker-id lease for " + waited +
                                " (registry unreachable, or no free id to replace a lost one)");
      case Code::kLeaseLost:
        return Status(code, "the lease on worker " + to_string(gen_->worker()) + " was lost");
      case Code::kOutOfRange:
        return Status(code, "the clock is outside layout " + gen_->layout().name() +
                                "'s lifetime or before its era's cut-over");
      default:
        return Status(code, "the generator refused");
    }
  }

  const IssueRequest& r_;
  IdWriter& writer_;
  const bool follow_;
  std::size_t era_;
  std::atomic<bool> live_{false};
  // Each worker's fence file, remembered so that a refusal can say why the
  // current worker's fence could not be stored. Thread-safe: the generator
  // asks for stores from its own thread after a loss.
  host::FenceStores fences_;
  // Guards last_event_: the generator tells events from its own thread.
  internal::Mutex mu_;
  std::string last_event_ GUARDED_BY(mu_);
  // Declared before the generator, which uses it, so that it goes after.
  std::unique_ptr<WorkerRegistry> registry_;
  std::unique_ptr<LeasedGenerator> gen_;
};

// Ends a run: reports `outcome` (or a failed write) after closing.
int finish(Issuer& issuer, IdWriter& writer, const Outcome& outcome) {
  const bool written = writer.flush();
  issuer.close();
  if (!written) return report(writer.error());
  if (outcome.status.is_ok()) return kExitOk;
  if (outcome.refused) {
    // A refusal after start-up is a failure of the run, never bad input.
    print_error(outcome.status.to_string());
    return kExitFailure;
  }
  return report(outcome.status);
}

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll() returns at once
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
}

}  // namespace

int issue_ids(const IssueRequest& request, std::FILE* out) {
  IdWriter writer(out);
  Issuer issuer(request, writer, false);
  const Outcome outcome = issuer.issue(request.count);
  return finish(issuer, writer, outcome);
}

int follow_ids(const IssueRequest& request, int in_fd, std::FILE* out) {
  catch_stop_signals();
  IdWriter writer(out);
  Issuer issuer(request, writer, true);
  // The lease is taken before the first request, so that one is answered at once.
  if (Status s = issuer.open(); !s.is_ok()) return finish(issuer, writer, {s, false});
  std::string pending;
  bool at_end = false;
  while (!at_end && g_stop_signal == 0) {
    pollfd pfd{in_fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, 100);
    if (ready < 0 && errno != EINTR) {
      return finish(
          issuer, writer,
          {Status(Code::kUnavailable, std::string("cannot read requests: ") + std::strerror(errno)),
           true});
    }
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(in_fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return finish(
          issuer, writer,
          {Status(Code::kUnavailable, std::string("cannot read requests: ") + std::strerror(errno)),
           true});
    }
    if (n == 0) {
      at_end = true;
      if (pending.empty()) break;
      pending += '\n';  // a last line without its line end
    } else {
      pending.append(buf, static_cast<std::size_t>(n));
    }
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      std::uint64_t count = request.count;
      if (!line.empty()) {
        Result<std::uint64_t> asked = parse_number(line, "a request line", 1, kMaxRequest);
        if (!asked.is_ok()) return finish(issuer, writer, {asked.status(), false});
        count = asked.value();
      }
      const Outcome outcome = issuer.issue(count);
      if (!outcome.status.is_ok()) return finish(issuer, writer, outcome);
      if (!writer.flush()) return finish(issuer, writer, {Status::ok(), false});
    }
    if (pending.size() > kMaxRequestLine) {
      return finish(issuer, writer,
                    {Status(Code::kInvalidArgument, "a request line is too long"), false});
    }
  }
  return finish(issuer, writer, {Status::ok(), false});
}

}  // namespace snowid::cli
