"""The fleet under test: the regions' etcd clusters, the daemons' slots, their clients, and the
supervisor that restarts daemons as systemd or a liveness probe would.

Times are harness times: seconds of the monotonic clock since the fleet was made (`now()`).
`wall_ms(t)` maps one to the real wall clock (read once at the start), which is what an id's time
is compared with once the daemon's known clock offset is taken off.
"""

import datetime
import os
import threading
import time

from . import procs
from .daemon import Slot

SUPERVISOR_PERIOD_S = 0.05
RESTART_BACKOFF_S = 1.0  # after a failed start or a crash (systemd's unit uses 2 s)
LIVENESS_DELAY_S = 1.0  # an unhealthy daemon is restarted this long after it is seen


class Fleet:
    def __init__(self, cfg, run_dir, out_dir, layout, libfaketime):
        self.cfg = cfg
        self.run_dir = run_dir
        self.out_dir = out_dir
        self.layout = layout
        self.layout_file = os.path.join(run_dir, "layout.json")
        with open(self.layout_file, "w") as f:
            f.write(layout.file_text())
        self.libfaketime = libfaketime
        self.canary_url = None
        self.t0 = time.monotonic()
        self.wall0_ms = time.time() * 1000.0
        self.regions = list(range(1, cfg.regions + 1))
        self.clusters = {}
        self.slots = []
        self.pullers = []
        self.supervisor_log = []  # (t, slot, what)
        self._stop = threading.Event()
        self._thread = None

    def now(self):
        return time.monotonic() - self.t0

    def wall_ms(self, t):
        return self.wall0_ms + t * 1000.0

    def utc(self, t):
        return (
            datetime.datetime.fromtimestamp(self.wall_ms(t) / 1000.0, datetime.timezone.utc)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z")
        )

    def endpoints(self, region):
        return self.clusters[region].endpoints

    def make_slots(self, rng):
        logs = os.path.join(self.out_dir, "logs")
        os.makedirs(logs, exist_ok=True)
        root = os.path.join(self.run_dir, "d")
        for region in self.regions:
            for i in range(self.cfg.daemons_per_region):
                # Offsets within 2 ms of each other: inside skew_alert (5 ms), so that the
                # monitor is quiet until a fault moves a clock.
                base = round(rng.uniform(-1.0, 1.0), 2)
                self.slots.append(Slot(self, region, i, base, root, logs))

    def region_slots(self, region):
        return [s for s in self.slots if s.region == region]

    # The supervisor.
    def start_supervisor(self):
        self._thread = threading.Thread(target=self._supervise, name="supervisor", daemon=True)
        self._thread.start()

    def stop_supervisor(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)

    def _supervise(self):
        while not self._stop.is_set():
            for slot in self.slots:
                if not slot.lock.acquire(blocking=False):
                    continue  # a fault is working on it
                try:
                    self._supervise_slot(slot)
                except Exception as e:  # keep supervising the others; the report shows it
                    self.supervisor_log.append((self.now(), slot.name, f"supervisor error: {e!r}"))
                finally:
                    slot.lock.release()
            time.sleep(SUPERVISOR_PERIOD_S)

    def _supervise_slot(self, slot):
        t = self.now()
        ended = slot.poll_exit()
        if ended is not None and ended.ended_by_harness is None:
            what = (
                "start refused"
                if ended.ready_at is None and ended.exit_code == 1
                else f"unexpected exit {ended.exit_code}"
            )
            self.supervisor_log.append((t, slot.name, what))
            slot.restart_at = t + RESTART_BACKOFF_S
        c = slot.current
        if (
            c is not None
            and c.alive
            and not slot.stopped
            and slot.unhealthy_seen is not None
            and slot.unhealthy_seen > c.started
            and t - slot.unhealthy_seen >= LIVENESS_DELAY_S
        ):
            # As a liveness probe on /healthz would: an unhealthy daemon stays so until restarted.
            self.supervisor_log.append((t, slot.name, "restart: unhealthy"))
            slot.terminate()
            slot.restart_at = 0.0
        if slot.want_up and not slot.running() and t >= slot.restart_at:
            try:
                slot.start()
            except OSError as e:  # not started at all: recorded, tried again after the backoff
                self.supervisor_log.append((t, slot.name, f"cannot start: {e}"))
                slot.restart_at = t + RESTART_BACKOFF_S

    # Waiting on the fleet.
    def wait_all_ready(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(s.current is not None and s.current.ready_at is not None for s in self.slots):
                return True
            time.sleep(0.05)
        return False

    def last_ok(self, slot):
        """Harness time at which the slot's client last got ids (its latest pull), or None."""
        puller = self.puller_of(slot)
        for q in reversed(puller.pulls[-50:]):
            if q.word is None:
                return q.received
        return None

    def puller_of(self, slot):
        return self.pullers[self.slots.index(slot)]

    def wait_recovered(self, since, timeout):
        """{slot name: harness time of its first ids sent after `since`, or None}."""
        deadline = time.monotonic() + timeout
        out = {s.name: None for s in self.slots}
        while True:
            for s in self.slots:
                if out[s.name] is None:
                    for q in reversed(self.puller_of(s).pulls[-200:]):
                        if q.sent < since:
                            break
                        if q.word is None:
                            out[s.name] = q.received
            if all(v is not None for v in out.values()) or time.monotonic() >= deadline:
                return out
            time.sleep(0.05)

    def wait_serving(self, slot, since, timeout):
        """Harness time at which the slot's client got ids asked for after `since`; None if it
        got none within timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for q in reversed(self.puller_of(slot).pulls[-200:]):
                if q.sent < since:
                    break
                if q.word is None:
                    return q.received
            time.sleep(0.05)
        return None

    def monitor_fences(self, slot, since):
        """(harness time, message) of each fence of the slot's clock by the monitor after
        `since`: its own `skew self-fence`, or a peer's `skew fence` naming its host."""
        name = f"target=chaos-{slot.name}"
        out = []
        for s in self.region_slots(slot.region):
            for inc in list(s.incarnations):
                for t, rec in list(inc.events):
                    if t < since:
                        continue
                    msg = rec.get("msg")
                    if (msg == "skew self-fence" and s is slot) or (
                        msg == "skew fence" and name in str(rec.get("explanation", ""))
                    ):
                        out.append((t, msg))
        return sorted(out)

    def wait_monitor_fence(self, slot, since, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.monitor_fences(slot, since)
            if found:
                return found[0]
            time.sleep(0.1)
        return None

    def stop_all(self):
        """SIGTERM to every daemon (each must stop within 10 s), then the clusters."""
        for s in self.slots:
            s.want_up = False
        for s in self.slots:
            with s.lock:
                s.poll_exit()
                s.terminate()
        for c in self.clusters.values():
            c.stop()
        procs.kill_all()
