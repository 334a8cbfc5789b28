"""Generators inherited through a real fork() refuse in the child."""

from __future__ import annotations

import json
import os
import warnings

import pytest

import snowid
from snowid import Generator, SnowidError

from .etcd_support import QUARANTINE, SHORT, registry


def in_child(body) -> dict:
    """Runs body() in a forked child; returns the JSON it reports."""
    r, w = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads running
        pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = body()
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            out = {"crash": repr(e)}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    return json.loads(data)


def refusal(f) -> dict:
    try:
        f()
    except SnowidError as e:
        return {"code": e.code.name, "retryable": e.retryable, "message": e.message}
    return {"code": "OK"}


def test_an_inherited_generator_refuses_and_a_new_one_works_in_the_child():
    g = Generator(region=0, host=1)
    parent_id = g.next_id()

    def child() -> dict:
        own = Generator(region=0, host=2)
        return {
            "inherited": refusal(g.next_id),
            "batch": refusal(lambda: g.next_ids(3)),
            "own": own.next_id(),
        }

    out = in_child(child)
    assert out["inherited"]["code"] == "FAILED_PRECONDITION"
    assert not out["inherited"]["retryable"] and "fork" in out["inherited"]["message"]
    assert out["batch"]["code"] == "FAILED_PRECONDITION"
    assert snowid.decode(out["own"]).host == 2
    assert g.next_id() > parent_id  # the parent's copy goes on


@pytest.mark.etcd
def test_an_inherited_leased_generator_neither_issues_nor_releases_in_the_child(etcd, cluster):
    with snowid.LeasedGenerator(
        [etcd.url], cluster=cluster, timing=SHORT, quarantine=QUARANTINE
    ) as g:
        region, host = g.worker
        before = g.next_id()

        def child() -> dict:
            r = refusal(g.next_id)
            g.close()  # must not give the parent's id back
            return r

        out = in_child(child)
        assert out["code"] == "FAILED_PRECONDITION", out
        held = [w for w in registry(etcd, cluster).list() if w.holder is not None]
        assert [(w.region, w.host) for w in held] == [(region, host)]
        assert g.next_id() > before
