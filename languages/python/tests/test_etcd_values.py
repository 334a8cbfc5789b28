"""Keys, values and quarantine arithmetic of the etcd registry, and fuzzing of
their parsers and of the gateway reply readers."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from snowid import Code, SnowidError
from snowid.etcd.gateway import parse_endpoints, parse_error
from snowid.etcd.keys import WorkerKeys, check_namespace, prefix_end
from snowid.etcd.replies import txn_reply
from snowid.etcd.values import (
    Mark,
    Token,
    ceil_ms,
    decode_holder,
    decode_mark,
    decode_store,
    decode_token,
    encode_holder,
    encode_mark,
    free_from_ns,
)

MS = 1_000_000


def code(f) -> Code | None:
    try:
        f()
    except SnowidError as e:
        return e.code
    return None


def test_keys_and_their_grammar():
    k = WorkerKeys("/snowid", "default")
    assert k.holder(1, 17) == "/snowid/default/workers/1/17/holder"
    assert k.mark(0, 0) == "/snowid/default/workers/0/0/mark"
    assert k.store == "/snowid/default/store"
    assert k.parse("/snowid/default/workers/1/17/holder") == (1, 17, True)
    assert k.parse("/snowid/default/workers/4294967295/0/mark") == (4294967295, 0, False)
    for foreign in (
        "/snowid/default/workers/01/17/holder",
        "/snowid/default/workers/1/17/other",
        "/snowid/default/workers/1/17",
        "/snowid/default/workers/4294967296/0/mark",
        "/snowid/default/workers/1/17/holder/x",
        "/snowid/other/workers/1/17/holder",
        "/snowid/default/workers/-1/17/holder",
    ):
        assert k.parse(foreign) is None, foreign
    assert prefix_end(b"/a/") == b"/a0" and prefix_end(b"\xff") == b"\0"
    for prefix, cluster in (("snowid", "x"), ("/snowid/", "x"), ("/a//b", "x"), ("/s", "a b")):
        assert code(lambda p=prefix, c=cluster: check_namespace(p, c)) is Code.INVALID_ARGUMENT


def test_values_are_byte_for_byte_those_of_the_cpp_registry():
    assert encode_mark(Mark(1_772_359_200_123 * MS - 1, None, None)) == (
        '{"high_water_ms":1772359200123}'
    )
    assert encode_mark(Mark(5 * MS, 6 * MS, 5 * MS)) == (
        '{"clean_release_ms":5,"high_water_ms":5,"released_at_ms":6}'
    )
    h = encode_holder("web-1", 4242, 1_772_359_200_000 * MS, "", 0x694D7F3A1C2B9E05)
    assert h == (
        '{"address":"","host":"web-1","lease":"694d7f3a1c2b9e05","pid":4242,'
        '"started":"2026-03-01T10:00:00.000Z"}'
    )
    v = decode_holder(h)
    assert (v.host, v.pid, v.lease, v.started_ns) == (
        "web-1",
        4242,
        0x694D7F3A1C2B9E05,
        1_772_359_200_000 * MS,
    )
    t = Token(0x694D7F3A1C2B9E05, 42, 1, 17)
    assert t.encode() == "etcd:694d7f3a1c2b9e05:42:1:17" and decode_token(t.encode()) == t
    assert ceil_ms(1) == 1 and ceil_ms(0) == 0 and ceil_ms(-1) == 0


def test_marks_that_are_not_integers_in_range_are_data_loss():
    assert decode_mark('{"high_water_ms":5,"unknown":"x"}') == Mark(5 * MS)
    for bad in (
        '{"high_water_ms":"5"}',
        '{"high_water_ms":5.0}',
        '{"high_water_ms":true}',
        "[]",
        "",
        "{",
        '{"released_at_ms":99999999999999999999}',
    ):
        assert code(lambda b=bad: decode_mark(b)) is Code.DATA_LOSS, bad


def test_quarantine_eligibility():
    q = 10_000 * MS
    assert free_from_ns(Mark(), q) is None
    assert free_from_ns(Mark(100 * MS, None, None), q) == 100 * MS + q
    assert free_from_ns(Mark(100 * MS, 200 * MS, None), q) == 200 * MS + q
    # A clean release: the exact last instant, no quarantine.
    assert free_from_ns(Mark(100 * MS, 150 * MS, 100 * MS), q) == 150 * MS
    # A later holder raised the mark past the clean release: quarantine again.
    assert free_from_ns(Mark(300 * MS, 150 * MS, 100 * MS), q) == 300 * MS + q


def test_endpoints():
    assert parse_endpoints("http://a:1, https://b:2/") == ["http://a:1", "https://b:2"]
    for bad in ("", "a:1", "ftp://a:1", "http://a", "http://a:1/x", "http://u@a:1"):
        assert code(lambda b=bad: parse_endpoints(b)) is Code.INVALID_ARGUMENT, bad


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=16), inner, max_size=5)
    ),
    max_leaves=12,
)
texts = st.one_of(st.text(max_size=60), json_values.map(json.dumps))
known = st.fixed_dictionaries(
    {},
    optional={
        "high_water_ms": json_values,
        "released_at_ms": json_values,
        "clean_release_ms": json_values,
        "host": json_values,
        "pid": json_values,
        "lease": json_values,
        "started": json_values,
        "incarnation": json_values,
        "succeeded": json_values,
        "responses": json_values,
        "header": json_values,
        "error": json_values,
    },
).map(json.dumps)


@settings(max_examples=150, deadline=None)
@given(st.one_of(texts, known))
def test_value_parsers_never_crash_and_fail_only_with_data_loss(text):
    for parse in (decode_mark, decode_holder, decode_store):
        try:
            parse(text)
        except SnowidError as e:
            assert e.code is Code.DATA_LOSS


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.text(max_size=40),
        st.from_regex(r"\Aetcd:[0-9a-f]{0,17}:[0-9]{0,3}:[0-9]{0,3}:[0-9]{0,3}\Z"),
    )
)
def test_token_and_key_parsers_never_crash(text):
    try:
        t = decode_token(text)
        assert t.encode() == text.lower() or decode_token(t.encode()) == t
    except SnowidError as e:
        assert e.code is Code.INVALID_ARGUMENT
    k = WorkerKeys("/snowid", "default")
    p = k.parse("/snowid/default/workers/" + text)
    if p is not None:
        assert (k.holder if p.is_holder else k.mark)(
            p.region, p.host
        ) == "/snowid/default/workers/" + text


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_gateway_reply_readers_never_crash_and_fail_only_as_unavailable(doc):
    if isinstance(doc, dict):
        try:
            txn_reply(doc)
        except SnowidError as e:
            assert e.code is Code.UNAVAILABLE
    err = parse_error(doc)
    assert err is None or isinstance(err.message, str)
