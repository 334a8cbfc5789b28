#!/usr/bin/env python3
"""Derives the snowid test vectors from the id format alone.

Every expected value in vectors/*.json comes from the plain integer arithmetic
below, written from docs/id-format.md without looking at any implementation,
so the vectors check implementations instead of echoing one.

    python3 vectors/make_vectors.py          # (re)writes vectors/*.json
    python3 vectors/make_vectors.py --check  # exits 1 if the files differ

The JSON files are the reference. They are part of the persistent format:
once published, a case never changes meaning. Add cases; do not edit existing
ones to make an implementation pass.
"""

import datetime
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
# The helper modules beside this script; no bytecode left in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, str(HERE))

from fence_cases import fence_file  # noqa: E402
from generator_cases import generator_cases  # noqa: E402
from lease_cases import leases_file  # noqa: E402
from public_id_cases import public_ids_file  # noqa: E402
from sntp_cases import sntp_file  # noqa: E402

MS_PER_DAY = 86_400_000
# The last whole millisecond of signed 64-bit nanoseconds since 1970.
MAX_UNIX_MS = (2**63 - 1) // 1_000_000
# check_layout warns when fewer than this many years (of 365.2425 days) remain.
WARNING_YEARS = 10
MS_PER_YEAR = 365.2425 * MS_PER_DAY

ROLES = ["time", "region", "host", "sequence", "other"]


def unix_ms_of(year, month=1, day=1, hour=0, minute=0, second=0, ms=0):
    t = datetime.datetime(year, month, day, hour, minute, second, tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 1000 + ms


def iso(ms):
    """RFC 3339 in UTC with exactly three fraction digits."""
    t = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    t += datetime.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


# --------------------------------------------------------------------------
# The layout model.


class Layout:
    def __init__(self, name, epoch_ms, unit_ms, fields, decode_only, preset):
        self.name = name
        self.epoch_ms = epoch_ms
        self.unit_ms = unit_ms
        self.decode_only = decode_only
        self.preset = preset
        self.total_width = sum(w for _, _, w in fields)
        self.fields = []
        shift = self.total_width
        for fname, role, width in fields:
            shift -= width
            self.fields.append({"name": fname, "role": role, "width": width, "shift": shift})

    def field(self, role):
        for f in self.fields:
            if f["role"] == role:
                return f
        return None

    def width_of(self, role):
        f = self.field(role)
        return f["width"] if f else 0

    @property
    def time(self):
        return self.fields[0]

    @property
    def max_id(self):
        return 2**self.total_width - 1

    @property
    def max_ticks(self):
        return 2 ** self.time["width"] - 1

    @property
    def end_of_life_ms(self):
        return self.epoch_ms + 2 ** self.time["width"] * self.unit_ms

    @property
    def can_generate(self):
        if self.decode_only or self.total_width != 63:
            return False
        order = [ROLES.index(f["role"]) for f in self.fields]
        return (
            "other" not in [f["role"] for f in self.fields]
            and order == sorted(set(order))
            and order[0] == 0
            and order[-1] == 3
        )

    def ticks_at(self, unix_ms):
        # Floor division: an instant just before the epoch is tick -1, not 0.
        return (unix_ms - self.epoch_ms) // self.unit_ms

    def tick_start_ms(self, ticks):
        return self.epoch_ms + ticks * self.unit_ms

    def encode(self, values):
        assert len(values) == len(self.fields)
        out = 0
        for f in self.fields:
            v = values[f["name"]]
            assert 0 <= v < 2 ** f["width"], (self.name, f, v)
            out |= v << f["shift"]
        return out

    def decode(self, id_):
        assert 0 <= id_ <= self.max_id
        return {f["name"]: (id_ >> f["shift"]) & (2 ** f["width"] - 1) for f in self.fields}

    def spec_json(self):
        return {
            "epoch_ms": self.epoch_ms,
            "unit_ms": self.unit_ms,
            "decode_only": self.decode_only,
            "fields": [{"name": f["name"], "role": f["role"], "width": f["width"]} for f in self.fields],
        }

    def to_json(self):
        out = {"name": self.name, "preset": self.preset}
        out.update(self.spec_json())
        out["fields"] = self.fields
        out.update(
            {
                "total_width": self.total_width,
                "max_id": str(self.max_id),
                "max_ticks": str(self.max_ticks),
                "can_generate": self.can_generate,
                "regions": 2 ** self.width_of("region"),
                "workers_per_region": 2 ** self.width_of("host"),
                "sequence_capacity": 2 ** self.width_of("sequence"),
                "end_of_life_ms": self.end_of_life_ms,
                "end_of_life": iso(self.end_of_life_ms),
            }
        )
        return out


EPOCH_2026 = unix_ms_of(2026)
assert EPOCH_2026 == 1767225600000

LAYOUTS = [
    Layout("snowid", EPOCH_2026, 1,
           [("time", "time", 41), ("region", "region", 2), ("host", "host", 8),
            ("sequence", "sequence", 12)], False, True),
    Layout("twitter", 1288834974657, 1,
           [("time", "time", 41), ("datacenter", "region", 5), ("worker", "host", 5),
            ("sequence", "sequence", 12)], True, True),
    Layout("discord", unix_ms_of(2015), 1,
           [("timestamp", "time", 42), ("worker", "other", 5), ("process", "other", 5),
            ("increment", "sequence", 12)], True, True),
    Layout("instagram", 1314220021721, 1,
           [("time", "time", 41), ("shard", "other", 13), ("sequence", "sequence", 10)], True, True),
    Layout("sonyflake", unix_ms_of(2014, 9, 1), 10,
           [("time", "time", 39), ("sequence", "sequence", 8), ("machine", "other", 16)], True, True),
    # Custom layouts: created from their spec by the test, not by name.
    Layout("custom_no_region", EPOCH_2026, 1,
           [("time", "time", 41), ("host", "host", 10), ("sequence", "sequence", 12)], False, False),
    Layout("custom_10ms", unix_ms_of(2024), 10,
           [("time", "time", 39), ("region", "region", 3), ("host", "host", 8),
            ("sequence", "sequence", 13)], False, False),
    Layout("custom_time_sequence", EPOCH_2026, 1,
           [("time", "time", 42), ("sequence", "sequence", 21)], False, False),
    Layout("custom_2030", unix_ms_of(2030), 1,
           [("time", "time", 41), ("region", "region", 2), ("host", "host", 8),
            ("sequence", "sequence", 12)], False, False),
    Layout("custom_2025", unix_ms_of(2025), 1,
           [("time", "time", 41), ("host", "host", 10), ("sequence", "sequence", 12)], False, False),
    Layout("custom_decode_only_48", 0, 10,
           [("time", "time", 36), ("shard", "other", 4), ("flags", "other", 2),
            ("seq", "sequence", 6)], True, False),
    # Ends exactly at the last millisecond that 64-bit nanoseconds since 1970 can hold.
    Layout("custom_end_of_time", MAX_UNIX_MS - 2, 1,
           [("time", "time", 1), ("sequence", "sequence", 1)], True, False),
]
L = {layout.name: layout for layout in LAYOUTS}

# The default layout, as the format document states it.
assert L["snowid"].end_of_life_ms == 1767225600000 + 2**41 == 3966248855552
assert iso(L["snowid"].end_of_life_ms) == "2095-09-07T15:47:35.552Z"
assert L["snowid"].can_generate and not L["discord"].can_generate


def f(name, role, width):
    return {"name": name, "role": role, "width": width}


def spec(fields, epoch_ms=EPOCH_2026, unit_ms=1, decode_only=False):
    return {"epoch_ms": epoch_ms, "unit_ms": unit_ms, "decode_only": decode_only, "fields": fields}


DEFAULT_FIELDS = [f("time", "time", 41), f("region", "region", 2), f("host", "host", 8),
                  f("sequence", "sequence", 12)]

# (description, reason category, spec). Every invalid layout is INVALID_ARGUMENT.
INVALID_LAYOUTS = [
    ("unit of 5 ms", "unit", spec(DEFAULT_FIELDS, unit_ms=5)),
    ("unit of 0 ms", "unit", spec(DEFAULT_FIELDS, unit_ms=0)),
    ("unit of 1000 ms", "unit", spec(DEFAULT_FIELDS, unit_ms=1000)),
    ("epoch before 1970", "epoch", spec(DEFAULT_FIELDS, epoch_ms=-1)),
    ("epoch at the end of 64-bit nanosecond time", "epoch",
     spec(DEFAULT_FIELDS, epoch_ms=MAX_UNIX_MS, decode_only=True)),
    ("no fields", "field_count", spec([])),
    ("nine fields", "field_count",
     spec([f("time", "time", 40)] + [f("o%d" % i, "other", 1) for i in range(8)], decode_only=True)),
    ("upper-case field name", "field_name",
     spec([f("Time", "time", 41)] + DEFAULT_FIELDS[1:])),
    ("empty field name", "field_name", spec([f("", "time", 41)] + DEFAULT_FIELDS[1:])),
    ("field name with a dash", "field_name",
     spec(DEFAULT_FIELDS[:2] + [f("host-id", "host", 8)] + DEFAULT_FIELDS[3:])),
    ("field name of 33 characters", "field_name",
     spec(DEFAULT_FIELDS[:2] + [f("h" * 33, "host", 8)] + DEFAULT_FIELDS[3:])),
    ("repeated field name", "duplicate_name",
     spec(DEFAULT_FIELDS[:2] + [f("region", "host", 8)] + DEFAULT_FIELDS[3:])),
    ("field of 0 bits", "width",
     spec([f("time", "time", 41), f("region", "region", 0), f("host", "host", 10),
           f("sequence", "sequence", 12)])),
    ("field of 65 bits (and so over 64 in all: width is checked first)", "width",
     spec([f("time", "time", 41), f("x", "other", 65)], decode_only=True)),
    ("unknown role name", "role",
     spec(DEFAULT_FIELDS[:2] + [f("host", "worker", 8)] + DEFAULT_FIELDS[3:])),
    ("two time fields", "duplicate_role",
     spec([f("time", "time", 41), f("time2", "time", 10), f("sequence", "sequence", 12)],
          decode_only=True)),
    ("two sequence fields", "duplicate_role",
     spec([f("time", "time", 41), f("seq_a", "sequence", 10), f("seq_b", "sequence", 12)],
          decode_only=True)),
    ("65 bits in all", "total_width",
     spec([f("time", "time", 41), f("worker", "other", 12), f("sequence", "sequence", 12)],
          decode_only=True)),
    ("sequence above time", "time_not_first",
     spec([f("sequence", "sequence", 12), f("time", "time", 41), f("host", "host", 10)],
          decode_only=True)),
    ("no time field", "time_not_first",
     spec([f("host", "host", 10), f("sequence", "sequence", 12)], decode_only=True)),
    ("62-bit time field", "time_width",
     spec([f("time", "time", 62), f("sequence", "sequence", 1)], epoch_ms=0, decode_only=True)),
    ("43-bit time field of 1 ms from 2026 outlives 2262", "time_width",
     spec([f("time", "time", 43), f("sequence", "sequence", 20)])),
    ("40-bit time field of 10 ms from 2026 outlives 2262", "time_width",
     spec([f("time", "time", 40), f("sequence", "sequence", 23)], unit_ms=10)),
    ("2-tick time field 1 ms before the end of 64-bit time", "time_width",
     spec([f("time", "time", 1), f("sequence", "sequence", 1)], epoch_ms=MAX_UNIX_MS - 1,
          decode_only=True)),
    ("62 bits, to generate with", "generation_shape",
     spec([f("time", "time", 41), f("region", "region", 2), f("host", "host", 8),
           f("sequence", "sequence", 11)])),
    ("64 bits, to generate with", "generation_shape",
     spec([f("time", "time", 42)] + DEFAULT_FIELDS[1:])),
    ("host above region, to generate with", "generation_shape",
     spec([f("time", "time", 41), f("host", "host", 8), f("region", "region", 2),
           f("sequence", "sequence", 12)])),
    ("sequence above host, to generate with", "generation_shape",
     spec([f("time", "time", 41), f("sequence", "sequence", 12), f("host", "host", 10)])),
    ("a field without a role, to generate with", "generation_shape",
     spec([f("time", "time", 41), f("shard", "other", 10), f("sequence", "sequence", 12)])),
    ("no sequence field, to generate with", "generation_shape",
     spec([f("time", "time", 41), f("region", "region", 2), f("host", "host", 20)])),
]

# The same shapes are fine when marked decode-only.
for desc, reason, s in INVALID_LAYOUTS:
    if reason == "generation_shape" and not s["decode_only"]:
        assert sum(x["width"] for x in s["fields"]) <= 64


def validate(s):
    """The reason category a spec is refused for, or None; checks in the documented order."""
    if s["unit_ms"] not in (1, 10):
        return "unit"
    if not 0 <= s["epoch_ms"] < MAX_UNIX_MS:
        return "epoch"
    fields = s["fields"]
    if not 1 <= len(fields) <= 8:
        return "field_count"
    seen_names, seen_roles = set(), set()
    for fl in fields:
        name = fl["name"]
        if not (1 <= len(name) <= 32 and all(c in "abcdefghijklmnopqrstuvwxyz0123456789_" for c in name)):
            return "field_name"
        if name in seen_names:
            return "duplicate_name"
        seen_names.add(name)
        if not 1 <= fl["width"] <= 64:
            return "width"
        if fl["role"] not in ROLES:
            return "role"
        if fl["role"] != "other" and fl["role"] in seen_roles:
            return "duplicate_role"
        seen_roles.add(fl["role"])
    total = sum(fl["width"] for fl in fields)
    if total > 64:
        return "total_width"
    if fields[0]["role"] != "time":
        return "time_not_first"
    w = fields[0]["width"]
    if w > 61 or 2**w * s["unit_ms"] > MAX_UNIX_MS - s["epoch_ms"]:
        return "time_width"
    if not s["decode_only"]:
        order = [ROLES.index(fl["role"]) for fl in fields]
        if total != 63 or 4 in order or 3 not in order or order != sorted(set(order)):
            return "generation_shape"
    return None


for _desc, _reason, _spec in INVALID_LAYOUTS:
    assert validate(_spec) == _reason, (_desc, validate(_spec))
for _lay in LAYOUTS:
    assert validate(_lay.spec_json()) is None, _lay.name
    assert _lay.can_generate == (not _lay.decode_only)


def check_case(layout, now_ms):
    if layout.epoch_ms > now_ms:
        return "epoch_in_future", "INVALID_ARGUMENT"
    if layout.end_of_life_ms <= now_ms:
        return "end_of_life_reached", "OUT_OF_RANGE"
    if (layout.end_of_life_ms - now_ms) / MS_PER_YEAR < WARNING_YEARS:
        return "end_of_life_warning", None
    return "ok", None


def layout_checks():
    out = []
    cases = [
        ("snowid", EPOCH_2026 - 1, "one millisecond before the epoch"),
        ("snowid", EPOCH_2026, "at the epoch"),
        ("snowid", unix_ms_of(2026, 6, 1), "mid 2026"),
        ("snowid", L["snowid"].end_of_life_ms - 3653 * MS_PER_DAY, "3,653 days before the end"),
        ("snowid", L["snowid"].end_of_life_ms - 3652 * MS_PER_DAY, "3,652 days before the end"),
        ("snowid", L["snowid"].end_of_life_ms - 1, "the last millisecond"),
        ("snowid", L["snowid"].end_of_life_ms, "the end of life"),
        ("twitter", unix_ms_of(2026, 6, 1), "a foreign layout in 2026"),
        ("twitter", unix_ms_of(2071, 1, 1), "a foreign layout close to its end"),
        ("custom_2030", unix_ms_of(2026, 6, 1), "a layout whose epoch has not come"),
        ("custom_decode_only_48", unix_ms_of(2026, 6, 1), "a layout past its end"),
    ]
    for name, now, note in cases:
        outcome, error = check_case(L[name], now)
        case = {"layout": name, "now_ms": now, "now": iso(now), "outcome": outcome}
        if error:
            case["error"] = error
        case["note"] = note
        out.append(case)
    return out


# --------------------------------------------------------------------------
# Id cases.

ID_CASES = []  # (layout, field values by name, note)


def add(layout, note, **values):
    lay = L[layout]
    full = {fl["name"]: values.get(fl["name"], 0) for fl in lay.fields}
    assert set(values) <= set(full), values
    ID_CASES.append((layout, full, note))


def add_id(layout, id_, note):
    ID_CASES.append((layout, L[layout].decode(id_), note))


add("snowid", "id 0: the epoch, worker 0, sequence 0")
add("snowid", "sequence 1", sequence=1)
add("snowid", "sequence at its maximum", sequence=4095)
add("snowid", "host 1", host=1)
add("snowid", "host at its maximum", host=255)
add("snowid", "region 1", region=1)
add("snowid", "region at its maximum", region=3)
add("snowid", "the last worker: region 3, host 255", region=3, host=255)
add("snowid", "one millisecond after the epoch", time=1)
add("snowid", "2^53: exact in a JavaScript number", time=2**31)
add("snowid", "2^53 + 1: not exact in a JavaScript number", time=2**31, sequence=1)
add("snowid", "time at its maximum", time=2**41 - 1)
add_id("snowid", 2**63 - 1, "the largest id: every field at its maximum")
add("snowid", "a typical id", time=unix_ms_of(2026, 3, 14, 15, 9, 26, 535) - EPOCH_2026,
    region=2, host=17, sequence=42)
add("snowid", "the first id of the year 2030", time=unix_ms_of(2030) - EPOCH_2026)
add("twitter", "id 0")
add("twitter", "every worker field at its maximum", time=123456789012, datacenter=31, worker=31,
    sequence=4095)
add_id("twitter", 2**63 - 1, "the largest id")
add_id("discord", 175928847299117063, "a published example id")
add_id("discord", 90339695967350784, "a real id")
add_id("discord", 937847820382261308, "a real id from 2022")
add_id("discord", 2**63, "the top bit set: only 64-bit layouts have it")
add_id("discord", 2**64 - 1, "the largest id")
add("instagram", "a shard and sequence at their maximums", time=1387263000000 - 1314220021721,
    shard=8191, sequence=1023)
add_id("instagram", 2**64 - 1, "the largest id")
add("sonyflake", "one 10 ms tick after the epoch", time=1, sequence=255, machine=65535)
add("sonyflake", "a machine id", time=int((unix_ms_of(2020) - unix_ms_of(2014, 9, 1)) / 10),
    sequence=3, machine=0x0a01)
add_id("sonyflake", 2**63 - 1, "the largest id")
add("custom_no_region", "host at its maximum", time=1000, host=1023, sequence=7)
add_id("custom_no_region", 2**63 - 1, "the largest id")
add("custom_10ms", "region and host", time=12345, region=7, host=200, sequence=8191)
add_id("custom_10ms", 2**63 - 1, "the largest id")
add("custom_time_sequence", "no worker fields", time=2**41, sequence=2**21 - 1)
add_id("custom_time_sequence", 2**63 - 1, "the largest id")
add("custom_decode_only_48", "two role-less fields", time=99, shard=15, flags=2, seq=63)
add_id("custom_decode_only_48", 2**48 - 1, "the largest id")

add_id("custom_end_of_time", 3, "the largest id, in the last millisecond of 64-bit time")

# What is known about the real Discord ids, independently of this model.
assert L["discord"].decode(175928847299117063) == {
    "timestamp": 1462015105796 - unix_ms_of(2015), "worker": 1, "process": 0, "increment": 7}
assert L["discord"].decode(90339695967350784) == {
    "timestamp": 1441609061949 - unix_ms_of(2015), "worker": 0, "process": 3, "increment": 0}
assert L["discord"].decode(937847820382261308) == {
    "timestamp": unix_ms_of(2022, 1, 31, 23, 12, 24, 749) - unix_ms_of(2015), "worker": 1,
    "process": 5, "increment": 60}


def id_cases():
    out = []
    for name, values, note in ID_CASES:
        lay = L[name]
        id_ = lay.encode(values)
        assert lay.decode(id_) == values
        ticks = values[lay.time["name"]]
        ms = lay.tick_start_ms(ticks)
        out.append(
            {
                "layout": name,
                "id": str(id_),
                "fields": {k: str(v) for k, v in values.items()},
                "ticks": str(ticks),
                "unix_ms": ms,
                "time": iso(ms),
                "note": note,
            }
        )
    return out


assert iso(1462015105796) == "2016-04-30T11:18:25.796Z"
assert iso(unix_ms_of(2015) + (937847820382261308 >> 22)) == "2022-01-31T23:12:24.749Z"
assert unix_ms_of(2015) + (90339695967350784 >> 22) == 1441609061949


def decode_errors():
    cases = [
        ("snowid", 2**63, "the sign bit is set"),
        ("snowid", 2**64 - 1, "every bit is set"),
        ("twitter", 2**63, "the sign bit is set"),
        ("sonyflake", 2**63, "the sign bit is set"),
        ("custom_decode_only_48", 2**48, "one above the largest 48-bit id"),
    ]
    for name, id_, _ in cases:
        assert id_ > L[name].max_id
    return [{"layout": n, "id": str(i), "error": "OUT_OF_RANGE", "note": note} for n, i, note in cases]


def encode_errors():
    def over(name, field, value, note):
        lay = L[name]
        values = {fl["name"]: "0" for fl in lay.fields}
        values[field] = str(value)
        width = [fl for fl in lay.fields if fl["name"] == field][0]["width"]
        assert value >= 2**width
        return {"layout": name, "fields": values, "error": "OUT_OF_RANGE", "note": note}

    return [
        over("snowid", "time", 2**41, "time one past its maximum"),
        over("snowid", "region", 4, "region 4 in a 2-bit field"),
        over("snowid", "host", 256, "host 256 in an 8-bit field"),
        over("snowid", "sequence", 4096, "sequence 4096 in a 12-bit field"),
        over("discord", "worker", 32, "worker 32 in a 5-bit field"),
        over("custom_decode_only_48", "time", 2**36, "time one past its maximum"),
    ]


def text_cases():
    ok = [
        ("0", None, 0, "zero"),
        ("7", None, 7, "one digit"),
        ("007", None, 7, "leading zeros are accepted"),
        ("00000000000000000001", None, 1, "20 characters with leading zeros"),
        ("9223372036854775807", "snowid", 2**63 - 1, "the largest 63-bit id"),
        ("9223372036854775808", None, 2**63, "above 2^63 without a layout"),
        ("9223372036854775808", "discord", 2**63, "above 2^63 on a 64-bit layout"),
        ("18446744073709551615", None, 2**64 - 1, "2^64-1, the largest value"),
        ("18446744073709551615", "discord", 2**64 - 1, "2^64-1 on a 64-bit layout"),
        ("281474976710655", "custom_decode_only_48", 2**48 - 1, "the largest 48-bit id"),
    ]
    bad = [
        ("", None, "INVALID_ARGUMENT", "empty"),
        ("-1", None, "INVALID_ARGUMENT", "a sign"),
        ("+1", None, "INVALID_ARGUMENT", "a plus sign"),
        ("-0", None, "INVALID_ARGUMENT", "negative zero"),
        ("12a", None, "INVALID_ARGUMENT", "a letter"),
        (" 1", None, "INVALID_ARGUMENT", "a leading space"),
        ("1 ", None, "INVALID_ARGUMENT", "a trailing space"),
        ("1\n", None, "INVALID_ARGUMENT", "a trailing newline"),
        ("1 2", None, "INVALID_ARGUMENT", "an inner space"),
        ("0x10", None, "INVALID_ARGUMENT", "a hexadecimal prefix"),
        ("1e3", None, "INVALID_ARGUMENT", "an exponent"),
        ("1.0", None, "INVALID_ARGUMENT", "a decimal point"),
        ("1,000", None, "INVALID_ARGUMENT", "a thousands separator"),
        ("1_000", None, "INVALID_ARGUMENT", "an underscore"),
        ("\"1\"", None, "INVALID_ARGUMENT", "quotes"),
        ("\u0661", None, "INVALID_ARGUMENT", "a non-ASCII digit (Arabic-Indic one)"),
        ("\uff11", None, "INVALID_ARGUMENT", "a non-ASCII digit (fullwidth one)"),
        ("1\u0000", None, "INVALID_ARGUMENT", "a NUL byte"),
        ("000000000000000000001", None, "INVALID_ARGUMENT", "21 characters, though the value is 1"),
        ("123456789012345678901", None, "INVALID_ARGUMENT", "21 digits"),
        ("18446744073709551616", None, "OUT_OF_RANGE", "2^64"),
        ("99999999999999999999", None, "OUT_OF_RANGE", "20 nines"),
        ("9223372036854775808", "snowid", "OUT_OF_RANGE", "2^63 on a 63-bit layout"),
        ("18446744073709551615", "snowid", "OUT_OF_RANGE", "2^64-1 on a 63-bit layout"),
        ("18446744073709551616", "discord", "OUT_OF_RANGE", "2^64 on a 64-bit layout"),
        ("281474976710656", "custom_decode_only_48", "OUT_OF_RANGE", "2^48 on a 48-bit layout"),
        ("-1", "snowid", "INVALID_ARGUMENT", "a sign, with a layout"),
    ]
    for text, layout, value, _ in ok:
        assert text.isascii() and text.isdigit() and 1 <= len(text) <= 20 and int(text) == value
        assert value <= (L[layout].max_id if layout else 2**64 - 1)
    for text, layout, error, _ in bad:
        well_formed = text.isascii() and text.isdigit() and 1 <= len(text) <= 20
        assert (error == "OUT_OF_RANGE") == well_formed, text
        if well_formed:
            assert int(text) > (L[layout].max_id if layout else 2**64 - 1)

    def case(text, layout, key, value, note):
        c = {"text": text}
        if layout:
            c["layout"] = layout
        c[key] = value
        c["note"] = note
        return c

    return ([case(t, lay, "id", str(v), n) for t, lay, v, n in ok],
            [case(t, lay, "error", e, n) for t, lay, e, n in bad])


# --------------------------------------------------------------------------
# Bounds: the smallest and largest id of the tick containing an instant.


def bounds():
    cases = [
        ("snowid", EPOCH_2026, "the epoch"),
        ("snowid", unix_ms_of(2026, 3, 14, 15, 9, 26, 535), "a typical instant"),
        ("snowid", unix_ms_of(2030), "the start of 2030"),
        ("snowid", L["snowid"].end_of_life_ms - 1, "the last millisecond"),
        ("snowid", EPOCH_2026 - 1, "one millisecond before the epoch"),
        ("snowid", L["snowid"].end_of_life_ms, "the end of life"),
        ("snowid", 0, "1970"),
        ("discord", 1462015105796, "the published example id's millisecond"),
        ("instagram", unix_ms_of(2013, 12, 17), "a day in 2013"),
        ("sonyflake", unix_ms_of(2014, 9, 1) + 15, "15 ms after the epoch: tick 1 of 10 ms"),
        ("sonyflake", unix_ms_of(2014, 9, 1) + 9, "9 ms after the epoch: still tick 0"),
        ("sonyflake", unix_ms_of(2014, 9, 1) - 1, "1 ms before the epoch: tick -1 (floor)"),
        ("custom_10ms", unix_ms_of(2024) - 5, "5 ms before the epoch: tick -1, not 0"),
        ("custom_10ms", unix_ms_of(2024) + 12_345_678, "a tick in the middle of 10 ms"),
        ("custom_10ms", L["custom_10ms"].end_of_life_ms - 1, "the last tick"),
        ("custom_decode_only_48", 0, "the epoch is 1970"),
        ("custom_decode_only_48", -1, "1 ms before 1970: tick -1"),
        ("custom_decode_only_48", -10, "10 ms before 1970: tick -1"),
        ("custom_decode_only_48", -11, "11 ms before 1970: tick -2"),
        ("custom_decode_only_48", 19, "19 ms after the epoch: tick 1"),
    ]
    ok, errors = [], []
    for name, ms, note in cases:
        lay = L[name]
        ticks = lay.ticks_at(ms)
        base = {"layout": name, "unix_ms": ms, "time": iso(ms)}
        if ticks < 0 or ticks > lay.max_ticks:
            base["error"] = "OUT_OF_RANGE"
            base["note"] = note
            errors.append(base)
            continue
        shift = lay.time["shift"]
        base["ticks"] = str(ticks)
        base["min_id"] = str(ticks << shift)
        base["max_id"] = str((ticks << shift) | (2**shift - 1))
        base["note"] = note
        ok.append(base)
    return ok, errors


# --------------------------------------------------------------------------
# shard_of: a fixed 64-bit mix, then a multiply-shift reduction of its high half.

M64 = 2**64 - 1


def mix64(x):
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    x ^= x >> 31
    return x


def shard_of(id_, shards):
    assert 0 < shards < 2**32
    return ((mix64(id_) >> 32) * shards) >> 32


def shard_cases():
    ids = [0, 1, 2, 3, 4096, 2**22, 2**53, 2**63 - 1, 2**63, 2**64 - 1,
           175928847299117063, 90339695967350784, 937847820382261308]
    snow = L["snowid"]
    base = snow.encode({"time": unix_ms_of(2026, 3, 14) - EPOCH_2026, "region": 1, "host": 7,
                        "sequence": 0})
    ids += [base + i for i in range(8)]
    shard_counts = [1, 2, 3, 7, 10, 16, 64, 100, 1000, 1024, 65536, 2**31, 2**32 - 1]
    out = []
    for i, id_ in enumerate(ids):
        # Every id against a few shard counts, rotating so that the file stays short.
        chosen = {shard_counts[(i + k * 5) % len(shard_counts)] for k in range(3)}
        for shards in sorted(chosen):
            out.append({"id": str(id_), "shards": shards, "shard": shard_of(id_, shards)})
    return out


def shard_mix_examples():
    return [{"id": str(i), "mixed": str(mix64(i))} for i in (0, 1, 2**63 - 1, 175928847299117063)]


assert mix64(0) == 0  # the mix fixes 0; shard_of(0, n) is 0 for every n


# --------------------------------------------------------------------------
# Layout histories: eras with cut-overs; decode picks the era by value.


def history(eras):
    """Returns (error category or None, first ids)."""
    if not eras:
        return "empty", []
    firsts = []
    for i, (name, cutover) in enumerate(eras):
        lay = L[name]
        ticks = lay.ticks_at(cutover)
        if ticks < 0 or ticks > lay.max_ticks:
            return "cutover_outside_lifetime", []
        first = ticks << lay.time["shift"]
        if i > 0:
            prev_name, prev_cut = eras[i - 1]
            if cutover <= prev_cut:
                return "cutover_order", []
            prev = L[prev_name]
            # The last instant of the previous era is one nanosecond before the
            # cut-over; in milliseconds that floors to cutover - 1.
            prev_ticks = prev.ticks_at(cutover - 1)
            if prev_ticks > prev.max_ticks:
                prev_last = prev.max_id
            else:
                shift = prev.time["shift"]
                prev_last = (prev_ticks << shift) | (2**shift - 1)
            if first <= prev_last:
                return "overlap", []
        firsts.append(first)
    return None, firsts


def era_of(firsts, id_):
    era = 0
    for i, first in enumerate(firsts):
        if i > 0 and id_ >= first:
            era = i
    return era


def histories():
    y2030 = unix_ms_of(2030)
    hs = [
        ("one era", [("snowid", EPOCH_2026)]),
        ("one era cut over after its epoch", [("snowid", unix_ms_of(2027))]),
        ("region bits given to hosts in 2030", [("snowid", EPOCH_2026), ("custom_no_region", y2030)]),
        ("three eras", [("snowid", EPOCH_2026), ("custom_no_region", y2030),
                        ("custom_2025", unix_ms_of(2035))]),
        ("an era with fewer bits below time", [("snowid", EPOCH_2026), ("custom_no_region", y2030),
                                               ("custom_time_sequence", unix_ms_of(2035))]),
        ("no eras", []),
        ("a cut-over before the layout's epoch", [("custom_2030", unix_ms_of(2029))]),
        ("a cut-over past the layout's end of life",
         [("custom_decode_only_48", unix_ms_of(2026))]),
        ("cut-overs that do not increase", [("snowid", y2030), ("custom_no_region", y2030)]),
        ("cut-overs that go back", [("snowid", y2030), ("custom_no_region", unix_ms_of(2029))]),
        ("a later epoch restarts ids at 0", [("snowid", EPOCH_2026), ("custom_2030", y2030)]),
        ("a 10 ms layout whose ids are smaller", [("snowid", EPOCH_2026), ("custom_10ms", y2030)]),
    ]
    out = []
    for desc, eras in hs:
        error, firsts = history(eras)
        h = {"description": desc, "eras": [{"layout": n, "cutover_ms": c, "cutover": iso(c)}
                                            for n, c in eras]}
        if error:
            h["error"] = "INVALID_ARGUMENT"
            h["reason"] = error
            out.append(h)
            continue
        h["first_ids"] = [str(x) for x in firsts]
        probes = {0, 2**63 - 1}
        for i, first in enumerate(firsts):
            probes |= {first, first + 1}
            if first > 0:
                probes.add(first - 1)
        cases = []
        for id_ in sorted(probes):
            era = era_of(firsts, id_)
            lay = L[eras[era][0]]
            if id_ > lay.max_id:
                continue
            values = lay.decode(id_)
            cases.append({"id": str(id_), "era": era,
                          "unix_ms": lay.tick_start_ms(values[lay.time["name"]])})
        h["decode"] = cases
        out.append(h)
    return out


# Sanity checks of the history model against facts stated in the format document.
_err, _firsts = history([("snowid", EPOCH_2026), ("custom_no_region", unix_ms_of(2030))])
assert _err is None and _firsts == [0, (unix_ms_of(2030) - EPOCH_2026) << 22]
assert history([("snowid", EPOCH_2026), ("custom_2030", unix_ms_of(2030))])[0] == "overlap"


# --------------------------------------------------------------------------
# Output: stable, readable JSON (small objects on one line).


def dump(value, indent=0):
    flat = json.dumps(value, ensure_ascii=True)
    if len(flat) + indent <= 100 or not isinstance(value, (dict, list)):
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, list):
        items = [pad + dump(v, indent + 2) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    items = [pad + json.dumps(k) + ": " + dump(v, indent + 2) for k, v in value.items()]
    return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"


def files():
    parse_ok, parse_errors = text_cases()
    bounds_ok, bounds_errors = bounds()
    return {
        "layouts.json": {
            "schema": "snowid-vectors/layouts/1",
            "layouts": [lay.to_json() for lay in LAYOUTS],
            "invalid_layouts": [
                {"description": d, "reason": r, "error": "INVALID_ARGUMENT", "spec": s}
                for d, r, s in INVALID_LAYOUTS
            ],
            "checks": layout_checks(),
        },
        "ids.json": {
            "schema": "snowid-vectors/ids/1",
            "cases": id_cases(),
            "decode_errors": decode_errors(),
            "encode_errors": encode_errors(),
            "parse": parse_ok,
            "parse_errors": parse_errors,
        },
        "bounds.json": {
            "schema": "snowid-vectors/bounds/1",
            "cases": bounds_ok,
            "errors": bounds_errors,
        },
        "shards.json": {
            "schema": "snowid-vectors/shards/1",
            "mix": shard_mix_examples(),
            "cases": shard_cases(),
        },
        "histories.json": {
            "schema": "snowid-vectors/histories/1",
            "histories": histories(),
        },
        "generator.json": {
            "schema": "snowid-vectors/generator/1",
            "cases": generator_cases(L),
        },
        "fence.json": fence_file(),
        "leases.json": leases_file(),
        "public_ids.json": public_ids_file(),
        "sntp.json": sntp_file(),
    }


def main():
    check = "--check" in sys.argv[1:]
    differ = []
    for name, content in files().items():
        text = dump(content) + "\n"
        path = HERE / name
        if check:
            if not path.exists() or path.read_text() != text:
                differ.append(name)
        else:
            path.write_text(text)
    if differ:
        print("differ from the model: " + ", ".join(differ))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
