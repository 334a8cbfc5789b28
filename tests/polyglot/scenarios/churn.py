"""Churn across kinds: a holder issues, then closes (a clean release) or is killed with SIGKILL,
and a driver of another kind, its clock 3 s behind (more than the lease takes to expire), takes the same pinned id.

The successor must honour the predecessor's mark whatever the two kinds are: none of its ids at
or below the predecessor's last, none dated before the mark plus max_clock_skew, no duplicate.
Each pair of kinds (`pairs`), in both modes, runs on a host of its own, at most 8 at a time.
"""

import itertools
import threading
import time

import checks
import ids as idlib
from testbed import TIMING, in_threads, issue_until

REGION = 1
SUCCESSOR_OFFSET_MS = -3000
MODES = ("close", "kill")
AT_ONCE = 8


REFERENCE = "cpp"


def pairs(kinds, every=False):
    """The (first, second) kinds of the pairwise scenarios.

    With `every` (or at most three kinds), every ordered pair. Otherwise a covering set that
    grows linearly with the kinds rather than quadratically: the reference implementation (C++)
    hands over to and takes over from each other kind, and the other kinds hand over to each
    other round a ring, so every kind is a predecessor and a successor of the reference and of
    another port. With six kinds that is 15 cases instead of 30.
    """
    if len(kinds) == 1:
        return [(kinds[0], kinds[0])]
    if every or len(kinds) <= 3:
        return list(itertools.permutations(kinds, 2))
    ref = REFERENCE if REFERENCE in kinds else kinds[0]
    others = [k for k in kinds if k != ref]
    ring = [(others[i], others[(i + 1) % len(others)]) for i in range(len(others))]
    return [(ref, k) for k in others] + [(k, ref) for k in others] + ring


def churn_case(bed, report, first, second, mode, host, options=None):
    """One hand-over of REGION/host from a `first` driver to a `second` one: a dict of figures."""
    tag = f"{first}->{second} ({mode}, host {host})"
    pred = bed.start(first, REGION, host)
    stop = threading.Event()
    threading.Timer(1.0, stop.set).start()
    issue_until(pred, stop, count=4096)
    if mode == "close":
        reply = pred.close()
        report.check(reply["ok"], f"{tag}: the predecessor's close failed: {reply}")
    else:
        pred.kill()
    ended = time.monotonic()
    mark = bed.keys.mark(REGION, host) or {}
    start = {"offset_ms": SUCCESSOR_OFFSET_MS}
    if options:
        start["options"] = options
    succ, waited = bed.start_when_free(second, REGION, host, **start)
    first_id_at = None
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline or first_id_at is None:
        reply = succ.next(4096)
        if reply["ok"] and first_id_at is None:
            first_id_at = time.monotonic()
        if time.monotonic() > deadline + 10:
            report.fail(f"{tag}: the successor issued nothing for 10 s: {reply}")
            break
    reply = succ.close()
    report.check(reply["ok"], f"{tag}: the successor's close failed: {reply}")

    last = pred.last_id()
    report.check(last is not None, f"{tag}: the predecessor issued nothing")
    high_water = mark.get("high_water_ms")
    report.check(high_water is not None, f"{tag}: no mark after the predecessor: {mark}")
    below = checks.above(report, succ.ids, last or 0, f"{tag}'s successor")
    if high_water is not None and last is not None:
        report.check(
            idlib.unix_ms(last) <= high_water,
            f"{tag}: the predecessor issued at {idlib.unix_ms(last)}, past its mark {high_water}",
        )
        early = [i for i in succ.ids if idlib.unix_ms(i) < high_water + TIMING["max_clock_skew_ms"]]
        report.check(not early, f"{tag}: {len(early)} successor ids dated before mark + skew")
    _, dups = checks.unique(report, [pred, succ])
    checks.increasing(report, pred)
    checks.increasing(report, succ)
    wait_ms = ((first_id_at or ended) - ended) * 1000
    report.measured(
        f"{tag}: successor took the id {waited * 1000:.0f} ms after the predecessor ended, "
        f"first id {wait_ms:.0f} ms after; ids {len(pred.ids)} + {len(succ.ids)}, "
        f"{below} at or below the predecessor's last, {dups} duplicates"
    )
    return {"below": below, "dups": dups, "wait_ms": wait_ms}


def run(bed, report):
    cases = [(a, b, mode) for a, b in pairs(bed.kinds, bed.all_pairs) for mode in MODES]
    results = {}

    def one(n, case):
        results[case] = churn_case(bed, report, *case, host=10 + n)

    # Each predecessor issues flat out: 24 or more hand-overs at once would starve
    # etcd and the drivers' requests of CPU on two cores.
    in_threads([lambda n=n, c=c: one(n, c) for n, c in enumerate(cases)], at_once=AT_ONCE)
    report.check(len(results) == len(cases), f"{len(results)} of {len(cases)} hand-overs ran")
