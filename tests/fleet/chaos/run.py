"""One chaos run, start to end: set up the fleet, pull ids under faults, stop, check, report.

The fleet is torn down in `finally`, and procs' atexit handler ends whatever is left, so an
exception or Ctrl-C leaves no process behind; what was measured up to then is still checked and
written.
"""

import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

from . import procs
from .canary import ScratchPostgres
from .checks import Analysis, Check, run_checks
from .clients import Puller
from .daemon import find_libfaketime
from .etcd import EtcdCluster
from .faults import KINDS, Injector
from .fleet import Fleet
from .layout import Layout
from .report import write_reports


def say(fleet, text):
    t = f"{fleet.now():8.2f}s " if fleet is not None else ""
    print(f"fleet-chaos: {t}{text}", flush=True)


def preflight(cfg):
    """Exit status 2 and a reason when something the run needs is missing."""
    for what, path in (("snowidd", cfg.snowidd), ("snowid", cfg.snowid)):
        if not os.access(path, os.X_OK):
            return f"{what} not found at {path} (build it: cmake --build --preset default)"
    if shutil.which(cfg.etcd_bin) is None:
        return f"etcd not found ({cfg.etcd_bin}): run scripts/install-etcd, set SNOWID_ETCD_BIN"
    if find_libfaketime() is None:
        return "libfaketime.so.1 not found: scripts/install-deps (faketime), or set LIBFAKETIME"
    if not cfg.no_canary:
        settings = subprocess.run(
            [cfg.snowidd, "--help-settings"], capture_output=True, text=True
        ).stdout
        if "canary" not in settings:
            return "this snowidd has no canary setting: build a newer one, or pass --no-canary"
        if shutil.which("psql") is None:
            return "psql not found (Debian's postgresql-client): needed to read the canary"
    return None


def series_sum(metrics, name):
    """The sum of a Prometheus series over its labels ({reason="queue_full"}, ...)."""
    return sum(v for k, v in metrics.items() if k == name or k.startswith(name + "{"))


def unsampled_ids(fleet, stored):
    """The ids the clients got that the canary did not store, by process and how it ended: with
    every id sampled (--canary-sample 1) only a process killed with its queue unwritten, or a
    full queue (counted as dropped), should leave any out."""
    if stored is None:
        return None
    out = {}
    for p in fleet.pullers:
        for q in p.pulls:
            if q.word is not None:
                continue
            n = sum(1 for id_ in p.ids[q.start : q.start + q.n] if id_ not in stored)
            if n:
                inc = p.slot.incarnations[q.inc]
                key = f"{p.slot.name}.{q.inc} ({inc.ended_by_harness or 'running'})"
                out[key] = out.get(key, 0) + n
    return out


def fault_cycle(rng, kinds):
    """Kinds in a fresh shuffled order each round: every kind runs once before any repeats."""
    while True:
        round_ = list(kinds)
        rng.shuffle(round_)
        yield from round_


def main(argv):
    from .cli import parse

    cfg = parse(argv)
    why = preflight(cfg)
    if why:
        print(f"fleet-chaos: {why}", file=sys.stderr)
        return 2
    kinds = [k for k in cfg.faults.split(",") if k] or list(KINDS)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        print(f"fleet-chaos: unknown fault kinds {unknown}; known: {KINDS}", file=sys.stderr)
        return 2
    procs.install_handlers()
    os.makedirs(cfg.out, exist_ok=True)
    # Short: the daemons' socket paths live under it (108 bytes at most).
    run_dir = tempfile.mkdtemp(prefix="snowid-chaos-")
    # pg-scratch, as root, runs PostgreSQL as the postgres user in a directory below this one.
    os.chmod(run_dir, 0o711)
    rng = random.Random(cfg.seed)
    # The binaries under test, copied: a rebuild of the tree during the run (other work in the
    # same checkout) must not swap or remove them under the supervisor.
    bin_dir = os.path.join(run_dir, "bin")
    os.makedirs(bin_dir)
    for attr in ("snowidd", "snowid"):
        copy = os.path.join(bin_dir, attr)
        shutil.copy2(getattr(cfg, attr), copy)
        setattr(cfg, attr, copy)
    fleet = Fleet(cfg, run_dir, cfg.out, Layout(cfg.host_bits), find_libfaketime())
    faults, pg, canary, interrupted, setup_error = [], None, None, None, None
    region_keys, leaks, load = {}, [], {}
    t_run_start = t_run_end = None
    try:
        if not cfg.no_canary:
            pg = ScratchPostgres(cfg.pg_scratch, run_dir)
            fleet.canary_url = pg.start()
            say(fleet, f"canary database at {fleet.canary_url}")
        for region in fleet.regions:
            c = EtcdCluster(cfg.etcd_bin, run_dir, f"r{region}", cfg.members)
            fleet.clusters[region] = c
            c.start()
            # A new namespace: its first holders need not wait out a stop deadline.
            subprocess.run(
                [cfg.snowid, "workers", "init", "--etcd", ",".join(c.endpoints)],
                check=True,
                capture_output=True,
                timeout=30,
            )
        say(fleet, f"{len(fleet.regions)} etcd clusters of {cfg.members} members up")
        fleet.make_slots(rng)
        for s in fleet.slots:
            s.start()
        if not fleet.wait_all_ready(60.0):
            raise RuntimeError("not every daemon got ready within 60 s; see the logs in --out")
        say(fleet, f"{len(fleet.slots)} daemons ready")
        for s in fleet.slots:
            fleet.pullers.append(
                Puller(fleet, s, cfg.batch, cfg.interval_ms / 1000.0, timeout_s=15.0)
            )
        fleet.start_supervisor()
        for p in fleet.pullers:
            p.start()
        t_run_start = fleet.now()
        load["before"] = [round(x, 2) for x in os.getloadavg()]
        deadline = t_run_start + cfg.minutes * 60.0
        injector = Injector(fleet, rng)
        cycle = fault_cycle(rng, kinds)
        time.sleep(2.0)  # a calm start: every daemon's first ids before the first fault
        # A fault and its recovery take 5 to 30 s: none starts in the last 10 s.
        while fleet.now() < deadline - 10.0:
            kind = next(cycle)
            f = injector.run(kind)
            faults.append(f)
            f.recovered_at = fleet.wait_recovered(f.end, cfg.recovery_s)
            slow = [n for n, t in f.recovered_at.items() if t is None]
            say(
                fleet,
                f"{f.kind} on {f.target} {f.params}" + (f"; NOT RECOVERED: {slow}" if slow else ""),
            )
            time.sleep(rng.uniform(1.0, 3.0))
        t_run_end = fleet.now()
        load["end"] = [round(x, 2) for x in os.getloadavg()]
    except KeyboardInterrupt as e:
        interrupted = str(e) or "interrupted"
        say(fleet, f"interrupted ({interrupted}): stopping the fleet")
    except Exception as e:  # the fleet is stopped and what was measured still reported
        setup_error = f"{type(e).__name__}: {e}"
        say(fleet, f"error: {setup_error}")
    finally:
        if t_run_start is not None and t_run_end is None:
            t_run_end = fleet.now()
        for p in fleet.pullers:
            p.stop.set()
        for p in fleet.pullers:
            p.join()
        fleet.stop_supervisor()
        # CPU of what runs now (processes killed during the run are not counted): is the
        # machine big enough for the fleet asked for?
        elapsed = max(fleet.now(), 1e-3)
        etcd_cpu = sum(
            procs.cpu_seconds(m.proc.pid)
            for c in fleet.clusters.values()
            for m in c.members
            if m.proc is not None
        )
        daemon_cpu = sum(procs.cpu_seconds(s.current.proc.pid) for s in fleet.slots if s.current)
        own = os.times()
        load["cpu_cores"] = {
            "etcd": round(etcd_cpu / elapsed, 3),
            "snowidd": round(daemon_cpu / elapsed, 3),
            "harness": round((own.user + own.system) / elapsed, 3),
        }
        if pg is not None:
            postmaster = [pid for pid, cmd in procs.leftovers(pg.dir) if " -D " in f" {cmd}"]
            pg_cpu = sum(procs.tree_cpu_seconds(pid) for pid in postmaster[:1])
            load["cpu_cores"]["postgresql"] = round(pg_cpu / elapsed, 3)
        # The canary's own counters, from the processes alive now (a killed one's are lost).
        canary_metrics = {"dropped": 0.0, "violations_metric": 0.0}
        for s in fleet.slots:
            m = s.metrics() or {}
            canary_metrics["dropped"] += series_sum(m, "snowid_canary_samples_dropped_total")
            canary_metrics["violations_metric"] += series_sum(m, "snowid_canary_violations_total")
        for region, c in fleet.clusters.items():
            try:
                keys = c.worker_keys()
                region_keys[region] = None if keys is None else list(keys.keys())
            except Exception:
                region_keys[region] = None
        fleet.stop_all()
        if pg is not None:
            if pg.url:
                canary = pg.counts()
                canary.update(canary_metrics)
                canary["unsampled"] = unsampled_ids(fleet, pg.stored_ids())
            pg.stop()
        procs.kill_all()
        time.sleep(0.5)
        leaks = procs.leftovers(run_dir) + [
            (pid, f"child {name} state {state}") for pid, name, state in procs.children_of_self()
        ]
        if not cfg.keep:
            shutil.rmtree(run_dir, ignore_errors=True)
    if t_run_start is None:
        print(
            f"fleet-chaos: the fleet did not start: {setup_error or interrupted}", file=sys.stderr
        )
        return 1
    an = Analysis(fleet, faults, t_run_end)
    checks, figures = run_checks(an, canary, leaks, region_keys)
    if setup_error or interrupted:
        checks.append(Check("the run completed", False, setup_error or interrupted))
    figures["load_average"] = load
    figures["wall_s"] = round(fleet.now(), 1)
    write_reports(cfg, fleet, an, faults, checks, figures, canary)
    failed = [c for c in checks if not c.ok]
    for c in checks:
        say(
            None,
            f"{'PASS' if c.ok else 'FAIL'}{' (skipped)' if c.skipped else ''} "
            f"{c.name}: {c.summary}",
        )
    say(None, f"report in {os.path.join(cfg.out, 'report.md')}")
    return 1 if failed else 0
