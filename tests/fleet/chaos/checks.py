"""The checks run on what the clients, the logs and the faults recorded. Each check is a `Check`:
a name, whether it passed, one line of figures, and the first few offending cases.

Ids are judged on the harness's real clock: an id's time (its 41-bit milliseconds) less the
offset its daemon's clock had when it was asked for it. When the offset changed while a request
was in flight, the larger of the two is taken off, which reads the id as early as it can be: a
deadline check then fails only on an id that was surely late.
"""

import bisect
import itertools
from array import array

from .clients import TIMEOUT

EXAMPLES = 5


class Check:
    def __init__(self, name, ok, summary, examples=(), skipped=False):
        self.name = name
        self.ok = ok
        self.summary = summary
        self.examples = list(examples)[:EXAMPLES]
        self.skipped = skipped

    def as_json(self):
        return {
            "name": self.name,
            "ok": self.ok,
            "skipped": self.skipped,
            "summary": self.summary,
            "examples": self.examples,
        }


class Analysis:
    """Everything the checks and the report read, computed once."""

    def __init__(self, fleet, faults, run_end):
        self.fleet = fleet
        self.faults = faults
        self.run_end = run_end
        self.layout = fleet.layout
        self.cfg = fleet.cfg
        self.tol_ms = self.cfg.deadline_tolerance_ms

    # Uniqueness.
    def duplicates(self):
        everything = array("q")
        for p in self.fleet.pullers:
            everything.extend(p.ids)
        ordered = sorted(everything)
        dups = set()
        for a, b in zip(ordered, ordered[1:], strict=False):
            if a == b:
                dups.add(a)
        where = []
        if dups:
            for p in self.fleet.pullers:
                for _, received, inc, _, start, n in _ok_pulls(p):
                    for id_ in p.ids[start : start + n]:
                        if id_ in dups:
                            where.append(
                                {
                                    "id": str(id_),
                                    "daemon": p.slot.name,
                                    "incarnation": inc,
                                    "worker": self.layout.worker(id_),
                                    "received_s": round(received, 3),
                                }
                            )
        return len(everything), len(dups), sorted(where, key=lambda w: w["id"])

    # Each daemon's ids: decode to its region and a worker it held; increase.
    def per_daemon(self):
        bad_decode, bad_order, bad_succession, per_inc = [], [], [], {}
        for p in self.fleet.pullers:
            slot = p.slot
            for _, received, inc, _, start, n in _ok_pulls(p):
                incarnation = slot.incarnations[inc] if 0 <= inc < len(slot.incarnations) else None
                held = {w for _, w in incarnation.workers} if incarnation else set()
                stats = per_inc.setdefault((slot.name, inc), {"first": None, "last": None, "n": 0})
                last = stats["last"]
                for id_ in p.ids[start : start + n]:
                    worker = self.layout.worker(id_)
                    if worker[0] != slot.region or worker not in held:
                        bad_decode.append(
                            {
                                "daemon": slot.name,
                                "incarnation": inc,
                                "id": str(id_),
                                "worker": worker,
                                "held": sorted(held),
                            }
                        )
                    if last is not None and id_ <= last:
                        bad_order.append(
                            {
                                "daemon": slot.name,
                                "incarnation": inc,
                                "id": str(id_),
                                "after": str(last),
                                "received_s": round(received, 3),
                            }
                        )
                    last = id_
                if stats["first"] is None and n:
                    stats["first"] = p.ids[start]
                stats["last"] = last
                stats["n"] += n
        # Each worker id's successive holders: a successor issues nothing until its clock has
        # passed its predecessor's high-water mark (plus max_clock_skew), and a restart on the
        # same state directory and worker id waits out the time fence (docs/leases.md, "Two
        # rules that make it safe"); so the ids of one worker id, taken holder by holder in the
        # order they began, increase. Holders that overlapped would show here too.
        # worker -> [(daemon, segment)]: each run of one process's ids on one worker id
        segments = {}
        for p in self.fleet.pullers:
            seg = None
            for _, received, inc, _, start, n in _ok_pulls(p):
                for id_ in p.ids[start : start + n]:
                    w = self.layout.worker(id_)
                    if seg is None or seg["inc"] != inc or seg["worker"] != w:
                        seg = {"t": received, "first": id_, "last": id_, "inc": inc, "worker": w}
                        segments.setdefault(w, []).append((p.slot.name, seg))
                    seg["last"] = id_
        for w, segs in segments.items():
            segs.sort(key=lambda x: x[1]["t"])
            for (name_a, a), (name_b, b) in zip(segs, segs[1:], strict=False):
                if b["first"] <= a["last"]:
                    bad_succession.append(
                        {
                            "worker": w,
                            "holder": f"{name_b}.{b['inc']}",
                            "first_id_ms": self.layout.unix_ms(b["first"]),
                            "previous_holder": f"{name_a}.{a['inc']}",
                            "previous_last_id_ms": self.layout.unix_ms(a["last"]),
                        }
                    )
        return bad_decode, bad_order, bad_succession, per_inc, segments

    # Order across daemons.
    def ksort(self):
        """The k-sort bound two ways, in ms: by receive order (an id received later that is
        older than one received earlier), and by happens-before (an id asked for after another
        was received, which it must follow in real time)."""
        rows = []
        for p in self.fleet.pullers:
            for sent, received, _, _, start, n in _ok_pulls(p):
                if n:
                    lo = self.layout.unix_ms(p.ids[start])
                    hi = self.layout.unix_ms(p.ids[start + n - 1])
                    rows.append((received, sent, lo, hi, p.slot.name))
        rows.sort()
        recvs = [r[0] for r in rows]
        prefix, best, who = [], None, []
        for r in rows:
            if best is None or r[3] > best:
                best, who = r[3], r[4]
            prefix.append((best, who))
        recv_bound, recv_at, hb_bound, hb_at = 0, None, 0, None
        for i, (received, sent, lo, _, name) in enumerate(rows):
            if i:
                late = prefix[i - 1][0] - lo
                if late > recv_bound:
                    recv_bound, recv_at = late, (round(received, 3), prefix[i - 1][1], name)
            j = bisect.bisect_left(recvs, sent)
            if j:
                late = prefix[j - 1][0] - lo
                if late > hb_bound:
                    hb_bound, hb_at = late, (round(received, 3), prefix[j - 1][1], name)
        return recv_bound, recv_at, hb_bound, hb_at

    def injected_skew(self):
        """The largest difference between two daemons' clock offsets at any one time (ms)."""
        times = sorted({t for s in self.fleet.slots for t, _ in s.offsets})
        best = 0.0
        for t in times:
            offs = [s.offset_at(t) for s in self.fleet.slots]
            best = max(best, max(offs) - min(offs))
        return best

    # Refusals.
    def refusal_windows(self, slot):
        """[(start, end, words)]: each run of requests that got no ids, from the first one's
        send to the receipt of the next ids (or the end of the run)."""
        out, cur = [], None
        for sent, received, _, word, _, _ in self.fleet.puller_of(slot).pulls:
            if word is None:
                if cur is not None:
                    out.append((cur[0], received, sorted(cur[1])))
                    cur = None
            elif cur is None:
                cur = (sent, {word})
            else:
                cur[1].add(word)
        if cur is not None:
            out.append((cur[0], self.run_end, sorted(cur[1])))
        return out

    def fault_of(self, t):
        """Index of the fault during whose turn (its start to the next one's) t falls; None
        before the first."""
        idx = None
        for i, f in enumerate(self.faults):
            if f.start <= t:
                idx = i
        return idx

    def _pulls_between(self, puller, t_from, t_to):
        """The ok requests received from t_from and sent by t_to (received times increase)."""
        i = bisect.bisect_left(puller.pulls, t_from, key=lambda q: q.received)
        for q in itertools.islice(puller.pulls, i, None):
            if q.sent > t_to:
                break
            if q.word is None:
                yield q

    def stop_deadlines(self):
        """Every fault's "stop_by" and "silent" expectations, checked on the ids. Also the
        margins: for each, how far from its deadline (negative: ms before) the last id that
        counts against it was issued, on the harness's real clock. Ids issued before the fault
        cannot be late, and an id's request is received after it is issued: so only requests
        received from a few seconds before the fault are read."""
        failures, margins = [], []
        for f in self.faults:
            for e in f.expect:
                if e[0] == "stop_by":
                    _, slot, worker, t = e
                    deadline = self.fleet.wall_ms(t)
                    p = self.fleet.puller_of(slot)
                    latest = None
                    for q in self._pulls_between(p, f.start - 5.0, f.end + self.cfg.recovery_s):
                        incarnation = slot.incarnations[q.inc]
                        # A worker id acquired again after the fault is a new lease on it.
                        if any(w == worker and at >= f.start for at, w in incarnation.workers):
                            continue
                        off = max(slot.offset_at(q.sent), slot.offset_at(q.received))
                        for id_ in p.ids[q.start : q.start + q.n]:
                            if self.layout.worker(id_) != worker:
                                continue
                            real = self.layout.unix_ms(id_) - off
                            latest = real if latest is None else max(latest, real)
                            if real > deadline + self.tol_ms:
                                failures.append(
                                    {
                                        "fault": f.kind,
                                        "daemon": slot.name,
                                        "worker": worker,
                                        "id": str(id_),
                                        "late_ms": round(real - deadline, 1),
                                    }
                                )
                    if latest is not None:
                        margins.append((f.kind, slot.name, round(latest - deadline, 1)))
                elif e[0] == "silent":
                    _, region, t_from, t_to = e
                    deadline = self.fleet.wall_ms(t_from)
                    thaw = self.fleet.wall_ms(t_to)
                    for slot in self.fleet.region_slots(region):
                        p = self.fleet.puller_of(slot)
                        latest = None
                        for q in self._pulls_between(p, f.start - 5.0, t_to):
                            off = max(slot.offset_at(q.sent), slot.offset_at(q.received))
                            for id_ in p.ids[q.start : q.start + q.n]:
                                real = self.layout.unix_ms(id_) - off
                                if real >= thaw:
                                    continue
                                latest = real if latest is None else max(latest, real)
                                if real > deadline + self.tol_ms:
                                    failures.append(
                                        {
                                            "fault": f.kind,
                                            "daemon": slot.name,
                                            "id": str(id_),
                                            "late_ms": round(real - deadline, 1),
                                        }
                                    )
                        if latest is not None:
                            margins.append((f.kind, slot.name, round(latest - deadline, 1)))
                elif e[0] == "held":
                    _, slot, t_from = e
                    inc = slot.current
                    released = [
                        t
                        for i in slot.incarnations
                        for t, rec in i.events
                        if rec.get("msg") == "skew hold released" and t > t_from
                    ]
                    t_to = min(released) if released else self.run_end
                    # 50 ms either side: a log line arrives a little after the event it tells.
                    for q in self._pulls_between(self.fleet.puller_of(slot), t_from, t_to):
                        if q.sent > t_from + 0.05 and q.received < t_to - 0.05:
                            failures.append(
                                {
                                    "fault": f.kind,
                                    "daemon": slot.name,
                                    "what": "ids while held by its skew monitor",
                                    "sent_s": round(q.sent, 3),
                                    "incarnation": inc.number if inc else None,
                                }
                            )
        return failures, margins

    def hangs(self):
        """Requests that timed out while their daemon was not stopped by a fault, and stops
        that outlasted their bound."""
        stopped = {}
        for f in self.faults:
            if f.kind == "daemon_stop" and f.end is not None:
                stopped.setdefault(f.target, []).append((f.start, f.end))
        out = []
        for p in self.fleet.pullers:
            for sent, received, _, word, _, _ in p.pulls:
                if word != TIMEOUT:
                    continue
                if any(a <= received and sent <= b for a, b in stopped.get(p.slot.name, [])):
                    continue
                out.append({"daemon": p.slot.name, "sent_s": round(sent, 3), "what": "timeout"})
        for s in self.fleet.slots:
            for inc in s.incarnations:
                if inc.hung:
                    out.append({"daemon": s.name, "incarnation": inc.number, "what": "SIGTERM"})
        return out

    def exits(self):
        crashes, refused, unclean = [], [], []
        for s in self.fleet.slots:
            for inc in s.incarnations:
                if inc.exit_code is None:
                    continue
                rec = {"daemon": s.name, "incarnation": inc.number, "exit": inc.exit_code}
                if inc.ended_by_harness is None:
                    if inc.ready_at is None and inc.exit_code == 1:
                        failed = [r for _, r in inc.events if r.get("msg") == "start failed"]
                        rec["error"] = str(failed[-1].get("error", "")) if failed else ""
                        refused.append(rec)
                    else:
                        crashes.append(rec)
                elif inc.ended_by_harness == "SIGTERM" and inc.exit_code != 0 and not inc.hung:
                    unclean.append(rec)
        return crashes, refused, unclean


def _ok_pulls(puller):
    """The requests of a client that brought ids."""
    return (q for q in puller.pulls if q.word is None)


def run_checks(an, canary, leaks, region_keys):
    checks = []
    total, ndup, where = an.duplicates()
    checks.append(
        Check(
            "no duplicate id (all ids the clients pulled)",
            ndup == 0,
            f"{total:,} ids, {ndup} duplicated",
            where,
        )
    )
    if canary is None:
        checks.append(Check("no duplicate in the canary", True, "canary off", skipped=True))
    else:
        v = canary.get("violations")
        checks.append(
            Check(
                "no duplicate in the canary",
                v == 0 and not canary.get("violations_metric"),
                f"{v} violations in the table ({canary.get('violations_metric')} counted in "
                f"/metrics); {canary.get('samples_stored')} samples stored of {total:,} ids "
                f"pulled, {canary.get('dropped')} dropped",
                ([canary.get("violation_rows")] if v else [])
                + [
                    {
                        "ids pulled but not sampled, by process (how it ended)": canary.get(
                            "unsampled"
                        )
                    }
                ],
            )
        )
    bad_decode, bad_order, bad_succession, per_inc, segments = an.per_daemon()
    checks.append(
        Check(
            "every id decodes to its daemon's region and a worker id it held",
            not bad_decode,
            f"{len(bad_decode)} ids do not",
            bad_decode,
        )
    )
    checks.append(
        Check(
            "each daemon's ids increase (per process)",
            not bad_order,
            f"{len(bad_order)} ids not above the one before",
            bad_order,
        )
    )
    checks.append(
        Check(
            "each worker id's successive holders issue above their predecessors",
            not bad_succession,
            f"{sum(len(v) - 1 for v in segments.values())} successions, "
            f"{len(bad_succession)} issued at or below the id before them",
            bad_succession,
        )
    )
    recv_bound, recv_at, hb_bound, hb_at = an.ksort()
    skew = an.injected_skew()
    slack = an.cfg.ksort_slack_ms
    checks.append(
        Check(
            "k-sort bound within the injected clock skew",
            hb_bound <= skew + slack,
            f"{hb_bound} ms by happens-before ({recv_bound} ms by receive order), injected skew "
            f"{skew:.1f} ms (+{slack} ms slack)",
            [{"happens_before_at": hb_at, "receive_order_at": recv_at}],
        )
    )
    failures, margins = an.stop_deadlines()
    checks.append(
        Check(
            "nothing issued past a stop deadline (frozen cluster, stopped daemon, fence, hold)",
            not failures,
            f"{len(failures)} ids late; of {len(margins)} deadlines, the closest last id "
            f"{max(m[2] for m in margins) if margins else 'n/a'} ms from its deadline "
            f"(tolerance {an.tol_ms} ms)",
            failures,
        )
    )
    unrecovered = [
        {"fault": f.kind, "start_s": round(f.start, 3), "daemon": name}
        for f in an.faults
        for name, t in f.recovered_at.items()
        if t is None
    ]
    checks.append(
        Check(
            "every daemon serves again by itself after each fault",
            not unrecovered,
            f"{len(unrecovered)} daemons did not within {an.cfg.recovery_s} s",
            unrecovered,
        )
    )
    monitor = [
        {"fault": f.kind, "daemon": f.target, "start_s": round(f.start, 3)}
        for f in an.faults
        if f.kind == "skew_fence" and f.params.get("fenced_after_s") is None
    ]
    n_skew = sum(1 for f in an.faults if f.kind == "skew_fence")
    checks.append(
        Check(
            "the skew monitor fences a clock stepped past skew_fence",
            not monitor,
            f"{n_skew - len(monitor)} of {n_skew} fenced within 20 s",
            monitor,
            skipped=n_skew == 0,
        )
    )
    crashes, refused, unclean = an.exits()
    hangs = an.hangs()
    checks.append(
        Check(
            "no crash",
            not crashes,
            f"{len(crashes)} unexpected exits; {len(refused)} starts refused (exit 1, retried)",
            crashes,
        )
    )
    checks.append(Check("no hang", not hangs, f"{len(hangs)} hangs", hangs))
    checks.append(
        Check(
            "a stop on SIGTERM exits 0",
            not unclean,
            f"{len(unclean)} non-zero exits after SIGTERM",
            unclean,
        )
    )
    stray = [
        {"region": r, "keys_of_regions": sorted({k[0] for k in keys})}
        for r, keys in region_keys.items()
        if keys is None or any(k[0] != r for k in keys)
    ]
    checks.append(
        Check(
            "each region's etcd holds worker keys of its own region only",
            not stray,
            f"{len(region_keys)} clusters read",
            stray,
        )
    )
    checks.append(
        Check(
            "no process left behind",
            not leaks,
            f"{len(leaks)} left",
            [{"pid": p, "cmdline": c[:200]} for p, c in leaks],
        )
    )
    figures = {
        "ids": total,
        "duplicates": ndup,
        "ksort_happens_before_ms": hb_bound,
        "ksort_receive_order_ms": recv_bound,
        "injected_skew_ms": round(skew, 2),
        "deadline_margins_ms": margins,
        "starts_refused": refused,
        "per_incarnation": {f"{k[0]}.{k[1]}": v["n"] for k, v in per_inc.items()},
    }
    return checks, figures
