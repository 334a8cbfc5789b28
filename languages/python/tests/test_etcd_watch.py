"""The watch's bound (docs/protocol.md section 10): a stream that showed no loss
is ended after WATCH_RECHECK_S, the holder key read again (a deleted or replaced
key is a loss) and the watch moved to the next member.

The unit tests run on a fake gateway with the bound shortened; the etcd test
shows the real 5 s on a three-member cluster whose member under the watch is
stopped (SIGSTOP) while the holder is fenced through another."""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
import time
import types

import pytest

from snowid import SYSTEM_CLOCK, LeasedGenerator
from snowid.etcd import registry as registry_module
from snowid.etcd.gateway import StreamEnd
from snowid.etcd.registry import EtcdOptions, EtcdRegistry, LeaseGrant
from snowid.etcd.values import Token
from snowid.keeper import LeaseState, LeaseTiming

from .etcd_support import run_cli
from .fake_etcd import FakeEtcd, FakeHolder

BOUND_S = 0.25
HOLDER = FakeHolder(create_revision=10, lease=0x1234)
GRANT = LeaseGrant(0, 3, Token(0x1234, 10, 0, 3).encode(), None)


@dataclasses.dataclass
class StreamCall:
    """One watch stream as the registry's client saw it."""

    member: int
    start_revision: int
    timeout: float
    took: float
    end: StreamEnd


@pytest.fixture
def short_bound(monkeypatch):
    monkeypatch.setattr(registry_module, "WATCH_RECHECK_S", BOUND_S)


def fake_registry(fake: FakeEtcd) -> tuple[EtcdRegistry, list[StreamCall]]:
    """A registry on the fake members, and the log of the streams it opens."""
    reg = EtcdRegistry(SYSTEM_CLOCK, EtcdOptions(fake.urls, cluster="unit", request_timeout_s=1.0))
    calls: list[StreamCall] = []
    inner = reg.client.stream

    def stream(i, path, body, timeout, on_line, waiter):
        started = time.monotonic()
        end = inner(i, path, body, timeout, on_line, waiter)
        revision = int(body["create_request"]["start_revision"])
        calls.append(StreamCall(i, revision, timeout, time.monotonic() - started, end[0]))
        return end

    reg.client.stream = stream  # type: ignore[method-assign]
    return reg, calls


def test_the_bound_is_the_protocols_5_s():
    assert registry_module.WATCH_RECHECK_S == 5.0


@pytest.mark.parametrize("chatty", [False, True], ids=["quiet", "progress-messages"])
def test_a_stream_is_ended_after_the_bound_the_key_read_and_the_watch_moved(short_bound, chatty):
    fake = FakeEtcd(2, HOLDER)
    fake.chatty = chatty  # the bound is on the whole stream, messages or none
    reg, calls = fake_registry(fake)
    try:
        assert reg.wait_lost(GRANT, 6 * BOUND_S) is False
        bounded = [c for c in calls if c.timeout == BOUND_S]
        assert len(bounded) >= 2, calls
        # Every stream but one cut short by the caller's deadline ran out the bound.
        assert len(calls) - len(bounded) <= 1 and calls[: len(bounded)] == bounded, calls
        for c in bounded:
            # Ran out the bound: its timer starts before the stream opens, so a loaded
            # machine sees it a little shorter; one that ended on its own is far shorter.
            assert c.end is StreamEnd.TIMED_OUT and c.took >= BOUND_S / 2, c
        # Each was followed by a read of the holder key, and the next stream went to the
        # next member from the read's revision.
        assert len(fake.reads) == len(bounded)
        assert [c.member for c in calls] == [i % 2 for i in range(len(calls))]
        assert [c.start_revision for c in calls] == [11] + [fake.revision + 1] * (len(calls) - 1)
    finally:
        fake.close()


@pytest.mark.parametrize(
    "holder",
    [None, FakeHolder(create_revision=15, lease=0x99)],
    ids=["deleted", "replaced"],
)
def test_a_holder_key_found_gone_by_the_read_after_the_bound_is_a_loss(short_bound, holder):
    fake = FakeEtcd(2, holder)
    reg, calls = fake_registry(fake)
    try:
        assert reg.wait_lost(GRANT, 40 * BOUND_S) is True
        assert [(c.timeout, c.end) for c in calls] == [(BOUND_S, StreamEnd.TIMED_OUT)]
        assert len(fake.reads) == 1
    finally:
        fake.close()


def test_the_last_stream_before_the_callers_deadline_ends_without_a_read(short_bound):
    fake = FakeEtcd(2, None)
    reg, calls = fake_registry(fake)
    try:
        assert reg.wait_lost(GRANT, BOUND_S / 2) is False
        assert len(calls) == 1 and calls[0].timeout <= BOUND_S / 2
        assert not fake.reads
    finally:
        fake.close()


def test_waking_ends_a_quiet_stream_at_once_without_a_read():
    fake = FakeEtcd(2, None)
    reg, calls = fake_registry(fake)
    try:
        threading.Timer(0.1, reg.wake_waiters).start()
        assert reg.wait_lost(GRANT, 60) is False
        assert [c.end for c in calls] == [StreamEnd.CANCELED]
        assert calls[0].took < registry_module.WATCH_RECHECK_S
        assert not fake.reads
    finally:
        fake.close()


# --- a real cluster -----------------------------------------------------------------

# Renewals far apart, so that the watch alone can see the fence.
SLOW_RENEWALS = LeaseTiming(
    ttl=dt.timedelta(seconds=60),
    renew_every=dt.timedelta(seconds=20),
    stop_after=dt.timedelta(seconds=40),
    max_clock_skew=dt.timedelta(milliseconds=100),
)


def fence_through(urls: list[str], cluster: str, region: int, host: int) -> None:
    """``snowid workers fence`` through these members; again when it timed out on a
    loaded machine (an attempt that revoked the lease leaves the id not held)."""
    for attempt in range(3):
        r = run_cli(
            types.SimpleNamespace(url=",".join(urls)),
            cluster,
            "workers",
            "fence",
            str(region),
            str(host),
        )
        if r.returncode == 0 or (attempt > 0 and "is not held" in r.stderr):
            return
        assert "UNAVAILABLE" in r.stderr, r.stderr
    raise AssertionError(f"the fence kept failing: {r.stderr}")


@pytest.mark.etcd
def test_a_fence_through_another_member_is_seen_though_the_watched_member_is_stopped(etcd3):
    stale = etcd3.follower()
    others = [u for i, u in enumerate(etcd3.urls) if i != stale]
    cluster = f"py-stale-member-{time.time_ns()}"
    options = EtcdOptions([etcd3.urls[stale], *others], cluster=cluster, quarantine_s=1.0)
    reg = EtcdRegistry(SYSTEM_CLOCK, options)
    reg.connect()
    reg.initialize_namespace()
    with LeasedGenerator(reg, timing=SLOW_RENEWALS) as g:
        region, host = g.worker
        keeper = g._incarnations[0].keeper
        assert reg.client.preferred == 0, "the watch starts on the member to stop"
        deadline = time.monotonic() + 5
        while etcd3.watchers(stale) < 1:
            assert time.monotonic() < deadline, "the watch never reached the member"
            time.sleep(0.01)
        watching_since = time.monotonic()
        etcd3.pause(stale)
        try:
            fence_through(others, cluster, region, host)
            fenced = time.monotonic()
            # The protocol's 5 s bound, then a read that first waits out the stopped member
            # (and some slack for a loaded machine).
            limit = 5.0 + options.request_timeout_s + 2.0
            while keeper.state is not LeaseState.LOST:
                assert time.monotonic() - fenced < limit, "the fence was not seen"
                time.sleep(0.005)
            seen = time.monotonic()
            print(
                f"[ measured ] fence through another member seen {seen - fenced:.2f} s after "
                f"it completed, {seen - watching_since:.2f} s after the watch reached the "
                "member, stopped since"
            )
            # The first renewal is due 20 s after the acquire: the watch saw the fence.
            assert keeper.renewals == 0
        finally:
            etcd3.resume(stale)
