"""report.json (everything), report.md (the summary people read) and timeline.png."""

import json
import os

from .plot import plot_timeline


def fault_rows(fleet, an, faults):
    """Per fault: its record, each daemon's refusal in its turn and its recovery."""
    windows = {s.name: an.refusal_windows(s) for s in fleet.slots}
    rows = []
    for i, f in enumerate(faults):
        turn_end = faults[i + 1].start if i + 1 < len(faults) else an.run_end
        per = {}
        for s in fleet.slots:
            ws = [w for w in windows[s.name] if w[0] < turn_end and w[1] > f.start]
            if not ws:
                continue
            per[s.name] = {
                "refused_s": round(sum(min(b, turn_end) - max(a, f.start) for a, b, _ in ws), 3),
                "windows": len(ws),
                "first_refusal_after_s": round(ws[0][0] - f.start, 3),
                "words": sorted({w for _, _, words in ws for w in words}),
            }
        rec = f.as_json(fleet)
        rec["refusals"] = per
        rec["recovered_after_end_s"] = {
            name: (round(t - f.end, 3) if t is not None else None)
            for name, t in f.recovered_at.items()
            if name in per
        }
        rows.append(rec)
    return rows, windows


def by_kind(rows):
    out = {}
    for r in rows:
        k = out.setdefault(r["kind"], {"count": 0, "longest_refusal_s": 0.0, "daemons_hit": 0})
        k["count"] += 1
        for v in r["refusals"].values():
            k["daemons_hit"] += 1
            k["longest_refusal_s"] = max(k["longest_refusal_s"], v["refused_s"])
    return out


def write_reports(cfg, fleet, an, faults, checks, figures, canary):
    rows, windows = fault_rows(fleet, an, faults)
    kinds = by_kind(rows)
    per_daemon = {}
    for p in fleet.pullers:
        ok = sum(1 for q in p.pulls if q.word is None)
        per_daemon[p.slot.name] = {
            "ids": len(p.ids),
            "requests": len(p.pulls),
            "ok_requests": ok,
            "incarnations": len(p.slot.incarnations),
            "workers_held": sorted({w for inc in p.slot.incarnations for _, w in inc.workers}),
            "error_words": p.errors,
        }
    doc = {
        "seed": cfg.seed,
        "minutes": cfg.minutes,
        "regions": fleet.regions,
        "daemons_per_region": cfg.daemons_per_region,
        "members": cfg.members,
        "layout": json.loads(fleet.layout.file_text()),
        "lease": {
            "ttl_ms": cfg.lease_ttl_ms,
            "renew_ms": cfg.lease_renew_ms,
            "stop_ms": cfg.lease_stop_ms,
        },
        "started_utc": fleet.utc(0.0),
        "ok": all(c.ok for c in checks),
        "checks": [c.as_json() for c in checks],
        "figures": figures,
        "canary": canary,
        "daemons": per_daemon,
        "base_offsets_ms": {s.name: s.base_offset_ms for s in fleet.slots},
        "faults": rows,
        "faults_by_kind": kinds,
        "supervisor": [
            {"t_s": round(t, 3), "daemon": n, "what": w} for t, n, w in fleet.supervisor_log
        ],
    }
    with open(os.path.join(cfg.out, "report.json"), "w") as f:
        json.dump(doc, f, indent=1, default=str)
    png = plot_timeline(os.path.join(cfg.out, "timeline.png"), fleet, an, faults, windows)
    with open(os.path.join(cfg.out, "report.md"), "w") as f:
        f.write(markdown(cfg, fleet, doc, checks, kinds, rows, png))


def markdown(cfg, fleet, doc, checks, kinds, rows, png):
    fig = doc["figures"]
    out = [
        f"# Fleet chaos run: seed {cfg.seed}, {cfg.minutes} min",
        "",
        f"Started {doc['started_utc']}; {len(fleet.regions)} regions x "
        f"{cfg.daemons_per_region} daemons, etcd clusters of {cfg.members} members; lease TTL "
        f"{cfg.lease_ttl_ms} ms, renewals every {cfg.lease_renew_ms} ms, stop after "
        f"{cfg.lease_stop_ms} ms; {fleet.layout.hosts} worker ids per region. Wall time "
        f"{fig['wall_s']} s. **{'PASSED' if doc['ok'] else 'FAILED'}**.",
        "",
        "| Check | Result | Figures |",
        "|---|---|---|",
    ]
    for c in checks:
        res = "skipped" if c.skipped else ("pass" if c.ok else "**FAIL**")
        out.append(f"| {c.name} | {res} | {c.summary} |")
    out += ["", "## Figures", ""]
    out.append(f"- ids issued and pulled: {fig['ids']:,}; duplicates: {fig['duplicates']}")
    out.append(
        f"- k-sort bound: {fig['ksort_happens_before_ms']} ms by happens-before, "
        f"{fig['ksort_receive_order_ms']} ms by receive order; injected clock skew up to "
        f"{fig['injected_skew_ms']} ms"
    )
    if doc["canary"]:
        c = doc["canary"]
        out.append(
            f"- canary: {c.get('samples_stored')} samples stored, {c.get('violations')} "
            f"violations, {c.get('dropped')} dropped (from /metrics at the end); ids pulled but"
            f" not stored, by process and how it ended: {c.get('unsampled') or 'none'}"
        )
    load = fig.get("load_average", {})
    cores = load.get("cpu_cores", {})
    out.append(
        "- CPU, in cores over the run (processes alive at the end): "
        + ", ".join(f"{k} {v}" for k, v in cores.items())
        + f"; load average before and at the end: {load.get('before')}, {load.get('end')}"
    )
    margins = fig.get("deadline_margins_ms") or []
    if margins:
        out += [
            "",
            "Stop deadlines: the last id that counts against each, in ms from the deadline"
            " (negative: before it):",
            "",
            "| fault | daemon | last id from the deadline (ms) |",
            "|---|---|---|",
        ]
        out += [f"| {k} | {d} | {m} |" for k, d, m in margins]
    out += [
        "",
        "| Daemon | ids | requests | processes | worker ids held |",
        "|---|---|---|---|---|",
    ]
    for name, d in doc["daemons"].items():
        held = ", ".join(f"{r}/{h}" for r, h in d["workers_held"])
        out.append(f"| {name} | {d['ids']:,} | {d['requests']:,} | {d['incarnations']} | {held} |")
    out += [
        "",
        "## Refusal windows by fault kind",
        "",
        "| Fault | times | daemons that refused | longest refusal (s) |",
        "|---|---|---|---|",
    ]
    for k, v in sorted(kinds.items()):
        out.append(f"| {k} | {v['count']} | {v['daemons_hit']} | {v['longest_refusal_s']:.3f} |")
    out += [
        "",
        "## Faults",
        "",
        "Refused: seconds without ids in the fault's turn (from the first request that got none"
        " to the next ids), from so many seconds after the fault's start, and the words seen;"
        " served again: the first ids asked for after the fault's end, seconds after it.",
        "",
        "| t (s) | fault | target | parameters | refused (daemon: s, words) | served again |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        ref = "; ".join(
            f"{n}: {v['refused_s']} from +{v['first_refusal_after_s']} ({', '.join(v['words'])})"
            for n, v in r["refusals"].items()
        )
        again = "; ".join(
            f"{n}: {'never' if t is None else t}" for n, t in r["recovered_after_end_s"].items()
        )
        params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
        out.append(
            f"| {r['start_s']} | {r['kind']} | {r['target']} | {params} | {ref or '-'} "
            f"| {again or '-'} |"
        )
    out += ["", "## Failed checks", ""]
    failed = [c for c in checks if not c.ok]
    for c in failed:
        out.append(f"- **{c.name}**: {c.summary}")
        for e in c.examples:
            out.append(f"  - `{json.dumps(e, default=str)}`")
    if not failed:
        out.append("None.")
    out += ["", f"Timeline: {'![timeline](timeline.png)' if png else png or 'not drawn'}", ""]
    return "\n".join(out)
