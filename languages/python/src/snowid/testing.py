"""Helpers for tests of code that uses snowid: a clock that moves only when told."""

from __future__ import annotations

import threading


class FakeClock:
    """A Clock whose wall and monotonic times move only by ``advance``, ``step_wall``
    and ``sleep_ns`` (which advances both, so waits end). Thread-safe."""

    def __init__(self, wall_ns: int, mono_ns: int = 1_000_000_000_000) -> None:
        self._lock = threading.Lock()
        self._wall = wall_ns
        self._mono = mono_ns
        self.sleeps: list[int] = []

    def wall_ns(self) -> int:
        return self._wall

    def mono_ns(self) -> int:
        return self._mono

    def sleep_ns(self, ns: int) -> None:
        with self._lock:
            self.sleeps.append(ns)
            if ns > 0:
                self._wall += ns
                self._mono += ns

    def advance(self, ns: int) -> None:
        """Both clocks move forward by ``ns``."""
        if ns < 0:
            raise ValueError("the monotonic clock never goes back; use step_wall")
        with self._lock:
            self._wall += ns
            self._mono += ns

    def step_wall(self, ns: int) -> None:
        """The wall clock alone steps by ``ns`` (either way), as NTP or an operator would."""
        with self._lock:
            self._wall += ns

    def advance_mono(self, ns: int) -> None:
        """The monotonic clock alone moves on (a frozen wall clock)."""
        if ns < 0:
            raise ValueError("the monotonic clock never goes back")
        with self._lock:
            self._mono += ns

    def set_wall_ms(self, unix_ms: int) -> None:
        with self._lock:
            self._wall = unix_ms * 1_000_000
