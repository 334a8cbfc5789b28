"""Instants as RFC 3339 text, in UTC with milliseconds."""

from __future__ import annotations

import datetime as _dt
import re

from .errors import InvalidArgument

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)


def datetime_of_ms(unix_ms: int) -> _dt.datetime:
    """The UTC datetime of a Unix time in milliseconds."""
    return _EPOCH + _dt.timedelta(milliseconds=unix_ms)


def format_ms(unix_ms: int) -> str:
    """``2026-01-01T00:00:00.000Z``: exactly three fraction digits."""
    d = datetime_of_ms(unix_ms)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


def parse_ns(text: str) -> int:
    """Unix nanoseconds of an RFC 3339 instant with a zone (Z or +hh:mm)."""
    m = _RFC3339.fullmatch(text)
    if m is None:
        raise InvalidArgument(f"not an RFC 3339 instant: {text[:64]!r}")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        base = _dt.datetime(year, month, day, hour, minute, second, tzinfo=_dt.timezone.utc)
    except ValueError as e:
        raise InvalidArgument(f"not an RFC 3339 instant: {text[:64]!r} ({e})") from None
    frac = m.group(7) or ""
    ns = int((frac + "000000000")[:9])
    offset_s = 0
    if m.group(9):
        offset_s = (int(m.group(10)) * 60 + int(m.group(11))) * 60
        if m.group(9) == "-":
            offset_s = -offset_s
    delta = base - _EPOCH
    return (delta.days * 86400 + delta.seconds - offset_s) * 1_000_000_000 + ns
