"""The in-process generator: docs/generator.md, policy by policy.

The state is one word's worth, ``(last tick, last sequence)``, changed under a
lock: CPython has no compare-and-swap, and a lock is also what free-threaded
builds need. The clock is read inside the lock, so a reading is never stale
with respect to the state it is compared with. Waits (a used-up tick, a small
step back, wait_until) happen outside the lock.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import random
import threading
from collections.abc import Callable

from . import _fork
from ._time import format_ms
from .clock import SYSTEM_CLOCK, Clock
from .errors import (
    ClockBehind,
    ClockMovedBack,
    FailedPrecondition,
    InvalidArgument,
    LeaseLost,
    LeaseUncertain,
    OutOfRange,
    SequenceExhausted,
    SnowidError,
    Unavailable,
    Unhealthy,
)
from .fence import FenceFile, FenceStore
from .layout import Layout
from .lease_guard import LeaseGuard
from .presets import SNOWID

_NS_PER_MS = 1_000_000
_NO_FENCE = 1 << 62
# The retry hint of LEASE_UNCERTAIN: only a renewal changes the guard.
_LEASE_RETRY_S = 0.010

_ZERO = _dt.timedelta(0)


def _ns(d: _dt.timedelta) -> int:
    return (d.days * 86_400 + d.seconds) * 1_000_000_000 + d.microseconds * 1000


@dataclasses.dataclass
class GeneratorStats:
    sequence_exhausted: int = 0
    clock_behind: int = 0
    waits_gave_up: int = 0
    borrowed_ticks: int = 0
    fence_writes: int = 0
    fence_write_failures: int = 0
    refusals: int = 0
    lease_refusals: int = 0


class _Retry(Exception):
    """Internal: a retryable answer of one attempt, with the wait that helps."""

    def __init__(self, error: SnowidError, wait_ns: int) -> None:
        self.error = error
        self.wait_ns = wait_ns


class Generator:
    """Issues ids for one worker (region, host) of a layout.

    Thread-safe. Ids of one generator strictly increase. Errors are
    SnowidError subclasses; ``retryable`` says whether a later call may work.
    """

    __slots__ = (
        "_backward_ticks",
        "_borrow_ticks",
        "_clock",
        "_epoch_ns",
        "_fence",
        "_fence_ticks",
        "_gate_ns",
        "_health",
        "_last",
        "_lease",
        "_lock",
        "_max_backward_ms",
        "_max_ticks",
        "_max_wait_ns",
        "_min_ns",
        "_mono",
        "_on_unhealthy",
        "_rand",
        "_random_start_bound",
        "_restart_backward_ticks",
        "_restart_floor",
        "_seq",
        "_seq_bits",
        "_seq_mask",
        "_stopped",
        "_time_shift",
        "_unit_ns",
        "_wait_ticks",
        "_wall",
        "_window_ticks",
        "_worker_bits",
        "host",
        "layout",
        "region",
        "stats",
        "__weakref__",
    )

    def __init__(
        self,
        *,
        region: int = 0,
        host: int = 0,
        layout: Layout = SNOWID,
        clock: Clock = SYSTEM_CLOCK,
        fence: str | FenceStore | None = None,
        max_backward: _dt.timedelta = _dt.timedelta(milliseconds=100),
        max_borrow: _dt.timedelta = _ZERO,
        max_wait: _dt.timedelta | None = None,
        random_start_bound: int = 16,
        fence_window: _dt.timedelta = _dt.timedelta(seconds=1),
        not_before_ms: int | None = None,
        wait_until_ns: int | None = None,
        continue_after_ms: int | None = None,
        lease: LeaseGuard | None = None,
        on_unhealthy: Callable[[SnowidError], None] | None = None,
    ) -> None:
        if not layout.can_generate:
            raise InvalidArgument(f"layout {layout.name} cannot be used to generate ids")
        now_ns = clock.wall_ns()
        layout.check(now_ns // _NS_PER_MS)
        layout.check_worker(region, host)
        if not _ZERO <= max_backward <= _dt.timedelta(hours=1):
            raise InvalidArgument("max_backward must be between 0 and 1 hour")
        if not _ZERO <= max_borrow <= _dt.timedelta(seconds=1):
            raise InvalidArgument("max_borrow must be between 0 and 1 second")
        if not 0 <= random_start_bound <= layout.sequence_capacity // 4:
            raise InvalidArgument(
                f"random_start_bound {random_start_bound} is over a quarter of the sequence "
                f"capacity ({layout.sequence_capacity})"
            )
        if not _dt.timedelta(milliseconds=10) <= fence_window <= _dt.timedelta(hours=1):
            raise InvalidArgument("fence_window must be between 10 ms and 1 hour")
        if max_wait is not None and max_wait < _ZERO:
            raise InvalidArgument("max_wait must not be negative")

        self.layout = layout
        self.region = region
        self.host = host
        self._clock = clock
        self._wall = clock.wall_ns
        self._mono = clock.mono_ns
        self._seq_bits = layout.width_of("sequence")
        self._seq_mask = layout.sequence_capacity - 1
        self._time_shift = layout.shift_of("time")
        self._worker_bits = (region << layout.shift_of("region")) | (
            host << layout.shift_of("host")
        )
        self._epoch_ns = layout.epoch_ms * _NS_PER_MS
        self._unit_ns = layout.unit_ms * _NS_PER_MS
        self._min_ns = max(
            self._epoch_ns,
            not_before_ms * _NS_PER_MS if not_before_ms is not None else 0,
        )
        self._max_ticks = layout.max_ticks
        self._gate_ns = self._min_ns
        self._wait_ticks = -(1 << 63)
        if wait_until_ns is not None and wait_until_ns > self._min_ns:
            since = wait_until_ns - self._epoch_ns
            self._wait_ticks = -(-since // self._unit_ns)
            self._gate_ns = (
                1 << 63
                if self._wait_ticks > self._max_ticks
                else self._epoch_ns + self._wait_ticks * self._unit_ns
            )
        self._lease = lease
        self._backward_ticks = _ns(max_backward) // self._unit_ns
        self._borrow_ticks = _ns(max_borrow) // self._unit_ns
        self._window_ticks = -(-_ns(fence_window) // self._unit_ns)
        self._restart_backward_ticks = self._window_ticks + self._backward_ticks
        self._max_wait_ns = (
            _ns(max_wait)
            if max_wait is not None and max_wait > _ZERO
            else _ns(max_backward) + 50 * _NS_PER_MS
        )
        self._max_backward_ms = _ns(max_backward) // _NS_PER_MS
        self._random_start_bound = random_start_bound
        self._rand = random.Random().random
        self._on_unhealthy = on_unhealthy
        self.stats = GeneratorStats()
        self._health: SnowidError | None = None
        # None while issuing; else why not: "closed", "unhealthy" or "forked".
        self._stopped: str | None = None

        self._fence: FenceStore | None = FenceFile(fence) if isinstance(fence, str) else fence
        self._fence_ticks = _NO_FENCE
        initial = 0
        if self._fence is not None:
            stored = self._fence.load()
            self._fence_ticks = -1
            if stored is not None:
                fence_t = min(layout.ticks_at_ms(stored), self._max_ticks)
                now_t = layout.ticks_at_ns(now_ns)
                if fence_t - now_t > self._restart_backward_ticks + self._borrow_ticks:
                    raise FailedPrecondition(
                        f"the clock ({format_ms(now_ns // _NS_PER_MS)}) is "
                        f"{(fence_t - now_t) * layout.unit_ms} ms behind the time fence stored "
                        f"before the last stop ({format_ms(stored)}), more than the fence window "
                        "plus max_backward; ids up to the fence may exist, so none will be "
                        "issued until the clock is fixed"
                    )
                if fence_t >= 0:
                    initial = fence_t
                    self._fence_ticks = fence_t
        self._restart_floor = initial
        if continue_after_ms is not None and continue_after_ms > layout.epoch_ms:
            initial = max(initial, min(layout.ticks_at_ms(continue_after_ms), self._max_ticks))
        # Start used up at the initial tick: nothing is issued in it or before it.
        self._last = initial
        self._seq = self._seq_mask
        self._lock = threading.Lock()
        _fork.track(self)

    # --- public API ---------------------------------------------------------

    def next_id(self) -> int:
        """The next id; waits out a used-up tick or a small clock step (within max_wait)."""
        # The common cases, inline: a new tick, or room left in the current one,
        # no fence write due, and a lease guard (if any) that permits the tick.
        # Everything else, and every refusal, goes through _attempt(), which
        # decides the same way.
        with self._lock:
            if self._stopped is None:
                now_ns = self._wall()
                if now_ns >= self._gate_ns:
                    now = (now_ns - self._epoch_ns) // self._unit_ns
                    last = self._last
                    lease = self._lease
                    if now > last:
                        if (
                            now <= self._fence_ticks
                            and now <= self._max_ticks
                            and (
                                lease is None
                                or (
                                    self._mono() < lease.deadline_mono_ns
                                    and now * self._unit_ns + self._epoch_ns <= lease.high_water_ns
                                )
                            )
                        ):
                            b = self._random_start_bound
                            seq = int(self._rand() * b) if b else 0
                            self._last = now
                            self._seq = seq
                            return (now << self._time_shift) | self._worker_bits | seq
                    elif (
                        now == last
                        and self._seq < self._seq_mask
                        and (lease is None or self._mono() < lease.deadline_mono_ns)
                    ):
                        # The tick was permitted under the mark when it was first
                        # used, and the mark never goes down; only the deadline moves.
                        seq = self._seq + 1
                        self._seq = seq
                        return (last << self._time_shift) | self._worker_bits | seq
            try:
                return self._attempt(1)[0]
            except _Retry as r:
                retry = r
        return self._wait_for(1, retry)[0]

    def try_next_id(self) -> int:
        """The next id, never waiting: a retryable error says how long to wait."""
        try:
            with self._lock:
                return self._attempt(1)[0]
        except _Retry as r:
            raise r.error from None

    def reserve(self, n: int) -> range:
        """Up to ``n`` consecutive ids from one tick, as a range (at least one)."""
        self._check_count(n)
        try:
            with self._lock:
                first, count = self._attempt(n)
        except _Retry as r:
            first, count = self._wait_for(n, r)
        return range(first, first + count)

    def try_reserve(self, n: int) -> range:
        """Like reserve(), never waiting."""
        self._check_count(n)
        try:
            with self._lock:
                first, count = self._attempt(n)
        except _Retry as r:
            raise r.error from None
        return range(first, first + count)

    def next_ids(self, n: int) -> list[int]:
        """Exactly ``n`` increasing ids, from as many ticks as they need."""
        self._check_count(n)
        out: list[int] = []
        while len(out) < n:
            out.extend(self.reserve(n - len(out)))
        return out

    def close(self) -> None:
        """Stops issuing, for good; records the exact last tick in the fence."""
        with self._lock:
            if self._stopped is None:
                self._stopped = "closed"
            if self._fence is None or self._stopped == "forked":
                return
            last = self._last
            if last >= self._fence_ticks:
                return
            self._fence.store(self.layout.tick_start_ms(last))
            self._fence_ticks = last

    def __enter__(self) -> Generator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def healthy(self) -> bool:
        return self._health is None

    @property
    def health(self) -> SnowidError | None:
        """The refusal that made the generator unhealthy, or None."""
        return self._health

    @property
    def last_ticks(self) -> int:
        return self._last

    # --- internals ----------------------------------------------------------

    @staticmethod
    def _check_count(n: int) -> None:
        if not isinstance(n, int) or n < 1:
            raise InvalidArgument(f"a batch is at least 1 id, not {n!r}")

    def _forked(self) -> None:
        """In a child after fork(): never issue from this copy."""
        self._lock = threading.Lock()
        self._stopped = "forked"

    def _refuse(self, error: SnowidError) -> SnowidError:
        self.stats.refusals += 1
        return error

    def _stopped_error(self) -> SnowidError:
        if self._stopped == "forked":
            return self._refuse(
                FailedPrecondition(
                    "this generator was inherited through fork(): the parent issues with the "
                    "same worker id; create a new generator (or LeasedGenerator) in the child"
                )
            )
        if self._stopped == "unhealthy":
            return self._refuse(Unhealthy(f"an earlier refusal stands: {self._health}"))
        return self._refuse(FailedPrecondition("the generator is closed"))

    def _lease_refusal(self) -> SnowidError:
        self.stats.lease_refusals += 1
        assert self._lease is not None
        if self._lease.lost:
            return self._refuse(LeaseLost("the worker-id lease is lost; this generator stops"))
        return LeaseUncertain(
            "the worker-id lease does not permit this time (renewals late or past the mark)",
            retry_after=_LEASE_RETRY_S,
        )

    def _moved_back(self, now: int, last: int) -> SnowidError:
        err = ClockMovedBack(
            f"clock moved back {(last - now) * self._unit_ns // _NS_PER_MS} ms behind the last "
            f"issued time, more than the {self._max_backward_ms} ms allowed; refusing to issue ids"
        )
        self._health = err
        self._stopped = "unhealthy"
        self.stats.refusals += 1
        if self._on_unhealthy is not None:
            self._on_unhealthy(err)
        return err

    def _start_sequence(self) -> int:
        b = self._random_start_bound
        return int(self._rand() * b) if b else 0

    def _attempt(self, n: int) -> tuple[int, int]:
        """One attempt under the lock: ``(first id, count)``; raises a refusal, or
        _Retry for an answer that waiting can change."""
        if self._stopped is not None:
            raise self._stopped_error()
        now_ns = self._wall()
        if now_ns < self._gate_ns and not (
            now_ns >= self._min_ns and self._last >= self._wait_ticks
        ):
            raise self._before_gate(now_ns)
        now = (now_ns - self._epoch_ns) // self._unit_ns
        last = self._last
        if now > last:
            t = now
            first = self._start_sequence()
        else:
            # Borrowing puts the last tick up to borrow_ticks ahead of the clock
            # legitimately; only what lies beyond that is the clock's doing.
            clock_behind = last - now > self._borrow_ticks
            if clock_behind:
                self.stats.clock_behind += 1
                limit = (
                    self._backward_ticks
                    if last > self._restart_floor
                    else self._restart_backward_ticks
                ) + self._borrow_ticks
                if last - now > limit:
                    raise self._moved_back(now, last)
            if self._seq < self._seq_mask:
                t = last
                first = self._seq + 1
            elif last + 1 - now <= self._borrow_ticks:
                t = last + 1
                first = self._start_sequence()
                self.stats.borrowed_ticks += 1
            else:
                wait = (last + 1 - self._borrow_ticks) * self._unit_ns + self._epoch_ns - now_ns
                if clock_behind:
                    raise _Retry(
                        ClockBehind(
                            "the clock is behind the last issued time",
                            retry_after=wait / 1e9,
                        ),
                        wait,
                    )
                self.stats.sequence_exhausted += 1
                raise _Retry(
                    SequenceExhausted("this tick's sequence is used up", retry_after=wait / 1e9),
                    wait,
                )
        if t > self._max_ticks:
            raise self._refuse(OutOfRange(f"layout {self.layout.name} has reached its end of life"))
        if self._lease is not None and not self._lease.permits(
            self._mono(), t * self._unit_ns + self._epoch_ns
        ):
            error = self._lease_refusal()
            if error.retryable:
                raise _Retry(error, 0)
            raise error
        if t > self._fence_ticks:
            self._extend_fence(t)
        count = min(n, self._seq_mask - first + 1)
        self._last = t
        self._seq = first + count - 1
        return (t << self._time_shift) | self._worker_bits | first, count

    def _extend_fence(self, t: int) -> None:
        fence_t = min(t + self._window_ticks, self._max_ticks)
        assert self._fence is not None
        try:
            self._fence.store(self.layout.tick_start_ms(fence_t))
        except SnowidError as e:
            self.stats.fence_write_failures += 1
            raise _Retry(
                Unavailable(
                    f"the time fence could not be stored: {e.message}",
                    retry_after=0.001,
                ),
                0,
            ) from None
        self.stats.fence_writes += 1
        self._fence_ticks = fence_t

    def _before_gate(self, now_ns: int) -> SnowidError | _Retry:
        if now_ns < self._min_ns:
            return self._before_start(now_ns)
        if self._lease is not None and self._lease.lost:
            return self._lease_refusal()
        if self._wait_ticks > self._max_ticks:
            return self._refuse(
                OutOfRange(f"layout {self.layout.name} has reached its end of life")
            )
        self.stats.clock_behind += 1
        wait = self._gate_ns - now_ns
        return _Retry(
            ClockBehind("waiting past the previous holder's mark", retry_after=wait / 1e9),
            wait,
        )

    def _before_start(self, now_ns: int) -> SnowidError:
        last = self._last
        now = self.layout.ticks_at_ns(now_ns)
        if last > self._restart_floor and last - now > self._backward_ticks + self._borrow_ticks:
            return self._moved_back(now, last)
        return self._refuse(
            OutOfRange(
                f"the clock ({format_ms(now_ns // _NS_PER_MS)}) is before the epoch or not_before"
            )
        )

    def _wait_for(self, n: int, retry: _Retry) -> tuple[int, int]:
        """Retries while waiting helps, for at most max_wait of monotonic time.
        LEASE_UNCERTAIN is not waited for: only a renewal can change it."""
        if not isinstance(retry.error, (SequenceExhausted, ClockBehind)):
            raise retry.error
        start = self._clock.mono_ns()
        while True:
            left = self._max_wait_ns - (self._clock.mono_ns() - start)
            if left < 0 or retry.wait_ns > left:
                self.stats.waits_gave_up += 1
                raise retry.error
            self._clock.sleep_ns(retry.wait_ns)
            try:
                with self._lock:
                    return self._attempt(n)
            except _Retry as r:
                if not isinstance(r.error, (SequenceExhausted, ClockBehind)):
                    raise r.error from None
                retry = r
