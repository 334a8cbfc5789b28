"""Ids as decimal text, strictly (docs/id-format.md §8)."""

from __future__ import annotations

from .errors import InvalidArgument, OutOfRange
from .layout import Layout

_MAX_U64 = (1 << 64) - 1
_DIGITS = frozenset(b"0123456789")


def parse_id(text: str | bytes, layout: Layout | None = None) -> int:
    """1 to 20 ASCII digits, at most 2^64 - 1 (and ``layout.max_id`` if given).

    Anything else (a sign, space, newline, non-ASCII digit, ...) is
    INVALID_ARGUMENT; a value too large is OUT_OF_RANGE.
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if not 1 <= len(raw) <= 20 or not _DIGITS.issuperset(raw):
        shown = raw[:32].decode("utf-8", "backslashreplace")
        raise InvalidArgument(f"an id is 1 to 20 ASCII digits, not {shown!r}")
    value = int(raw)
    if value > _MAX_U64:
        raise OutOfRange(f"{value} is above 2^64 - 1")
    if layout is not None and value > layout.max_id:
        raise OutOfRange(f"{value} is above the largest id of layout {layout.name}")
    return value


def format_id(id: int) -> str:
    """The canonical text: decimal digits, no leading zeros."""
    if not 0 <= id <= _MAX_U64:
        raise OutOfRange(f"{id} is not an unsigned 64-bit id")
    return str(id)
