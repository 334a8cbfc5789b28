// One mutex guards all state; condition variables wake the fetcher (a fetch
// is wanted, or stop), the callers (numbers arrived, a final error, or stop)
// and the destructor (the last waiting caller left). A caller never calls the
// store: the hot path is lock, take from the current range, maybe wake the
// fetcher, unlock.
//
// Choices made here:
// - The refill threshold of a range is ceil(refill_at * size), at least 1:
//   a range of one number asks for the next as soon as it becomes current.
// - The standby is fetched only when the current range reaches its threshold
//   (not as soon as the standby is promoted), so at most one range beyond
//   the current is ever held, and a crash loses at most that much.
// - After a final error of the store, the numbers already buffered are
//   still handed out (they were legitimately taken); the error stands once
//   they are gone.
// - Adaptive step: the life of a range ends when its last number is taken;
//   the rule then sets the size of the next request sent, which is usually
//   the one after the request already in flight.
// - A range from the store that is empty or not after every range taken
//   before is refused as kDataLoss (final) rather than risk a duplicate.
// - An adaptive buffer whose `step` is 0 learns the sequence's step with one
//   get() before its first take(); that call is counted as a store call.
#include "snowid/sequence_buffer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <utility>

#include "mutex.h"

namespace snowid {

using internal::CondVar;
using internal::Mutex;
using internal::MutexLock;
namespace {

// condition_variable::wait_for computes now() + d, which overflows for
// durations near their maximum; a wait longer than this is cut into slices.
constexpr Duration kLongestWait = std::chrono::hours(24);

Status invalid_option(const std::string& field, const std::string& rule) {
  return Status(Code::kInvalidArgument, "SequenceBufferOptions." + field + " " + rule);
}

std::string duration_text(Duration d) {
  if (d >= std::chrono::milliseconds(1) || d == Duration::zero()) {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
  }
  return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(d).count()) + " us";
}

std::int64_t refill_threshold(double refill_at, std::int64_t size) {
  if (size <= 0) return 0;
  const auto t = static_cast<std::int64_t>(std::ceil(refill_at * static_cast<double>(size)));
  return std::clamp<std::int64_t>(t, 1, size);
}

std::size_t latency_bucket(Duration latency) {
  const double ms = std::chrono::duration<double, std::milli>(latency).count();
  for (std::size_t i = 0; i < kStoreLatencyBoundsMs.size(); ++i) {
    if (ms <= kStoreLatencyBoundsMs[i]) return i;
  }
  return kStoreLatencyBoundsMs.size();
}

// Appends [first, end) to `out`, merging it into the last range when it
// follows on.
void append_merged(std::vector<SequenceRange>& out, SequenceRange r) {
  if (!out.empty() && out.back().end == r.first) {
    out.back().end = r.end;
  } else {
    out.push_back(r);
  }
}

}  // namespace

Status validate(const SequenceBufferOptions& o) {
  if (o.step < 0 || o.step > kMaxSequenceRange) {
    return invalid_option("step", "must be 0 to " + std::to_string(kMaxSequenceRange) + ", got " +
                                      std::to_string(o.step));
  }
  // Written so that NaN fails too.
  if (!(o.refill_at > 0.0 && o.refill_at < 1.0)) {
    return invalid_option(
        "refill_at", "must be between 0 and 1 (exclusive), got " + std::to_string(o.refill_at));
  }
  if (o.wait_timeout <= Duration::zero()) {
    return invalid_option("wait_timeout", "must be positive");
  }
  if (o.retry_backoff <= Duration::zero()) {
    return invalid_option("retry_backoff", "must be positive");
  }
  if (o.retry_backoff_max < o.retry_backoff) {
    return invalid_option("retry_backoff_max", "must be at least retry_backoff");
  }
  if (o.min_step < 1 || o.min_step > kMaxSequenceRange) {
    return invalid_option("min_step", "must be 1 to " + std::to_string(kMaxSequenceRange) +
                                          ", got " + std::to_string(o.min_step));
  }
  if (o.max_step < o.min_step || o.max_step > kMaxSequenceRange) {
    return invalid_option("max_step", "must be min_step to " + std::to_string(kMaxSequenceRange) +
                                          ", got " + std::to_string(o.max_step));
  }
  if (o.target_range_life <= Duration::zero()) {
    return invalid_option("target_range_life", "must be positive");
  }
  return Status::ok();
}

class SequenceBuffer::Impl {
 public:
  Impl(TicketStore& store, std::string name, const Clock& clock, SequenceBufferOptions options)
      : store_(store), name_(std::move(name)), clock_(clock), opt_(options) {
    if (!opt_.adaptive) {
      request_size_ = opt_.step;
    } else if (opt_.step > 0) {
      request_size_ = std::clamp(opt_.step, opt_.min_step, opt_.max_step);
    } else {
      request_size_ = -1;  // get() the sequence's step first
    }
    stats_.step = std::max<std::int64_t>(request_size_, 0);
    backoff_ = opt_.retry_backoff;
    fetch_requested_ = true;  // the first range, at once
  }

  // Must be called once, after construction and before any caller.
  void start() {
    fetcher_ = std::thread([this] { fetch_loop(); });
  }

  ~Impl() {
    {
      MutexLock lock(mu_);
      stop_ = true;
      fetcher_wake_.notify_all();
      numbers_ready_.notify_all();
      // Callers still waiting (a breach of the contract) leave before the
      // memory goes.
      while (waiting_callers_ != 0) callers_gone_.wait(mu_);
    }
    if (fetcher_.joinable()) fetcher_.join();
  }

  const std::string& name() const noexcept { return name_; }

  Result<std::int64_t> next() {
    MutexLock lock(mu_);
    WaitBudget budget(opt_.wait_timeout);
    for (;;) {
      if (current_.first < current_.end) {
        const std::int64_t n = current_.first;
        take_from_current(1);
        ++stats_.numbers_issued;
        return n;
      }
      if (Status s = unavailable_now(); !s.is_ok()) return s;
      if (Status s = wait_for_numbers(budget); !s.is_ok()) return s;
    }
  }

  Status next_n(std::int64_t count, std::vector<SequenceRange>& out) {
    if (Status s = check_count(count); !s.is_ok()) return s;
    std::vector<SequenceRange> got;
    std::int64_t need = count;
    MutexLock lock(mu_);
    WaitBudget budget(opt_.wait_timeout);
    while (need > 0) {
      if (current_.first < current_.end) {
        const std::int64_t k = std::min(need, current_.size());
        append_merged(got, SequenceRange{current_.first, current_.first + k});
        take_from_current(k);
        need -= k;
        budget.left = opt_.wait_timeout;  // each range needed gets the full wait
        continue;
      }
      Status s = unavailable_now();
      if (s.is_ok()) {
        // Both buffers are dry: the next take asks for at least what this
        // call lacks, so a count larger than the step costs one round trip,
        // not count / step of them.
        wanted_ = std::max(wanted_, need);
        s = wait_for_numbers(budget);
      }
      if (!s.is_ok()) {
        stats_.numbers_lost += static_cast<std::uint64_t>(count - need);
        // This call lacks nothing any more, and the takes after it must not
        // ask for what it lacked (a restart would lose it whole). Another
        // batch still short says so again when it next waits.
        wanted_ = 0;
        return s;
      }
    }
    stats_.numbers_issued += static_cast<std::uint64_t>(count);
    lock.unlock();
    out.insert(out.end(), got.begin(), got.end());
    return Status::ok();
  }

  Result<bool> try_next_n(std::int64_t count, std::vector<SequenceRange>& out) {
    if (Status s = check_count(count); !s.is_ok()) return s;
    MutexLock lock(mu_);
    if (buffered() < count) {
      if (!final_error_.is_ok()) return final_error_;
      return false;
    }
    // At most two pieces: the rest of the current range and part of the
    // standby (promoted once the current is spent).
    SequenceRange pieces[2];
    int n_pieces = 0;
    std::int64_t need = count;
    while (need > 0) {
      const std::int64_t k = std::min(need, current_.size());
      const SequenceRange piece{current_.first, current_.first + k};
      if (n_pieces > 0 && pieces[n_pieces - 1].end == piece.first) {
        pieces[n_pieces - 1].end = piece.end;
      } else {
        pieces[n_pieces++] = piece;
      }
      take_from_current(k);
      need -= k;
    }
    stats_.numbers_issued += static_cast<std::uint64_t>(count);
    lock.unlock();
    for (int i = 0; i < n_pieces; ++i) out.push_back(pieces[i]);
    return true;
  }

  SequenceBufferStats stats() const {
    MutexLock lock(mu_);
    SequenceBufferStats s = stats_;
    s.buffered = buffered();
    return s;
  }

 private:
  static Status check_count(std::int64_t count) {
    if (count < 1 || count > kMaxSequenceRange) {
      return Status(Code::kInvalidArgument, "count must be 1 to " +
                                                std::to_string(kMaxSequenceRange) + ", got " +
                                                std::to_string(count));
    }
    return Status::ok();
  }

  // What one call may still wait. A caller woken by a range that others
  // emptied first waits again for what is left of its wait_timeout, as
  // measured on the injected clock (a simulated clock that does not move
  // leaves it whole; each single wait is still bounded in real time).
  struct WaitBudget {
    explicit WaitBudget(Duration d) : left(d) {}
    Duration left;
    bool counted = false;  // stats_.waits counts callers, not wakes
  };

  std::int64_t buffered() const REQUIRES(mu_) { return current_.size() + standby_.size(); }

  // Does the fetcher have a range to fetch?
  bool fetch_needed() const REQUIRES(mu_) {
    return !stop_ && final_error_.is_ok() && standby_.size() == 0 &&
           current_.size() <= current_threshold_;
  }

  // Wakes the fetcher when a fetch is needed and it has not been asked yet.
  // No allocation: this is on the hot path.
  void maybe_request_fetch() REQUIRES(mu_) {
    if (!fetch_requested_ && fetch_needed()) {
      fetch_requested_ = true;
      fetcher_wake_.notify_one();
    }
  }

  // 1 <= k <= current_.size(). Takes k numbers from the current range,
  // promotes the standby when the current is spent, and asks for the next
  // range when the threshold is reached.
  void take_from_current(std::int64_t k) REQUIRES(mu_) {
    current_.first += k;
    if (current_.first == current_.end) {
      if (opt_.adaptive) adapt(clock_.mono_now() - current_since_);
      if (standby_.size() > 0) {
        make_current(standby_);
        standby_ = SequenceRange{};
      }
    }
    maybe_request_fetch();
  }

  void make_current(SequenceRange r) REQUIRES(mu_) {
    current_ = r;
    current_threshold_ = refill_threshold(opt_.refill_at, r.size());
    current_since_ = clock_.mono_now();
  }

  // The rule of SequenceBufferOptions::adaptive, applied to the size of the
  // next request once a range's life is known.
  void adapt(Duration life) REQUIRES(mu_) {
    if (request_size_ <= 0) return;  // the sequence's step is not known yet
    if (life < opt_.target_range_life / 2) {
      request_size_ = request_size_ > opt_.max_step / 2 ? opt_.max_step : 2 * request_size_;
    } else if (life > 2 * opt_.target_range_life) {
      request_size_ = std::max(request_size_ / 2, opt_.min_step);
    }
    request_size_ = std::clamp(request_size_, opt_.min_step, opt_.max_step);
    stats_.step = request_size_;
  }

  // Both buffers dry: the error to return at once, if any.
  Status unavailable_now() const REQUIRES(mu_) {
    if (!final_error_.is_ok()) return final_error_;
    if (stop_) return Status(Code::kUnavailable, "buffer of '" + name_ + "' closing");
    return Status::ok();
  }

  // Both buffers dry. Waits up to budget.left for numbers, a final error or
  // stop, releasing mu_ meanwhile. OK when the caller should look again;
  // kUnavailable once the budget is spent.
  Status wait_for_numbers(WaitBudget& budget) REQUIRES(mu_) {
    maybe_request_fetch();
    if (!budget.counted) {
      budget.counted = true;
      ++stats_.waits;
    }
    bool woken = false;
    if (budget.left > Duration::zero()) {
      ++waiting_callers_;
      const MonoTime start = clock_.mono_now();
      woken = wait_sliced(numbers_ready_, budget.left, [this]() REQUIRES(mu_) {
        return stop_ || !final_error_.is_ok() || current_.first < current_.end;
      });
      const Duration waited = clock_.mono_now() - start;
      stats_.wait_time += waited;
      budget.left -= waited;
      --waiting_callers_;
      if (waiting_callers_ == 0 && stop_) callers_gone_.notify_all();
    }
    if (woken) return Status::ok();
    ++stats_.wait_timeouts;
    return Status(Code::kUnavailable,
                  "no range of '" + name_ + "' within " + duration_text(opt_.wait_timeout) + ": " +
                      (stats_.last_error.is_ok() ? std::string("the store has not answered yet")
                                                 : stats_.last_error.to_string()));
  }

  // Waits on `cv` until pred holds or `d` has passed, for any d, however
  // long (each slice is a wait of at most kLongestWait). True when pred
  // holds. pred runs with mu_ held.
  template <typename Pred>
  bool wait_sliced(CondVar& cv, Duration d, Pred pred) REQUIRES(mu_) {
    for (;;) {
      const auto until = std::chrono::steady_clock::now() + std::min(d, kLongestWait);
      while (!pred()) {
        if (cv.wait_until(mu_, until) == std::cv_status::timeout) break;
      }
      if (pred()) return true;
      if (d <= kLongestWait) return false;
      d -= kLongestWait;
    }
  }

  // The fetcher thread: takes a range whenever one is requested, until stop.
  void fetch_loop() {
    MutexLock lock(mu_);
    for (;;) {
      while (!stop_ && !fetch_requested_) fetcher_wake_.wait(mu_);
      if (stop_) return;
      if (!final_error_.is_ok()) {
        fetch_requested_ = false;
        continue;
      }
      std::int64_t size = request_size_;
      if (size >= 0 && wanted_ > 0) {
        // A caller of next_n() lacks more than one usual range holds. (0:
        // the sequence's step, known once a range has come back.)
        const std::int64_t usual = size > 0 ? size : stats_.step;
        // While the step is unknown (the first take of a buffer without
        // one) the take asks for the step: a batch sized take then would
        // make a one-number NEXTSEQ fetch a range of one.
        if (usual > 0 && wanted_ > usual) size = std::min(wanted_, kMaxSequenceRange);
      }
      ++stats_.store_calls;
      lock.unlock();
      const MonoTime sent = clock_.mono_now();
      Result<SequenceRange> r = call_store(size);
      const Duration latency = clock_.mono_now() - sent;
      lock.lock();
      ++stats_.store_latency[latency_bucket(latency)];
      stats_.store_latency_total += latency;
      if (r.is_ok() && size < 0) {
        // get() told the sequence's step; the take follows at once.
        const std::int64_t step = r->size();
        request_size_ = std::clamp(step, opt_.min_step, opt_.max_step);
        stats_.step = request_size_;
        stats_.last_error = Status::ok();
        continue;
      }
      if (r.is_ok()) r = check_range(r.value());
      if (r.is_ok()) {
        accept(r.value(), size);
        continue;
      }
      ++stats_.store_failures;
      stats_.last_error = r.status();
      if (!r.status().retryable()) {
        final_error_ = r.status();
        fetch_requested_ = false;
        numbers_ready_.notify_all();
        continue;
      }
      // Retry after the backoff, unless stopped meanwhile.
      wait_sliced(fetcher_wake_, backoff_, [this]() REQUIRES(mu_) { return stop_; });
      backoff_ = backoff_ > opt_.retry_backoff_max / 2 ? opt_.retry_backoff_max : 2 * backoff_;
    }
  }

  // Without mu_. A negative size asks get() for the sequence's step instead
  // (adaptive with step 0): the answer comes back as a range of that size.
  Result<SequenceRange> call_store(std::int64_t size) {
    if (size >= 0) return store_.take(name_, size);
    Result<SequenceInfo> info = store_.get(name_);
    if (!info.is_ok()) return info.status();
    return SequenceRange{0, info->step};
  }

  // Refuses a range that would break the guarantees: empty, negative, or not
  // after every range taken before.
  Result<SequenceRange> check_range(SequenceRange r) const REQUIRES(mu_) {
    if (r.first < 0 || r.end <= r.first || r.first < high_water_) {
      return Status(Code::kDataLoss, "the store returned range [" + std::to_string(r.first) + ", " +
                                         std::to_string(r.end) + ") of '" + name_ +
                                         "', not after " + std::to_string(high_water_));
    }
    return r;
  }

  // Stores a fetched range and wakes the callers.
  void accept(SequenceRange r, std::int64_t asked) REQUIRES(mu_) {
    ++stats_.ranges_fetched;
    stats_.last_error = Status::ok();
    // What the range covers is no longer lacking. Not cleared outright: the
    // fetcher may take again before a short caller wakes to say so again,
    // and would then ask for a usual step (a batch of 500 on step 1 took 42
    // round trips that way).
    wanted_ = std::max<std::int64_t>(0, wanted_ - r.size());
    backoff_ = opt_.retry_backoff;
    high_water_ = r.end;
    // Asked for the sequence's own step: the store says what it is.
    if (asked == 0) stats_.step = r.size();
    if (current_.size() == 0) {
      make_current(r);
    } else {
      standby_ = r;
    }
    fetch_requested_ = fetch_needed();
    numbers_ready_.notify_all();
  }

  TicketStore& store_;
  const std::string name_;
  const Clock& clock_;
  const SequenceBufferOptions opt_;

  mutable Mutex mu_;
  CondVar fetcher_wake_;   // fetch_requested_ or stop_
  CondVar numbers_ready_;  // a range arrived, a final error, or stop_
  CondVar callers_gone_;   // waiting_callers_ reached 0 after stop_

  // Numbers [first, end) not handed out yet.
  SequenceRange current_ GUARDED_BY(mu_);
  std::int64_t current_threshold_ GUARDED_BY(mu_) = 0;  // refill when current_.size() <= this
  MonoTime current_since_ GUARDED_BY(mu_){};            // when current_ became current
  SequenceRange standby_ GUARDED_BY(mu_);               // the next range, empty when none
  std::int64_t high_water_ GUARDED_BY(mu_) = 0;         // end of the last range taken
  // The size of the next take(): 0 asks for the sequence's step; -1 (an
  // adaptive buffer with step 0, before its first call) asks get() first.
  std::int64_t request_size_ GUARDED_BY(mu_) = 0;
  // The most numbers a waiting next_n() lacks; the next take asks for at
  // least this many. 0: no caller is short.
  std::int64_t wanted_ GUARDED_BY(mu_) = 0;
  Duration backoff_ GUARDED_BY(mu_);
  // The fetcher has work; set by whoever asks.
  bool fetch_requested_ GUARDED_BY(mu_) = false;
  // A non-retryable answer of the store: stands.
  Status final_error_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  int waiting_callers_ GUARDED_BY(mu_) = 0;
  SequenceBufferStats stats_ GUARDED_BY(mu_);

  std::thread fetcher_;
};

Result<std::unique_ptr<SequenceBuffer>> SequenceBuffer::open(TicketStore& store, std::string name,
                                                             const Clock& clock,
                                                             SequenceBufferOptions options) {
  if (Status s = validate(options); !s.is_ok()) return s;
  if (Status s = validate_sequence_name(name); !s.is_ok()) return s;
  auto impl = std::make_unique<Impl>(store, std::move(name), clock, options);
  impl->start();
  return std::unique_ptr<SequenceBuffer>(new SequenceBuffer(std::move(impl)));
}

SequenceBuffer::SequenceBuffer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SequenceBuffer::~SequenceBuffer() = default;

Result<std::int64_t> SequenceBuffer::next() { return impl_->next(); }

Status SequenceBuffer::next_n(std::int64_t count, std::vector<SequenceRange>& out) {
  return impl_->next_n(count, out);
}

Result<bool> SequenceBuffer::try_next_n(std::int64_t count, std::vector<SequenceRange>& out) {
  return impl_->try_next_n(count, out);
}

const std::string& SequenceBuffer::name() const noexcept { return impl_->name(); }

SequenceBufferStats SequenceBuffer::stats() const { return impl_->stats(); }

}  // namespace snowid
