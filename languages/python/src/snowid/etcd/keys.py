"""The registry's keys: ``<prefix>/<cluster>/workers/<region>/<host>/{holder,mark}``
and ``<prefix>/<cluster>/store``."""

from __future__ import annotations

import re
from typing import NamedTuple

from ..errors import InvalidArgument

_CLUSTER = re.compile(r"[A-Za-z0-9._-]{1,128}")


def check_namespace(prefix: str, cluster: str) -> None:
    """INVALID_ARGUMENT unless the prefix starts with '/', does not end with one and
    has no '//', and the cluster name is 1-128 of ``[A-Za-z0-9._-]``."""
    if not prefix.startswith("/") or prefix.endswith("/") or "//" in prefix:
        raise InvalidArgument(
            f"etcd: the key prefix must start with '/' and not end with one, not {prefix!r}"
        )
    if not _CLUSTER.fullmatch(cluster):
        raise InvalidArgument(
            f"etcd: the cluster name must be letters, digits, '-', '_' or '.', not {cluster!r}"
        )


def _number(text: str) -> int | None:
    """A decimal without leading zeros that fits 32 bits."""
    if not 1 <= len(text) <= 10 or not text.isascii() or not text.isdigit():
        return None
    if len(text) > 1 and text[0] == "0":
        return None
    v = int(text)
    return v if v <= 0xFFFFFFFF else None


class ParsedKey(NamedTuple):
    region: int
    host: int
    is_holder: bool


class WorkerKeys:
    def __init__(self, prefix: str, cluster: str) -> None:
        self.base = f"{prefix}/{cluster}/workers/"
        self.store = f"{prefix}/{cluster}/store"

    @property
    def all(self) -> str:
        return self.base

    def region(self, region: int) -> str:
        return f"{self.base}{region}/"

    def holder(self, region: int, host: int) -> str:
        return f"{self.base}{region}/{host}/holder"

    def mark(self, region: int, host: int) -> str:
        return f"{self.base}{region}/{host}/mark"

    def parse(self, key: str) -> ParsedKey | None:
        """The worker and kind of a key of this namespace; None for any other key."""
        if not key.startswith(self.base):
            return None
        parts = key[len(self.base) :].split("/")
        if len(parts) != 3 or parts[2] not in ("holder", "mark"):
            return None
        region, host = _number(parts[0]), _number(parts[1])
        if region is None or host is None:
            return None
        return ParsedKey(region, host, parts[2] == "holder")


def prefix_end(prefix: bytes) -> bytes:
    """The smallest key after every key starting with ``prefix``."""
    end = bytearray(prefix)
    while end:
        if end[-1] < 0xFF:
            end[-1] += 1
            return bytes(end)
        end.pop()
    return b"\0"
