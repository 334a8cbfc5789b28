"""Hypothesis scripts of clock moves, calls and restarts on a fake clock.

Whatever the script, no id repeats, the ids of each life (and across lives
that share a fence file) strictly increase, every id carries the generator's
worker, and a CLOCK_MOVED_BACK refusal comes only after the clock went back
beyond what the generator may wait out.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import snowid
from snowid import Code, Generator, SnowidError
from snowid.testing import FakeClock

MS = 1_000_000
T0_MS = 1_773_500_966_535

moves = st.one_of(
    st.tuples(st.just("advance"), st.integers(0, 3 * MS)),
    st.tuples(st.just("advance"), st.integers(0, 1500 * MS)),
    st.tuples(st.just("back"), st.integers(0, 120 * MS)),
    st.tuples(st.just("back"), st.integers(0, 3000 * MS)),
    st.tuples(st.just("forward"), st.integers(0, 2000 * MS)),
    st.tuples(st.just("stall"), st.integers(0, 200 * MS)),
    st.tuples(st.just("next"), st.just(0)),
    st.tuples(st.just("try"), st.just(0)),
    st.tuples(st.just("reserve"), st.integers(1, 5000)),
    st.tuples(st.just("restart"), st.just(0)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    script=st.lists(moves, min_size=1, max_size=60),
    borrow=st.sampled_from([0, 2]),
    start_bound=st.sampled_from([0, 16]),
)
def test_no_script_repeats_an_id_or_goes_back(script, borrow, start_bound):
    with tempfile.TemporaryDirectory() as d:
        fence = os.path.join(d, "fence")
        clock = FakeClock(T0_MS * MS)
        options = dict(
            region=3,
            host=200,
            clock=clock,
            fence=fence,
            max_borrow=dt.timedelta(milliseconds=borrow),
            random_start_bound=start_bound,
        )
        g: Generator | None = Generator(**options)
        issued: list[int] = []
        # The largest backward distance of the clock from the last issued
        # time, measured when the refusal comes.
        for op, arg in script:
            if op == "advance":
                clock.advance(arg)
            elif op == "back":
                clock.step_wall(-arg)
            elif op == "forward":
                clock.step_wall(arg)
            elif op == "stall":
                clock.advance_mono(arg)
            elif op == "restart":
                if g is not None:
                    g.close()
                try:
                    g = Generator(**options)
                except SnowidError as e:
                    # Only a clock far behind the stored fence refuses a start.
                    assert e.code is Code.FAILED_PRECONDITION
                    stored = snowid.FenceFile(fence).load()
                    assert stored is not None
                    assert stored * MS - clock.wall_ns() > 1100 * MS
                    g = None
            elif g is not None:
                before = g.last_ticks
                try:
                    if op == "next":
                        got = [g.next_id()]
                    elif op == "try":
                        got = [g.try_next_id()]
                    else:
                        got = list(g.reserve(arg))
                except SnowidError as e:
                    if e.code is Code.CLOCK_MOVED_BACK:
                        behind_ms = before - (clock.wall_ns() // MS - snowid.SNOWID.epoch_ms)
                        assert behind_ms > 100 + borrow
                    else:
                        assert e.code in (
                            Code.SEQUENCE_EXHAUSTED,
                            Code.CLOCK_BEHIND,
                            Code.UNHEALTHY,
                        ), e
                    continue
                for i in got:
                    d_ = snowid.decode(i)
                    assert (d_.region, d_.host) == (3, 200)
                    # Never ahead of the clock by more than the borrow.
                    assert d_.unix_ms <= clock.wall_ns() // MS + borrow or d_.unix_ms <= (
                        snowid.SNOWID.epoch_ms + before + borrow
                    )
                issued.extend(got)
        assert issued == sorted(set(issued)), "ids repeated or went back"
