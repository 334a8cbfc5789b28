"""The JSON values the registry stores, byte-compatible with the C++ registry:

    holder  {"address":"","host":"web-1","lease":"694d7f3a1c2b9e05","pid":4242,
             "started":"2026-03-01T10:00:00.000Z"}
    mark    {"clean_release_ms":..,"high_water_ms":..,"released_at_ms":..}
    store   {"high_water_ms":..,"incarnation":"3f9c0a7d5e2b4c18","reason":"..",
             "written_ms":..}

Instants are Unix milliseconds rounded up. Unknown members are ignored; a known
member of the wrong type or out of range is DATA_LOSS. The grant token is
``etcd:<lease hex>:<holder create revision>:<region>:<host>``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from .._time import format_ms, parse_ns
from ..errors import DataLoss, InvalidArgument, SnowidError

MS = 1_000_000
_MAX_MS = (2**63 - 1) // MS - 1
_HEX16 = re.compile(r"[0-9a-fA-F]{1,16}")


def ceil_ms(ns: int) -> int:
    return -(-ns // MS)


def _dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _object(text: str | bytes, what: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError):
        doc = None
    if not isinstance(doc, dict):
        raise DataLoss(f"unreadable {what} value in etcd: not a JSON object")
    return doc


def _int_member(doc: dict[str, Any], name: str, what: str, lo: int, hi: int) -> int | None:
    v = doc.get(name)
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool):
        raise DataLoss(f"unreadable {what} value in etcd: {name} is not an integer")
    if not lo <= v <= hi:
        raise DataLoss(f"unreadable {what} value in etcd: {name} out of range")
    return v


def _str_member(doc: dict[str, Any], name: str, what: str) -> str:
    v = doc.get(name)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise DataLoss(f"unreadable {what} value in etcd: {name} is not a string")
    return v


@dataclasses.dataclass(frozen=True)
class Holder:
    host: str
    pid: int
    started_ns: int
    address: str
    lease: int


def encode_holder(host: str, pid: int, started_ns: int, address: str, lease: int) -> str:
    return _dumps(
        {
            "address": address,
            "host": host,
            "lease": format(lease & (2**64 - 1), "x"),
            "pid": pid,
            "started": format_ms(max(0, started_ns) // MS),
        }
    )


def decode_holder(text: str | bytes) -> Holder:
    doc = _object(text, "holder")
    host = _str_member(doc, "host", "holder")
    pid = _int_member(doc, "pid", "holder", -(2**63), 2**63 - 1) or 0
    address = _str_member(doc, "address", "holder")
    started = _str_member(doc, "started", "holder")
    started_ns = 0
    if started:
        try:
            started_ns = parse_ns(started)
        except SnowidError as e:
            raise DataLoss(
                f"unreadable holder value in etcd: bad start time: {e.message}"
            ) from None
    lease_text = _str_member(doc, "lease", "holder")
    if not _HEX16.fullmatch(lease_text):
        raise DataLoss("unreadable holder value in etcd: bad lease id")
    lease = int(lease_text, 16)
    if lease >= 2**63:
        lease -= 2**64
    return Holder(host, pid, started_ns, address, lease)


@dataclasses.dataclass(frozen=True)
class Mark:
    """Unix nanoseconds (stored rounded up to the millisecond); None when absent."""

    high_water_ns: int | None = None
    released_at_ns: int | None = None
    clean_release_ns: int | None = None

    @property
    def released_clean(self) -> bool:
        """Set last by a clean release, which recorded the exact last instant."""
        return (
            self.clean_release_ns is not None
            and self.high_water_ns is not None
            and self.released_at_ns is not None
            and ceil_ms(self.clean_release_ns) == ceil_ms(self.high_water_ns)
        )


def encode_mark(mark: Mark) -> str:
    doc: dict[str, Any] = {}
    if mark.high_water_ns is not None:
        doc["high_water_ms"] = ceil_ms(mark.high_water_ns)
    if mark.released_at_ns is not None:
        doc["released_at_ms"] = ceil_ms(mark.released_at_ns)
    if mark.clean_release_ns is not None:
        doc["clean_release_ms"] = ceil_ms(mark.clean_release_ns)
    return _dumps(doc)


def decode_mark(text: str | bytes) -> Mark:
    doc = _object(text, "mark")
    vals = [
        _int_member(doc, n, "mark", -_MAX_MS, _MAX_MS)
        for n in ("high_water_ms", "released_at_ms", "clean_release_ms")
    ]
    hw, at, clean = (v * MS if v is not None else None for v in vals)
    return Mark(hw, at, clean)


def free_from_ns(mark: Mark, quarantine_ns: int) -> int | None:
    """When an id that nobody holds may be taken: the later of its release and
    its mark, plus the quarantine unless a clean release set the mark. None:
    free since forever."""
    times = [t for t in (mark.released_at_ns, mark.high_water_ns) if t is not None]
    if not times:
        return None
    last = max(times)
    return last if mark.released_clean else last + quarantine_ns


@dataclasses.dataclass(frozen=True)
class Store:
    incarnation: str
    high_water_ns: int | None
    reason: str
    written_ns: int


def encode_store(store: Store) -> str:
    doc: dict[str, Any] = {"incarnation": store.incarnation, "reason": store.reason}
    if store.high_water_ns is not None:
        doc["high_water_ms"] = ceil_ms(store.high_water_ns)
    doc["written_ms"] = ceil_ms(store.written_ns)
    return _dumps(doc)


def decode_store(text: str | bytes) -> Store:
    doc = _object(text, "store")
    inc = _str_member(doc, "incarnation", "store")
    if not (len(inc) == 16 and _HEX16.fullmatch(inc)):
        raise DataLoss("unreadable store value in etcd: bad incarnation")
    hw = _int_member(doc, "high_water_ms", "store", -_MAX_MS, _MAX_MS)
    reason = _str_member(doc, "reason", "store")
    written = _int_member(doc, "written_ms", "store", -_MAX_MS, _MAX_MS) or 0
    return Store(inc, hw * MS if hw is not None else None, reason, written * MS)


@dataclasses.dataclass(frozen=True)
class Token:
    lease: int
    create_revision: int
    region: int
    host: int

    def encode(self) -> str:
        return f"etcd:{self.lease & (2**64 - 1):x}:{self.create_revision}:{self.region}:{self.host}"


_DEC = re.compile(r"0|[1-9][0-9]*")


def decode_token(text: str) -> Token:
    bad = InvalidArgument(f"not a grant of the etcd registry: {text[:80]!r}")
    if not text.startswith("etcd:"):
        raise bad
    parts = text[5:].split(":")
    if len(parts) != 4 or not _HEX16.fullmatch(parts[0]):
        raise bad
    if not all(_DEC.fullmatch(p) for p in parts[1:]):
        raise bad
    lease = int(parts[0], 16)
    rev, region, host = (int(p) for p in parts[1:])
    if lease == 0 or rev <= 0 or region > 0xFFFFFFFF or host > 0xFFFFFFFF:
        raise bad
    if lease >= 2**63:
        lease -= 2**64
    return Token(lease, rev, region, host)
