"""Errors: one exception hierarchy whose codes are the C++ library's codes.

Every error carries ``code`` (the stable name, as in logs and on the wire),
``retryable`` (whether the same call can succeed later without anyone fixing
anything) and ``retry_after`` (seconds to wait first, when known).
"""

from __future__ import annotations

import enum


class Code(enum.Enum):
    """Stable error codes, with the numeric values of the C++ ``snowid::Code``."""

    OK = 0
    SEQUENCE_EXHAUSTED = 1
    CLOCK_BEHIND = 2
    UNAVAILABLE = 3
    LEASE_UNCERTAIN = 4
    CLOCK_MOVED_BACK = 10
    UNHEALTHY = 11
    OUT_OF_RANGE = 12
    INVALID_ARGUMENT = 13
    FAILED_PRECONDITION = 14
    DATA_LOSS = 15
    NOT_FOUND = 16
    LEASE_LOST = 17
    RESOURCE_EXHAUSTED = 18
    ALREADY_EXISTS = 19

    @property
    def retryable(self) -> bool:
        return self in _RETRYABLE


_RETRYABLE = frozenset(
    {Code.SEQUENCE_EXHAUSTED, Code.CLOCK_BEHIND, Code.UNAVAILABLE, Code.LEASE_UNCERTAIN}
)


class SnowidError(Exception):
    """Base of every error this package raises on purpose."""

    code: Code = Code.FAILED_PRECONDITION

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.code.retryable

    def __str__(self) -> str:
        text = f"{self.code.name}: {self.message}"
        if self.retry_after is not None and self.retryable:
            text += f"; retry after {max(1, round(self.retry_after * 1000))}ms"
        return text


class RetryableError(SnowidError):
    """The same call may succeed later: wait ``retry_after`` and try again."""


class PermanentError(SnowidError):
    """Retrying the same call cannot help: something must change first."""


class SequenceExhausted(RetryableError):
    code = Code.SEQUENCE_EXHAUSTED


class ClockBehind(RetryableError):
    code = Code.CLOCK_BEHIND


class Unavailable(RetryableError):
    code = Code.UNAVAILABLE


class LeaseUncertain(RetryableError):
    code = Code.LEASE_UNCERTAIN


class ClockMovedBack(PermanentError):
    code = Code.CLOCK_MOVED_BACK


class Unhealthy(PermanentError):
    code = Code.UNHEALTHY


class OutOfRange(PermanentError, ValueError):
    code = Code.OUT_OF_RANGE


class InvalidArgument(PermanentError, ValueError):
    code = Code.INVALID_ARGUMENT


class FailedPrecondition(PermanentError):
    code = Code.FAILED_PRECONDITION


class DataLoss(PermanentError):
    code = Code.DATA_LOSS


class NotFound(PermanentError):
    code = Code.NOT_FOUND


class LeaseLost(PermanentError):
    code = Code.LEASE_LOST


class ResourceExhausted(PermanentError):
    code = Code.RESOURCE_EXHAUSTED


class AlreadyExists(PermanentError):
    code = Code.ALREADY_EXISTS


_BY_CODE: dict[Code, type[SnowidError]] = {
    cls.code: cls
    for cls in (
        SequenceExhausted,
        ClockBehind,
        Unavailable,
        LeaseUncertain,
        ClockMovedBack,
        Unhealthy,
        OutOfRange,
        InvalidArgument,
        FailedPrecondition,
        DataLoss,
        NotFound,
        LeaseLost,
        ResourceExhausted,
        AlreadyExists,
    )
}


def error_for(code: Code, message: str, *, retry_after: float | None = None) -> SnowidError:
    """The exception of the class for ``code``."""
    return _BY_CODE[code](message, retry_after=retry_after)
