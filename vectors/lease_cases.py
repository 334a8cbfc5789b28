"""The cases of leases.json, from the etcd protocol (docs/protocol.md)."""

import datetime
import json

MS = 1_000_000
# Marks and store records: integers of milliseconds within +-(2^63 - 1) // 10^6 - 1.
MAX_VALUE_MS = (2**63 - 1) // MS - 1
E = 1772359200123  # 2026-03-01T10:00:00.123Z


def iso(ms):
    t = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    t += datetime.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def ceil_ms(ns):
    return -((-ns) // MS)


def dumps(obj):
    """Compact JSON, members sorted by name, non-ASCII as UTF-8."""
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


# ---------------------------------------------------------------------------- namespaces


def namespace_ok(prefix, cluster):
    if not prefix or prefix[0] != "/" or prefix[-1] == "/" or "//" in prefix:
        return False
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
    return 1 <= len(cluster) <= 128 and all(c in allowed for c in cluster)


NAMESPACES = [
    ("/snowid", "default", "the defaults"),
    ("/a/b", "c.d-e_F9", "a nested prefix; every character a cluster name may have"),
    ("/my prefix", "x", "a prefix may hold spaces"),
    ("/snowid", "c" * 128, "a cluster name of 128 characters"),
    ("snowid", "default", "the prefix must start with /"),
    ("/snowid/", "default", "the prefix must not end with /"),
    ("/", "default", "the prefix / alone ends with /"),
    ("", "default", "an empty prefix"),
    ("//snowid", "default", "an empty segment"),
    ("/a//b", "default", "an empty segment inside"),
    ("/snowid", "", "an empty cluster name"),
    ("/snowid", "c" * 129, "a cluster name of 129 characters"),
    ("/snowid", "a/b", "a / in the cluster name"),
    ("/snowid", "a b", "a space in the cluster name"),
    ("/snowid", "caf\u00e9", "a non-ASCII cluster name"),
]


def namespaces():
    out = []
    for prefix, cluster, note in NAMESPACES:
        c = {"prefix": prefix, "cluster": cluster}
        if not namespace_ok(prefix, cluster):
            c["error"] = "INVALID_ARGUMENT"
        c["note"] = note
        out.append(c)
    return out


# ---------------------------------------------------------------------------- keys


def keys():
    out = []
    for prefix, cluster, region, host in [
        ("/snowid", "default", 0, 0),
        ("/snowid", "default", 3, 255),
        ("/a/b", "c.d", 1, 17),
    ]:
        base = "%s/%s/workers/" % (prefix, cluster)
        out.append(
            {
                "prefix": prefix,
                "cluster": cluster,
                "region": region,
                "host": host,
                "holder": "%s%d/%d/holder" % (base, region, host),
                "mark": "%s%d/%d/mark" % (base, region, host),
                "region_prefix": "%s%d/" % (base, region),
                "workers_prefix": base,
                "store": "%s/%s/store" % (prefix, cluster),
            }
        )
    return out


def parse_number(s):
    if not s or len(s) > 10 or (len(s) > 1 and s[0] == "0"):
        return None
    if any(c not in "0123456789" for c in s):
        return None
    v = int(s)
    return v if v <= 2**32 - 1 else None


def parse_key(prefix, cluster, key):
    base = "%s/%s/workers/" % (prefix, cluster)
    if not key.startswith(base):
        return None
    parts = key[len(base) :].split("/", 2)
    if len(parts) != 3:
        return None
    region, host = parse_number(parts[0]), parse_number(parts[1])
    if region is None or host is None or parts[2] not in ("holder", "mark"):
        return None
    return {"region": region, "host": host, "kind": parts[2]}


W = "/snowid/default/workers/"
KEY_PARSES = [
    (W + "0/17/holder", "a holder key"),
    (W + "3/255/mark", "a mark key"),
    (W + "0/0/mark", "zeros"),
    (
        W + "4294967295/4294967295/holder",
        "the largest 32-bit numbers (outside any layout: " "callers filter by region and host)",
    ),
    (W + "1234567890/1/mark", "ten digits"),
    (W + "4294967296/0/mark", "past 32 bits"),
    (W + "01/17/holder", "a leading zero in the region"),
    (W + "0/017/holder", "a leading zero in the host"),
    (W + "00/1/mark", "two zeros"),
    (W + "-1/17/holder", "a sign"),
    (W + "+1/17/holder", "a plus sign"),
    (W + " 1/17/holder", "a space"),
    (W + "/1/holder", "an empty region"),
    (W + "0//holder", "an empty host"),
    (W + "0/17", "no kind"),
    (W + "0/17/", "an empty kind"),
    (W + "0/17/other", "an unknown kind"),
    (W + "0/17/HOLDER", "the kind's case"),
    (W + "0/17/holder/x", "more after the kind"),
    (W + "0/17/mark.bak", "a suffix on the kind"),
    (W + "a/17/mark", "letters"),
    ("/snowid/default/store", "the store record is not a worker key"),
    ("/snowid/other/workers/0/1/holder", "another cluster"),
    ("/snowid/defaultx/workers/0/1/holder", "a cluster whose name starts the same"),
    ("/snowidx/default/workers/0/1/holder", "a prefix that starts the same"),
    ("/snowid/default/workers", "the workers prefix without its /"),
    ("/snowid/default/workers/", "the workers prefix itself"),
]


def key_parses():
    out = []
    for key, note in KEY_PARSES:
        c = {"prefix": "/snowid", "cluster": "default", "key": key}
        p = parse_key("/snowid", "default", key)
        if p is not None:
            c["parsed"] = p
        c["note"] = note
        out.append(c)
    return out


# ---------------------------------------------------------------------------- holder values


def lease_hex(lease):
    return "%x" % (lease % 2**64)


def encode_holder(v):
    return dumps(
        {
            "host": v["host"],
            "pid": v["pid"],
            "started": iso(max(v["started_ms"], 0)),
            "address": v["address"],
            "lease": lease_hex(int(v["lease"])),
        }
    )


def holder(host, pid, started_ms, address, lease):
    return {
        "host": host,
        "pid": pid,
        "started_ms": started_ms,
        "address": address,
        "lease": str(lease),
    }


HOLDERS = [
    holder("web-1", 4242, 1772359200000, "10.0.0.5:7000", 0x694D7F3A1C2B9E05),
    holder("", 0, 0, "", 1),
    holder("db-2.example.com", 2**31, E, "", 7587861231245942277),
    holder('h\u00f4te "q" \\ \n\u0001\u007f', 1, E, "[::1]:7000", -1),
    holder("x", -5, E, "", 2**63 - 1),
]


def holders():
    out = []
    for v in HOLDERS:
        out.append({"value": v, "text": encode_holder(v)})
    # Before 1970 a start time is written as the epoch.
    v = holder("old", 1, -5, "", 2)
    out.append({"value": v, "text": encode_holder(v), "decoded": holder("old", 1, 0, "", 2)})
    return out


HOLDER_READS = [
    (
        '{"host":"a","pid":1,"started":"2026-03-01T10:00:00.123Z","address":"b","lease":"ff",'
        '"client":"python/0.1.0"}',
        holder("a", 1, E, "b", 255),
        "an unknown member is ignored",
    ),
    ('{"lease":"1"}', holder("", 0, 0, "", 1), "only the lease: the others default"),
    (
        '{"host":null,"pid":null,"started":null,"address":null,"lease":"1"}',
        holder("", 0, 0, "", 1),
        "null members read as absent",
    ),
    (
        '{"lease":"694D7F3A1C2B9E05"}',
        holder("", 0, 0, "", 0x694D7F3A1C2B9E05),
        "upper-case hexadecimal",
    ),
    ('{"lease":"0000000000000001"}', holder("", 0, 0, "", 1), "16 digits with leading zeros"),
    (
        '{"lease":"0"}',
        holder("", 0, 0, "", 0),
        "lease 0 reads (no holder this registry " "writes has it)",
    ),
    (
        '{"lease":"ffffffffffffffff","pid":-1}',
        holder("", -1, 0, "", -1),
        "the lease as the signed 64-bit integer with the same bits",
    ),
    (' { "lease" : "1" , "pid" : 7 } ', holder("", 7, 0, "", 1), "white space"),
]

HOLDER_ERRORS = [
    ("", "empty"),
    ("not json", "not JSON"),
    ("[]", "not an object"),
    ('"x"', "a string"),
    ("null", "null"),
    ("{}", "no lease"),
    ('{"lease":""}', "an empty lease"),
    ('{"lease":"0x1"}', "a 0x prefix"),
    ('{"lease":"-1"}', "a sign"),
    ('{"lease":"+1"}', "a plus sign"),
    ('{"lease":"00000000000000001"}', "17 digits"),
    ('{"lease":"12g"}', "not hexadecimal"),
    ('{"lease":" 1"}', "a space in the lease"),
    ('{"lease":5}', "a number, not a string"),
    ('{"lease":"1","pid":"12"}', "pid as a string"),
    ('{"lease":"1","pid":1.5}', "pid with a fraction"),
    ('{"lease":"1","pid":9223372036854775808}', "pid past 64 bits"),
    ('{"lease":"1","host":5}', "host as a number"),
    ('{"lease":"1","address":[]}', "address as an array"),
    ('{"lease":"1","started":"yesterday"}', "not a time"),
    ('{"lease":"1","started":5}', "started as a number"),
    ('{"lease":"1"}x', "text after the object"),
    ('{"lease":"1"', "truncated"),
]


# ---------------------------------------------------------------------------- marks

MARK_MEMBERS = ("high_water", "released_at", "clean_release")


def encode_mark_ns(v):
    return dumps({m + "_ms": ceil_ms(int(v[m + "_ns"])) for m in MARK_MEMBERS if m + "_ns" in v})


def clean(m):
    return (
        "clean_release_ms" in m
        and "high_water_ms" in m
        and "released_at_ms" in m
        and m["clean_release_ms"] == m["high_water_ms"]
    )


MARKS_NS = [
    {"high_water_ns": str(E * MS)},
    {"high_water_ns": str((E - 1) * MS + 1)},
    {"high_water_ns": str(E * MS - 1)},
    {"high_water_ns": str(E * MS + 500), "released_at_ns": str((E + 27) * MS)},
    {
        "high_water_ns": str(E * MS),
        "released_at_ns": str((E + 27) * MS),
        "clean_release_ns": str(E * MS),
    },
    {"high_water_ns": "-1500000"},
    {"high_water_ns": "-1"},
    {"high_water_ns": "0", "released_at_ns": "0", "clean_release_ns": "0"},
    {},
]


def marks():
    out = []
    for v in MARKS_NS:
        text = encode_mark_ns(v)
        out.append({"value": v, "text": text, "decoded": json.loads(text)})
    return out


MARK_READS = [
    ('{"high_water_ms":%d}' % E, {"high_water_ms": E}, "the mark alone"),
    (
        '{"high_water_ms":%d,"released_at_ms":%d}' % (E, E + 5),
        {"high_water_ms": E, "released_at_ms": E + 5},
        "released, not clean",
    ),
    (
        '{"high_water_ms":%d,"released_at_ms":%d,"clean_release_ms":%d}' % (E, E + 5, E),
        {"high_water_ms": E, "released_at_ms": E + 5, "clean_release_ms": E},
        "a clean release",
    ),
    (
        '{"high_water_ms":%d,"released_at_ms":%d,"clean_release_ms":%d}' % (E + 8000, E + 5, E),
        {"high_water_ms": E + 8000, "released_at_ms": E + 5, "clean_release_ms": E},
        "a clean release left stale by a later acquire: not clean",
    ),
    (
        '{"high_water_ms":%d,"clean_release_ms":%d}' % (E, E),
        {"high_water_ms": E, "clean_release_ms": E},
        "clean_release without released_at: not clean",
    ),
    (
        '{"released_at_ms":%d,"clean_release_ms":%d}' % (E, E),
        {"released_at_ms": E, "clean_release_ms": E},
        "clean_release without high_water: not clean",
    ),
    ("{}", {}, "an empty mark"),
    ('{"high_water_ms":null,"released_at_ms":null}', {}, "null members read as absent"),
    (
        '{"high_water_ms":%d,"writer":"go/1.0","clean":true}' % E,
        {"high_water_ms": E},
        "unknown members are ignored",
    ),
    ('{"high_water_ms":-5}', {"high_water_ms": -5}, "before 1970"),
    ('{"high_water_ms":%d}' % MAX_VALUE_MS, {"high_water_ms": MAX_VALUE_MS}, "the largest"),
    ('{"high_water_ms":%d}' % -MAX_VALUE_MS, {"high_water_ms": -MAX_VALUE_MS}, "the smallest"),
    (' {\n "high_water_ms" : %d } ' % E, {"high_water_ms": E}, "white space"),
]

MARK_ERRORS = [
    ("", "empty"),
    ("not json", "not JSON"),
    ("[]", "not an object"),
    ("null", "null"),
    ("5", "a number"),
    ('{"high_water_ms":"%d"}' % E, "a string"),
    ('{"high_water_ms":1.5}', "a fraction"),
    ('{"high_water_ms":1.0}', "an integer written as a fraction"),
    ('{"high_water_ms":1e3}', "an exponent"),
    ('{"high_water_ms":true}', "a boolean"),
    ('{"high_water_ms":[1]}', "an array"),
    ('{"released_at_ms":{}}', "an object"),
    ('{"high_water_ms":%d}' % (MAX_VALUE_MS + 1), "past the largest"),
    ('{"high_water_ms":%d}' % (-MAX_VALUE_MS - 1), "before the smallest"),
    ('{"clean_release_ms":18446744073709551616}', "past 64 bits"),
    ('{"high_water_ms":1', "truncated"),
    ('{"high_water_ms":1}{}', "text after the object"),
]


# ---------------------------------------------------------------------------- store records


def encode_store_ns(v):
    doc = {
        "incarnation": v["incarnation"],
        "reason": v["reason"],
        "written_ms": ceil_ms(int(v["written_ns"])),
    }
    if "high_water_ns" in v:
        doc["high_water_ms"] = ceil_ms(int(v["high_water_ns"]))
    return dumps(doc)


STORES_NS = [
    {
        "incarnation": "3f9c0a7d5e2b4c18",
        "high_water_ns": str((E + 8000) * MS - 999_999),
        "reason": "no store record and no worker keys: a new namespace, or etcd lost its data",
        "written_ns": str(E * MS),
    },
    {
        "incarnation": "0000000000000000",
        "reason": "initialized as a new namespace",
        "written_ns": str(E * MS + 1),
    },
]


def stores():
    out = []
    for v in STORES_NS:
        text = encode_store_ns(v)
        out.append({"value": v, "text": text, "decoded": json.loads(text)})
    return out


def store(incarnation, reason, written_ms, high_water_ms=None):
    v = {"incarnation": incarnation}
    if high_water_ms is not None:
        v["high_water_ms"] = high_water_ms
    v["reason"] = reason
    v["written_ms"] = written_ms
    return v


STORE_READS = [
    (
        '{"incarnation":"3f9c0a7d5e2b4c18"}',
        store("3f9c0a7d5e2b4c18", "", 0),
        "the incarnation alone",
    ),
    (
        '{"incarnation":"3F9C0A7D5E2B4C18","reason":"r","written_ms":5,"high_water_ms":7,'
        '"by":"x"}',
        store("3F9C0A7D5E2B4C18", "r", 5, 7),
        "upper-case hexadecimal, an unknown member",
    ),
    (
        '{"incarnation":"3f9c0a7d5e2b4c18","high_water_ms":null,"reason":null}',
        store("3f9c0a7d5e2b4c18", "", 0),
        "null members read as absent",
    ),
]

STORE_ERRORS = [
    ("", "empty"),
    ("[]", "not an object"),
    ("{}", "no incarnation"),
    ('{"incarnation":"3f9c0a7d5e2b4c1"}', "15 digits"),
    ('{"incarnation":"3f9c0a7d5e2b4c180"}', "17 digits"),
    ('{"incarnation":"3f9c0a7d5e2b4c1g"}', "not hexadecimal"),
    ('{"incarnation":"-f9c0a7d5e2b4c18"}', "a sign"),
    ('{"incarnation":12345678}', "a number"),
    ('{"incarnation":"3f9c0a7d5e2b4c18","high_water_ms":"1"}', "the mark as a string"),
    ('{"incarnation":"3f9c0a7d5e2b4c18","written_ms":1.5}', "a fraction"),
    ('{"incarnation":"3f9c0a7d5e2b4c18","reason":5}', "the reason as a number"),
    (
        '{"incarnation":"3f9c0a7d5e2b4c18","high_water_ms":%d}' % (MAX_VALUE_MS + 1),
        "past the largest",
    ),
]


# ---------------------------------------------------------------------------- quarantine


def free_from(mark, quarantine_ms):
    """The instant an id that is not held becomes free, or None: free since forever."""
    if mark is None:
        return None
    times = [mark[m] for m in ("released_at_ms", "high_water_ms") if m in mark]
    if not times:
        return None
    last = max(times)
    return last if clean(mark) else last + quarantine_ms


ELIGIBILITY = [
    (False, None, E, 10000, "no mark key: never used"),
    (False, {}, E, 10000, "an empty mark"),
    (False, {"high_water_ms": E}, E + 9999, 10000, "one ms before the quarantine ends"),
    (False, {"high_water_ms": E}, E + 10000, 10000, "the quarantine ends: free"),
    (
        False,
        {"high_water_ms": E, "released_at_ms": E + 500},
        E + 10499,
        10000,
        "released after the mark: counted from the release",
    ),
    (
        False,
        {"high_water_ms": E, "released_at_ms": E + 500},
        E + 10500,
        10000,
        "counted from the release: free",
    ),
    (
        False,
        {"high_water_ms": E + 8000, "released_at_ms": E},
        E + 17999,
        10000,
        "fenced before its mark: counted from the mark",
    ),
    (
        False,
        {"high_water_ms": E, "released_at_ms": E + 3, "clean_release_ms": E},
        E + 2,
        10000,
        "a clean release: no quarantine, but not before the release time",
    ),
    (
        False,
        {"high_water_ms": E, "released_at_ms": E + 3, "clean_release_ms": E},
        E + 3,
        10000,
        "a clean release: free at its release time",
    ),
    (
        False,
        {"high_water_ms": E + 50, "released_at_ms": E, "clean_release_ms": E + 50},
        E + 49,
        10000,
        "a clean release whose mark is after its release time (an earlier holder's)",
    ),
    (
        False,
        {"high_water_ms": E + 50, "released_at_ms": E, "clean_release_ms": E + 50},
        E + 50,
        10000,
        "free at that mark",
    ),
    (
        False,
        {"high_water_ms": E + 8000, "released_at_ms": E, "clean_release_ms": E - 100},
        E + 8000,
        10000,
        "a stale clean release (the mark was raised since): quarantine",
    ),
    (
        False,
        {"high_water_ms": E, "clean_release_ms": E},
        E + 1,
        10000,
        "clean_release without released_at does not count",
    ),
    (False, {"released_at_ms": E}, E + 10000, 10000, "a release time alone"),
    (False, {"high_water_ms": E}, E, 0, "no quarantine: free at the mark"),
    (False, {"high_water_ms": E}, E - 1, 0, "no quarantine: not before the mark"),
    (True, None, E, 10000, "held: a holder key exists"),
    (True, {"high_water_ms": 0}, E, 10000, "held, whatever the mark says"),
]


def eligibility():
    out = []
    for held, mark, now, q, note in ELIGIBILITY:
        c = {"held": held}
        if mark is not None:
            c["mark"] = mark
        c["now_ms"] = now
        c["quarantine_ms"] = q
        f = None if held else free_from(mark, q)
        c["eligible"] = not held and (f is None or now >= f)
        if f is not None:
            c["free_from_ms"] = f
        c["note"] = note
        out.append(c)
    return out


WAIT_UNTIL = [
    (None, None, 100, "never used, no store-wide mark: no wait"),
    (E, None, 100, "the mark plus the skew"),
    (E, None, 0, "no skew: still one ms past the mark"),
    (E, None, 60000, "the largest skew"),
    (None, E + 8000, 100, "the store-wide mark alone"),
    (E, E + 8000, 100, "the store-wide mark is later"),
    (E + 9000, E + 8000, 100, "the id's mark is later"),
]


def wait_until():
    out = []
    for mark, store_hw, skew, note in WAIT_UNTIL:
        c = {}
        if mark is not None:
            c["previous_high_water_ms"] = mark
        if store_hw is not None:
            c["store_high_water_ms"] = store_hw
        c["max_clock_skew_ms"] = skew
        prev = [x for x in (mark, store_hw) if x is not None]
        if prev:
            c["wait_until_ms"] = max(prev) + max(skew, 1)
        c["note"] = note
        out.append(c)
    return out


# ---------------------------------------------------------------------------- bounds


def timing_ok(ttl, renew, stop, skew):
    return (
        ttl % 1000 == 0
        and 2000 <= ttl <= 3_600_000
        and renew > 0
        and renew < stop < ttl
        and 0 <= skew <= 60_000
    )


TIMINGS = [
    (10000, 3000, 8000, 100, "the defaults"),
    (2000, 500, 1500, 0, "the shortest TTL"),
    (3_600_000, 1000, 3_599_999, 60_000, "the longest TTL and skew"),
    (1000, 200, 500, 100, "a TTL under 2 s"),
    (1999, 500, 1500, 100, "just under 2 s"),
    (2500, 500, 1500, 100, "not whole seconds"),
    (3_601_000, 3000, 8000, 100, "over an hour"),
    (10000, 0, 8000, 100, "renew_every 0"),
    (10000, -1, 8000, 100, "renew_every negative"),
    (10000, 8000, 8000, 100, "stop_after equal to renew_every"),
    (10000, 9000, 8000, 100, "stop_after before renew_every"),
    (10000, 3000, 10000, 100, "stop_after equal to the TTL"),
    (10000, 3000, 11000, 100, "stop_after past the TTL"),
    (10000, 3000, 8000, -1, "a negative skew"),
    (10000, 3000, 8000, 60_001, "a skew over a minute"),
]


def timings():
    out = []
    for ttl, renew, stop, skew, note in TIMINGS:
        c = {
            "ttl_ms": ttl,
            "renew_every_ms": renew,
            "stop_after_ms": stop,
            "max_clock_skew_ms": skew,
        }
        if not timing_ok(ttl, renew, stop, skew):
            c["error"] = "INVALID_ARGUMENT"
        c["note"] = note
        out.append(c)
    return out


ETCD_OPTIONS = [
    (10000, 2000, "the defaults"),
    (0, 1, "no quarantine, the shortest request timeout"),
    (3_600_000, 60_000, "the longest of both"),
    (-1, 2000, "a negative quarantine"),
    (3_600_001, 2000, "a quarantine over an hour"),
    (10000, 0, "a request timeout of 0"),
    (10000, 60_001, "a request timeout over a minute"),
]


def etcd_options():
    out = []
    for q, rt, note in ETCD_OPTIONS:
        c = {"quarantine_ms": q, "request_timeout_ms": rt}
        if not (0 <= q <= 3_600_000 and 1 <= rt <= 60_000):
            c["error"] = "INVALID_ARGUMENT"
        c["note"] = note
        out.append(c)
    return out


def leases_file():
    return {
        "schema": "snowid-vectors/leases/1",
        "namespaces": namespaces(),
        "keys": keys(),
        "key_parses": key_parses(),
        "holders": holders(),
        "holder_reads": [{"text": t, "value": v, "note": n} for t, v, n in HOLDER_READS],
        "holder_errors": [{"text": t, "error": "DATA_LOSS", "note": n} for t, n in HOLDER_ERRORS],
        "marks": marks(),
        "mark_reads": [
            {"text": t, "value": v, "clean": clean(v), "note": n} for t, v, n in MARK_READS
        ],
        "mark_errors": [{"text": t, "error": "DATA_LOSS", "note": n} for t, n in MARK_ERRORS],
        "stores": stores(),
        "store_reads": [{"text": t, "value": v, "note": n} for t, v, n in STORE_READS],
        "store_errors": [{"text": t, "error": "DATA_LOSS", "note": n} for t, n in STORE_ERRORS],
        "eligibility": eligibility(),
        "wait_until": wait_until(),
        "timings": timings(),
        "etcd_options": etcd_options(),
    }
