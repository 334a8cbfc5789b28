"""Fuzz-style properties of every parser: arbitrary input never crashes, and
anything accepted is exactly what the format allows."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

import snowid
from snowid import Code, SnowidError
from snowid.fence import format_fence, parse_fence

ID_TEXT = re.compile(r"[0-9]{1,20}")


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=30), st.from_regex(r"\A[0-9]{0,22}\Z"), st.binary(max_size=24)))
def test_parse_id_accepts_exactly_the_strict_form(text):
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    try:
        value = snowid.parse(text)
    except SnowidError as e:
        assert e.code in (Code.INVALID_ARGUMENT, Code.OUT_OF_RANGE)
        if e.code is Code.OUT_OF_RANGE:
            assert ID_TEXT.fullmatch(raw.decode()) and int(raw) >= 1 << 64
        else:
            assert not re.fullmatch(rb"[0-9]{1,20}", raw)
        return
    assert re.fullmatch(rb"[0-9]{1,20}", raw) and value == int(raw) < 1 << 64
    assert snowid.parse(snowid.format(value)) == value


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=40),
        st.builds(
            lambda a, b, c: a + b + c,
            st.sampled_from([b"snowid-fence 1 ", b"snowid-fence 2 ", b"snowid-fence  1 "]),
            st.from_regex(rb"\A[0-9+\- ]{0,20}\Z"),
            st.sampled_from([b"\n", b"", b"\n\n", b"\r\n", b" \n"]),
        ),
    )
)
def test_parse_fence_accepts_exactly_the_documented_form(data):
    try:
        ms = parse_fence(data)
    except SnowidError as e:
        assert e.code is Code.DATA_LOSS
        m = re.fullmatch(rb"snowid-fence 1 ([0-9]{1,18})\n", data)
        assert m is None or int(m.group(1)) > 9_223_372_036_854
        return
    assert re.fullmatch(rb"snowid-fence 1 [0-9]{1,18}\n", data)
    assert 0 <= ms <= 9_223_372_036_854
    assert parse_fence(format_fence(ms)) == ms


def test_fence_texts():
    assert parse_fence(b"snowid-fence 1 1767225601000\n") == 1767225601000
    assert parse_fence(b"snowid-fence 1 0001767225601000\n") == 1767225601000
    assert parse_fence(b"snowid-fence 1 9223372036854\n") == 9223372036854
    for bad in (
        b"snowid-fence 1 9223372036855\n",
        b"snowid-fence 1 1234567890123456789\n",
        b"snowid-fence 1 -5\n",
        b"snowid-fence 1 +5\n",
        b"snowid-fence 1 5",
        b"snowid-fence 1 5\nx",
        b"snowid-fence 2 5\n",
        b"",
    ):
        try:
            parse_fence(bad)
        except SnowidError as e:
            assert e.code is Code.DATA_LOSS
        else:
            raise AssertionError(f"accepted {bad!r}")


def _resp(data: bytes):
    import io

    from snowid.sidecar import Sidecar

    sc = Sidecar.__new__(Sidecar)
    sc.address = "test"
    sc._file = io.BytesIO(data)
    return sc._read()


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=40),
        st.lists(
            st.sampled_from(
                [
                    b"+OK\r\n",
                    b"-ERR x\r\n",
                    b":12\r\n",
                    b"$3\r\nabc\r\n",
                    b"*2\r\n",
                    b"$-1\r\n",
                    b"*-1\r\n",
                    b"$5\r\nab\r\n",
                    b":x\r\n",
                    b"*99999999\r\n",
                    b"-LEASE_LOST y\r\n",
                    b"\r\n",
                    b"*1\r\n",
                ]
            ),
            max_size=30,
        ).map(b"".join),
    )
)
def test_resp_reader_never_crashes(data):
    try:
        reply = _resp(data)
    except SnowidError as e:
        assert e.code is Code.UNAVAILABLE
        return
    assert reply is None or isinstance(reply, (str, int, bytes, list, SnowidError))
