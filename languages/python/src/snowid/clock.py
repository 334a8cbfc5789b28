"""Clocks: every time value the library uses comes from an injected Clock.

A clock has a wall clock (Unix nanoseconds, may step either way), a monotonic
clock (nanoseconds from an arbitrary origin, never steps back) and a way to
wait. Tests inject a fake one (snowid.testing.FakeClock).
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def wall_ns(self) -> int:
        """Unix time in nanoseconds."""
        ...

    def mono_ns(self) -> int:
        """Monotonic time in nanoseconds."""
        ...

    def sleep_ns(self, ns: int) -> None:
        """Waits about ``ns`` nanoseconds (the wall and monotonic clocks move on)."""
        ...


class SystemClock:
    """The host's clocks: CLOCK_REALTIME and CLOCK_MONOTONIC."""

    # Bound to the C functions directly: the generator calls them on every id.
    wall_ns = staticmethod(time.time_ns)
    mono_ns = staticmethod(time.monotonic_ns)

    @staticmethod
    def sleep_ns(ns: int) -> None:
        if ns > 0:
            time.sleep(ns / 1e9)


SYSTEM_CLOCK = SystemClock()
