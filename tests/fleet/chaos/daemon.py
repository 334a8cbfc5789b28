"""The daemons of the fleet: one `Slot` per daemon, which outlives the processes it runs.

A slot is what a host is in a real fleet: a clock of its own (libfaketime reading an offset from
a file on every clock read; the monotonic clock stays real), a host name, a socket path, and a
state directory, which a restart keeps or replaces. Each process started in a slot is an
`Incarnation`, with its log (stamped on arrival with the harness's monotonic time, and copied to
the report's logs directory) and the worker ids it held.
"""

import bisect
import glob
import http.client
import json
import os
import re
import signal
import subprocess
import threading

from . import procs

WORKER_RE = re.compile(r"worker (\d+)/(\d+)")

# The log messages kept as events (docs/daemon.md, "Logs"; docs/skew.md for the monitor's).
EVENTS = {
    "listening",
    "lease acquired",
    "ready",
    "lease event",
    "unhealthy",
    "start failed",
    "stopping",
    "stopped",
    "skew self-fence",
    "skew fence",
    "skew vote",
    "skew hold released",
    "duplicate id",  # the canary found an id stored twice
    "canary store unreachable",
}


def find_libfaketime():
    """$LIBFAKETIME, else Debian's libfaketime.so.1 (package libfaketime) in any multiarch dir."""
    env = os.environ.get("LIBFAKETIME")
    if env:
        return env
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1")) + sorted(
        glob.glob("/usr/lib/faketime/libfaketime.so.1")
    )
    return found[0] if found else None


class Incarnation:
    """One snowidd process of a slot."""

    def __init__(self, number, state_dir, proc, started, log_path):
        self.number = number
        self.state_dir = state_dir
        self.proc = proc
        self.started = started
        self.ready_at = None
        self.exited_at = None
        self.exit_code = None
        self.ended_by_harness = None  # "SIGKILL", "SIGTERM": the harness ended it
        self.hung = False  # did not stop within the bound after SIGTERM
        self.events = []  # (t, record) of the messages in EVENTS
        self.workers = []  # (t, (region, host)) each worker id it acquired, in order
        self.http = None  # "127.0.0.1:port" once its listener is logged
        self.pinned = None  # the host it was started with (--host), if any
        self.log_path = log_path

    @property
    def alive(self):
        return self.proc.poll() is None


class Slot:
    """One daemon of the fleet: its clock, its directories and its processes."""

    def __init__(self, fleet, region, index, base_offset_ms, root, logs_dir):
        self.fleet = fleet
        self.region = region
        self.index = index
        self.name = f"r{region}d{index}"
        self.dir = os.path.join(root, self.name)
        os.makedirs(self.dir, exist_ok=True)
        self.logs_dir = logs_dir
        self.socket = os.path.join(self.dir, "s.sock")
        self.clock_file = os.path.join(self.dir, "faketime.rc")
        self.base_offset_ms = base_offset_ms
        self.offsets = []  # (t, offset_ms): every change of this slot's clock
        self.set_offset(base_offset_ms)
        self.state_dirs = 0
        self.state_dir = self.new_state_dir()
        self.incarnations = []
        self.want_up = True  # the supervisor keeps a process running
        self.stopped = False  # SIGSTOPped by a fault
        self.restart_at = 0.0  # the supervisor's backoff: no start before this time
        self.unhealthy_seen = None  # when a client last saw UNHEALTHY or CLOCK_MOVED_BACK
        self.pin_host = None  # --host for the starts while set (the fence is per worker id)
        self.lock = threading.RLock()

    # The clock.
    @property
    def offset_ms(self):
        return self.offsets[-1][1]

    def set_offset(self, offset_ms):
        """Steps this slot's wall clock to real time + offset_ms; the daemon sees it at its next
        clock read (FAKETIME_NO_CACHE)."""
        tmp = self.clock_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{offset_ms / 1000.0:+.6f}\n")
        os.replace(tmp, self.clock_file)
        self.offsets.append((self.fleet.now(), offset_ms))

    def offset_at(self, t):
        """The offset (ms) in force at harness time t."""
        i = bisect.bisect_right(self.offsets, t, key=lambda change: change[0])
        return self.offsets[max(i - 1, 0)][1]

    def new_state_dir(self):
        self.state_dirs += 1
        d = os.path.join(self.dir, f"state-{self.state_dirs}")
        os.makedirs(d, exist_ok=True)
        return d

    # Processes.
    @property
    def current(self):
        return self.incarnations[-1] if self.incarnations else None

    def running(self):
        c = self.current
        return c is not None and c.alive

    def start(self):
        """Starts a new incarnation on the slot's state directory; returns without waiting."""
        cfg = self.fleet.cfg
        endpoints = self.fleet.endpoints(self.region)
        k = self.index % len(endpoints)  # a different first member per daemon (reliability.md)
        endpoints = endpoints[k:] + endpoints[:k]
        args = [
            cfg.snowidd,
            "--registry=etcd",
            "--etcd=" + ",".join(endpoints),
            f"--region={self.region}",
            f"--socket={self.socket}",
            "--http=127.0.0.1:0",
            "--tcp=127.0.0.1:0",
            f"--state-dir={self.state_dir}",
            f"--host-name=chaos-{self.name}",
            f"--layout={self.fleet.layout_file}",
            f"--lease-ttl={cfg.lease_ttl_ms}ms",
            f"--lease-renew={cfg.lease_renew_ms}ms",
            f"--lease-stop={cfg.lease_stop_ms}ms",
            "--threads=1",
            "--sequences=off",
        ]
        if self.pin_host is not None:
            args.append(f"--host={self.pin_host}")
        if self.fleet.canary_url:
            args += [f"--canary={self.fleet.canary_url}", "--canary-sample=1"]
        env = dict(os.environ)
        env.update(
            {
                "LD_PRELOAD": self.fleet.libfaketime,
                "FAKETIME_TIMESTAMP_FILE": self.clock_file,
                "FAKETIME_NO_CACHE": "1",
                "FAKETIME_DONT_FAKE_MONOTONIC": "1",
                # The host-wide guards of the file registry, kept to this slot.
                "SNOWID_HOST_LOCK": f"snowid-chaos-{os.getpid()}-{self.name}",
                "SNOWID_HOST_DIR": os.path.join(self.dir, "host"),
            }
        )
        with self.lock:
            number = len(self.incarnations)
            log_path = os.path.join(self.logs_dir, f"{self.name}.{number}.log")
            proc = procs.spawn(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            inc = Incarnation(number, self.state_dir, proc, self.fleet.now(), log_path)
            inc.pinned = self.pin_host
            self.incarnations.append(inc)
            self.stopped = False
        threading.Thread(target=self._read_log, args=(inc,), daemon=True).start()
        return inc

    def _read_log(self, inc):
        """Copies the process's log to the report and keeps its events, each stamped with the
        harness time it arrived. Other threads read the lists while this one appends (whole
        appends only, so a reader sees a prefix)."""
        with open(inc.log_path, "wb") as out:
            for raw in inc.proc.stderr:
                t = self.fleet.now()
                out.write(raw)
                try:
                    rec = json.loads(raw)
                except ValueError:
                    continue
                msg = rec.get("msg") if isinstance(rec, dict) else None
                if msg not in EVENTS:
                    continue
                inc.events.append((t, rec))
                if msg == "listening" and rec.get("transport") == "http":
                    inc.http = rec.get("address")
                elif msg == "lease acquired":
                    inc.workers.append((t, (int(rec["region"]), int(rec["host"]))))
                elif msg == "lease event":
                    text = str(rec.get("event", ""))
                    m = WORKER_RE.search(text)
                    if m and text.startswith("acquired"):
                        inc.workers.append((t, (int(m.group(1)), int(m.group(2)))))
                elif msg == "ready":
                    inc.ready_at = t
        inc.proc.stderr.close()

    def signal(self, sig):
        c = self.current
        if c is not None and c.alive:
            procs.signal_group(c.proc, sig)
            if sig == signal.SIGSTOP:
                self.stopped = True
            elif sig == signal.SIGCONT:
                self.stopped = False

    def kill(self):
        """SIGKILL of the running incarnation (no release, no fence written at stop)."""
        c = self.current
        if c is None or not c.alive:
            return
        c.ended_by_harness = "SIGKILL"
        procs.signal_group(c.proc, signal.SIGKILL)
        c.proc.wait()
        self._reaped(c)

    def terminate(self, bound_s=10.0):
        """SIGTERM (after SIGCONT) and wait: the daemon drains, releases and exits 0. One that
        takes longer than bound_s is a hang, killed and recorded."""
        c = self.current
        if c is None or not c.alive:
            return
        c.ended_by_harness = "SIGTERM"
        procs.signal_group(c.proc, signal.SIGCONT)
        self.stopped = False
        procs.signal_group(c.proc, signal.SIGTERM)
        try:
            c.proc.wait(bound_s)
        except subprocess.TimeoutExpired:
            c.hung = True
            procs.signal_group(c.proc, signal.SIGKILL)
            c.proc.wait()
        self._reaped(c)

    def _reaped(self, c):
        if c.exited_at is None:
            c.exited_at = self.fleet.now()
            c.exit_code = c.proc.returncode
        procs.forget(c.proc)

    def poll_exit(self):
        """Records the exit of the current incarnation if it has ended; the incarnation if it
        ended just now."""
        c = self.current
        if c is None or c.exited_at is not None or c.proc.poll() is None:
            return None
        self._reaped(c)
        return c

    def worker_at(self, inc, t):
        """The worker id inc had acquired last before t (None before its first)."""
        w = None
        for at, worker in inc.workers:
            if at > t:
                break
            w = worker
        return w

    def metrics(self, timeout=2.0):
        """The current incarnation's /metrics as {series: value}, or None."""
        c = self.current
        if c is None or not c.alive or not c.http or self.stopped:
            return None
        host, port = c.http.rsplit(":", 1)
        try:
            conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
            conn.request("GET", "/metrics")
            body = conn.getresponse().read().decode()
            conn.close()
        except OSError:
            return None
        out = {}
        for line in body.splitlines():
            if line and not line.startswith("#"):
                key, _, value = line.rpartition(" ")
                try:
                    out[key] = float(value)
                except ValueError:
                    pass
        return out
