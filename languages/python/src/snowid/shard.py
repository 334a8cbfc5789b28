"""The shard of an id (docs/id-format.md §10). Part of the format: never changes."""

from __future__ import annotations

from .errors import InvalidArgument

_M64 = (1 << 64) - 1


def mix64(id: int) -> int:
    """The 64-bit finalizer the shard function is built on."""
    x = id & _M64
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & _M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & _M64
    x ^= x >> 31
    return x


def shard(id: int, shards: int) -> int:
    """``((mix64(id) >> 32) * shards) >> 32``, for 1 <= shards <= 2^32 - 1."""
    if not 1 <= shards <= 0xFFFFFFFF:
        raise InvalidArgument(f"the number of shards must be 1 to 2^32 - 1, not {shards}")
    if not 0 <= id <= _M64:
        raise InvalidArgument(f"{id} is not an unsigned 64-bit id")
    return ((mix64(id) >> 32) * shards) >> 32
