"""Lost replies: each kind's holder talks to etcd through a fault proxy that loses the reply
of its acquire transaction, then of a renewal, then of its release transaction.

The unknown-outcome rules must hold: the acquire that did apply is found (one holder key per
lease, the driver started); a renewal that times out stops issuing at worst, never duplicate; the
release that did apply is reported released, and its mark records a clean release. A driver of
another kind then takes the id and issues above the first one's ids.
"""

import threading
import time

import checks
from fault_proxy import Rule, is_acquire_txn, is_keepalive, is_release_txn
from scenarios.churn import pairs
from testbed import TIMING, in_threads, issue_until

REGION = 0
# snowidd's etcd requests time out after 2 s, which a 2 s lease would not outlive.
LONGER = dict(TIMING, ttl_ms=5000, renew_ms=1000, stop_ms=3000)


def wait_held(d, seconds=10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if d.state().get("state") == "HELD":
            return True
        time.sleep(0.05)
    return False


def lost_case(bed, report, first, second, host):
    tag = f"{first} through the proxy, host {host}"
    proxy = bed.proxy()
    acquire = proxy.add_rule(Rule("acquire", is_acquire_txn))
    d = bed.driver(first)
    reply = d.start(**bed.start_request(REGION, host, timing=LONGER, endpoints=[proxy.url]))
    report.check(acquire.hits == 1, f"{tag}: the acquire transaction's reply was not lost")
    if not report.check(reply["ok"], f"{tag}: start failed after a lost acquire reply: {reply}"):
        return None
    holder = bed.keys.holder(REGION, host)
    report.check(holder is not None, f"{tag}: no holder key for {REGION}/{host}")
    checks.one_holder_per_lease(report, bed.keys)

    # One lost renewal reply: with the retry, the lease outlives it.
    renewals = proxy.add_rule(Rule("renewal", is_keepalive))
    stop = threading.Event()
    threading.Timer(4.0, stop.set).start()
    refusals = issue_until(d, stop, count=512, pause=0.002)
    report.check(renewals.hits == 1, f"{tag}: {renewals.hits} renewal replies lost, not 1")
    held = wait_held(d)
    report.check(held, f"{tag}: the lease was not held again after a lost renewal: {d.state()}")

    release = proxy.add_rule(Rule("release", is_release_txn))
    reply = d.close(timeout=60.0)
    report.check(release.hits == 1, f"{tag}: the release transaction's reply was not lost")
    report.check(reply["ok"], f"{tag}: a release whose reply was lost was not reported: {reply}")
    mark = bed.keys.mark(REGION, host) or {}
    report.check(
        mark.get("clean_release_ms") is not None
        and mark.get("clean_release_ms") == mark.get("high_water_ms")
        and "released_at_ms" in mark,
        f"{tag}: the mark does not record a clean release: {mark}",
    )
    report.check(bed.keys.holder(REGION, host) is None, f"{tag}: the holder key outlived release")
    checks.one_holder_per_lease(report, bed.keys)

    succ, waited = bed.start_when_free(second, REGION, host)
    succ.next(4096)
    succ.close()
    checks.above(report, succ.ids, d.last_id() or 0, f"{tag}: {succ.name}, the successor")
    checks.increasing(report, d)
    report.measured(
        f"{tag}: replies lost {proxy.lost}; {len(d.ids)} ids, refusals "
        f"{sorted({r['code'] for r in refusals})} ({len(refusals)}); {second} took the id "
        f"{waited * 1000:.0f} ms after the release"
    )
    return [d, succ]


def run(bed, report):
    drivers = []
    cases = [(a, b) for a, b in pairs(bed.kinds, bed.all_pairs)]
    in_threads(
        [
            lambda n=n, c=c: drivers.extend(lost_case(bed, report, *c, 60 + n) or [])
            for n, c in enumerate(cases)
        ]
    )
    checks.unique(report, drivers)
