"""snowid: unique 64-bit ids.

Codec (decode, compose, parse, format, bounds, shard, presets, histories), an
in-process Generator, a LeasedGenerator whose worker id is leased from etcd,
and a Sidecar client for the snowidd daemon.
"""

from __future__ import annotations

from .clock import SYSTEM_CLOCK, Clock, SystemClock
from .errors import (
    AlreadyExists,
    ClockBehind,
    ClockMovedBack,
    Code,
    DataLoss,
    FailedPrecondition,
    InvalidArgument,
    LeaseLost,
    LeaseUncertain,
    NotFound,
    OutOfRange,
    PermanentError,
    ResourceExhausted,
    RetryableError,
    SequenceExhausted,
    SnowidError,
    Unavailable,
    Unhealthy,
)
from .fence import FenceFile, format_fence, parse_fence
from .generator import Generator, GeneratorStats
from .history import LayoutHistory
from .layout import Decoded, Field, Layout, LayoutReport
from .leased import LeasedGenerator, LeaseTiming
from .presets import DISCORD, INSTAGRAM, PRESETS, SNOWID, SONYFLAKE, TWITTER, preset
from .shard import mix64, shard
from .sidecar import Sidecar
from .text import format_id, parse_id

__version__ = "0.1.0"


def decode(id: int, layout: Layout = SNOWID) -> Decoded:
    """Takes an id apart: ``decode(i).unix_ms``, ``.region``, ``.host``, ``.sequence``."""
    return layout.decode(id)


def compose(
    *, unix_ms: int, region: int = 0, host: int = 0, sequence: int = 0, layout: Layout = SNOWID
) -> int:
    """The id of an instant, worker and sequence; OUT_OF_RANGE if a value does not fit."""
    return layout.compose(unix_ms=unix_ms, region=region, host=host, sequence=sequence)


def parse(text: str | bytes, layout: Layout | None = None) -> int:
    """Strict id text: 1 to 20 ASCII digits (docs/id-format.md §8)."""
    return parse_id(text, layout)


def format(id: int) -> str:  # noqa: A001 - the name the API documents
    """Canonical id text: decimal, no leading zeros."""
    return format_id(id)


def bounds(first_ms: int, last_ms: int | None = None, layout: Layout = SNOWID) -> tuple[int, int]:
    """The smallest and largest ids that can carry an instant from first_ms to last_ms."""
    return layout.bounds(first_ms, last_ms)


__all__ = [
    "AlreadyExists",
    "Clock",
    "ClockBehind",
    "ClockMovedBack",
    "Code",
    "DISCORD",
    "DataLoss",
    "Decoded",
    "FailedPrecondition",
    "FenceFile",
    "Field",
    "Generator",
    "GeneratorStats",
    "INSTAGRAM",
    "InvalidArgument",
    "Layout",
    "LayoutHistory",
    "LayoutReport",
    "LeaseLost",
    "LeaseTiming",
    "LeaseUncertain",
    "LeasedGenerator",
    "NotFound",
    "OutOfRange",
    "PRESETS",
    "PermanentError",
    "ResourceExhausted",
    "RetryableError",
    "SNOWID",
    "SONYFLAKE",
    "SYSTEM_CLOCK",
    "SequenceExhausted",
    "Sidecar",
    "SnowidError",
    "SystemClock",
    "TWITTER",
    "Unavailable",
    "Unhealthy",
    "bounds",
    "compose",
    "decode",
    "format",
    "format_fence",
    "format_id",
    "mix64",
    "parse",
    "parse_fence",
    "parse_id",
    "preset",
    "shard",
]
