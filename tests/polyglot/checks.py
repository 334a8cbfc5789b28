"""The checks every scenario makes on the ids its drivers were given."""

import heapq
import itertools

import ids as idlib


def is_increasing(seq):
    return all(a < b for a, b in itertools.pairwise(seq))


def unique(report, drivers):
    """Every id appears once across all the drivers: (ids checked, duplicates)."""
    runs = []
    for d in drivers:
        seq = d.ids if is_increasing(d.ids) else sorted(d.ids)
        runs.append(zip(seq, itertools.repeat(d.name)))
    total = dups = 0
    prev = None
    for entry in heapq.merge(*runs):
        total += 1
        if prev is not None and entry[0] == prev[0]:
            dups += 1
            if dups <= 5:
                report.fail(f"duplicate id {entry[0]}: from {prev[1]} and {entry[1]}")
        prev = entry
    report.check(dups == 0, f"{dups} duplicate ids in all")
    return total, dups


def increasing(report, driver):
    """A driver's ids strictly increase in the order they were given (across lost leases too)."""
    bad = [(a, b) for a, b in itertools.pairwise(driver.ids) if b <= a]
    for a, b in bad[:3]:
        report.fail(f"{driver.name}: id {b} after {a}: not increasing")
    report.check(not bad, f"{driver.name}: {len(bad)} ids not above the one before")
    return not bad


def decode_to_worker(report, driver):
    """Each id decodes to the worker the driver reported when it was given."""
    bad = [(i, w) for i, w, _ in driver.entries() if idlib.worker(i) != w]
    for i, w in bad[:3]:
        report.fail(f"{driver.name}: id {i} decodes to worker {idlib.worker(i)}, not {w}")
    report.check(not bad, f"{driver.name}: {len(bad)} ids of another worker than reported")
    return not bad


def above(report, ids, bound, what):
    """No id at or below `bound`; returns how many were."""
    bad = [i for i in ids if i <= bound]
    report.check(not bad, f"{len(bad)} ids of {what} at or below {bound}, e.g. {bad[:2]}")
    return len(bad)


def one_holder_per_lease(report, keys):
    """No etcd lease carries two holder keys (a repeated acquire transaction would do that)."""
    by_lease = {}
    for wid, entry in keys.read().items():
        if entry["holder"]:
            by_lease.setdefault(entry["holder"]["_lease"], []).append(wid)
    doubles = {lease: w for lease, w in by_lease.items() if len(w) > 1}
    report.check(not doubles, f"leases carrying more than one holder key: {doubles}")
