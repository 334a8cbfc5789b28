#include "sequence_service.h"

#include <algorithm>
#include <utility>

#include "refusals.h"

namespace snowid::daemon {
namespace {

std::string quoted(std::string_view name) {
  std::string s = "sequence '";
  s.append(name);
  s += '\'';
  return s;
}

// The store's answer for `name`, in the words the daemon's clients see. The
// stores all word kNotFound and kAlreadyExists alike (store_errors.h, the
// memory store too), for library callers; the daemon says it its own way,
// as the subject of the hint the transports append ("create it with ...").
// Any other answer passes as it is.
Status refusal(std::string_view name, const Status& s) {
  switch (s.code()) {
    case Code::kNotFound:
      return Status(Code::kNotFound, quoted(name) + " does not exist");
    case Code::kAlreadyExists:
      return Status(Code::kAlreadyExists, quoted(name) + " exists already");
    default:
      return s;
  }
}

std::size_t latency_bucket(Duration d) {
  const double ms = std::chrono::duration<double, std::milli>(d).count();
  std::size_t i = 0;
  while (i < kStoreLatencyBoundsMs.size() && ms > kStoreLatencyBoundsMs[i]) ++i;
  return i;
}

// Adds the counters of a buffer being dropped to `retired`, what it still
// holds counted as lost.
void add_retired(SequenceBufferStats& retired, SequenceBufferStats last) {
  last.numbers_lost += static_cast<std::uint64_t>(std::max<std::int64_t>(last.buffered, 0));
  retired += last;
}

}  // namespace

struct SequenceService::Entry {
  std::shared_ptr<SequenceBuffer> buffer;  // guarded by mu_
  // Counters of the buffers dropped so far, what they held counted as lost.
  SequenceBufferStats retired;  // guarded by mu_
  std::atomic<std::uint64_t> ranges_served{0};
};

SequenceService::SequenceService(std::unique_ptr<TicketStore> store, const Clock& clock,
                                 SequenceServiceOptions options)
    : store_(std::move(store)), clock_(clock), options_(std::move(options)) {}

SequenceService::~SequenceService() { close(); }

namespace {

// A call that the store could not answer: unreachable, busy, a broken or
// unknown table. A refusal (no such sequence, one that exists, one spent) is
// an answer.
bool store_failed(const Status& s) {
  switch (s.code()) {
    case Code::kOk:
    case Code::kNotFound:
    case Code::kAlreadyExists:
    case Code::kOutOfRange:
    case Code::kInvalidArgument:
      return false;
    default:
      return true;
  }
}

}  // namespace

Status SequenceService::usable(std::string_view name) const {
  if (!enabled()) return Status(Code::kFailedPrecondition, std::string(kSequencesOffMessage));
  return validate_sequence_name(name);
}

void SequenceService::count_store_call(Duration latency, bool failed) noexcept {
  store_calls_.fetch_add(1, std::memory_order_relaxed);
  if (failed) store_failures_.fetch_add(1, std::memory_order_relaxed);
  store_latency_[latency_bucket(latency)].fetch_add(1, std::memory_order_relaxed);
  store_latency_ns_.fetch_add(latency.count(), std::memory_order_relaxed);
}

Status SequenceService::usable_for(std::string_view name, std::int64_t count) const {
  if (Status s = usable(name); !s.is_ok()) return s;
  if (count < 1 || count > kMaxSequenceRange) {
    return Status(Code::kInvalidArgument,
                  "count must be between 1 and " + std::to_string(kMaxSequenceRange));
  }
  return Status::ok();
}

SequenceService::Entry& SequenceService::entry_locked(std::string_view name) {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    it = entries_.emplace(std::string(name), std::make_unique<Entry>()).first;
  }
  return *it->second;
}

SequenceNumbers SequenceService::try_next(std::string_view name, std::int64_t count) {
  SequenceNumbers out;
  if (Status s = usable_for(name, count); !s.is_ok()) {
    out.status = std::move(s);
    return out;
  }
  internal::ReaderLock lock(mu_);
  if (closed_) {
    out.status = shutting_down(Refusing::kSequence);
    return out;
  }
  const auto it = entries_.find(name);
  if (it == entries_.end() || !it->second->buffer) {
    out.would_wait = true;
    return out;
  }
  Result<bool> taken = it->second->buffer->try_next_n(count, out.ranges);
  if (!taken.is_ok()) {
    out.ranges.clear();
    if (taken.status().code() == Code::kNotFound) {
      // The row is gone: next(), on the pool, drops the buffer.
      out.would_wait = true;
      return out;
    }
    out.status = refusal(name, taken.status());
    return out;
  }
  if (!taken.value()) {
    out.ranges.clear();
    // A store that is failing would hold the caller on the pool for the
    // whole wait timeout, and every other caller behind it: fail fast.
    const Status last = it->second->buffer->stats().last_error;
    if (!last.is_ok() && last.retryable()) {
      out.status =
          Status(Code::kUnavailable, quoted(name) + ": the ticket table failed: " + last.message());
      return out;
    }
    out.would_wait = true;
  }
  return out;
}

Result<std::shared_ptr<SequenceBuffer>> SequenceService::buffer_for(std::string_view name) {
  const auto find = [&]() -> Result<std::shared_ptr<SequenceBuffer>> {
    internal::ReaderLock lock(mu_);
    if (closed_) return shutting_down(Refusing::kSequence);
    const auto it = entries_.find(name);
    if (it == entries_.end() || !it->second->buffer) return std::shared_ptr<SequenceBuffer>();
    return it->second->buffer;
  };
  Result<std::shared_ptr<SequenceBuffer>> found = find();
  if (!found.is_ok() || found.value()) return found;

  internal::MutexLock opening(open_mu_);
  found = find();
  if (!found.is_ok() || found.value()) return found;
  {
    // Only this function adds buffers, under open_mu_: the count cannot
    // grow before the buffer below is added.
    internal::ReaderLock lock(mu_);
    if (open_buffers_ >= options_.max_sequences) {
      return Status(Code::kResourceExhausted,
                    "cannot serve " + quoted(name) + ": " + std::to_string(open_buffers_) +
                        " sequences are open, the most this snowidd serves (setting "
                        "max_sequences)");
    }
  }
  // The row first: a buffer is opened only for a sequence that exists.
  const MonoTime start = clock_.mono_now();
  const Result<SequenceInfo> row = store_->get(name);
  count_store_call(clock_.mono_now() - start, store_failed(row.status()));
  if (!row.is_ok()) return refusal(name, row.status());
  Result<std::unique_ptr<SequenceBuffer>> opened =
      SequenceBuffer::open(*store_, std::string(name), clock_, options_.buffer);
  if (!opened.is_ok()) return opened.status();
  std::shared_ptr<SequenceBuffer> buffer(std::move(opened).value());
  internal::WriterLock lock(mu_);
  if (closed_) {
    lock.unlock();
    return shutting_down(Refusing::kSequence);
  }
  entry_locked(name).buffer = buffer;
  ++open_buffers_;
  return buffer;
}

void SequenceService::retire(std::string_view name, const std::shared_ptr<SequenceBuffer>& buffer) {
  std::shared_ptr<SequenceBuffer> gone;
  {
    internal::WriterLock lock(mu_);
    const auto it = entries_.find(name);
    if (it == entries_.end() || it->second->buffer != buffer) return;
    Entry& e = *it->second;
    add_retired(e.retired, buffer->stats());
    gone = std::move(e.buffer);
    --open_buffers_;
  }
  // `gone`, if the last reference, is destroyed here, off the event loops.
}

SequenceNumbers SequenceService::next(std::string_view name, std::int64_t count) {
  SequenceNumbers out;
  if (Status s = usable_for(name, count); !s.is_ok()) {
    out.status = std::move(s);
    return out;
  }
  // A buffer that finds its row gone may be older than the row: one deleted
  // and re-created outside the daemon. One more try, on a buffer opened
  // after reading the row again, tells the two apart.
  for (int attempt = 0;; ++attempt) {
    Result<std::shared_ptr<SequenceBuffer>> buffer = buffer_for(name);
    if (!buffer.is_ok()) {
      out.status = buffer.status();
      return out;
    }
    Status s = buffer.value()->next_n(count, out.ranges);
    if (s.is_ok()) return out;
    out.ranges.clear();
    if (s.code() == Code::kNotFound) {
      retire(name, buffer.value());
      if (attempt == 0) continue;
    }
    out.status = refusal(name, s);
    return out;
  }
}

Result<SequenceRange> SequenceService::range(std::string_view name, std::int64_t size) {
  if (Status s = usable(name); !s.is_ok()) return s;
  if (size < 1 || size > options_.max_range) {
    return Status(Code::kInvalidArgument,
                  "size must be between 1 and " + std::to_string(options_.max_range));
  }
  {
    internal::ReaderLock lock(mu_);
    if (closed_) return shutting_down(Refusing::kSequence);
  }
  const MonoTime start = clock_.mono_now();
  Result<SequenceRange> taken = store_->take(name, size);
  count_store_call(clock_.mono_now() - start, store_failed(taken.status()));
  if (!taken.is_ok()) return refusal(name, taken.status());
  {
    // The row exists (the take succeeded), so the entry is bounded by the
    // table's rows.
    internal::ReaderLock lock(mu_);
    const auto it = entries_.find(name);
    if (it != entries_.end()) {
      it->second->ranges_served.fetch_add(1, std::memory_order_relaxed);
      return taken;
    }
  }
  internal::WriterLock lock(mu_);
  entry_locked(name).ranges_served.fetch_add(1, std::memory_order_relaxed);
  return taken;
}

Status SequenceService::create(std::string_view name, std::int64_t start, std::int64_t step) {
  if (Status s = usable(name); !s.is_ok()) return s;
  if (Status s = validate_sequence_create(name, start, step); !s.is_ok()) return s;
  const MonoTime t0 = clock_.mono_now();
  const Status s = store_->create(name, start, step);
  count_store_call(clock_.mono_now() - t0, store_failed(s));
  return s.is_ok() ? s : refusal(name, s);
}

Result<SequenceDetails> SequenceService::info(std::string_view name) {
  if (Status s = usable(name); !s.is_ok()) return s;
  const MonoTime t0 = clock_.mono_now();
  Result<SequenceInfo> row = store_->get(name);
  count_store_call(clock_.mono_now() - t0, store_failed(row.status()));
  if (!row.is_ok()) return refusal(name, row.status());
  SequenceDetails details;
  details.row = std::move(row).value();
  internal::ReaderLock lock(mu_);
  const auto it = entries_.find(name);
  if (it != entries_.end() && it->second->buffer) {
    details.buffered = true;
    details.buffer = it->second->buffer->stats();
  }
  return details;
}

Result<std::vector<std::string>> SequenceService::list() {
  if (!enabled()) return Status(Code::kFailedPrecondition, std::string(kSequencesOffMessage));
  const MonoTime t0 = clock_.mono_now();
  Result<std::vector<SequenceInfo>> rows = store_->list();
  count_store_call(clock_.mono_now() - t0, store_failed(rows.status()));
  if (!rows.is_ok()) return rows.status();
  std::vector<std::string> names;
  names.reserve(rows->size());
  for (SequenceInfo& row : rows.value()) names.push_back(std::move(row.name));
  return names;
}

SequencesSnapshot SequenceService::snapshot() const {
  SequencesSnapshot out;
  out.enabled = enabled();
  if (store_) out.store_kind = std::string(store_->kind());
  out.store = options_.store_description;
  out.store_calls = store_calls_.load(std::memory_order_relaxed);
  out.store_failures = store_failures_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < out.store_latency.size(); ++i) {
    out.store_latency[i] = store_latency_[i].load(std::memory_order_relaxed);
  }
  out.store_latency_total = Duration(store_latency_ns_.load(std::memory_order_relaxed));

  internal::ReaderLock lock(mu_);
  out.sequences.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) {
    SequenceBufferStats s = entry->retired;
    SequenceCounters c;
    c.name = name;
    if (entry->buffer) {
      const SequenceBufferStats live = entry->buffer->stats();
      s += live;
      c.buffered = live.buffered;
      c.has_buffer = true;
      ++out.buffers;
    }
    c.numbers_issued = s.numbers_issued;
    c.numbers_lost = s.numbers_lost;
    c.ranges_fetched = s.ranges_fetched;
    c.ranges_served = entry->ranges_served.load(std::memory_order_relaxed);
    out.sequences.push_back(std::move(c));

    out.store_calls += s.store_calls;
    out.store_failures += s.store_failures;
    for (std::size_t i = 0; i < out.store_latency.size(); ++i) {
      out.store_latency[i] += s.store_latency[i];
    }
    out.store_latency_total += s.store_latency_total;
    out.buffer_waits += s.waits;
    out.buffer_wait_timeouts += s.wait_timeouts;
    out.buffer_wait_time += s.wait_time;
  }
  return out;
}

void SequenceService::close() {
  std::vector<std::shared_ptr<SequenceBuffer>> gone;
  {
    internal::WriterLock lock(mu_);
    closed_ = true;
    for (auto& [name, entry] : entries_) {
      if (!entry->buffer) continue;
      add_retired(entry->retired, entry->buffer->stats());
      gone.push_back(std::move(entry->buffer));
    }
    open_buffers_ = 0;
  }
  // Destroyed here: each joins its fetcher; what they held is lost.
}

}  // namespace snowid::daemon
