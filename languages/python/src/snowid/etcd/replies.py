"""Gateway request bodies and replies as plain values."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import Unavailable
from .gateway import b64, int64, is_error_reply, member, unb64


@dataclasses.dataclass(frozen=True)
class Header:
    cluster_id: int = 0
    revision: int = 0


@dataclasses.dataclass(frozen=True)
class KV:
    key: bytes
    value: bytes
    create_revision: int
    mod_revision: int
    lease: int


def header(doc: dict[str, Any]) -> Header:
    h = member(doc, "header", dict)
    if h is None:
        return Header()
    return Header(int64(h, "cluster_id"), int64(h, "revision"))


def kv(obj: Any) -> KV:
    if not isinstance(obj, dict):
        raise Unavailable("etcd gateway sent a key-value that is not an object")
    return KV(
        unb64(obj.get("key")),
        unb64(obj.get("value")),
        int64(obj, "create_revision"),
        int64(obj, "mod_revision"),
        int64(obj, "lease"),
    )


def kvs(doc: dict[str, Any]) -> list[KV]:
    items = member(doc, "kvs", list)
    return [kv(i) for i in items] if items else []


def refuse_error(doc: dict[str, Any]) -> None:
    if is_error_reply(doc):
        raise Unavailable(f"etcd gateway sent an error reply: {doc.get('message', '')}")


@dataclasses.dataclass(frozen=True)
class TxnReply:
    header: Header
    succeeded: bool
    # The kvs of each range response of the branch that ran (None for other ops).
    ranges: list[list[KV] | None]


def txn_reply(doc: dict[str, Any]) -> TxnReply:
    refuse_error(doc)
    succeeded = member(doc, "succeeded", bool) or False
    out: list[list[KV] | None] = []
    for item in member(doc, "responses", list) or []:
        if not isinstance(item, dict):
            raise Unavailable("etcd gateway sent a txn response that is not an object")
        if "response_range" in item:
            r = member(item, "response_range", dict) or {}
            out.append(kvs(r))
        elif "response_put" in item or "response_delete_range" in item:
            out.append(None)
        else:
            raise Unavailable("etcd gateway sent a txn response of unknown kind")
    return TxnReply(header(doc), succeeded, out)


def range_of(reply: TxnReply, i: int) -> KV | None:
    """The key found by the i-th response of the branch that ran, or None."""
    if len(reply.ranges) <= i or reply.ranges[i] is None:
        raise Unavailable("etcd gateway sent a txn reply without the expected range")
    found = reply.ranges[i]
    assert found is not None
    return found[0] if found else None


# --- request bodies -------------------------------------------------------------


def cmp_create(key: str, revision: int) -> dict[str, Any]:
    return {
        "key": b64(key),
        "result": "EQUAL",
        "target": "CREATE",
        "create_revision": str(revision),
    }


def cmp_mod(key: str, revision: int) -> dict[str, Any]:
    return {"key": b64(key), "result": "EQUAL", "target": "MOD", "mod_revision": str(revision)}


def op_put(key: str, value: str, lease: int = 0) -> dict[str, Any]:
    put: dict[str, Any] = {"key": b64(key), "value": b64(value)}
    if lease:
        put["lease"] = str(lease)
    return {"request_put": put}


def op_range(key: str) -> dict[str, Any]:
    return {"request_range": {"key": b64(key)}}


def op_delete(key: str) -> dict[str, Any]:
    return {"request_delete_range": {"key": b64(key)}}


def txn_body(
    compares: list[dict[str, Any]], success: list[dict[str, Any]], failure: list[dict[str, Any]]
) -> dict[str, Any]:
    return {"compare": compares, "success": success, "failure": failure}


def range_body(key: bytes | str, end: bytes | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"key": b64(key)}
    if end:
        body["range_end"] = b64(end)
    return body
