#include "snowid/status.h"

namespace snowid {

std::string_view code_name(Code code) noexcept {
  switch (code) {
    case Code::kOk:
      return "OK";
    case Code::kSequenceExhausted:
      return "SEQUENCE_EXHAUSTED";
    case Code::kClockBehind:
      return "CLOCK_BEHIND";
    case Code::kUnavailable:
      return "UNAVAILABLE";
    case Code::kLeaseUncertain:
      return "LEASE_UNCERTAIN";
    case Code::kClockMovedBack:
      return "CLOCK_MOVED_BACK";
    case Code::kUnhealthy:
      return "UNHEALTHY";
    case Code::kOutOfRange:
      return "OUT_OF_RANGE";
    case Code::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case Code::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case Code::kDataLoss:
      return "DATA_LOSS";
    case Code::kNotFound:
      return "NOT_FOUND";
    case Code::kLeaseLost:
      return "LEASE_LOST";
    case Code::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case Code::kAlreadyExists:
      return "ALREADY_EXISTS";
  }
  return "UNKNOWN";
}

std::string Status::to_string() const {
  if (is_ok()) return "OK";
  std::string out(code_name(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace snowid
