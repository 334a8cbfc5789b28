// Errors as values. No function of the core API throws; each failure carries a
// code that tells the caller whether trying again can help.
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace snowid {

// Values are stable: they appear in logs, metrics and the daemon's protocols.
enum class Code : std::uint8_t {
  kOk = 0,
  // Retryable: the same call can succeed later without anyone fixing anything.
  kSequenceExhausted = 1,  // this time unit's sequence is used up; the next unit frees it
  kClockBehind = 2,        // the clock is behind the last issued time, within the threshold
  kUnavailable = 3,        // a transient failure (for example the time fence could not be written)
  kLeaseUncertain = 4,     // the worker-id lease is not confirmed: renewals late, new id pending
  // Not retryable: something must change first.
  kClockMovedBack = 10,      // the clock went back by more than the threshold; now unhealthy
  kUnhealthy = 11,           // an earlier refusal stands; build a new generator after fixing it
  kOutOfRange = 12,          // a time before the epoch or past the layout's end of life
  kInvalidArgument = 13,     // malformed input: a bad id, layout, worker or option
  kFailedPrecondition = 14,  // state forbids it, e.g. the clock is far behind the stored fence
  kDataLoss = 15,            // persisted state is unreadable
  kNotFound = 16,            // a named thing (a preset, a file) does not exist
  kLeaseLost = 17,           // the worker-id lease was revoked or expired; this holder must stop
  kResourceExhausted = 18,   // a bounded resource is used up: no free worker id in the region's
                             // block (all held or quarantined), or a daemon limit (max_sequences)
  kAlreadyExists = 19,       // a named thing (a sequence) exists already; no second create
};

// True when retrying the same call later may succeed.
constexpr bool is_retryable(Code code) noexcept {
  return code == Code::kSequenceExhausted || code == Code::kClockBehind ||
         code == Code::kUnavailable || code == Code::kLeaseUncertain;
}

// A short stable name such as "CLOCK_MOVED_BACK", for logs and protocol errors.
std::string_view code_name(Code code) noexcept;

class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() noexcept { return Status(); }

  bool is_ok() const noexcept { return code_ == Code::kOk; }
  bool retryable() const noexcept { return is_retryable(code_); }
  Code code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  // "CODE: message", or "OK".
  std::string to_string() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status explaining why there is none. Reading value() of a
// failed Result is a programming error (checked by assert in debug builds).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  // `status` must not be OK: a Result without a value always says why.
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.is_ok()) status_ = Status(Code::kFailedPrecondition, "Result without a value");
  }

  bool is_ok() const noexcept { return value_.has_value(); }
  const Status& status() const noexcept { return status_; }
  const T& value() const& noexcept {
    assert(value_.has_value());
    return *value_;
  }
  T& value() & noexcept {
    assert(value_.has_value());
    return *value_;
  }
  T&& value() && noexcept {
    assert(value_.has_value());
    return std::move(*value_);
  }
  const T* operator->() const noexcept { return &value(); }
  T* operator->() noexcept { return &value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace snowid
