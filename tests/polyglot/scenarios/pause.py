"""SIGSTOP a holder past its deadline and its lease's TTL, let a driver of another kind take its
id meanwhile (pinned to it), then SIGCONT it.

The resumed holder must issue nothing more on the old id (it is past its deadline, and the id
is the successor's now): it refuses, then carries on with a fresh id, its ids still increasing.
No duplicate with the successor, whose ids are all above the paused holder's.
"""

import signal
import threading
import time

import checks
import ids as idlib
from scenarios.churn import pairs
from testbed import in_threads, issue_until

REGION = 3


def pause_case(bed, report, first, second):
    # Not pinned: once resumed, the holder must be free to take another id.
    paused = bed.start(first, REGION)
    old = paused.worker
    host = old[1]
    tag = f"{first} paused, {second} takes {REGION}/{host}"
    stop = threading.Event()
    threading.Timer(1.0, stop.set).start()
    issue_until(paused, stop, count=1024)
    paused.signal(signal.SIGSTOP)
    stopped_at = time.monotonic()
    try:
        succ, waited = bed.start_when_free(second, REGION, host)
        succ.next(4096)
    finally:
        paused.signal(signal.SIGCONT)
    resumed_at = time.monotonic()
    before = len(paused.ids)
    refusals = []
    first_new_at = None
    while time.monotonic() - resumed_at < 20:
        reply = paused.next(256)
        if not reply["ok"]:
            refusals.append(reply["code"])
            time.sleep(0.01)
        elif any(idlib.worker(int(i)) != old for i in reply["ids"]):
            first_new_at = time.monotonic()
            break
    succ.next(4096)
    for d in (paused, succ):
        reply = d.close()
        report.check(reply["ok"], f"{tag}: {d.name}'s close failed: {reply}")

    after = [i for i in paused.ids[before:] if idlib.worker(i) == old]
    report.check(not after, f"{tag}: {len(after)} ids on the old id after SIGCONT")
    report.check(first_new_at is not None, f"{tag}: no id on a fresh worker within 20 s")
    old_ids = [i for i in paused.ids if idlib.worker(i) == old]
    checks.above(report, succ.ids, max(old_ids, default=0), f"{tag}: the successor")
    checks.increasing(report, paused)
    checks.increasing(report, succ)
    _, dups = checks.unique(report, [paused, succ])
    report.measured(
        f"{tag}: successor took the id {waited * 1000:.0f} ms after SIGSTOP; after SIGCONT "
        f"(stopped {(resumed_at - stopped_at) * 1000:.0f} ms) first refusals "
        f"{sorted(set(refusals))}, ids on a fresh id "
        f"{((first_new_at or resumed_at) - resumed_at) * 1000:.0f} ms after; {dups} duplicates"
    )


def run(bed, report):
    cases = pairs(bed.kinds, bed.all_pairs)
    in_threads([lambda c=c: pause_case(bed, report, *c) for c in cases])
