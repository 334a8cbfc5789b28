#include "id_service.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "snowid/id_text.h"

namespace snowid::daemon {

std::string_view lease_state_label(LeaseState s) noexcept {
  switch (s) {
    case LeaseState::kHeld:
      return "held";
    case LeaseState::kUncertain:
      return "uncertain";
    case LeaseState::kLost:
      return "lost";
    case LeaseState::kReleased:
      return "released";
  }
  return "unknown";
}
namespace {

constexpr std::string_view kMonitorOnlyMessage =
    "monitor-only: this daemon measures clocks and issues no ids";

std::string refusal_text(Code code, const LeasedGenerator& generator) {
  switch (code) {
    case Code::kSequenceExhausted:
      return "the sequence of this millisecond is used up";
    case Code::kClockBehind:
      return "the clock is behind the last issued time; waiting it out took too long";
    case Code::kUnavailable:
      return "the time fence could not be stored";
    case Code::kLeaseUncertain:
      return "the worker-id lease is not confirmed (renewals late, or a new id being acquired)";
    case Code::kLeaseLost:
      return "the worker-id lease was lost";
    case Code::kClockMovedBack:
    case Code::kUnhealthy: {
      const Status health = generator.health();
      return health.is_ok() ? std::string("the clock moved back beyond the threshold")
                            : health.message();
    }
    case Code::kFailedPrecondition:
      return std::string(kShuttingDownMessage);
    case Code::kOutOfRange:
      return "the clock is outside the layout's lifetime";
    default:
      return std::string(code_name(code));
  }
}

std::atomic<unsigned> next_thread_index{0};

}  // namespace

IdService::IdService(LeasedGenerator& generator, const Clock& clock, std::uint32_t max_batch)
    : generator_(&generator),
      layout_(generator.layout()),
      clock_(clock),
      started_(clock.wall_now()),
      started_mono_(clock.mono_now()),
      max_batch_(max_batch) {}

IdService::IdService(const Layout& layout, const Clock& clock)
    : generator_(nullptr),
      layout_(layout),
      clock_(clock),
      started_(clock.wall_now()),
      started_mono_(clock.mono_now()),
      max_batch_(1) {}

IdService::Slot& IdService::slot() noexcept {
  thread_local const unsigned index = next_thread_index.fetch_add(1, std::memory_order_relaxed);
  return slots_[index % kSlots];
}

void IdService::count_refusal(Code code) noexcept {
  const auto i = static_cast<std::size_t>(code);
  if (i < refusals_.size()) refusals_[i].fetch_add(1, std::memory_order_relaxed);
}

IdResult IdService::next_id() noexcept {
  Slot& s = slot();
  s.single_requests.fetch_add(1, std::memory_order_relaxed);
  if (closed_.load(std::memory_order_acquire)) {
    count_refusal(shutdown_code(Refusing::kIssue));
    return IdResult{0, shutdown_code(Refusing::kIssue), Duration::zero()};
  }
  if (held() || generator_ == nullptr) {
    count_refusal(Code::kUnavailable);
    return IdResult{0, Code::kUnavailable, generator_ ? kHeldRetryAfter : Duration::zero()};
  }
  const IdResult r = generator_->next();
  if (r.ok()) {
    s.ids_issued.fetch_add(1, std::memory_order_relaxed);
  } else {
    count_refusal(r.code);
  }
  return r;
}

IdsAnswer IdService::next_ids(std::uint64_t n) {
  Slot& s = slot();
  s.batch_requests.fetch_add(1, std::memory_order_relaxed);
  IdsAnswer answer;
  const std::uint32_t limit = max_batch();
  if (n < 1 || n > limit) {
    count_refusal(Code::kInvalidArgument);
    answer.code = Code::kInvalidArgument;
    answer.message = "count must be between 1 and " + std::to_string(limit);
    return answer;
  }
  if (closed_.load(std::memory_order_acquire)) {
    answer.code = shutdown_code(Refusing::kIssue);
    count_refusal(answer.code);
    answer.message = refusal_message(answer.code);
    return answer;
  }
  if (held() || generator_ == nullptr) {
    answer.code = Code::kUnavailable;
    count_refusal(answer.code);
    answer.retry_after = generator_ ? kHeldRetryAfter : Duration::zero();
    answer.message = refusal_message(answer.code);
    return answer;
  }
  // One reserve() per tick touched: each returns what is left of the tick's
  // sequence, up to what is still wanted.
  std::uint64_t left = n;
  std::uint64_t calls = 0;
  while (left > 0) {
    const auto want = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(left, std::numeric_limits<std::uint32_t>::max()));
    const IdBatch b = generator_->reserve(want);
    ++calls;
    if (!b.ok()) {
      // Ids taken so far are dropped: gaps, never duplicates.
      s.reserve_calls.fetch_add(calls, std::memory_order_relaxed);
      s.ids_dropped.fetch_add(n - left, std::memory_order_relaxed);
      count_refusal(b.code);
      answer.spans.clear();
      answer.code = b.code;
      answer.retry_after = b.retry_after;
      answer.message = refusal_message(b.code);
      return answer;
    }
    answer.spans.push_back(IdSpan{b.first, b.count});
    left -= b.count;
  }
  s.reserve_calls.fetch_add(calls, std::memory_order_relaxed);
  s.ids_issued.fetch_add(n, std::memory_order_relaxed);
  return answer;
}

Result<DecodedId> IdService::decode(std::string_view text) {
  Slot& s = slot();
  s.decodes.fetch_add(1, std::memory_order_relaxed);
  Result<std::uint64_t> id = parse_id(text, layout());
  if (!id.is_ok()) {
    s.decode_errors.fetch_add(1, std::memory_order_relaxed);
    return id.status();
  }
  Result<DecodedId> decoded = layout().decode(id.value());
  if (!decoded.is_ok()) s.decode_errors.fetch_add(1, std::memory_order_relaxed);
  return decoded;
}

std::string IdService::refusal_message(Code code) const {
  if (generator_ == nullptr) return std::string(kMonitorOnlyMessage);
  if (code == Code::kUnavailable && held()) return hold_->status().message();
  return refusal_text(code, *generator_);
}

Status IdService::health() const {
  return generator_ != nullptr ? generator_->health() : Status::ok();
}

WorkerId IdService::worker() const noexcept {
  return generator_ != nullptr ? generator_->worker() : WorkerId{};
}

LeaseState IdService::lease_state() const noexcept {
  return generator_ != nullptr ? generator_->lease_state() : LeaseState::kReleased;
}

bool IdService::held() const noexcept { return hold_ != nullptr && hold_->held(); }

bool IdService::ready() const noexcept {
  if (generator_ == nullptr) return !closed_.load(std::memory_order_acquire);
  return !closed_.load(std::memory_order_acquire) && !held() && generator_->ready();
}

std::string IdService::not_ready_reason() const {
  if (closed_.load(std::memory_order_acquire)) return "shutting down";
  if (held()) return hold_->status().message();
  if (generator_ == nullptr) return "";
  const Status health = generator_->health();
  if (!health.is_ok()) return "unhealthy: " + health.to_string();
  const LeaseState state = generator_->lease_state();
  if (state != LeaseState::kHeld) {
    return "worker-id lease " + std::string(lease_state_name(state)) +
           "; a fresh id is being acquired";
  }
  if (!generator_->ready()) return "worker-id lease not confirmed";
  return "";
}

ServiceSnapshot IdService::snapshot() const {
  ServiceSnapshot s;
  s.layout = layout_;
  s.worker = worker();
  s.lease_state = lease_state();
  s.ready = ready();
  s.health = health();
  for (const Slot& slot : slots_) {
    s.counters.ids_issued += slot.ids_issued.load(std::memory_order_relaxed);
    s.counters.ids_dropped += slot.ids_dropped.load(std::memory_order_relaxed);
    s.counters.single_requests += slot.single_requests.load(std::memory_order_relaxed);
    s.counters.batch_requests += slot.batch_requests.load(std::memory_order_relaxed);
    s.counters.reserve_calls += slot.reserve_calls.load(std::memory_order_relaxed);
    s.counters.decodes += slot.decodes.load(std::memory_order_relaxed);
    s.counters.decode_errors += slot.decode_errors.load(std::memory_order_relaxed);
  }
  for (std::size_t i = 0; i < refusals_.size(); ++i) {
    s.counters.refusals_by_code[i] = refusals_[i].load(std::memory_order_relaxed);
  }
  if (generator_ != nullptr) {
    s.generator = generator_->stats();
    s.lease = generator_->lease_stats();
    s.reacquisitions = generator_->reacquisitions();
  }
  s.max_batch = max_batch();
  s.started = started_;
  s.now = clock_.wall_now();
  s.clock = clock_readings_.snapshot();
  s.skew = skew_snapshot();
  // Monotonic: a wall clock stepped back must not look like a restart.
  s.uptime = clock_.mono_now() - started_mono_;
  s.lease_losses = lease_losses_.load(std::memory_order_relaxed);
  if (public_id_stats_) s.public_ids = public_id_stats_();
  if (canary_stats_) {
    s.canary_on = true;
    s.canary = canary_stats_();
  }
  return s;
}

Status IdService::close() {
  if (closed_.exchange(true, std::memory_order_acq_rel)) {
    return Status(Code::kFailedPrecondition, "already closed");
  }
  return generator_ != nullptr ? generator_->close() : Status::ok();
}

}  // namespace snowid::daemon
