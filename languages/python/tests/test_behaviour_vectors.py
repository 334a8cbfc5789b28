"""The shared behavioural vectors: generator scripts on a simulated clock, fence
texts, and the etcd keys, values, quarantine and timing arithmetic.

Each file is loaded from vectors/ when it is there; a file that is not there
yet is reported as a skip, by name.
"""

from __future__ import annotations

import datetime as dt

import pytest

from snowid import Code, Generator, SnowidError
from snowid.etcd.keys import WorkerKeys, check_namespace
from snowid.etcd.registry import check_timeouts
from snowid.etcd.values import (
    Mark,
    Store,
    decode_holder,
    decode_mark,
    decode_store,
    encode_holder,
    encode_mark,
    encode_store,
    free_from_ns,
)
from snowid.fence import FenceFile, format_fence, parse_fence
from snowid.keeper import LeaseTiming
from snowid.lease_guard import LeaseGuard
from snowid.testing import FakeClock

from . import vectors

MS = 1_000_000
GENERATOR = vectors.load("generator")
FENCE = vectors.load("fence")
LEASES = vectors.load("leases")
LAYOUTS = vectors.layouts()


def cases(doc, key: str):
    if doc is None:
        return [
            pytest.param(None, marks=pytest.mark.skip(reason="vector file not in vectors/ yet"))
        ]
    return doc[key]


def case_id(c) -> str:
    if c is None:
        return "absent"
    return str(c.get("name") or c.get("note") or c.get("text") or c.get("key") or "")[:60]


def code_of(f) -> str:
    try:
        f()
    except SnowidError as e:
        return e.code.name
    return "OK"


# --- generator.json ---------------------------------------------------------------


class MemoryFence:
    def __init__(self, stored: int | None) -> None:
        self.value = stored
        self.fail = False

    def load(self) -> int | None:
        return self.value

    def store(self, unix_ms: int) -> None:
        if self.fail:
            raise SnowidError("injected fence failure")
        self.value = unix_ms


def make_generator(case, clock: FakeClock, fence: MemoryFence | None, guard: LeaseGuard | None):
    o = case["options"]
    ms = dt.timedelta(milliseconds=1)
    kw = dict(
        region=o["region"],
        host=o["host"],
        layout=LAYOUTS[case["layout"]],
        clock=clock,
        random_start_bound=o["random_start_bound"],
        max_backward=o["max_backward_ms"] * ms,
        max_borrow=o["max_borrow_ms"] * ms,
        max_wait=o["max_wait_ms"] * ms,
        fence_window=o["fence_window_ms"] * ms,
        fence=fence,
        lease=guard,
    )
    if "not_before_ms" in o:
        kw["not_before_ms"] = o["not_before_ms"]
    if "wait_until_ms" in o:
        kw["wait_until_ns"] = o["wait_until_ms"] * MS
    if "continue_after_ms" in o:
        kw["continue_after_ms"] = o["continue_after_ms"]
    return Generator(**kw)


@pytest.mark.parametrize("case", cases(GENERATOR, "cases"), ids=case_id)
def test_generator_scripts(case):
    o = case["options"]
    clock = FakeClock(case["start_wall_ms"] * MS, mono_ns=0)
    fence = MemoryFence(o["fence"].get("stored_ms")) if "fence" in o else None
    guard = LeaseGuard() if o.get("lease") else None
    holder: list[Generator] = []
    created = code_of(lambda: holder.append(make_generator(case, clock, fence, guard)))
    assert created == case["create"]
    if created != "OK":
        return
    g = holder[0]
    for n, step in enumerate(case["steps"]):
        where = f"step {n}: {step}"
        calls = None
        if "advance_ms" in step:
            clock.advance(step["advance_ms"] * MS)
        elif "set_wall_ms" in step:
            clock.step_wall(step["set_wall_ms"] * MS - clock.wall_ns())
        elif "advance_mono_ms" in step:
            clock.advance_mono(step["advance_mono_ms"] * MS)
        elif "lease_extend" in step:
            assert guard is not None
            e = step["lease_extend"]
            guard.extend(e["deadline_mono_ms"] * MS, e["high_water_ms"] * MS)
        elif "lease_lost" in step:
            assert guard is not None
            guard.mark_lost()
        elif "fence_fail" in step:
            assert fence is not None
            fence.fail = step["fence_fail"]
        elif "close" in step:
            g.close()
        elif "restart" in step:
            holder.clear()
            got = code_of(lambda: holder.append(make_generator(case, clock, fence, guard)))
            assert got == step["create"], where
            if holder:
                g = holder[0]
        elif "try_next" in step:
            calls = [g.try_next_id] * step["try_next"]
        elif "next" in step:
            calls = [g.next_id] * step["next"]
        elif "try_reserve" in step:
            calls = [lambda n=step["try_reserve"], g=g: g.try_reserve(n)]
        elif "reserve" in step:
            calls = [lambda n=step["reserve"], g=g: g.reserve(n)]
        elif not set(step) <= {"fence_ms", "healthy", "wall_ms"}:
            raise AssertionError(f"unknown step {step}")
        if calls is not None:
            if "error" in step:
                assert len(calls) == 1, where
                with pytest.raises(SnowidError) as e:
                    calls[0]()
                assert e.value.code.name == step["error"], where
                assert e.value.retryable == Code[step["error"]].retryable
                if "retry_after_ms" in step:
                    assert e.value.retry_after is not None, where
                    assert abs(e.value.retry_after * 1000 - step["retry_after_ms"]) < 1e-6, where
            else:
                got = [c() for c in calls]
                if "count" in step:
                    (r,) = got
                    assert (r.start, len(r)) == (int(step["first_id"]), step["count"]), where
                elif "first_id" in step:
                    first = int(step["first_id"])
                    assert got == list(range(first, first + len(got))), where
                if "id_min" in step:
                    ids = [i if isinstance(i, int) else i.start for i in got]
                    assert all(int(step["id_min"]) <= i <= int(step["id_max"]) for i in ids), where
        if "fence_ms" in step:
            assert fence is not None and fence.value == step["fence_ms"], where
        if "healthy" in step:
            assert g.healthy == step["healthy"], where
        if "wall_ms" in step:
            assert clock.wall_ns() == step["wall_ms"] * MS, where


# --- fence.json -------------------------------------------------------------------


@pytest.mark.parametrize("case", cases(FENCE, "valid"), ids=case_id)
def test_fence_valid(case):
    assert parse_fence(case["text"].encode()) == case["fence_ms"]


@pytest.mark.parametrize("case", cases(FENCE, "invalid"), ids=case_id)
def test_fence_invalid(case):
    assert code_of(lambda: parse_fence(case["text"].encode())) == case["error"]


@pytest.mark.parametrize("case", cases(FENCE, "write"), ids=case_id)
def test_fence_write(case, tmp_path):
    assert format_fence(case["fence_ms"]).decode() == case["text"]
    f = FenceFile(str(tmp_path / "fence"))
    f.store(case["fence_ms"])
    assert (tmp_path / "fence").read_text() == case["text"]


@pytest.mark.parametrize("case", cases(FENCE, "write_errors"), ids=case_id)
def test_fence_write_errors(case, tmp_path):
    path = tmp_path / "fence"
    path.write_bytes(b"snowid-fence 1 5\n")
    assert code_of(lambda: FenceFile(str(path)).store(case["fence_ms"])) == case["error"]
    assert path.read_bytes() == b"snowid-fence 1 5\n"


# --- leases.json ------------------------------------------------------------------


@pytest.mark.parametrize("case", cases(LEASES, "namespaces"), ids=case_id)
def test_namespaces(case):
    got = code_of(lambda: check_namespace(case["prefix"], case["cluster"]))
    assert got == case.get("error", "OK")


@pytest.mark.parametrize("case", cases(LEASES, "keys"), ids=case_id)
def test_keys(case):
    k = WorkerKeys(case["prefix"], case["cluster"])
    r, h = case["region"], case["host"]
    assert (k.holder(r, h), k.mark(r, h), k.region(r), k.all, k.store) == (
        case["holder"],
        case["mark"],
        case["region_prefix"],
        case["workers_prefix"],
        case["store"],
    )


@pytest.mark.parametrize("case", cases(LEASES, "key_parses"), ids=case_id)
def test_key_parses(case):
    p = WorkerKeys(case["prefix"], case["cluster"]).parse(case["key"])
    want = case.get("parsed")
    if want is None:
        assert p is None
    else:
        assert p is not None
        assert (p.region, p.host, "holder" if p.is_holder else "mark") == (
            want["region"],
            want["host"],
            want["kind"],
        )


def holder_value(text: str) -> dict:
    h = decode_holder(text)
    return {
        "host": h.host,
        "pid": h.pid,
        "started_ms": h.started_ns // MS,
        "address": h.address,
        "lease": str(h.lease),
    }


@pytest.mark.parametrize("case", cases(LEASES, "holders"), ids=case_id)
def test_holders(case):
    v = case["value"]
    assert (
        encode_holder(v["host"], v["pid"], v["started_ms"] * MS, v["address"], int(v["lease"]))
        == case["text"]
    )
    assert holder_value(case["text"]) == case.get("decoded", v)


@pytest.mark.parametrize("case", cases(LEASES, "holder_reads"), ids=case_id)
def test_holder_reads(case):
    assert holder_value(case["text"]) == case["value"]


@pytest.mark.parametrize("case", cases(LEASES, "holder_errors"), ids=case_id)
def test_holder_errors(case):
    assert code_of(lambda: decode_holder(case["text"])) == case["error"]


def ns(v: dict, key: str) -> int | None:
    return int(v[key]) if key in v else None


def mark_ms(m: Mark) -> dict:
    out = {}
    for key, val in (
        ("high_water_ms", m.high_water_ns),
        ("released_at_ms", m.released_at_ns),
        ("clean_release_ms", m.clean_release_ns),
    ):
        if val is not None:
            out[key] = val // MS
    return out


@pytest.mark.parametrize("case", cases(LEASES, "marks"), ids=case_id)
def test_marks(case):
    v = case["value"]
    m = Mark(ns(v, "high_water_ns"), ns(v, "released_at_ns"), ns(v, "clean_release_ns"))
    assert encode_mark(m) == case["text"]
    assert mark_ms(decode_mark(case["text"])) == case["decoded"]


@pytest.mark.parametrize("case", cases(LEASES, "mark_reads"), ids=case_id)
def test_mark_reads(case):
    m = decode_mark(case["text"])
    assert mark_ms(m) == case["value"] and m.released_clean == case["clean"]


@pytest.mark.parametrize("case", cases(LEASES, "mark_errors"), ids=case_id)
def test_mark_errors(case):
    assert code_of(lambda: decode_mark(case["text"])) == case["error"]


def store_ms(s: Store) -> dict:
    out = {"incarnation": s.incarnation, "reason": s.reason, "written_ms": s.written_ns // MS}
    if s.high_water_ns is not None:
        out["high_water_ms"] = s.high_water_ns // MS
    return out


@pytest.mark.parametrize("case", cases(LEASES, "stores"), ids=case_id)
def test_stores(case):
    v = case["value"]
    s = Store(v["incarnation"], ns(v, "high_water_ns"), v["reason"], int(v["written_ns"]))
    assert encode_store(s) == case["text"]
    assert store_ms(decode_store(case["text"])) == case["decoded"]


@pytest.mark.parametrize("case", cases(LEASES, "store_reads"), ids=case_id)
def test_store_reads(case):
    assert store_ms(decode_store(case["text"])) == case["value"]


@pytest.mark.parametrize("case", cases(LEASES, "store_errors"), ids=case_id)
def test_store_errors(case):
    assert code_of(lambda: decode_store(case["text"])) == case["error"]


@pytest.mark.parametrize("case", cases(LEASES, "eligibility"), ids=case_id)
def test_eligibility(case):
    mv = case.get("mark")
    mark = Mark()
    if mv is not None:
        mark = Mark(
            *(
                mv[k] * MS if k in mv else None
                for k in ("high_water_ms", "released_at_ms", "clean_release_ms")
            )
        )
    frm = None if case["held"] else free_from_ns(mark, case["quarantine_ms"] * MS)
    eligible = not case["held"] and (frm is None or case["now_ms"] * MS >= frm)
    assert eligible == case["eligible"]
    if not case["held"]:
        assert (frm // MS if frm is not None else None) == case.get("free_from_ms")


@pytest.mark.parametrize("case", cases(LEASES, "wait_until"), ids=case_id)
def test_wait_until(case):
    from snowid.keeper import wait_until_ns

    prev = case.get("previous_high_water_ms")
    store = case.get("store_high_water_ms")
    got = wait_until_ns(
        prev * MS if prev is not None else None,
        store * MS if store is not None else None,
        case["max_clock_skew_ms"] * MS,
    )
    assert (got // MS if got is not None else None) == case.get("wait_until_ms")


@pytest.mark.parametrize("case", cases(LEASES, "timings"), ids=case_id)
def test_timings(case):
    ms = dt.timedelta(milliseconds=1)
    t = LeaseTiming(
        case["ttl_ms"] * ms,
        case["renew_every_ms"] * ms,
        case["stop_after_ms"] * ms,
        case["max_clock_skew_ms"] * ms,
    )
    assert code_of(t.validate) == case.get("error", "OK")


@pytest.mark.parametrize("case", cases(LEASES, "etcd_options"), ids=case_id)
def test_etcd_options(case):
    got = code_of(
        lambda: check_timeouts(case["quarantine_ms"] / 1000, case["request_timeout_ms"] / 1000)
    )
    assert got == case.get("error", "OK")
