"""One real etcd member for the harness, and a read-only view of snowid's keys in it.

The member runs from $SNOWID_ETCD_BIN (else `etcd` on PATH) on free loopback ports, in a fresh
temporary directory whose data directory name contains "snowid-etcd-", so that leftovers of an
aborted run are found by the same pattern as the C++ tests' members.
"""

import base64
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse


def free_ports(n):
    """Ports nothing listens on now (they stay free, in practice, until etcd binds them)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def post_json(url, path, body, timeout=5.0):
    """POSTs `body` as JSON to the gateway at `url`: the decoded JSON answer (any status)."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        reply = conn.getresponse()
        data = reply.read()
        return json.loads(data) if data else {}
    finally:
        conn.close()


def b64(text):
    return base64.b64encode(text.encode()).decode()


def unb64(text):
    return base64.b64decode(text).decode()


class EtcdServer:
    """A one-member etcd; stop() ends it (SIGTERM, then SIGKILL) and removes its directory."""

    def __init__(self):
        self.binary = os.environ.get("SNOWID_ETCD_BIN") or "etcd"
        self.dir = tempfile.mkdtemp(prefix="snowid-polyglot-")
        self.proc = None
        self.url = None

    def start(self):
        if shutil.which(self.binary) is None:
            raise RuntimeError(
                f"etcd not found ({self.binary!r}): run scripts/install-etcd and set "
                "SNOWID_ETCD_BIN, as scripts/test does"
            )
        last = None
        for _ in range(3):
            client, peer = free_ports(2)
            self.url = f"http://127.0.0.1:{client}"
            peer_url = f"http://127.0.0.1:{peer}"
            data_dir = os.path.join(self.dir, "snowid-etcd-m0")
            shutil.rmtree(data_dir, ignore_errors=True)
            log = open(os.path.join(self.dir, "etcd.log"), "ab")
            self.proc = subprocess.Popen(
                [
                    self.binary,
                    "--name=m0",
                    f"--data-dir={data_dir}",
                    f"--listen-client-urls={self.url}",
                    f"--advertise-client-urls={self.url}",
                    f"--listen-peer-urls={peer_url}",
                    f"--initial-advertise-peer-urls={peer_url}",
                    f"--initial-cluster=m0={peer_url}",
                    "--initial-cluster-state=new",
                    "--logger=zap",
                    "--log-outputs=stderr",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
            log.close()
            try:
                self._wait_ready(20.0)
                return self
            except RuntimeError as e:
                last = e
                self._end()
        raise RuntimeError(f"etcd did not start: {last}; log in {self.dir}/etcd.log")

    def _wait_ready(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"etcd exited with {self.proc.returncode}")
            try:
                status = post_json(self.url, "/v3/maintenance/status", {}, timeout=1.0)
                if status.get("leader"):
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("etcd did not answer with a leader in time")

    def _end(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGCONT)
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        self._end()
        shutil.rmtree(self.dir, ignore_errors=True)


class WorkerKeys:
    """What etcd holds for one namespace's worker ids, read straight from the gateway."""

    def __init__(self, url, prefix, cluster):
        self.url = url
        self.base = f"{prefix}/{cluster}/workers/"

    def read(self):
        """{(region, host): {"holder": {...,"_lease": int, "_create": int} | None, "mark": {...} | None}}"""
        end = self.base[:-1] + chr(ord(self.base[-1]) + 1)
        reply = post_json(self.url, "/v3/kv/range", {"key": b64(self.base), "range_end": b64(end)})
        out = {}
        for kv in reply.get("kvs", []):
            parts = unb64(kv["key"])[len(self.base) :].split("/")
            if len(parts) != 3 or parts[2] not in ("holder", "mark"):
                continue
            entry = out.setdefault((int(parts[0]), int(parts[1])), {"holder": None, "mark": None})
            value = json.loads(unb64(kv.get("value", "")) or "null")
            if parts[2] == "holder":
                value["_lease"] = int(kv.get("lease", "0"))
                value["_create"] = int(kv.get("create_revision", "0"))
            entry[parts[2]] = value
        return out

    def mark(self, region, host):
        return self.read().get((region, host), {}).get("mark")

    def holder(self, region, host):
        return self.read().get((region, host), {}).get("holder")
