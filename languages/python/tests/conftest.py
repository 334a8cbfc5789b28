"""Test settings: Hypothesis keeps no example database in the source tree."""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("snowid", database=None, print_blob=True)
settings.load_profile("snowid")


import os  # noqa: E402
import shutil  # noqa: E402
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


@pytest.fixture(scope="session")
def etcd():
    binary = os.environ.get("SNOWID_ETCD_BIN")
    if not binary:
        pytest.fail(
            "SNOWID_ETCD_BIN is not set: these tests need a real etcd binary "
            "(scripts/install-etcd builds one; ctest passes it)",
            pytrace=False,
        )
    server = Etcd(binary)
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
