"""Helpers of the real-etcd tests: short lease timings, a registry, the C++ tool."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import tempfile

import pytest

from snowid import SYSTEM_CLOCK
from snowid.etcd.registry import EtcdOptions, EtcdRegistry
from snowid.keeper import LeaseTiming

SHORT = LeaseTiming(
    ttl=dt.timedelta(seconds=2),
    renew_every=dt.timedelta(milliseconds=500),
    stop_after=dt.timedelta(milliseconds=1500),
    max_clock_skew=dt.timedelta(milliseconds=100),
)
QUARANTINE = dt.timedelta(seconds=1)


def registry(etcd, cluster: str, **kw) -> EtcdRegistry:
    r = EtcdRegistry(SYSTEM_CLOCK, EtcdOptions([etcd.url], cluster=cluster, quarantine_s=1.0), **kw)
    r.connect()
    return r


def cli() -> str:
    path = os.environ.get("SNOWID_CLI_BIN")
    if not path:
        pytest.fail(
            "SNOWID_CLI_BIN is not set: the interop tests need the C++ snowid tool", pytrace=False
        )
    return path


def run_cli(etcd, cluster: str, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNOWID_")}
    with tempfile.TemporaryDirectory(prefix="snowid-py-cli-") as state:
        env.update(
            SNOWID_ETCD_ENDPOINTS=etcd.url, SNOWID_ETCD_CLUSTER=cluster, SNOWID_STATE_DIR=state
        )
        return subprocess.run(
            [cli(), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )


def workers_list(etcd, cluster: str) -> list[dict]:
    r = run_cli(etcd, cluster, "workers", "list", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    return doc["workers"] if isinstance(doc, dict) else doc
