"""The faults: each injects one failure, undoes it, and records what it did and when.

A fault runs in the scheduler's thread and returns its `Fault` record: the kind, the target, the
harness times at which it began (`start`) and was undone (`end`), its parameters, and what a
check needs to judge it (`expect`, below). Faults run one after another, each after the fleet has
recovered from the one before, so that every refusal and every id can be laid at one fault's
door. The supervisor (fleet.py) restarts daemons meanwhile as systemd or a liveness probe would.

`expect` entries, read by checks.py:
  - ("stop_by", slot, worker, t): the slot's daemon must issue nothing on `worker` whose time,
    read on the harness's real clock, is later than t, unless it acquires `worker` again later
    (the lease stop deadline; a fence's 100 ms);
  - ("silent", region, t_from, t_to): no daemon of the region issues an id whose real time is
    in (t_from, t_to) (a frozen cluster's region past its stop deadline);
  - ("held", slot, t): the slot's daemon, which logged `skew self-fence` at t, answers no
    request for ids sent after t until it logs `skew hold released`.
A `skew_fence` fault records in its parameters how long the monitor took (`fenced_after_s`,
None if it did not fence within 20 s).
"""

import signal
import subprocess
import time

STEPS_MS = (5, 50, 150, 2000)

KINDS = (
    "kill_restart_same",
    "kill_restart_fresh",
    "daemon_stop",
    "cluster_freeze",
    "leader_kill",
    "clock_step",
    "restart_behind_fence",
    "skew_fence",
    "admin_fence",
)


class Fault:
    def __init__(self, kind, target, start):
        self.kind = kind
        self.target = target
        self.start = start
        self.end = None
        self.params = {}
        self.expect = []
        self.notes = []
        self.recovered_at = {}  # slot -> first ok reply after end (harness time), None if never

    def as_json(self, fleet):
        return {
            "kind": self.kind,
            "target": self.target,
            "start_s": round(self.start, 3),
            "end_s": round(self.end, 3) if self.end is not None else None,
            "start_utc": fleet.utc(self.start),
            "params": self.params,
            "notes": self.notes,
        }


class Injector:
    def __init__(self, fleet, rng):
        self.fleet = fleet
        self.rng = rng
        self.cfg = fleet.cfg

    def sleep(self, seconds):
        time.sleep(max(0.0, seconds))

    def run(self, kind):
        return getattr(self, kind)()

    def pick_slot(self):
        return self.rng.choice(self.fleet.slots)

    def _worker_now(self, slot):
        inc = slot.current
        return slot.worker_at(inc, self.fleet.now()) if inc is not None else None

    def _stop_deadline(self, t):
        return t + self.cfg.lease_stop_ms / 1000.0

    # SIGKILL, then a restart by the supervisor on the same or a fresh state directory.
    def _kill_restart(self, kind, fresh):
        slot = self.pick_slot()
        f = Fault(kind, slot.name, self.fleet.now())
        down = round(self.rng.uniform(0.0, 2.0), 3)
        f.params = {"down_s": down, "worker": self._worker_now(slot)}
        with slot.lock:
            slot.want_up = False
            slot.kill()
        self.sleep(down)
        with slot.lock:
            if fresh:
                slot.state_dir = slot.new_state_dir()
                f.params["state_dir"] = "fresh"
            slot.want_up = True
            slot.restart_at = 0.0
        f.end = self.fleet.now()
        return f

    def kill_restart_same(self):
        return self._kill_restart("kill_restart_same", False)

    def kill_restart_fresh(self):
        return self._kill_restart("kill_restart_fresh", True)

    # SIGSTOP of one daemon past its lease's TTL: when it resumes it must not issue on the lease
    # it held, whose stop deadline passed while it was stopped.
    def daemon_stop(self):
        slot = self.pick_slot()
        hold = round(self.cfg.lease_ttl_ms / 1000.0 + self.rng.uniform(0.5, 3.0), 3)
        worker = self._worker_now(slot)
        f = Fault("daemon_stop", slot.name, self.fleet.now())
        f.params = {"stopped_s": hold, "worker": worker}
        slot.signal(signal.SIGSTOP)
        if worker is not None:
            f.expect.append(("stop_by", slot, worker, self._stop_deadline(f.start)))
        self.sleep(hold)
        slot.signal(signal.SIGCONT)
        f.end = self.fleet.now()
        return f

    # SIGSTOP of every member of one region's cluster past the TTL.
    def cluster_freeze(self):
        region = self.rng.choice(self.fleet.regions)
        cluster = self.fleet.clusters[region]
        hold = round(self.cfg.lease_ttl_ms / 1000.0 + self.rng.uniform(1.0, 3.0), 3)
        f = Fault("cluster_freeze", f"region {region}", self.fleet.now())
        f.params = {"frozen_s": hold, "region": region}
        cluster.freeze()
        self.sleep(hold)
        cluster.thaw()
        f.end = self.fleet.now()
        f.expect.append(("silent", region, self._stop_deadline(f.start), f.end))
        return f

    # SIGKILL of a cluster's leader, and a restart of that member on its data directory.
    def leader_kill(self):
        region = self.rng.choice(self.fleet.regions)
        cluster = self.fleet.clusters[region]
        f = Fault("leader_kill", f"region {region}", self.fleet.now())
        i = cluster.leader_index()
        if i is None:
            f.notes.append("no leader found; nothing killed")
            f.end = self.fleet.now()
            return f
        down = round(self.rng.uniform(1.0, 4.0), 3)
        f.params = {"member": cluster.members[i].name, "down_s": down, "region": region}
        cluster.kill_member(i)
        self.sleep(down)
        cluster.restart_member(i)
        f.end = self.fleet.now()
        try:
            cluster.wait_leader(20.0)
        except RuntimeError as e:
            f.notes.append(f"after the restart: {e}")
        return f

    def _restore(self, slot, target, slew):
        """Back to target offset: at once, or slewed in steps well under max_backward."""
        if not slew:
            slot.set_offset(target)
            return
        step = 25.0
        while abs(slot.offset_ms - target) > step:
            slot.set_offset(slot.offset_ms + (step if target > slot.offset_ms else -step))
            self.sleep(0.1)
        slot.set_offset(target)

    # The clock stepped back or forward, held, and put back.
    def clock_step(self):
        slot = self.pick_slot()
        size = self.rng.choice(STEPS_MS)
        sign = self.rng.choice((-1, 1))
        hold = round(self.rng.uniform(2.0, 5.0), 3)
        slew = sign > 0 and self.rng.random() < 0.5  # a forward step undone by slewing back
        f = Fault("clock_step", slot.name, self.fleet.now())
        f.params = {"step_ms": sign * size, "hold_s": hold, "undone": "slewed" if slew else "step"}
        slot.set_offset(slot.base_offset_ms + sign * size)
        self.sleep(hold)
        self._restore(slot, slot.base_offset_ms, slew)
        f.end = self.fleet.now()
        return f

    # A clean stop, then a start with the clock set back behind the time fence it left. The
    # fence is kept per worker id (docs/daemon.md, "Shutdown"), so the restart pins the id the
    # daemon held; the clean release left it free at once. By 30 ms (less than max_backward, and
    # than skew_fence, so that the skew monitor leaves it alone) the start waits; by 2 s it is
    # refused (exit 1, restarted by the supervisor) until the clock is put back. Then the pinned
    # process must serve, above its own fence; and it is stopped cleanly so that the supervisor
    # starts the daemon unpinned again, as the other faults expect (a pinned daemon that loses
    # its lease waits out its id's quarantine: 10 s).
    def restart_behind_fence(self):
        slot = self.pick_slot()
        back = self.rng.choice((30, 2000))
        hold = 3.0
        worker = self._worker_now(slot)
        f = Fault("restart_behind_fence", slot.name, self.fleet.now())
        f.params = {"back_ms": back, "hold_s": hold, "worker": worker}
        with slot.lock:
            slot.want_up = False
            slot.terminate()
            first = len(slot.incarnations)
            slot.set_offset(slot.base_offset_ms - back)
            slot.pin_host = worker[1] if worker is not None else None
            slot.want_up = True
            slot.restart_at = 0.0
        self.sleep(hold)
        slot.set_offset(slot.base_offset_ms)
        served = self.fleet.wait_serving(slot, self.fleet.now(), 15.0)
        with slot.lock:
            starts = slot.incarnations[first:]
            f.params["starts"] = len(starts)
            f.params["starts_refused"] = sum(
                1 for i in starts if i.exit_code == 1 and i.ready_at is None
            )
            f.params["pinned_served"] = served is not None
            slot.pin_host = None
            slot.terminate()
            slot.restart_at = 0.0
        f.end = self.fleet.now()
        return f

    # A clock stepped far enough (300 ms, past skew_fence) that the skew monitor fences it,
    # held until it does (or 20 s), then slewed back.
    def skew_fence(self):
        slot = self.pick_slot()
        step = 300
        f = Fault("skew_fence", slot.name, self.fleet.now())
        f.params = {"step_ms": step}
        slot.set_offset(slot.base_offset_ms + step)
        fenced = self.fleet.wait_monitor_fence(slot, f.start, 20.0)
        f.params["fenced_after_s"] = round(fenced[0] - f.start, 3) if fenced else None
        if fenced:
            t, how = fenced
            f.params["fenced_by"] = "itself" if how == "skew self-fence" else "its peers"
            if how == "skew self-fence":
                # A held host refuses every request for ids until `skew hold released`.
                f.expect.append(("held", slot, t))
            else:
                # A peer fence revokes its holder key, as `snowid workers fence` does.
                worker = slot.worker_at(slot.current, t)
                if worker is not None:
                    f.expect.append(("stop_by", slot, worker, t + 0.1))
        self.sleep(1.0)
        self._restore(slot, slot.base_offset_ms, True)
        f.end = self.fleet.now()
        return f

    # `snowid workers fence REGION HOST`: the holder must stop within 100 ms.
    def admin_fence(self):
        slot = self.pick_slot()
        worker = self._worker_now(slot)
        f = Fault("admin_fence", slot.name, self.fleet.now())
        f.params = {"worker": worker}
        if worker is None:
            f.notes.append("the daemon held no worker id; nothing fenced")
            f.end = self.fleet.now()
            return f
        argv = [
            self.cfg.snowid,
            "workers",
            "fence",
            str(worker[0]),
            str(worker[1]),
            "--etcd",
            ",".join(self.fleet.endpoints(slot.region)),
            "--layout",
            self.fleet.layout_file,
        ]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        t = self.fleet.now()  # the fence is in etcd by the time the tool exits
        f.params["exit"] = r.returncode
        f.notes.append((r.stdout + r.stderr).strip()[:300])
        if r.returncode == 0:
            # Contract of `snowid workers fence`: the holder stops issuing within 100 ms.
            f.expect.append(("stop_by", slot, worker, t + 0.1))
        f.end = self.fleet.now()
        return f
