#include "refusals.h"

#include <string>

namespace snowid::daemon {

std::string_view error_word(Code code, Refusing what) noexcept {
  // For ids the only precondition is that the daemon is not stopping.
  if (code == Code::kFailedPrecondition && what != Refusing::kSequence) return "SHUTTING_DOWN";
  return code_name(code);
}

unsigned http_status(Code code, Refusing what) noexcept {
  switch (code) {
    case Code::kOk:
      return 200;
    case Code::kInvalidArgument:
      return 400;
    case Code::kNotFound:
      return 404;
    case Code::kAlreadyExists:
      return 409;
    case Code::kOutOfRange:
      switch (what) {
        case Refusing::kIssue:
          return 503;
        case Refusing::kDecode:
        case Refusing::kPublicId:
          return 400;
        case Refusing::kSequence:
          return 409;
      }
      return 500;
    case Code::kSequenceExhausted:
    case Code::kClockBehind:
    case Code::kUnavailable:
    case Code::kLeaseUncertain:
    case Code::kClockMovedBack:
    case Code::kUnhealthy:
    case Code::kLeaseLost:
    case Code::kFailedPrecondition:
    case Code::kResourceExhausted:
      return 503;
    default:
      return 500;
  }
}

Code shutdown_code(Refusing what) noexcept {
  return what == Refusing::kSequence ? Code::kUnavailable : Code::kFailedPrecondition;
}

Status shutting_down(Refusing what) {
  return Status(shutdown_code(what), std::string(kShuttingDownMessage));
}

}  // namespace snowid::daemon
