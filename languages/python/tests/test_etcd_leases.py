"""LeasedGenerator and the registry against a real etcd."""

from __future__ import annotations

import time

import pytest

import snowid
from snowid import Code, LeasedGenerator, SnowidError
from snowid.etcd.registry import LeaseRequest
from snowid.keeper import LeaseState

from .etcd_support import QUARANTINE, SHORT, registry, run_cli, workers_list

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


def test_a_fence_by_the_cpp_tool_is_seen_through_the_watch_and_replaced(etcd, cluster):
    events = []
    with leased(etcd, cluster, on_event=lambda what, st: events.append(what)) as g:
        region, host = g.worker
        before = g.next_ids(50)
        fenced_at = time.monotonic()
        r = run_cli(etcd, cluster, "workers", "fence", str(region), str(host))
        assert r.returncode == 0, r.stderr
        # The old worker refuses within the watch's latency; count how long.
        while g._incarnations[0].keeper.state is not LeaseState.LOST:
            assert time.monotonic() - fenced_at < 1.0, "the fence was not seen"
            time.sleep(0.001)
        seen_ms = (time.monotonic() - fenced_at) * 1000
        print(f"[ measured ] fence seen {seen_ms:.1f} ms after starting the tool that fenced")
        deadline = time.monotonic() + 5
        while g.reacquisitions == 0:
            assert time.monotonic() < deadline, events
            time.sleep(0.01)
        after = g.next_ids(50)
        assert g.worker != (region, host)
        assert after[0] > before[-1], "ids went back across the replacement"
        assert all(snowid.decode(i).host == g.worker[1] for i in after)
    assert any(e.startswith("lease lost") for e in events)


def test_clean_release_then_the_cpp_tool_honours_the_mark_and_back(etcd, cluster):
    host = 9
    with leased(etcd, cluster, host=host) as g:
        ours = g.next_ids(3000)
    r = run_cli(etcd, cluster, "next", "-n", "5", "--host", str(host))
    assert r.returncode == 0, r.stderr
    theirs = [int(x) for x in r.stdout.split()]
    assert len(theirs) == 5 and all(snowid.decode(i).host == host for i in theirs)
    # The tool waited past our exact last instant plus the skew, no quarantine.
    assert snowid.decode(theirs[0]).unix_ms >= snowid.decode(ours[-1]).unix_ms + 100
    started = time.monotonic()
    with leased(etcd, cluster, host=host) as g:
        again = g.next_ids(10)
    print(f"[ measured ] re-acquire after the tool's release: {time.monotonic() - started:.3f} s")
    assert snowid.decode(again[0]).unix_ms >= snowid.decode(theirs[-1]).unix_ms + 100


def test_the_tool_holds_while_python_is_refused_the_pinned_host(etcd, cluster, tmp_path):
    import subprocess

    from .etcd_support import cli

    env_cluster = cluster
    proc = subprocess.Popen(
        [cli(), "next", "--follow", "--host", "4", "-n", "1"],
        env={
            "PATH": "/usr/bin:/bin",
            "SNOWID_ETCD_ENDPOINTS": etcd.url,
            "SNOWID_ETCD_CLUSTER": env_cluster,
            "SNOWID_STATE_DIR": str(tmp_path),
        },
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdin and proc.stdout
        proc.stdin.write("\n")
        proc.stdin.flush()
        held_id = int(proc.stdout.readline())
        with pytest.raises(SnowidError) as e:
            leased(etcd, cluster, host=4)
        assert e.value.code is Code.RESOURCE_EXHAUSTED and not e.value.retryable
        assert snowid.decode(held_id).host == 4
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(10)
    with leased(etcd, cluster, host=4) as g:
        assert g.next_id() > held_id


def test_a_lost_lease_is_replaced_and_ids_never_go_back(etcd, cluster):
    with leased(etcd, cluster) as g:
        first_worker = g.worker
        before = g.next_ids(200)
        reg = registry(etcd, cluster)
        # Revoke the lease behind the holder's back, as etcd would on expiry.
        reg.fence(*first_worker)
        deadline = time.monotonic() + 5
        after: list[int] = []
        while len(after) < 200:
            assert time.monotonic() < deadline
            try:
                after.append(g.next_id())
            except SnowidError as e:
                assert e.code is Code.LEASE_UNCERTAIN and e.retryable, e
                time.sleep(e.retry_after or 0.01)
        assert g.worker != first_worker
        assert before + after == sorted(set(before + after))


def test_close_right_after_the_lease_is_revoked_succeeds_whether_or_not_the_loss_was_seen(
    etcd, cluster
):
    reg = registry(etcd, cluster)
    for _ in range(3):
        g = leased(etcd, cluster)
        g.next_ids(10)
        # The lease revoked behind the holder's back, then closed at once: the
        # keeper's watch has usually not reported the loss yet.
        held = reg._get(reg.keys.holder(*g.worker))
        assert held is not None and held.lease
        reg.client.call("/v3/lease/revoke", {"ID": str(held.lease)})
        g.close()  # nothing to give back: not an error
        with pytest.raises(SnowidError) as e:
            g.next_id()
        assert e.value.code is Code.FAILED_PRECONDITION


def test_from_env_reads_the_tools_variables(etcd, cluster, tmp_path):
    env = {
        "SNOWID_ETCD_ENDPOINTS": etcd.url,
        "SNOWID_ETCD_CLUSTER": cluster,
        "SNOWID_REGION": "2",
        "SNOWID_HOST": "33",
        "SNOWID_STATE_DIR": str(tmp_path),
    }
    with LeasedGenerator.from_env(env, timing=SHORT) as g:
        assert g.worker == (2, 33)
        i = g.next_id()
    assert (tmp_path / "fence-r2-h33").exists()
    assert snowid.FenceFile(str(tmp_path / "fence-r2-h33")).load() == snowid.decode(i).unix_ms
    for bad in (
        {"SNOWID_ETCD_ENDPOINTS": ""},
        {},
        {"SNOWID_ETCD_ENDPOINTS": "x", "SNOWID_REGION": "-1"},
    ):
        with pytest.raises(SnowidError) as e:
            LeasedGenerator.from_env(bad)
        assert e.value.code is Code.INVALID_ARGUMENT
