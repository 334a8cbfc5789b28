"""Generators inherited through fork() are poisoned in the child.

A child of fork() has a copy of every generator of its parent, with the same
worker id and state, but not the threads that renew a lease. Both would issue
the same ids. So every generator is tracked here, and os.register_at_fork
stops each copy in the child: its next call answers FAILED_PRECONDITION.
"""

from __future__ import annotations

import os
import weakref
from typing import Any, Protocol


class _Forkable(Protocol):
    def _forked(self) -> None: ...


_live: weakref.WeakSet[Any] = weakref.WeakSet()


def track(obj: _Forkable) -> None:
    _live.add(obj)


def _after_fork_in_child() -> None:
    for obj in list(_live):
        obj._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
