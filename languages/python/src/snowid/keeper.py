"""The lease timeline (defaults): a renewal is sent every 3 s; one that succeeds
lets the guard permit issuing until its SEND time plus 8 s; etcd drops a lease
10 s after it last received a renewal. With renewals failing, issuing stops at
send + 8 s (UNCERTAIN) and at send + 10 s the lease is LOST.

Three daemon threads: the renewer, the timeline (moves the state on the clock
alone, even while a renewal call hangs) and the watcher (sees a fence or a
revoke within milliseconds).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import threading
from collections.abc import Callable

from .clock import Clock
from .errors import FailedPrecondition, InvalidArgument, LeaseLost, LeaseUncertain, SnowidError
from .etcd.registry import EtcdRegistry, LeaseGrant, LeaseRequest
from .generator import _ns
from .lease_guard import LeaseGuard

S = 1_000_000_000
MS = 1_000_000
# The threads reread the injected clock at least this often.
_MAX_SLEEP_S = 0.1
# One wait_lost() call of the watcher; stopping wakes it at once.
_WATCH_SLICE_S = 30.0
_NEVER = 1 << 62


class LeaseState(enum.Enum):
    HELD = "HELD"
    UNCERTAIN = "UNCERTAIN"
    LOST = "LOST"
    RELEASED = "RELEASED"


@dataclasses.dataclass(frozen=True)
class LeaseTiming:
    ttl: dt.timedelta = dt.timedelta(seconds=10)
    renew_every: dt.timedelta = dt.timedelta(seconds=3)
    stop_after: dt.timedelta = dt.timedelta(seconds=8)
    max_clock_skew: dt.timedelta = dt.timedelta(milliseconds=100)

    def validate(self) -> None:
        ttl, renew, stop, skew = (
            _ns(x) for x in (self.ttl, self.renew_every, self.stop_after, self.max_clock_skew)
        )
        if ttl % S or not 2 * S <= ttl <= 3600 * S:
            raise InvalidArgument(f"ttl must be whole seconds from 2 s to 1 hour, not {self.ttl}")
        if renew <= 0:
            raise InvalidArgument(f"renew_every must be more than 0, not {self.renew_every}")
        if stop <= renew:
            raise InvalidArgument(
                f"stop_after ({self.stop_after}) must be more than renew_every ({self.renew_every})"
            )
        if stop >= ttl:
            raise InvalidArgument(
                f"stop_after ({self.stop_after}) must be less than ttl ({self.ttl})"
            )
        if not 0 <= skew <= 60 * S:
            raise InvalidArgument(
                f"max_clock_skew must be from 0 to 1 minute, not {self.max_clock_skew}"
            )


def wait_until_ns(
    previous_high_water_ns: int | None, store_high_water_ns: int | None, max_clock_skew_ns: int
) -> int | None:
    """Before this instant a new holder issues nothing: the later of the marks it
    was granted past, plus the allowed skew (at least 1 ms). None without a mark."""
    marks = [m for m in (previous_high_water_ns, store_high_water_ns) if m is not None]
    if not marks:
        return None
    return max(marks) + max(max_clock_skew_ns, MS)


def _terminal(s: LeaseState) -> bool:
    return s in (LeaseState.LOST, LeaseState.RELEASED)


class LeaseKeeper:
    """Holds one lease: renews it, watches it and keeps its guard."""

    def __init__(
        self,
        clock: Clock,
        registry: EtcdRegistry,
        grant: LeaseGrant,
        timing: LeaseTiming,
        retry_every_ns: int,
        send_ns: int,
        high_water_ns: int,
        on_state: Callable[[LeaseState, SnowidError | None], None] | None,
    ) -> None:
        self.clock = clock
        self.registry = registry
        self.grant = grant
        self.timing = timing
        self._ttl = _ns(timing.ttl)
        self._renew_every = _ns(timing.renew_every)
        self._stop_after = _ns(timing.stop_after)
        self._retry_every = retry_every_ns
        self._on_state = on_state
        self.guard = LeaseGuard()
        self.guard.extend(send_ns + self._stop_after, high_water_ns)
        self.wait_until_ns = wait_until_ns(
            grant.previous_high_water_ns, None, _ns(timing.max_clock_skew)
        )
        self._renew_lock = threading.Lock()
        self._timeline_lock = threading.Lock()
        self._callback_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._cond = threading.Condition()
        self._state = LeaseState.HELD
        self._last_ok_send = send_ns
        self._last_failure: SnowidError | None = None
        self._last_attempt_failed = False
        self._next_due = send_ns + self._renew_every
        self._stop = False
        self._started = False
        self._abandoned = False
        self._threads: list[threading.Thread] = []
        self.renewals = 0
        self.renewal_failures = 0

    @classmethod
    def acquire(
        cls,
        clock: Clock,
        registry: EtcdRegistry,
        *,
        region: int,
        host: int | None,
        timing: LeaseTiming,
        holder_host: str,
        pid: int,
        started_ns: int,
        retry_every: dt.timedelta = dt.timedelta(milliseconds=500),
        on_state: Callable[[LeaseState, SnowidError | None], None] | None = None,
    ) -> LeaseKeeper:
        timing.validate()
        retry_ns = _ns(retry_every)
        if not 0 < retry_ns <= _ns(timing.renew_every):
            raise InvalidArgument("retry_every must be more than 0 and at most renew_every")
        send = clock.mono_ns()
        high_water = clock.wall_ns() + _ns(timing.stop_after)
        grant = registry.acquire(
            LeaseRequest(
                region=region,
                host=host,
                ttl_s=_ns(timing.ttl) // S,
                stop_after_ns=_ns(timing.stop_after),
                high_water_ns=high_water,
                holder_host=holder_host,
                pid=pid,
                started_ns=started_ns,
            )
        )
        return cls(clock, registry, grant, timing, retry_ns, send, high_water, on_state)

    @property
    def state(self) -> LeaseState:
        return self._state

    @property
    def worker(self) -> tuple[int, int]:
        return self.grant.region, self.grant.host

    def start(self) -> None:
        with self._cond:
            if self._started or self._stop:
                return
            self._started = True
        for target, name in (
            (self._renew_loop, "renew"),
            (self._timeline_loop, "timeline"),
            (self._watch_loop, "watch"),
        ):
            t = threading.Thread(
                target=target, name=f"snowid-lease-{name}-{self.grant.host}", daemon=True
            )
            self._threads.append(t)
            t.start()

    # --- state ----------------------------------------------------------------

    def _set_state(self, nxt: LeaseState, why: SnowidError | None) -> None:
        with self._callback_lock:
            with self._state_lock:
                if self._state == nxt or _terminal(self._state):
                    return
                self._state = nxt
            if self._on_state is not None:
                self._on_state(nxt, why)

    def _abandon(self) -> None:
        with self._state_lock:
            if self._abandoned:
                return
            self._abandoned = True
        self.registry.abandon(self.grant)

    def _lose(self, why: SnowidError) -> None:
        self.guard.mark_lost()
        self._abandon()
        self._set_state(LeaseState.LOST, why)

    def _apply_timeline(self, now: int) -> int:
        lost = None
        nxt = _NEVER
        with self._timeline_lock:
            if self.guard.lost or _terminal(self._state):
                return _NEVER
            expiry = self._last_ok_send + self._ttl
            deadline = self.guard.deadline_mono_ns
            if now >= expiry:
                self.guard.mark_lost()
                lost = LeaseLost(
                    f"lease on worker {self.grant.region}/{self.grant.host} expired: no renewal "
                    f"succeeded for {self._ttl // MS} ms"
                    + (f" ({self._last_failure})" if self._last_failure else "")
                )
            elif now >= deadline:
                self._set_state(
                    LeaseState.UNCERTAIN, self._last_failure or LeaseUncertain("renewal overdue")
                )
                nxt = expiry
            else:
                nxt = deadline
        if lost is not None:
            self._lose(lost)
        return nxt

    def _mark_running_out(self) -> bool:
        if self._last_attempt_failed:
            return False
        return self.clock.wall_ns() > self.guard.high_water_ns - (
            self._stop_after - self._renew_every
        )

    def renew_if_due(self) -> int:
        with self._renew_lock:
            if _terminal(self._state):
                return _NEVER
            now = self.clock.mono_ns()
            change = self._apply_timeline(now)
            if change == _NEVER:
                return _NEVER
            if now < self._next_due and not self._mark_running_out():
                return min(self._next_due, change)
            send = self.clock.mono_ns()
            high_water = self.clock.wall_ns() + self._stop_after
            with self._timeline_lock:
                left = self._last_ok_send + self._ttl - send
            try:
                self.registry.renew(self.grant, high_water, left / S)
                failure = None
            except SnowidError as e:
                failure = e
            reply = self.clock.mono_ns()
            self._last_attempt_failed = failure is not None
            if failure is None:
                self.renewals += 1
                with self._timeline_lock:
                    if self.guard.lost:
                        return _NEVER
                    self.guard.extend(send + self._stop_after, high_water)
                    self._last_ok_send = max(self._last_ok_send, send)
                    self._last_failure = None
                    if reply < self.guard.deadline_mono_ns:
                        self._set_state(LeaseState.HELD, None)
                self._next_due = send + self._renew_every
            else:
                self.renewal_failures += 1
                if isinstance(failure, LeaseLost):
                    self._lose(failure)
                    return _NEVER
                with self._timeline_lock:
                    self._last_failure = failure
                self._next_due = send + self._retry_every
            after = self._apply_timeline(reply)
            return _NEVER if after == _NEVER else min(self._next_due, after)

    # --- threads ----------------------------------------------------------------

    def _sleep_until(self, nxt: int) -> bool:
        """Waits toward ``nxt`` (monotonic ns); False once stopping."""
        with self._cond:
            if self._stop:
                return False
            left = (nxt - self.clock.mono_ns()) / S
            if left > 0:
                self._cond.wait(min(left, _MAX_SLEEP_S))
            return not self._stop

    def _renew_loop(self) -> None:
        while not self._stop:
            nxt = self.renew_if_due()
            if nxt == _NEVER or not self._sleep_until(nxt):
                return

    def _timeline_loop(self) -> None:
        while not self._stop:
            nxt = self._apply_timeline(self.clock.mono_ns())
            if nxt == _NEVER or not self._sleep_until(nxt):
                return

    def _watch_loop(self) -> None:
        while not self._stop and not _terminal(self._state):
            try:
                lost = self.registry.wait_lost(self.grant, _WATCH_SLICE_S)
            except SnowidError:
                lost = None
            if self._stop:
                return
            if lost:
                self._lose(
                    LeaseLost(
                        f"lease on worker {self.grant.region}/{self.grant.host} was revoked "
                        "or expired"
                    )
                )
                return
            if lost is None:
                with self._cond:
                    self._cond.wait(min(self._retry_every / S, _MAX_SLEEP_S))

    def _stop_threads(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        me = threading.current_thread()
        for t in self._threads:
            while t.is_alive() and t is not me:
                self.registry.wake_waiters()
                t.join(0.02)

    # --- the end ------------------------------------------------------------------

    def release(self, last_issued_ns: int | None) -> None:
        """Gives the id back with the exact last instant issued (never below the
        previous holders' mark). LEASE_LOST when lost already."""
        self._stop_threads()
        with self._renew_lock:
            current_mark = self.guard.high_water_ns
            self.guard.mark_lost()
            if self._state == LeaseState.RELEASED:
                raise FailedPrecondition("already released")
            if self._state == LeaseState.LOST:
                self._abandon()
                raise LeaseLost(
                    f"lease on worker {self.grant.region}/{self.grant.host} is lost: nothing "
                    "to release"
                )
            mark = current_mark
            if last_issued_ns is not None:
                prev = self.grant.previous_high_water_ns
                mark = max(prev, last_issued_ns) if prev is not None else last_issued_ns
            try:
                self.registry.release(self.grant, mark)
            except SnowidError as e:
                self._abandon()
                self._set_state(LeaseState.LOST, e)
                raise
            self._set_state(LeaseState.RELEASED, None)

    def stop(self) -> None:
        """Stops the threads and lets etcd drop the lease, like a crash for the mark."""
        self._stop_threads()
        self.guard.mark_lost()
        if self._state != LeaseState.RELEASED:
            self._abandon()
