"""Bit layouts of ids: validation, compose and decode, bounds (docs/id-format.md)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import re
from collections.abc import Mapping, Sequence
from typing import Literal

from ._time import datetime_of_ms, format_ms
from .errors import InvalidArgument, OutOfRange

Role = Literal["time", "region", "host", "sequence", "other"]
ROLES: tuple[str, ...] = ("time", "region", "host", "sequence", "other")

# The last Unix millisecond that signed 64-bit nanoseconds can hold.
MAX_UNIX_MS = 9_223_372_036_854
_MS_PER_YEAR = 365.2425 * 86_400_000
_FIELD_NAME = re.compile(r"[a-z0-9_]{1,32}")
_MAX_FIELDS = 8


@dataclasses.dataclass(frozen=True)
class Field:
    name: str
    role: str
    width: int
    shift: int = 0

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1


@dataclasses.dataclass(frozen=True)
class Decoded:
    """An id taken apart: every field by name, and its time."""

    id: int
    ticks: int
    unix_ms: int
    fields: Mapping[str, int]
    layout: Layout

    @property
    def time(self) -> _dt.datetime:
        """The start of the id's tick, in UTC."""
        return datetime_of_ms(self.unix_ms)

    @property
    def time_text(self) -> str:
        return format_ms(self.unix_ms)

    def _role(self, role: str) -> int:
        for f in self.layout.fields:
            if f.role == role:
                return self.fields[f.name]
        return 0

    @property
    def region(self) -> int:
        return self._role("region")

    @property
    def host(self) -> int:
        return self._role("host")

    @property
    def sequence(self) -> int:
        return self._role("sequence")

    @property
    def worker(self) -> int:
        """``region * workers_per_region + host``."""
        return self.region * self.layout.workers_per_region + self.host


@dataclasses.dataclass(frozen=True)
class LayoutReport:
    """The time-dependent check of a layout at one instant."""

    years_remaining: float
    warnings: tuple[str, ...]


def _invalid(message: str) -> InvalidArgument:
    return InvalidArgument(message)


class Layout:
    """A validated layout. Immutable; compare by value."""

    __slots__ = (
        "name",
        "epoch_ms",
        "unit_ms",
        "fields",
        "decode_only",
        "total_width",
        "max_id",
        "_by_role",
    )

    def __init__(
        self,
        fields: Sequence[tuple[str, str, int] | Field],
        *,
        epoch_ms: int,
        unit_ms: int = 1,
        name: str = "",
        decode_only: bool = False,
    ) -> None:
        specs = [(f.name, f.role, f.width) if isinstance(f, Field) else tuple(f) for f in fields]
        _validate(specs, epoch_ms, unit_ms, decode_only)
        total = sum(w for _, _, w in specs)
        placed: list[Field] = []
        used = 0
        for fname, role, width in specs:
            used += width
            placed.append(Field(fname, role, width, total - used))
        self.name = name or "custom"
        self.epoch_ms = epoch_ms
        self.unit_ms = unit_ms
        self.fields: tuple[Field, ...] = tuple(placed)
        self.decode_only = decode_only
        self.total_width = total
        self.max_id = (1 << total) - 1
        self._by_role = {f.role: f for f in placed if f.role != "other"}

    # --- derived properties -------------------------------------------------

    def field(self, role: str) -> Field | None:
        return self._by_role.get(role)

    def width_of(self, role: str) -> int:
        f = self._by_role.get(role)
        return f.width if f else 0

    def shift_of(self, role: str) -> int:
        f = self._by_role.get(role)
        return f.shift if f else 0

    @property
    def max_ticks(self) -> int:
        return (1 << self.width_of("time")) - 1

    @property
    def end_of_life_ms(self) -> int:
        return self.epoch_ms + (1 << self.width_of("time")) * self.unit_ms

    @property
    def can_generate(self) -> bool:
        return not self.decode_only

    @property
    def regions(self) -> int:
        return 1 << self.width_of("region")

    @property
    def workers_per_region(self) -> int:
        return 1 << self.width_of("host")

    @property
    def sequence_capacity(self) -> int:
        return 1 << self.width_of("sequence")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return (
            self.name,
            self.epoch_ms,
            self.unit_ms,
            self.fields,
            self.decode_only,
        ) == (
            other.name,
            other.epoch_ms,
            other.unit_ms,
            other.fields,
            other.decode_only,
        )

    def __hash__(self) -> int:
        return hash((self.name, self.epoch_ms, self.unit_ms, self.fields, self.decode_only))

    def __repr__(self) -> str:
        parts = " · ".join(f"{f.name} {f.width}" for f in self.fields)
        return f"Layout({self.name!r}, epoch_ms={self.epoch_ms}, unit_ms={self.unit_ms}, {parts})"

    # --- time ---------------------------------------------------------------

    def ticks_at_ns(self, unix_ns: int) -> int:
        """``floor((unix_ns - epoch) / unit)``; may be negative or past max_ticks."""
        return (unix_ns - self.epoch_ms * 1_000_000) // (self.unit_ms * 1_000_000)

    def ticks_at_ms(self, unix_ms: int) -> int:
        return (unix_ms - self.epoch_ms) // self.unit_ms

    def tick_start_ms(self, ticks: int) -> int:
        return self.epoch_ms + ticks * self.unit_ms

    def _ticks_in_range(self, unix_ms: int) -> int:
        t = self.ticks_at_ms(unix_ms)
        if t < 0:
            raise OutOfRange(f"{format_ms(unix_ms)} is before the epoch of layout {self.name}")
        if t > self.max_ticks:
            raise OutOfRange(
                f"{format_ms(unix_ms)} is at or past the end of life of layout {self.name} "
                f"({format_ms(self.end_of_life_ms)})"
            )
        return t

    # --- ids ----------------------------------------------------------------

    def decode(self, id: int) -> Decoded:
        """Every field of ``id``; OUT_OF_RANGE above max_id or below 0."""
        if id < 0 or id > self.max_id:
            raise OutOfRange(f"{id} is not an id of layout {self.name} (max {self.max_id})")
        values = {f.name: (id >> f.shift) & f.mask for f in self.fields}
        tf = self._by_role.get("time")
        ticks = values[tf.name] if tf else 0
        return Decoded(id, ticks, self.tick_start_ms(ticks), values, self)

    def encode(self, values: Mapping[str, int]) -> int:
        """The id of the given field values (by name; a missing field is 0)."""
        unknown = set(values) - {f.name for f in self.fields}
        if unknown:
            raise InvalidArgument(f"layout {self.name} has no field {sorted(unknown)[0]!r}")
        id = 0
        for f in self.fields:
            v = values.get(f.name, 0)
            if v < 0 or v > f.mask:
                raise OutOfRange(f"{f.name} {v} does not fit {f.width} bits")
            id |= v << f.shift
        return id

    def compose(
        self,
        *,
        unix_ms: int | None = None,
        ticks: int | None = None,
        region: int = 0,
        host: int = 0,
        sequence: int = 0,
    ) -> int:
        """The id of a time (``unix_ms`` or ``ticks``) and a worker and sequence."""
        if (unix_ms is None) == (ticks is None):
            raise InvalidArgument("compose needs exactly one of unix_ms and ticks")
        t = self._ticks_in_range(unix_ms) if unix_ms is not None else ticks
        assert t is not None
        values: dict[str, int] = {}
        for role, v in (
            ("time", t),
            ("region", region),
            ("host", host),
            ("sequence", sequence),
        ):
            f = self._by_role.get(role)
            if f is None:
                if v != 0:
                    raise OutOfRange(f"layout {self.name} has no {role} field for {v}")
                continue
            values[f.name] = v
        return self.encode(values)

    def min_id(self, unix_ms: int) -> int:
        """The smallest id of the tick containing ``unix_ms``."""
        return self._ticks_in_range(unix_ms) << self.shift_of("time")

    def max_id_at(self, unix_ms: int) -> int:
        """The largest id of the tick containing ``unix_ms``."""
        shift = self.shift_of("time")
        return (self._ticks_in_range(unix_ms) << shift) | ((1 << shift) - 1)

    def bounds(self, first_ms: int, last_ms: int | None = None) -> tuple[int, int]:
        """``(min_id(first_ms), max_id_at(last_ms))``: every id issued in between."""
        return self.min_id(first_ms), self.max_id_at(first_ms if last_ms is None else last_ms)

    # --- checks -------------------------------------------------------------

    def check(self, now_ms: int) -> LayoutReport:
        """The time-dependent rules of section 5 at ``now_ms``."""
        if self.epoch_ms > now_ms:
            raise InvalidArgument(
                f"the epoch of layout {self.name} ({format_ms(self.epoch_ms)}) is in the future"
            )
        if self.end_of_life_ms <= now_ms:
            raise OutOfRange(
                f"layout {self.name} reached its end of life at {format_ms(self.end_of_life_ms)}"
            )
        years = (self.end_of_life_ms - now_ms) / _MS_PER_YEAR
        warnings: tuple[str, ...] = ()
        if years < 10:
            warnings = (
                f"layout {self.name} has fewer than 10 years left: its time field runs out on "
                f"{format_ms(self.end_of_life_ms)}",
            )
        return LayoutReport(years, warnings)

    def check_worker(self, region: int, host: int) -> None:
        if not 0 <= region < self.regions:
            raise InvalidArgument(
                f"region must be 0..{self.regions - 1} (layout {self.name}), not {region}"
            )
        if not 0 <= host < self.workers_per_region:
            raise InvalidArgument(
                f"host must be 0..{self.workers_per_region - 1} (layout {self.name}), not {host}"
            )


def _validate(
    specs: list[tuple[str, str, int]] | list[tuple],
    epoch_ms: int,
    unit_ms: int,
    decode_only: bool,
) -> None:
    if unit_ms not in (1, 10):
        raise _invalid(f"time unit must be 1 or 10 ms, not {unit_ms}")
    if not 0 <= epoch_ms < MAX_UNIX_MS:
        raise _invalid(f"epoch must be between 1970-01-01 and 2262-04-11, not {epoch_ms}")
    if not 1 <= len(specs) <= _MAX_FIELDS:
        raise _invalid(f"a layout has 1 to {_MAX_FIELDS} fields, not {len(specs)}")
    seen_names: set[str] = set()
    seen_roles: set[str] = set()
    for spec in specs:
        if len(spec) != 3:
            raise _invalid("a field is (name, role, width)")
        fname, role, width = spec
        if not isinstance(fname, str) or not _FIELD_NAME.fullmatch(fname):
            raise _invalid(f"field name {fname!r} must be 1-32 of [a-z0-9_]")
        if fname in seen_names:
            raise _invalid(f"field name {fname!r} repeats")
        seen_names.add(fname)
        if not isinstance(width, int) or isinstance(width, bool) or not 1 <= width <= 64:
            raise _invalid(f"field {fname!r} must be 1 to 64 bits wide, not {width}")
        if role not in ROLES:
            raise _invalid(f"field {fname!r} has an unknown role {role!r}")
        if role != "other":
            if role in seen_roles:
                raise _invalid(f"more than one {role} field")
            seen_roles.add(role)
    total = sum(s[2] for s in specs)
    if total > 64:
        raise _invalid(f"fields add up to {total} bits, over 64")
    if specs[0][1] != "time":
        raise _invalid("the first (most significant) field must have the role time")
    time_width = specs[0][2]
    if time_width > 61:
        raise _invalid("the time field may be at most 61 bits wide")
    if epoch_ms + (1 << time_width) * unit_ms > MAX_UNIX_MS:
        raise _invalid(
            f"a {time_width}-bit time field of {unit_ms} ms from this epoch ends after 2262-04-11"
        )
    if not decode_only:
        roles = [s[1] for s in specs]
        allowed = [r for r in ("time", "region", "host", "sequence") if r in roles]
        if roles != allowed or "sequence" not in roles or total != 63:
            raise _invalid(
                "a layout that generates ids has the fields time, [region], [host], sequence "
                "in that order and 63 bits in all; mark others decode-only"
            )
