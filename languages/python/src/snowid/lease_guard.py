"""The hot-path view of a worker-id lease, written by the keeper, read by the generator.

A generator with a guard issues an id only while the monotonic clock is before
the stop deadline (send time of the last good renewal plus stop_after) and the
id's time is at or before the high-water mark already stored in the registry.
"""

from __future__ import annotations

import threading

_NEVER = -(1 << 63)


class LeaseGuard:
    def __init__(self) -> None:
        self._writers = threading.Lock()
        # Plain attributes: each read is atomic, and permits() reads two.
        self.deadline_mono_ns = _NEVER
        self.high_water_ns = _NEVER
        self.lost = False

    def extend(self, deadline_mono_ns: int, high_water_ns: int) -> None:
        """Permits issuing until the deadline for times up to the mark. Call only
        once the mark is durable in the registry. Never moves a bound back and
        does nothing once lost."""
        with self._writers:
            if self.lost:
                return
            if high_water_ns > self.high_water_ns:
                self.high_water_ns = high_water_ns
            if deadline_mono_ns > self.deadline_mono_ns:
                self.deadline_mono_ns = deadline_mono_ns

    def mark_lost(self) -> None:
        """The lease is gone: nothing is permitted from here on, for good."""
        with self._writers:
            self.lost = True
            self.deadline_mono_ns = _NEVER

    def permits(self, mono_ns: int, id_time_ns: int) -> bool:
        return mono_ns < self.deadline_mono_ns and id_time_ns <= self.high_water_ns
