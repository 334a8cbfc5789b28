"""Clock steps through each driver's clock offset, while it holds an id.

- 50 ms back: waited out, no error, ids still increasing;
- 3 s forward (past the lease's mark): at most a short LEASE_UNCERTAIN until the early
  renewal raises the mark, then ids again;
- 500 ms back (beyond max_backward, 100 ms): CLOCK_MOVED_BACK, then UNHEALTHY; the driver says
  it is unhealthy, and its id is released (holder key gone, the mark has released_at).
A driver of another kind with a correct clock then takes the id: its ids are above the
unhealthy one's, which were dated 3 s ahead, so it waits for its clock to pass them.
"""

import time

import checks
import ids as idlib
from scenarios.churn import pairs
from testbed import in_threads

REGION = 0
# Each case steps a driver's clock and times its answers to within tens of milliseconds: at most
# this many at once on two cores.
AT_ONCE = 8


def issue_for(d, seconds, count=256):
    """Asks for ids for `seconds`: the refusal codes, and the seconds to the first success."""
    began = time.monotonic()
    codes, first_ok = [], None
    while time.monotonic() - began < seconds:
        reply = d.next(count)
        if reply["ok"]:
            if first_ok is None:
                first_ok = time.monotonic() - began
        else:
            codes.append(reply["code"])
            time.sleep(0.005)
    return codes, first_ok


def clock_case(bed, report, first, second, host):
    tag = f"{first} on {REGION}/{host}"
    d = bed.start(first, REGION, host)
    issue_for(d, 0.3)

    d.clock(-50)
    codes, first_ok = issue_for(d, 0.5)
    report.check(not codes, f"{tag}: refusals after a 50 ms step back: {sorted(set(codes))}")
    report.check(first_ok is not None, f"{tag}: no id within 0.5 s of a 50 ms step back")
    after = "none" if first_ok is None else f"{first_ok * 1000:.0f} ms"
    report.measured(f"{tag}: 50 ms back: refusals {codes}, first ids after {after}")

    d.clock(3000)
    codes, first_ok = issue_for(d, 1.5)
    report.check(first_ok is not None, f"{tag}: no id within 1.5 s of a 3 s forward step: {codes}")
    report.check(
        set(codes) <= {"LEASE_UNCERTAIN"}, f"{tag}: refusals after a forward step: {set(codes)}"
    )
    report.measured(
        f"{tag}: 3 s forward: {len(codes)} refusals {sorted(set(codes))}, first ids after "
        f"{(first_ok or 0) * 1000:.0f} ms"
    )

    d.clock(2500)
    first_reply = d.next(16)
    second_reply = d.next(16)
    report.check(
        not first_reply["ok"] and first_reply["code"] == "CLOCK_MOVED_BACK",
        f"{tag}: a 500 ms step back answered {first_reply}",
    )
    report.check(
        not second_reply["ok"] and second_reply["code"] == "UNHEALTHY",
        f"{tag}: after CLOCK_MOVED_BACK: {second_reply}",
    )
    report.check(
        first_reply.get("retryable") is False and second_reply.get("retryable") is False,
        f"{tag}: CLOCK_MOVED_BACK and UNHEALTHY must not be retryable",
    )
    state = d.state()
    report.check(state.get("healthy") is False, f"{tag}: still healthy: {state}")
    released = False
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not released:
        entry = bed.keys.read().get((REGION, host), {})
        released = entry.get("holder") is None and "released_at_ms" in (entry.get("mark") or {})
        time.sleep(0.05)
    report.check(released, f"{tag}: the unhealthy holder's id was not released: {entry}")
    d.close()
    ahead = idlib.unix_ms(d.last_id() or 0) - time.time() * 1000

    succ, waited = bed.start_when_free(second, REGION, host)
    issue_for(succ, 0.3)
    succ.close()
    checks.increasing(report, d)
    checks.above(report, succ.ids, d.last_id() or 0, f"{tag}: {succ.name}, the successor")
    report.measured(
        f"{tag}: {second} took the id {waited * 1000:.0f} ms after the release, the unhealthy "
        f"holder's last id dated {ahead:.0f} ms ahead of the real clock at its release"
    )
    return [d, succ]


def run(bed, report):
    drivers = []
    in_threads(
        [
            lambda n=n, c=c: drivers.extend(clock_case(bed, report, *c, 70 + n))
            for n, c in enumerate(pairs(bed.kinds, bed.all_pairs))
        ],
        at_once=AT_ONCE,
    )
    checks.unique(report, drivers)
