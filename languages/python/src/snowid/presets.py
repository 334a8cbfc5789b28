"""The built-in layouts of docs/id-format.md section 6."""

from __future__ import annotations

from .errors import NotFound
from .layout import Layout

SNOWID = Layout(
    [("time", "time", 41), ("region", "region", 2), ("host", "host", 8)]
    + [("sequence", "sequence", 12)],
    epoch_ms=1_767_225_600_000,
    name="snowid",
)
TWITTER = Layout(
    [("time", "time", 41), ("datacenter", "region", 5), ("worker", "host", 5)]
    + [("sequence", "sequence", 12)],
    epoch_ms=1_288_834_974_657,
    name="twitter",
    decode_only=True,
)
DISCORD = Layout(
    [("timestamp", "time", 42), ("worker", "other", 5), ("process", "other", 5)]
    + [("increment", "sequence", 12)],
    epoch_ms=1_420_070_400_000,
    name="discord",
    decode_only=True,
)
INSTAGRAM = Layout(
    [("time", "time", 41), ("shard", "other", 13), ("sequence", "sequence", 10)],
    epoch_ms=1_314_220_021_721,
    name="instagram",
    decode_only=True,
)
SONYFLAKE = Layout(
    [("time", "time", 39), ("sequence", "sequence", 8), ("machine", "other", 16)],
    epoch_ms=1_409_529_600_000,
    unit_ms=10,
    name="sonyflake",
    decode_only=True,
)

PRESETS: dict[str, Layout] = {p.name: p for p in (SNOWID, TWITTER, DISCORD, INSTAGRAM, SONYFLAKE)}


def preset(name: str) -> Layout:
    """The preset of that name; NOT_FOUND otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise NotFound(f"no preset layout {name!r} (known: {', '.join(PRESETS)})") from None
