"""LeasedGenerator and the registry against a real etcd."""

from __future__ import annotations

import time

import pytest

import snowid
from snowid import LeasedGenerator
from snowid.etcd.registry import LeaseRequest
from snowid.keeper import LeaseState

from .etcd_support import QUARANTINE, SHORT, registry, workers_list

pytestmark = pytest.mark.etcd
MS = 1_000_000


def leased(etcd, cluster, **kw) -> LeasedGenerator:
    kw.setdefault("timing", SHORT)
    kw.setdefault("quarantine", QUARANTINE)
    return LeasedGenerator([etcd.url], cluster=cluster, **kw)


def test_acquire_renew_past_the_ttl_and_list_with_the_cpp_tool(etcd, cluster):
    with leased(etcd, cluster, region=1) as g:
        region, host = g.worker
        assert region == 1
        first = g.next_id()
        time.sleep(2.6)  # past the 2 s TTL: only renewals keep the lease
        later = g.next_ids(100)
        assert g.lease_state is LeaseState.HELD and g.ready
        assert later[0] > first and later == sorted(set(later))
        assert all(snowid.decode(i).worker == region * 256 + host for i in later)
        assert g._current.keeper.renewals >= 3
        listed = workers_list(etcd, cluster)
        mine = [w for w in listed if (w["region"], w["host"]) == (region, host)]
        assert mine and mine[0].get("holder"), listed


def test_unknown_outcome_of_the_acquire_transaction_reads_the_holder_key(etcd, cluster):
    dropped = []

    def hook(path: str, body: bytes):
        if path == "/v3/kv/txn" and b"request_put" in body and not dropped:
            dropped.append(body)
            return "drop_reply"
        return None

    reg = registry(etcd, cluster, fault_hook=hook)
    req = LeaseRequest(0, None, 2, 1_500_000_000, time.time_ns() + 1_500_000_000, "h", 1, 0)
    grant = reg.acquire(req)
    assert dropped, "the fault was not injected"
    holders = [w for w in reg.list() if w.holder is not None]
    assert [(w.region, w.host) for w in holders] == [(grant.region, grant.host)]
    reg.release(grant, time.time_ns())
    assert all(w.holder is None for w in reg.list())
