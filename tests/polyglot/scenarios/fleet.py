"""A mixed fleet issuing at once: two drivers of every kind in region 0 for a few seconds.

Every id is unique, decodes to its driver's worker and lies within the run; each driver's ids
increase; the live holders are distinct in etcd, and the C++ tool reads every holder and mark
that every kind wrote.
"""

import json
import threading
import time

import checks
import ids as idlib
from testbed import TIMING, in_threads, issue_until

SECONDS = 5.0
PER_KIND = 2


def run(bed, report):
    drivers = [bed.start(kind, region=0) for kind in bed.kinds for _ in range(PER_KIND)]
    began_ms = time.time() * 1000
    stop = threading.Event()
    refusals = {}

    def issue(d):
        refusals[d.name] = issue_until(d, stop, count=2000)

    timer = threading.Timer(SECONDS, stop.set)
    timer.start()
    in_threads([lambda d=d: issue(d) for d in drivers])
    ended_ms = time.time() * 1000

    held = bed.keys.read()
    leases = set()
    for d in drivers:
        holder = held.get(d.worker, {}).get("holder")
        if report.check(holder is not None, f"{d.name}: no holder key for {d.worker}"):
            leases.add(holder["_lease"])
    report.check(
        len(leases) == len(drivers), f"{len(leases)} distinct leases for {len(drivers)} drivers"
    )

    code, out, err = bed.tool("workers", "list", "--region", "0", "--json")
    if report.check(code == 0, f"snowid workers list failed: {err}"):
        listed = {(w["region"], w["host"]): w for w in json.loads(out)["workers"]}
        for d in drivers:
            w = listed.get(d.worker)
            report.check(
                w is not None and w["state"] == "held" and w["high_water"],
                f"snowid workers list does not show {d.name}'s {d.worker} held with a mark: {w}",
            )

    for d in drivers:
        reply = d.close()
        report.check(reply["ok"], f"{d.name}: close failed: {reply}")

    total, _ = checks.unique(report, drivers)
    skew = TIMING["max_clock_skew_ms"]
    for d in drivers:
        checks.increasing(report, d)
        checks.decode_to_worker(report, d)
        times = [idlib.unix_ms(i) for i in d.ids]
        report.check(bool(times), f"{d.name} issued nothing")
        outside = [t for t in times if not began_ms - skew - 1000 <= t <= ended_ms + skew]
        report.check(not outside, f"{d.name}: {len(outside)} ids dated outside the run")
        codes = sorted({r["code"] for r in refusals.get(d.name, [])})
        report.measured(
            f"{d.name} on {d.worker}: {len(d.ids)} ids in {SECONDS:.0f} s "
            f"({len(d.ids) / SECONDS:,.0f}/s), refusals {len(refusals.get(d.name, []))} {codes}"
        )
    report.measured(
        f"{total} ids from {len(drivers)} drivers ({', '.join(bed.kinds)}), all checked"
    )
