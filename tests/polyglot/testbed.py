"""What every scenario runs on: one etcd, a fresh namespace, drivers started on it, the tool."""

import itertools
import os
import subprocess
import tempfile
import threading
import time

from driver_process import Driver
from etcd_server import EtcdServer, WorkerKeys
from fault_proxy import FaultProxy

PREFIX = "/snowid"
CLUSTER = "polyglot"
# Short leases so that the whole harness runs in a few minutes; within the bounds of
# docs/protocol.md, section 4 (renew < stop < ttl, retry <= renew).
TIMING = {
    "ttl_ms": 2000,
    "renew_ms": 500,
    "stop_ms": 1500,
    "quarantine_ms": 1000,
    "max_clock_skew_ms": 100,
    "request_timeout_ms": 1000,
    "retry_ms": 200,
    "reacquire_ms": 200,
}


class Testbed:
    def __init__(self, registry, bins, report, all_pairs=False):
        self.registry = registry
        self.all_pairs = all_pairs
        self.bins = bins
        self.report = report
        self.kinds = sorted(registry)
        self.etcd = None
        self.drivers = []
        self.proxies = []
        self.log_dir = tempfile.mkdtemp(prefix="snowid-polyglot-logs-")
        self.keys = None
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def __enter__(self):
        self.etcd = EtcdServer().start()
        self.keys = WorkerKeys(self.etcd.url, PREFIX, CLUSTER)
        # A new namespace: its first holders need not wait out a lost store's holders.
        self.tool("workers", "init", check=True)
        return self

    def __exit__(self, *exc):
        for d in self.drivers:
            d.end()
        for p in self.proxies:
            p.close()
        if self.etcd:
            self.etcd.stop()
        if self.report.failures:
            self.report.note(f"driver logs kept in {self.log_dir}")
        else:
            for name in os.listdir(self.log_dir):
                os.remove(os.path.join(self.log_dir, name))
            os.rmdir(self.log_dir)

    def driver(self, kind):
        with self._lock:
            name = f"{kind}#{next(self._numbers)}"
        d = Driver(kind, self.registry[kind], name, self.log_dir)
        with self._lock:
            self.drivers.append(d)
        return d

    def proxy(self):
        p = FaultProxy(self.etcd.url)
        self.proxies.append(p)
        return p

    def start_request(self, region, host=None, offset_ms=0, timing=None, endpoints=None, **extra):
        req = {
            "endpoints": endpoints or [self.etcd.url],
            "prefix": PREFIX,
            "cluster": CLUSTER,
            "region": region,
            "host": host,
            "clock_offset_ms": offset_ms,
            "timing": dict(timing or TIMING),
        }
        req.update(extra)
        return req

    def start(self, kind, region, host=None, **kw):
        """A new driver of `kind` holding an id; fails the scenario if it cannot start."""
        return self._start(kind, region, host, False, 30.0, kw)[0]

    def start_when_free(self, kind, region, host, seconds=30.0, **kw):
        """Starts a driver pinned to `host`, again and again while the id is held or
        quarantined (RESOURCE_EXHAUSTED). Returns the driver and the seconds it took."""
        return self._start(kind, region, host, True, seconds, kw)

    def _start(self, kind, region, host, wait_for_free, seconds, kw):
        """Starts drivers of `kind` until one holds an id. A retryable refusal (etcd did not
        answer in time, on a loaded machine) is retried and printed; after one, a pinned id
        may be held for a TTL by the lease of the attempt whose reply was lost, so
        RESOURCE_EXHAUSTED is waited out too."""
        began = time.monotonic()
        retried = []
        while True:
            d = self.driver(kind)
            reply = d.start(**self.start_request(region, host, **kw))
            if reply["ok"]:
                if retried:
                    self.report.measured(
                        f"{d.name} started after {len(retried)} retryable refusals of start "
                        f"{sorted(set(retried))}"
                    )
                return d, time.monotonic() - began
            d.end()
            code = reply["code"]
            again = reply.get("retryable") is True or (
                code == "RESOURCE_EXHAUSTED" and (wait_for_free or retried)
            )
            if not again or time.monotonic() - began > seconds:
                raise ScenarioError(f"{d.name} could not take {region}/{host}: {reply}")
            if reply.get("retryable") is True:
                retried.append(code)
            time.sleep(0.05)

    def tool(self, *args, check=False):
        """Runs the snowid tool on this namespace: (exit code, stdout, stderr)."""
        argv = [self.bins["snowid"], *args, "--etcd", self.etcd.url]
        argv += ["--etcd-prefix", PREFIX, "--etcd-cluster", CLUSTER]
        env = {k: v for k, v in os.environ.items() if not k.startswith("SNOWID_")}
        r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
        if check and r.returncode != 0:
            raise ScenarioError(f"snowid {' '.join(args)} failed ({r.returncode}): {r.stderr}")
        return r.returncode, r.stdout, r.stderr


class ScenarioError(Exception):
    """The scenario cannot go on (a driver that does not start, etcd down)."""


def issue_until(driver, stop, count=1000, pause=0.0):
    """Asks `driver` for ids until `stop` is set: the replies that were refusals."""
    refusals = []
    while not stop.is_set():
        reply = driver.next(count)
        if not reply["ok"]:
            refusals.append(reply)
            time.sleep(0.01)
        elif pause:
            time.sleep(pause)
    return refusals


def in_threads(fns, at_once=None):
    """Runs each callable on a thread of its own, at most `at_once` of them at a time (all, if
    None); re-raises the first exception."""
    errors = []
    slots = threading.BoundedSemaphore(at_once or max(1, len(fns)))

    def run(fn):
        try:
            with slots:
                fn()
        except Exception as e:  # reported on the caller's thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(fn,)) for fn in fns]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
