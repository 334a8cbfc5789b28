"""Each policy of docs/generator.md on a fake clock."""

from __future__ import annotations

import datetime as dt
import os
import threading

import pytest

import snowid
from snowid import Code, FenceFile, Generator, SnowidError
from snowid.lease_guard import LeaseGuard
from snowid.testing import FakeClock

MS = 1_000_000
T0_MS = 1_773_500_966_535  # 2026-03-14T15:09:26.535Z


def clock_at(ms: int = T0_MS) -> FakeClock:
    return FakeClock(ms * MS)


def gen(clock: FakeClock, **kw) -> Generator:
    kw.setdefault("random_start_bound", 0)
    kw.setdefault("region", 2)
    kw.setdefault("host", 17)
    return Generator(clock=clock, **kw)


def refusal(f) -> SnowidError:
    with pytest.raises(SnowidError) as e:
        f()
    return e.value


def test_ids_compose_clock_worker_and_sequence():
    c = clock_at()
    g = gen(c)
    assert g.next_id() == snowid.compose(unix_ms=T0_MS, region=2, host=17, sequence=0)
    assert g.next_id() == snowid.compose(unix_ms=T0_MS, region=2, host=17, sequence=1)


def test_used_up_tick_answers_sequence_exhausted_and_next_waits_for_the_next_ms():
    c = clock_at()
    g = gen(c)
    ids = [g.try_next_id() for _ in range(4096)]
    assert snowid.decode(ids[-1]).sequence == 4095
    e = refusal(g.try_next_id)
    assert e.code is Code.SEQUENCE_EXHAUSTED and e.retryable and 0 < e.retry_after <= 0.001
    nxt = g.next_id()
    d = snowid.decode(nxt)
    assert (d.unix_ms, d.sequence) == (T0_MS + 1, 0)
    assert c.sleeps == [1 * MS]
    assert g.stats.sequence_exhausted == 2


def test_random_start_stays_below_the_bound():
    c = clock_at()
    g = Generator(clock=c, random_start_bound=16)
    starts = set()
    for _ in range(300):
        starts.add(snowid.decode(g.next_id()).sequence)
        c.advance(MS)
    assert max(starts) < 16 and len(starts) > 4


def test_small_step_back_continues_the_last_tick_then_waits():
    c = clock_at()
    g = gen(c)
    first = g.next_id()
    c.step_wall(-50 * MS)
    second = g.try_next_id()
    assert second == first + 1
    for _ in range(4094):
        g.try_next_id()
    e = refusal(g.try_next_id)
    assert e.code is Code.CLOCK_BEHIND and e.retryable
    assert abs(e.retry_after - 0.051) < 1e-9
    # next() waits within max_wait (150 ms by default): 51 ms here.
    later = g.next_id()
    assert snowid.decode(later).unix_ms == T0_MS + 1
    assert g.healthy


def test_step_back_beyond_max_backward_turns_unhealthy_for_good():
    c = clock_at()
    seen = []
    g = gen(c, on_unhealthy=seen.append)
    g.next_id()
    c.step_wall(-101 * MS)
    e = refusal(g.next_id)
    assert e.code is Code.CLOCK_MOVED_BACK and not e.retryable
    c.step_wall(10_000 * MS)
    e2 = refusal(g.next_id)
    assert e2.code is Code.UNHEALTHY and not e2.retryable
    assert len(seen) == 1 and not g.healthy and g.health is seen[0]


def test_step_back_of_exactly_max_backward_is_waited_out_not_refused():
    c = clock_at()
    g = gen(c, max_wait=dt.timedelta(milliseconds=500))
    g.next_id()
    c.step_wall(-100 * MS)
    for _ in range(4095):
        g.next_id()
    assert snowid.decode(g.next_id()).unix_ms == T0_MS + 1
    assert g.healthy


def test_before_the_epoch_and_before_not_before_is_out_of_range():
    with pytest.raises(SnowidError) as e:
        gen(clock_at(snowid.SNOWID.epoch_ms - 1))
    assert e.value.code is Code.INVALID_ARGUMENT  # the layout check: epoch in the future
    c = clock_at()
    g = gen(c, not_before_ms=T0_MS + 10)
    assert refusal(g.next_id).code is Code.OUT_OF_RANGE
    c.advance(10 * MS)
    assert snowid.decode(g.next_id()).unix_ms == T0_MS + 10


def test_end_of_life():
    eol = snowid.SNOWID.end_of_life_ms
    c = clock_at(eol - 1)
    g = gen(c)
    assert snowid.decode(g.next_id()).unix_ms == eol - 1
    c.advance(MS)
    assert refusal(g.next_id).code is Code.OUT_OF_RANGE


def test_borrow_moves_to_the_next_tick_within_max_borrow():
    c = clock_at()
    g = gen(c, max_borrow=dt.timedelta(milliseconds=2))
    ids = [g.try_next_id() for _ in range(4096 * 3)]
    assert snowid.decode(ids[-1]).unix_ms == T0_MS + 2
    assert refusal(g.try_next_id).code is Code.SEQUENCE_EXHAUSTED
    assert ids == sorted(set(ids))
    assert g.stats.borrowed_ticks == 2


def test_wait_until_inside_a_tick_starts_at_the_next_tick():
    c = clock_at()
    g = gen(c, wait_until_ns=T0_MS * MS + 1)
    e = refusal(g.try_next_id)
    assert e.code is Code.CLOCK_BEHIND
    assert abs(e.retry_after - 0.001) < 1e-12
    assert snowid.decode(g.next_id()).unix_ms == T0_MS + 1


def test_wait_until_further_than_max_wait_is_given_up_at_once():
    c = clock_at()
    g = gen(c, wait_until_ns=(T0_MS + 1000) * MS)
    assert refusal(g.next_id).code is Code.CLOCK_BEHIND
    assert c.sleeps == []


def test_lease_guard_deadline_and_mark_are_exact_boundaries():
    c = clock_at()
    guard = LeaseGuard()
    g = gen(c, lease=guard)
    assert refusal(g.try_next_id).code is Code.LEASE_UNCERTAIN
    guard.extend(c.mono_ns() + 5 * MS, (T0_MS + 2) * MS)
    assert snowid.decode(g.next_id()).unix_ms == T0_MS
    c.advance(2 * MS)  # the tick that starts exactly at the mark is allowed
    assert snowid.decode(g.next_id()).unix_ms == T0_MS + 2
    c.advance(MS)  # past the mark
    e = refusal(g.next_id)
    assert e.code is Code.LEASE_UNCERTAIN and e.retryable
    guard.extend(c.mono_ns() + 2 * MS, (T0_MS + 100) * MS)
    assert snowid.decode(g.next_id()).unix_ms == T0_MS + 3
    c.advance(2 * MS)  # exactly at the deadline: refused
    assert refusal(g.next_id).code is Code.LEASE_UNCERTAIN
    guard.mark_lost()
    e = refusal(g.next_id)
    assert e.code is Code.LEASE_LOST and not e.retryable
    assert g.stats.lease_refusals == 4


def test_reserve_and_next_ids_are_consecutive_and_stay_in_one_tick_per_reserve():
    c = clock_at()
    g = gen(c)
    r = g.reserve(100)
    assert len(r) == 100 and snowid.decode(r[-1]).sequence == 99
    rest = g.reserve(10_000)
    assert len(rest) == 4096 - 100 and rest[0] == r[-1] + 1
    ids = g.next_ids(5000)
    assert len(ids) == 5000 and ids == sorted(set(ids)) and ids[0] > rest[-1]
    assert snowid.decode(ids[-1]).unix_ms == T0_MS + 2
    with pytest.raises(SnowidError) as e:
        g.reserve(0)
    assert e.value.code is Code.INVALID_ARGUMENT


def test_closed_generator_refuses_with_failed_precondition():
    g = gen(clock_at())
    g.close()
    assert refusal(g.next_id).code is Code.FAILED_PRECONDITION


def test_option_bounds_are_checked():
    c = clock_at()
    for kw in (
        {"max_backward": dt.timedelta(hours=2)},
        {"max_borrow": dt.timedelta(seconds=2)},
        {"random_start_bound": 1025},
        {"fence_window": dt.timedelta(milliseconds=5)},
        {"max_wait": dt.timedelta(seconds=-1)},
        {"region": 4},
        {"host": 256},
        {"layout": snowid.TWITTER},
    ):
        with pytest.raises(SnowidError) as e:
            Generator(clock=c, **kw)
        assert e.value.code is Code.INVALID_ARGUMENT, kw


# --- the fence ------------------------------------------------------------------


def test_fence_is_written_a_window_ahead_and_close_records_the_last_tick(tmp_path):
    path = str(tmp_path / "fence")
    c = clock_at()
    g = gen(c, fence=path)
    g.next_id()
    assert FenceFile(path).load() == T0_MS + 1000
    c.advance(500 * MS)
    g.next_id()
    assert g.stats.fence_writes == 1
    c.advance(600 * MS)
    g.next_id()
    assert FenceFile(path).load() == T0_MS + 2100 and g.stats.fence_writes == 2
    g.close()
    assert FenceFile(path).load() == T0_MS + 1100
    assert not os.path.exists(path + ".tmp")


def test_restart_behind_the_fence_within_the_window_waits_past_it(tmp_path):
    path = str(tmp_path / "fence")
    c = clock_at()
    g = gen(c, fence=path)
    last = g.next_id()
    # A crash: no close(). The fence is 1 s ahead of the last id.
    c.step_wall(-50 * MS)
    g2 = gen(c, fence=path, max_wait=dt.timedelta(seconds=2))
    e = refusal(g2.try_next_id)
    assert e.code is Code.CLOCK_BEHIND
    nxt = g2.next_id()
    assert nxt > last and snowid.decode(nxt).unix_ms == T0_MS + 1001


def test_restart_far_behind_the_fence_fails_with_failed_precondition(tmp_path):
    path = str(tmp_path / "fence")
    c = clock_at()
    gen(c, fence=path).next_id()
    # The fence is 1 s ahead of the last id; the clock may be behind it by the
    # window plus max_backward (1.1 s), here 1.101 s.
    c.step_wall(-101 * MS)
    with pytest.raises(SnowidError) as e:
        gen(c, fence=path)
    assert e.value.code is Code.FAILED_PRECONDITION and not e.value.retryable
    c.advance(MS)  # back within window + max_backward: the restart waits instead
    gen(c, fence=path)


def test_unreadable_fence_is_data_loss(tmp_path):
    path = tmp_path / "fence"
    path.write_bytes(b"snowid-fence 1 12x\n")
    with pytest.raises(SnowidError) as e:
        gen(clock_at(), fence=str(path))
    assert e.value.code is Code.DATA_LOSS


class FailingStore:
    def __init__(self) -> None:
        self.value: int | None = None
        self.fail = False

    def load(self) -> int | None:
        return self.value

    def store(self, unix_ms: int) -> None:
        if self.fail:
            raise snowid.Unavailable("disk full")
        self.value = unix_ms


def test_fence_write_failure_is_unavailable_and_nothing_passes_the_old_fence():
    store = FailingStore()
    c = clock_at()
    g = gen(c, fence=store)
    g.next_id()
    store.fail = True
    c.advance(999 * MS)
    assert snowid.decode(g.next_id()).unix_ms == T0_MS + 999  # still inside the fence
    c.advance(2 * MS)
    e = refusal(g.next_id)
    assert e.code is Code.UNAVAILABLE and e.retryable
    assert store.value == T0_MS + 1000 and g.stats.fence_write_failures == 1
    store.fail = False
    assert snowid.decode(g.next_id()).unix_ms == T0_MS + 1001


def test_threads_on_the_real_clock_never_repeat_and_each_sees_increasing_ids():
    g = Generator(region=1, host=3)
    per_thread: list[list[int]] = [[] for _ in range(4)]

    def work(out: list[int]) -> None:
        for i in range(20_000):
            if i % 3 == 0:
                out.extend(g.reserve(7))
            else:
                out.append(g.next_id())

    threads = [threading.Thread(target=work, args=(out,)) for out in per_thread]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for out in per_thread for i in out]
    assert len(every) == len(set(every))
    for out in per_thread:
        assert out == sorted(out)
        assert all(snowid.decode(i).worker == 1 * 256 + 3 for i in out[:100])
