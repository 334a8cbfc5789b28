#!/usr/bin/env python3
"""Prints the ratio summary of a snowid_bench run.

Reads the file written by --benchmark_out=FILE --benchmark_out_format=json.
With repetitions it uses the median of each benchmark and shows its
coefficient of variation; with one run per benchmark, that run.
"""

import json
import sys

CAP_DEFAULT_NS = 1e6 / 4096  # 1 ms over the default layout's 4,096 ids

TARGET_FLOOR_RATIO = 1.3   # snowid per-id cost at most this times the floor
TARGET_MUTEX_SPEEDUP = 1.5  # snowid at least this much faster than the mutex reference
TARGET_CAP_SHARE = 0.99    # one worker sustains this share of its cap
TARGET_BATCH_NS = 2.0      # reserve(): nanoseconds per id


def load(path):
    with open(path) as f:
        rows = json.load(f)["benchmarks"]
    medians, cvs, runs = {}, {}, {}
    for r in rows:
        name = r["run_name"]
        if r.get("run_type") == "aggregate":
            if r.get("aggregate_name") == "median":
                medians[name] = r
            elif r.get("aggregate_name") == "cv":
                cvs[name] = r
        else:
            runs.setdefault(name, []).append(r)
    # Without aggregates (a single repetition), take the median run by time.
    for name, rs in runs.items():
        if name not in medians:
            rs = sorted(rs, key=lambda r: r["real_time"])
            medians[name] = rs[len(rs) // 2]
    return medians, cvs


class Figures:
    def __init__(self, path):
        self.medians, self.cvs = load(path)

    def get(self, name, field="real_time"):
        r = self.medians.get(name)
        if r is None or field not in r:
            return None
        value = r[field]
        if field == "real_time":
            value *= {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[r["time_unit"]]
        return value

    def cv(self, name, field="real_time"):
        r = self.cvs.get(name)
        return None if r is None or field not in r else r[field]

    def cell(self, name, field="real_time", digits=1):
        v = self.get(name, field)
        if v is None:
            return "-"
        c = self.cv(name, field)
        text = f"{v:.{digits}f}"
        if c is None:
            return text
        c *= 100
        return f"{text} ±{c:.1f}%" if c < 10 else f"{text} ±{c:.0f}%"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def verdict(ok):
    return "-" if ok is None else ("met" if ok else "MISSED")


def main(path):
    f = Figures(path)
    next_ = lambda impl, shape, t: f"BM_{impl}Next/{shape}/real_time/threads:{t}"
    floor = lambda clock, t: f"BM_Floor/{clock}/real_time/threads:{t}"

    print()
    print("Per-id cost, wall-clock ns (median; ±: coefficient of variation over repetitions).")
    print("With 2 threads: wall time over the ids of both threads (inverse of their throughput).")
    print()
    rows = [
        ("snowid next(), wide layout", lambda t: next_("Snowid", "wide", t)),
        ("  with a lease guard", lambda t: next_("SnowidLeased", "wide", t)),
        ("mutex reference, wide layout", lambda t: next_("Mutex", "wide", t)),
        ("floor: clock_gettime + CAS", lambda t: floor("libc", t)),
        ("floor: system_clock() + CAS", lambda t: floor("snowid_clock", t)),
        ("snowid next(), default layout", lambda t: next_("Snowid", "default", t)),
        ("mutex reference, default layout", lambda t: next_("Mutex", "default", t)),
    ]
    print(f"  {'':34}{'1 thread':>16}{'2 threads':>16}")
    for label, name in rows:
        print(f"  {label:34}{f.cell(name(1)):>16}{f.cell(name(2)):>16}")
    print(f"  (the default layout's cap is {CAP_DEFAULT_NS:.1f} ns per id: 1 ms / 4,096)")
    print()
    print(f"  {'clock_gettime alone':34}{f.cell('BM_ClockOnly/libc/real_time'):>16}")
    print(f"  {'system_clock().wall_now() alone':34}{f.cell('BM_ClockOnly/snowid_clock/real_time'):>16}")
    print(f"  {'CAS alone':34}{f.cell('BM_CasOnly/real_time/threads:1'):>16}"
          f"{f.cell('BM_CasOnly/real_time/threads:2'):>16}")

    print()
    print("Ratios, wide layout (the sequence is not the limit there).")
    print()
    print(f"  {'':44}{'1 thread':>10}{'2 threads':>11}   target")
    for label, num, den, target, better in [
        ("snowid / floor (clock_gettime + CAS)", lambda t: next_("Snowid", "wide", t),
         lambda t: floor("libc", t), TARGET_FLOOR_RATIO, "le"),
        ("snowid / floor (system_clock() + CAS)", lambda t: next_("Snowid", "wide", t),
         lambda t: floor("snowid_clock", t), TARGET_FLOOR_RATIO, "le"),
        ("mutex reference / snowid (speed-up)", lambda t: next_("Mutex", "wide", t),
         lambda t: next_("Snowid", "wide", t), TARGET_MUTEX_SPEEDUP, "ge"),
    ]:
        rs = [ratio(f.get(num(t)), f.get(den(t))) for t in (1, 2)]
        oks = [None if r is None else (r <= target if better == "le" else r >= target) for r in rs]
        sign = "<=" if better == "le" else ">="
        print(f"  {label:44}{fmt(rs[0]):>10}{fmt(rs[1]):>11}   {sign} {target}: "
              f"{verdict(oks[0])} / {verdict(oks[1])}")

    print()
    print("Cap share, default layout: ids per ms over 4,096, 200 ms windows.")
    print()
    print(f"  {'':34}{'1 thread':>16}{'2 threads':>16}   target")
    for label, impl, target in [("snowid", "Snowid", TARGET_CAP_SHARE),
                                ("mutex reference (no target)", "Mutex", None)]:
        name = lambda t: f"BM_{impl}CapShare/iterations:5/real_time/threads:{t}"
        cells = [f.cell(name(t), "cap_share", 4) for t in (1, 2)]
        line = f"  {label:34}{cells[0]:>16}{cells[1]:>16}"
        if target is not None:
            oks = [None if f.get(name(t), "cap_share") is None
                   else f.get(name(t), "cap_share") >= target for t in (1, 2)]
            line += f"   >= {target}: {verdict(oks[0])} / {verdict(oks[1])}"
        print(line)

    print()
    print("Batch: reserve(n) on the wide layout, one thread.")
    print("The wide layout's own cap is 0.477 ns per id (1 ms / 2,097,152); a cap share")
    print("near 1 means the figure is that cap, not the cost of the call.")
    print()
    print(f"  {'n':>6}{'ns/id':>16}{'ns/call':>16}{'cap share':>12}   target")
    for n in (64, 1000, 4096):
        name = f"BM_SnowidReserve/{n}/real_time"
        v = f.get(name, "ns_per_id")
        print(f"  {n:>6}{f.cell(name, 'ns_per_id', 3):>16}{f.cell(name):>16}"
              f"{fmt(f.get(name, 'cap_share'), 3):>12}   < {TARGET_BATCH_NS}: "
              f"{verdict(None if v is None else v < TARGET_BATCH_NS)}")

    print()
    print("Decode, ns per call.")
    print()
    for label, name in [("Layout::decode", "BM_DecodeLayout"),
                        ("LayoutHistory::decode (2 eras)", "BM_DecodeHistory"),
                        ("parse_id + Layout::decode", "BM_ParseAndDecode")]:
        print(f"  {label:34}{f.cell(name):>16}")
    print()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: summarize.py BENCH_JSON")
    main(sys.argv[1])
