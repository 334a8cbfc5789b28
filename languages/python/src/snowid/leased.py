"""LeasedGenerator: a Generator on a worker id leased from etcd, replaced when the
lease is lost, with ids that keep increasing across the replacement."""

from __future__ import annotations

import datetime as dt
import os
import socket
import threading
from collections.abc import Callable, Mapping
from typing import Any

from . import _fork
from .clock import SYSTEM_CLOCK, Clock
from .errors import (
    FailedPrecondition,
    InvalidArgument,
    LeaseLost,
    LeaseUncertain,
    SnowidError,
    Unhealthy,
)
from .etcd.gateway import parse_endpoints
from .etcd.registry import EtcdOptions, EtcdRegistry
from .fence import FenceFile
from .generator import Generator, _ns
from .keeper import LeaseKeeper, LeaseState, LeaseTiming
from .layout import Layout
from .presets import SNOWID

__all__ = ["LeasedGenerator", "LeaseState", "LeaseTiming"]

MS = 1_000_000
_MAX_SLEEP_S = 0.1
_MAX_REACQUIRE_S = 30.0


class _Incarnation:
    def __init__(self, keeper: LeaseKeeper, generator: Generator) -> None:
        self.keeper = keeper
        self.generator = generator
        # A generator starts used up at this tick: last_ticks passes it only once
        # an id has been issued.
        self.initial_ticks = generator.last_ticks
        self.retired = False
        self.stopped = False


class LeasedGenerator:
    """Ids from a worker id that this process leases from etcd.

    Use it as a context manager: leaving releases the id with its exact last
    instant, so the next holder can take it at once. Renewal and watch threads
    are daemon threads. After fork(), the child's copy refuses every call
    (FAILED_PRECONDITION): create one in the child, or use the snowidd sidecar.
    """

    def __init__(
        self,
        etcd: str | list[str] | EtcdRegistry,
        *,
        region: int = 0,
        host: int | None = None,
        prefix: str = "/snowid",
        cluster: str = "default",
        timing: LeaseTiming | None = None,
        layout: Layout = SNOWID,
        clock: Clock = SYSTEM_CLOCK,
        state_dir: str | None = None,
        quarantine: dt.timedelta = dt.timedelta(seconds=10),
        request_timeout: dt.timedelta = dt.timedelta(seconds=2),
        ca_file: str = "",
        cert_file: str = "",
        key_file: str = "",
        user: str = "",
        password: str = "",
        reacquire_every: dt.timedelta = dt.timedelta(seconds=1),
        retry_every: dt.timedelta = dt.timedelta(milliseconds=500),
        generator_options: Mapping[str, Any] | None = None,
        on_event: Callable[[str, SnowidError | None], None] | None = None,
    ) -> None:
        if _ns(reacquire_every) <= 0:
            raise InvalidArgument("reacquire_every must be more than 0")
        if not layout.can_generate:
            raise InvalidArgument(f"layout {layout.name} cannot be used to generate ids")
        self.timing = timing or LeaseTiming()
        self.timing.validate()
        if isinstance(etcd, EtcdRegistry):
            self.registry = etcd
            self._own_registry = False
        else:
            endpoints = parse_endpoints(etcd) if isinstance(etcd, str) else list(etcd)
            for e in endpoints:
                parse_endpoints(e)
            self.registry = EtcdRegistry(
                clock,
                EtcdOptions(
                    endpoints,
                    prefix,
                    cluster,
                    quarantine.total_seconds(),
                    request_timeout.total_seconds(),
                    layout.regions,
                    layout.workers_per_region,
                    ca_file,
                    cert_file,
                    key_file,
                    user,
                    password,
                ),
            )
            self.registry.connect()
            self._own_registry = True
        self.layout = layout
        self.clock = clock
        self._region = region
        self._host = host
        self._state_dir = state_dir
        self._reacquire_ns = _ns(reacquire_every)
        self._reacquire_delay = self._reacquire_ns
        self._retry_every = retry_every
        self._gen_options = dict(generator_options or {})
        self._on_event = on_event
        self._holder = (socket.gethostname(), os.getpid(), clock.wall_ns())
        self._cond = threading.Condition()
        self._incarnations: list[_Incarnation] = []
        self._stop = False
        self._closed = False
        self._forked_flag = False
        self._unhealthy: SnowidError | None = None
        self._unhealthy_reporter: _Incarnation | None = None
        self._unhealthy_handled = False
        self._issued_through_ms: int | None = None
        self.reacquisitions = 0
        try:
            first = self._make_incarnation()
        except SnowidError as e:
            self._event("acquire failed", e)
            self._close_registry()
            raise
        self._current = first
        self._incarnations.append(first)
        self._event(f"acquired worker {first.keeper.grant.region}/{first.keeper.grant.host}", None)
        self._background = threading.Thread(target=self._run, name="snowid-leased", daemon=True)
        self._background.start()
        _fork.track(self)

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, **overrides: Any
    ) -> LeasedGenerator:
        """Configured by the variables the snowid tool reads: SNOWID_ETCD_ENDPOINTS
        (required), SNOWID_ETCD_PREFIX, SNOWID_ETCD_CLUSTER, SNOWID_ETCD_CA,
        SNOWID_ETCD_CERT, SNOWID_ETCD_KEY, SNOWID_ETCD_USER, SNOWID_ETCD_PASSWORD,
        SNOWID_REGION, SNOWID_HOST (pin one host) and SNOWID_STATE_DIR (fence files).
        Keyword arguments override them."""
        return cls(**env_settings(os.environ if environ is None else environ, overrides))

    # --- issuing ----------------------------------------------------------------

    def _call(self, issue: Callable[[Generator], Any]) -> Any:
        inc = self._current
        for attempt in range(3):
            try:
                return issue(inc.generator)
            except SnowidError as e:
                if not self._replacing(inc, e):
                    raise self._answer(inc, e) from None
                now = self._current
                if now is not inc and attempt < 2:
                    inc = now
                    continue
                raise LeaseUncertain(
                    "the lease was lost; a fresh worker id is being acquired",
                    retry_after=min(self._reacquire_ns, 10 * MS) / 1e9,
                ) from None
        raise AssertionError("unreachable")

    def _replacing(self, inc: _Incarnation, e: SnowidError) -> bool:
        if self._closed or self._unhealthy is not None or self._forked_flag:
            return False
        return isinstance(e, LeaseLost) or (isinstance(e, FailedPrecondition) and inc.retired)

    def _answer(self, inc: _Incarnation, e: SnowidError) -> SnowidError:
        if (
            isinstance(e, FailedPrecondition)
            and inc.retired
            and self._unhealthy is not None
            and not self._closed
        ):
            return Unhealthy(f"the clock moved back: {self._unhealthy.message}")
        return e

    def next_id(self) -> int:
        return self._call(lambda g: g.next_id())

    def try_next_id(self) -> int:
        return self._call(lambda g: g.try_next_id())

    def reserve(self, n: int) -> range:
        return self._call(lambda g: g.reserve(n))

    def next_ids(self, n: int) -> list[int]:
        Generator._check_count(n)
        out: list[int] = []
        while len(out) < n:
            out.extend(self.reserve(n - len(out)))
        return out

    # --- state ------------------------------------------------------------------

    @property
    def worker(self) -> tuple[int, int]:
        """(region, host) of the current lease."""
        return self._current.keeper.worker

    @property
    def lease_state(self) -> LeaseState:
        return self._current.keeper.state

    @property
    def healthy(self) -> bool:
        return self._unhealthy is None

    @property
    def ready(self) -> bool:
        if self._closed or self._unhealthy is not None or self._forked_flag:
            return False
        inc = self._current
        k = inc.keeper
        if inc.retired or not inc.generator.healthy or k.state != LeaseState.HELD:
            return False
        if self.clock.mono_ns() >= k.guard.deadline_mono_ns:
            return False
        return k.wait_until_ns is None or self.clock.wall_ns() >= k.wait_until_ns

    # --- incarnations -------------------------------------------------------------

    def _event(self, what: str, status: SnowidError | None) -> None:
        if self._on_event is not None:
            self._on_event(what, status)

    def _on_keeper_state(self, state: LeaseState, why: SnowidError | None) -> None:
        if state == LeaseState.LOST:
            with self._cond:
                self._cond.notify_all()

    def _on_generator_unhealthy(self, inc: _Incarnation, e: SnowidError) -> None:
        with self._cond:
            if self._unhealthy is None:
                self._unhealthy = e
                self._unhealthy_reporter = inc
            self._cond.notify_all()

    def _fence_for(self, region: int, host: int) -> FenceFile | None:
        if self._state_dir is None:
            return None
        return FenceFile(os.path.join(self._state_dir, f"fence-r{region}-h{host}"))

    def _nothing_issued_ns(self, k: LeaseKeeper) -> int:
        prev = k.grant.previous_high_water_ns
        return prev if prev is not None else self.layout.epoch_ms * MS

    def _make_incarnation(self) -> _Incarnation:
        host, pid, started = self._holder
        keeper = LeaseKeeper.acquire(
            self.clock,
            self.registry,
            region=self._region,
            host=self._host,
            timing=self.timing,
            holder_host=host,
            pid=pid,
            started_ns=started,
            retry_every=self._retry_every,
            on_state=self._on_keeper_state,
        )
        region, got = keeper.worker
        holder: list[_Incarnation] = []
        try:
            gen = Generator(
                region=region,
                host=got,
                layout=self.layout,
                clock=self.clock,
                fence=self._fence_for(region, got),
                lease=keeper.guard,
                wait_until_ns=keeper.wait_until_ns,
                continue_after_ms=self._issued_through_ms,
                on_unhealthy=lambda e: self._on_generator_unhealthy(holder[0], e),
                **self._gen_options,
            )
        except SnowidError:
            try:
                keeper.release(self._nothing_issued_ns(keeper))
            except SnowidError:
                pass
            raise
        inc = _Incarnation(keeper, gen)
        holder.append(inc)
        keeper.start()
        return inc

    def _stop_generator(self, inc: _Incarnation) -> None:
        if not inc.stopped:
            inc.stopped = True
            try:
                inc.generator.close()
            except SnowidError as e:
                self._event("fence not recorded at stop", e)

    def _last_issued_ms(self, inc: _Incarnation) -> int | None:
        last = inc.generator.last_ticks
        if last <= inc.initial_ticks:
            return None
        return self.layout.tick_start_ms(last)

    def _give_back(self, inc: _Incarnation) -> SnowidError | None:
        inc.retired = True
        self._stop_generator(inc)
        last = self._last_issued_ms(inc)
        try:
            inc.keeper.release(last * MS if last is not None else None)
        except SnowidError as e:
            return e
        return None

    def _replace(self, inc: _Incarnation) -> None:
        inc.retired = True
        self._event(f"lease lost on worker {inc.keeper.grant.region}/{inc.keeper.grant.host}", None)
        self._stop_generator(inc)
        try:
            inc.keeper.release(None)
        except SnowidError:
            pass  # lost: this only stopped its threads
        last = self._last_issued_ms(inc)
        if last is not None:
            self._issued_through_ms = max(self._issued_through_ms or last, last)
        while True:
            with self._cond:
                if self._stop or self._unhealthy is not None:
                    return
            try:
                fresh = self._make_incarnation()
            except SnowidError as e:
                retry_at = self.clock.mono_ns() + self._reacquire_delay
                cap = max(int(_MAX_REACQUIRE_S * 1e9), self._reacquire_ns)
                self._reacquire_delay = (
                    cap if self._reacquire_delay >= cap // 2 else self._reacquire_delay * 2
                )
                self._event("acquire failed", e)
                with self._cond:
                    while not self._stop and self._unhealthy is None:
                        left = (retry_at - self.clock.mono_ns()) / 1e9
                        if left <= 0:
                            break
                        self._cond.wait(min(left, _MAX_SLEEP_S))
                continue
            with self._cond:
                if self._stop or self._unhealthy is not None:
                    discard = True
                else:
                    discard = False
                    self._incarnations.append(fresh)
                    self._current = fresh
                    self._reacquire_delay = self._reacquire_ns
            if discard:
                fresh.retired = True
                self._stop_generator(fresh)
                try:
                    fresh.keeper.release(self._nothing_issued_ns(fresh.keeper))
                except SnowidError:
                    pass
                return
            self.reacquisitions += 1
            self._event(
                f"acquired worker {fresh.keeper.grant.region}/{fresh.keeper.grant.host}", None
            )
            return

    def _retire_unhealthy(self) -> None:
        reporter = self._unhealthy_reporter
        assert reporter is not None and self._unhealthy is not None
        for inc in {id(reporter): reporter, id(self._current): self._current}.values():
            err = self._give_back(inc)
            self._event(
                "clock moved back: "
                + ("did not release" if err else "released")
                + f" worker {inc.keeper.grant.region}/{inc.keeper.grant.host}",
                err or self._unhealthy,
            )

    def _run(self) -> None:
        with self._cond:
            while not self._stop:
                if self._unhealthy is not None and not self._unhealthy_handled:
                    self._unhealthy_handled = True
                    self._cond.release()
                    try:
                        self._retire_unhealthy()
                    finally:
                        self._cond.acquire()
                    continue
                inc = self._current
                if self._unhealthy is None and inc.keeper.state == LeaseState.LOST:
                    self._cond.release()
                    try:
                        self._replace(inc)
                    finally:
                        self._cond.acquire()
                    continue
                self._cond.wait(_MAX_SLEEP_S)

    # --- the end ------------------------------------------------------------------

    def _forked(self) -> None:
        # The child has no background or keeper threads, and its copy of the
        # lease is the parent's: it must neither issue nor release.
        self._forked_flag = True
        self._closed = True
        self._cond = threading.Condition()

    def _close_registry(self) -> None:
        if self._own_registry:
            self.registry.close()

    def close(self) -> None:
        """Stops issuing and gives the worker id back with its exact last instant."""
        if self._forked_flag:
            return
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._stop = True
            self._cond.notify_all()
        self._background.join()
        if self._unhealthy is not None and not self._unhealthy_handled:
            self._unhealthy_handled = True
            self._retire_unhealthy()
        inc = self._current
        state = inc.keeper.state
        self._stop_generator(inc)
        last = self._last_issued_ms(inc)
        try:
            inc.keeper.release(last * MS if last is not None else None)
            self._event(f"released worker {inc.keeper.grant.region}/{inc.keeper.grant.host}", None)
        except LeaseLost:
            # Fenced or expired before the release, whether or not the keeper
            # had noticed yet: the guard stopped issuing by the deadline and the
            # quarantine covers the rest, so there is nothing left to give back.
            pass
        except SnowidError:
            if state in (LeaseState.HELD, LeaseState.UNCERTAIN):
                self._close_registry()
                raise
        self._close_registry()

    def __enter__(self) -> LeasedGenerator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def env_settings(environ: Mapping[str, str], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """LeasedGenerator arguments from SNOWID_* variables (see from_env)."""
    out: dict[str, Any] = {}
    registry = environ.get("SNOWID_REGISTRY")
    if registry is not None and registry not in ("etcd", "auto"):
        raise InvalidArgument(f"SNOWID_REGISTRY={registry!r}: a LeasedGenerator leases from etcd")
    if "etcd" not in overrides:
        endpoints = environ.get("SNOWID_ETCD_ENDPOINTS")
        if endpoints is None:
            raise InvalidArgument("SNOWID_ETCD_ENDPOINTS is not set: no etcd to lease from")
        if not endpoints.strip():
            raise InvalidArgument("SNOWID_ETCD_ENDPOINTS is empty: no etcd to lease from")
        out["etcd"] = parse_endpoints(endpoints)
    for var, key in (
        ("SNOWID_ETCD_PREFIX", "prefix"),
        ("SNOWID_ETCD_CLUSTER", "cluster"),
        ("SNOWID_ETCD_CA", "ca_file"),
        ("SNOWID_ETCD_CERT", "cert_file"),
        ("SNOWID_ETCD_KEY", "key_file"),
        ("SNOWID_ETCD_USER", "user"),
        ("SNOWID_ETCD_PASSWORD", "password"),
        ("SNOWID_STATE_DIR", "state_dir"),
    ):
        v = environ.get(var)
        if v:
            out[key] = v
    for var, key in (("SNOWID_REGION", "region"), ("SNOWID_HOST", "host")):
        v = environ.get(var)
        if v is None or v == "":
            continue
        if not v.isascii() or not v.isdigit() or len(v) > 10:
            raise InvalidArgument(f"{var} must be a number, not {v!r}")
        out[key] = int(v)
    out.update(overrides)
    return out
