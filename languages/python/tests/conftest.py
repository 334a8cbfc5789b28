"""Test settings: Hypothesis keeps no example database in the source tree."""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("snowid", database=None, print_blob=True)
settings.load_profile("snowid")


import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402

import pytest  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Etcd:
    """One etcd member on free loopback ports, in a temporary data directory."""

    def __init__(self, binary: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="snowid-etcd-py-")
        self.data = os.path.join(self.dir, "snowid-etcd-data")
        for _ in range(5):
            client, peer = _free_port(), _free_port()
            self.url = f"http://127.0.0.1:{client}"
            argv = [
                binary,
                "--name",
                "py",
                f"--data-dir={self.data}",
                f"--listen-client-urls={self.url}",
                f"--advertise-client-urls={self.url}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=py=http://127.0.0.1:{peer}",
            ]
            self.log = open(os.path.join(self.dir, "etcd.log"), "wb")
            self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
            if self._wait_ready():
                return
            self.stop()
            shutil.rmtree(self.data, ignore_errors=True)
        raise RuntimeError(f"etcd did not start; see {self.dir}/etcd.log")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(
                    urllib.request.Request(self.url + "/v3/maintenance/status", b"{}"), timeout=1
                ) as r:
                    if r.status == 200:
                        return True
            except OSError:
                time.sleep(0.05)
        return False

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class EtcdCluster:
    """Three etcd members on free loopback ports, in a temporary directory; ``pause``
    and ``resume`` stop and continue one (SIGSTOP, SIGCONT)."""

    def __init__(self, binary: str, size: int = 3) -> None:
        self.dir = tempfile.mkdtemp(prefix="snowid-etcd3-py-")
        self.procs: list[subprocess.Popen] = []
        self.logs: list = []
        for attempt in range(5):
            names = [f"py{i}" for i in range(size)]
            clients = [_free_port() for _ in names]
            peers = [_free_port() for _ in names]
            self.urls = [f"http://127.0.0.1:{p}" for p in clients]
            initial = ",".join(
                f"{n}=http://127.0.0.1:{p}" for n, p in zip(names, peers, strict=True)
            )
            for name, url, peer in zip(names, self.urls, peers, strict=True):
                argv = [
                    binary,
                    "--name",
                    name,
                    f"--data-dir={os.path.join(self.dir, f'data-{attempt}', name)}",
                    f"--listen-client-urls={url}",
                    f"--advertise-client-urls={url}",
                    f"--listen-peer-urls=http://127.0.0.1:{peer}",
                    f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                    f"--initial-cluster={initial}",
                    "--initial-cluster-state=new",
                    f"--initial-cluster-token={os.path.basename(self.dir)}-{attempt}",
                ]
                log = open(os.path.join(self.dir, f"{name}.log"), "ab")
                self.logs.append(log)
                self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT))
            if self._wait_ready():
                return
            self.stop()
        raise RuntimeError(f"the etcd cluster did not start; see the logs in {self.dir}")

    def _post(self, url: str, path: str, body: bytes = b"{}") -> dict:
        with urllib.request.urlopen(urllib.request.Request(url + path, body), timeout=1) as r:
            return json.loads(r.read())

    def _wait_ready(self) -> bool:
        # A linearizable read answers once the member knows the leader.
        deadline = time.monotonic() + 30
        pending = list(self.urls)
        while pending and time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.procs):
                return False
            try:
                self._post(pending[0], "/v3/kv/range", b'{"key":"AA=="}')
                pending.pop(0)
            except OSError:
                time.sleep(0.05)
        return not pending

    def follower(self) -> int:
        """The index of a member that is not the leader."""
        for i, url in enumerate(self.urls):
            status = self._post(url, "/v3/maintenance/status")
            if status["header"]["member_id"] != status["leader"]:
                return i
        raise AssertionError("no follower in the cluster")

    def watchers(self, i: int) -> float:
        """The watchers member ``i`` serves (its etcd_debugging_mvcc_watcher_total)."""
        with urllib.request.urlopen(self.urls[i] + "/metrics", timeout=1) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("etcd_debugging_mvcc_watcher_total "):
                    return float(line.split()[1])
        return 0.0

    def pause(self, i: int) -> None:
        self.procs[i].send_signal(signal.SIGSTOP)

    def resume(self, i: int) -> None:
        if self.procs[i].poll() is None:
            self.procs[i].send_signal(signal.SIGCONT)

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for log in self.logs:
            log.close()
        self.procs, self.logs = [], []


def _etcd_binary() -> str:
    binary = os.environ.get("SNOWID_ETCD_BIN")
    if not binary:
        pytest.fail(
            "SNOWID_ETCD_BIN is not set: these tests need a real etcd binary "
            "(scripts/install-etcd builds one; ctest passes it)",
            pytrace=False,
        )
    return binary


@pytest.fixture
def etcd3():
    """A three-member cluster of the test's own."""
    cluster = EtcdCluster(_etcd_binary())
    yield cluster
    cluster.stop()
    shutil.rmtree(cluster.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def etcd():
    server = Etcd(_etcd_binary())
    yield server
    server.stop()
    shutil.rmtree(server.dir, ignore_errors=True)


@pytest.fixture
def cluster(etcd, request):
    """A fresh namespace, declared new so that its first holder need not wait."""
    from snowid import SYSTEM_CLOCK
    from snowid.etcd.registry import EtcdOptions, EtcdRegistry

    name = "py-" + request.node.name.replace("[", "-").replace("]", "")[:60] + f"-{time.time_ns()}"
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)[:128]
    reg = EtcdRegistry(SYSTEM_CLOCK, EtcdOptions([etcd.url], cluster=name))
    reg.initialize_namespace()
    reg.close()
    return name
