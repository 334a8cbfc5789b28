"""A fence on each kind's holder: `snowid workers fence` while the driver issues.

The holder must stop issuing on the fenced worker id (nothing after the tool returned plus a
TTL, nothing dated past the mark the fence left), then carry on with a fresh id, its ids still
increasing and unique.
"""

import threading
import time

import checks
import ids as idlib
from testbed import TIMING, in_threads

REGION = 2


def fence_case(bed, report, kind):
    d = bed.start(kind, REGION)
    old = d.worker
    tool = {}

    def fence():
        tool["began"] = time.monotonic()
        tool["result"] = bed.tool("workers", "fence", str(REGION), str(old[1]))
        tool["ended"] = time.monotonic()

    began = time.monotonic()
    fencer = None
    last_old_at = first_new_at = None
    refusals = []
    while time.monotonic() - began < 20:
        if fencer is None and time.monotonic() - began > 0.5:
            fencer = threading.Thread(target=fence)
            fencer.start()
        reply = d.next(256)
        now = time.monotonic()
        if not reply["ok"]:
            refusals.append(reply["code"])
            time.sleep(0.005)
        got = [idlib.worker(int(i)) for i in reply.get("ids", [])]
        if old in got:
            last_old_at = now
        if any(w != old for w in got) and first_new_at is None:
            first_new_at = now
        if fencer is not None and not fencer.is_alive() and first_new_at is not None:
            break
    if fencer is not None:
        fencer.join()
    state = d.state()
    d.close()

    tag = f"{d.name} on {old}"
    code, _, err = tool.get("result", (None, "", "never ran"))
    if not report.check(code == 0, f"{tag}: snowid workers fence failed ({code}): {err}"):
        return
    mark = bed.keys.mark(*old) or {}
    report.check("released_at_ms" in mark, f"{tag}: the fence left no released_at: {mark}")
    old_ids = [i for i in d.ids if idlib.worker(i) == old]
    late = [i for i in old_ids if idlib.unix_ms(i) > mark.get("high_water_ms", 0)]
    report.check(not late, f"{tag}: {len(late)} ids on the fenced id dated past its mark")
    limit = tool["ended"] + TIMING["ttl_ms"] / 1000
    report.check(
        last_old_at is not None and last_old_at <= limit,
        f"{tag}: still issued on the fenced id {((last_old_at or 0) - tool['ended']) * 1000:.0f} "
        "ms after the tool returned",
    )
    report.check(first_new_at is not None, f"{tag}: no id on a fresh worker within 20 s: {state}")
    checks.increasing(report, d)
    new = sorted({idlib.worker(i) for i in d.ids} - {old})
    report.measured(
        f"{tag}: the tool ran {(tool['ended'] - tool['began']) * 1000:.0f} ms; last id on the "
        f"fenced id {((last_old_at or 0) - tool['began']) * 1000:.0f} ms after it started; ids on "
        f"{new} from {((first_new_at or 0) - tool['began']) * 1000:.0f} ms; refusals "
        f"{len(refusals)} {sorted(set(refusals))}"
    )
    return d


def run(bed, report):
    drivers = []
    in_threads([lambda k=k: drivers.append(fence_case(bed, report, k)) for k in bed.kinds])
    checks.unique(report, [d for d in drivers if d])
