"""Holders in processes of their own, stopped (SIGSTOP) and killed (SIGKILL)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import snowid
from snowid import Code, LeasedGenerator, SnowidError

from .etcd_support import QUARANTINE, SHORT, registry

pytestmark = pytest.mark.etcd
PACKAGE = Path(__file__).resolve().parents[1]
MS = 1_000_000


class Holder:
    def __init__(self, etcd, cluster: str, host: int) -> None:
        env = dict(os.environ, PYTHONPATH=f"{PACKAGE / 'src'}{os.pathsep}{PACKAGE}")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(PACKAGE / "tests" / "holder_process.py"),
                etcd.url,
                cluster,
                str(host),
            ],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=PACKAGE,
        )
        self.lines: queue.Queue[dict] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        first = self.lines.get(timeout=20)
        assert first.get("ready"), first

    def _read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def drain(self) -> list[dict]:
        out = []
        while True:
            try:
                out.append(self.lines.get_nowait())
            except queue.Empty:
                return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


def mark_ms(etcd, cluster, host: int) -> int:
    (rec,) = [w for w in registry(etcd, cluster).list(0) if w.host == host]
    assert rec.high_water_ns is not None
    return rec.high_water_ns // MS


def acquire_when_free(etcd, cluster, host: int, limit_s: float) -> tuple[LeasedGenerator, float]:
    started = time.monotonic()
    while True:
        try:
            return (
                LeasedGenerator(
                    [etcd.url], cluster=cluster, host=host, timing=SHORT, quarantine=QUARANTINE
                ),
                time.monotonic() - started,
            )
        except SnowidError as e:
            assert e.code is Code.RESOURCE_EXHAUSTED, e
            assert time.monotonic() - started < limit_s, "the id never became free"
            time.sleep(0.05)


def test_sigstop_past_the_deadline_stops_issuing_and_the_successor_never_collides(etcd, cluster):
    holder = Holder(etcd, cluster, host=5)
    try:
        time.sleep(0.5)
        before = holder.drain()
        assert any("ids" in r for r in before)
        holder.proc.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        time.sleep(0.1)
        before += holder.drain()  # what was in the pipe when it stopped
        # Nothing of a stopped process can move its mark any more.
        mark = mark_ms(etcd, cluster, 5)
        # The lease expires (TTL 2 s) and the quarantine (1 s) passes while it sleeps.
        successor, waited = acquire_when_free(etcd, cluster, 5, limit_s=6)
        with successor:
            theirs = successor.next_ids(2000)
            time.sleep(max(0.0, 3.0 - (time.monotonic() - stopped)))
            paused = time.monotonic() - stopped
            holder.proc.send_signal(signal.SIGCONT)
            time.sleep(1.0)
            theirs += successor.next_ids(2000)
        after = holder.drain()
        print(f"[ measured ] paused {paused:.2f} s; successor waited {waited:.2f} s for the id")
        assert paused > SHORT.stop_after.total_seconds()
        old_worker = [r for r in after if r.get("worker") == [0, 5]]
        for r in old_worker:
            assert max(snowid.decode(i).unix_ms for i in r["ids"]) <= mark
        assert any("refused" in r or r.get("worker") != [0, 5] for r in after), after[:5]
        ours = [i for r in before + after for i in r.get("ids", [])]
        assert not set(ours) & set(theirs)
        assert snowid.decode(theirs[0]).unix_ms >= mark + 100
    finally:
        holder.stop()


def test_sigkill_the_successor_waits_out_the_mark(etcd, cluster):
    holder = Holder(etcd, cluster, host=6)
    try:
        time.sleep(0.5)
        holder.proc.send_signal(signal.SIGKILL)
        holder.proc.wait(10)
        time.sleep(0.05)
        issued = [i for r in holder.drain() for i in r.get("ids", [])]
        assert issued
        mark = mark_ms(etcd, cluster, 6)
        successor, waited = acquire_when_free(etcd, cluster, 6, limit_s=6)
        with successor:
            first = successor.next_id()
        print(f"[ measured ] successor of a killed holder waited {waited:.2f} s for the id")
        # The lease outlived the kill by up to its TTL, then the quarantine ran.
        assert waited >= 1.0
        assert snowid.decode(first).unix_ms >= mark + 100
        assert first > max(issued)
    finally:
        holder.stop()
