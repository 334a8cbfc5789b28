"""The sidecar client against a real snowidd (SNOWIDD_BIN)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading

import pytest

import snowid
from snowid import Code, Sidecar, SnowidError
from snowid.sidecar import error_of_reply

pytestmark = pytest.mark.daemon
REGION, HOST = 1, 7


@pytest.fixture(scope="module")
def daemon():
    binary = os.environ.get("SNOWIDD_BIN")
    if not binary:
        pytest.fail("SNOWIDD_BIN is not set: the sidecar tests need a real snowidd", pytrace=False)
    work = tempfile.mkdtemp(prefix="snowid-py-sidecar-")
    sock = os.path.join(work, "snowidd.sock")
    state = os.path.join(work, "state")
    os.mkdir(state)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNOWID_")}
    env["SNOWID_HOST_LOCK"] = f"snowid-py-sidecar-{os.getpid()}"
    proc = subprocess.Popen(
        [
            binary,
            "--socket",
            sock,
            "--tcp",
            "127.0.0.1:0",
            "--http",
            "off",
            "--sequences",
            "off",
            "--state-dir",
            state,
            "--region",
            str(REGION),
            "--host",
            str(HOST),
            "--max-batch",
            "1000",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    records: list[dict] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stderr
        for raw in proc.stderr:
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            records.append(rec)
            if rec.get("msg") in ("ready", "start failed", "stopped"):
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    assert ready.wait(30) and records[-1].get("msg") == "ready", records
    tcp = [r for r in records if r.get("msg") == "listening" and r.get("transport") == "tcp"]
    port = int(tcp[0]["address"].rsplit(":", 1)[1])
    yield {"socket": sock, "port": port}
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(20) == 0
    shutil.rmtree(work, ignore_errors=True)


def test_next_id_and_batches_over_the_unix_socket(daemon):
    with Sidecar(daemon["socket"]) as sc:
        assert sc.ping() == "PONG"
        a = sc.next_id()
        batch = sc.next_ids(500)
        assert len(batch) == 500 and batch == sorted(set(batch)) and batch[0] > a
        for i in (a, batch[0], batch[-1]):
            d = snowid.decode(i)
            assert (d.region, d.host) == (REGION, HOST)
        info = sc.decode(a)
        assert info["id"] == a and info["unix_ms"] == snowid.decode(a).unix_ms


def test_tcp_and_threads_share_one_daemon_without_duplicates(daemon):
    out: list[list[int]] = [[] for _ in range(4)]

    def work(i: int) -> None:
        with Sidecar(host="127.0.0.1", port=daemon["port"]) as sc:
            for _ in range(200):
                out[i].append(sc.next_id())
            out[i].extend(sc.next_ids(300))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for ids in out for i in ids]
    assert len(every) == len(set(every)) == 4 * 500
    for ids in out:
        assert ids == sorted(ids)


def test_daemon_errors_carry_codes_and_retryability(daemon):
    with Sidecar(daemon["socket"]) as sc:
        with pytest.raises(SnowidError) as e:
            sc.next_ids(1001)  # above --max-batch
        assert e.value.code is Code.INVALID_ARGUMENT and not e.value.retryable
        with pytest.raises(SnowidError) as e:
            sc.decode(2**63)
        assert e.value.code is Code.OUT_OF_RANGE
        assert sc.next_id() > 0  # the connection survives errors
    err = error_of_reply("LEASE_UNCERTAIN renewals are late; retry after 10ms")
    assert err.code is Code.LEASE_UNCERTAIN and err.retryable and err.retry_after == 0.01


def test_an_absent_daemon_is_unavailable(tmp_path):
    with pytest.raises(SnowidError) as e:
        Sidecar(str(tmp_path / "none.sock"))
    assert e.value.code is Code.UNAVAILABLE and e.value.retryable
