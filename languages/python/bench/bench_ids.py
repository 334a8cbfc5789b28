#!/usr/bin/env python3
"""Prints what an id costs: snowid's Generator beside snowflake-id, in one run.

    python bench/bench_ids.py [--seconds S] [--socket PATH]

Figures are wall-clock ns per id, the median of 5 repetitions, on the system
clock. Targets: next_id() at most 2 us, batches at most 100 ns per id.
``--socket`` adds a snowidd sidecar round trip. This prints figures; it
asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import snowid  # noqa: E402
from snowid.lease_guard import LeaseGuard  # noqa: E402

REPS = 5


def per_id(fn, ids_per_call: int, seconds: float) -> float:
    """Median over REPS of ns per id, calling fn for about seconds / REPS each."""
    results = []
    for _ in range(REPS):
        calls = 0
        start = time.perf_counter_ns()
        stop = start + int(seconds / REPS * 1e9)
        now = start
        while now < stop:
            for _ in range(100):
                fn()
            calls += 100
            now = time.perf_counter_ns()
        results.append((now - start) / (calls * ids_per_call))
    return statistics.median(results)


def per_id_fresh_tick(fn, n: int, seconds: float) -> float:
    """ns per id of calls that each start in a tick of their own: what one
    batch call costs, without the wait for the next millisecond (a worker
    issues at most 4,096 ids per ms, so back-to-back batches wait on the clock)."""
    results = []
    for _ in range(REPS):
        total = 0
        calls = 0
        stop = time.monotonic() + seconds / REPS
        while time.monotonic() < stop:
            ms = time.time_ns() // 1_000_000
            while time.time_ns() // 1_000_000 == ms:
                pass
            t0 = time.perf_counter_ns()
            fn()
            total += time.perf_counter_ns() - t0
            calls += 1
        results.append(total / (calls * n))
    return statistics.median(results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="per row (default 1)")
    parser.add_argument("--socket", help="a snowidd socket to add a sidecar row")
    args = parser.parse_args()
    s = args.seconds
    rows: list[tuple[str, float, str]] = []

    g = snowid.Generator(region=1, host=2)
    rows.append(("snowid Generator.next_id()", per_id(g.next_id, 1, s), "<= 2000"))
    guard = LeaseGuard()
    guard.extend(time.monotonic_ns() + 3600 * 10**9, time.time_ns() + 3600 * 10**9)
    gl = snowid.Generator(region=1, host=3, lease=guard)
    rows.append(("snowid next_id() with a lease guard", per_id(gl.next_id, 1, s), "<= 2000"))
    for n in (100, 1000, 4000):
        gb = snowid.Generator(region=1, host=4)
        rows.append(
            (
                f"snowid next_ids({n}), one tick per call",
                per_id_fresh_tick(lambda gb=gb, n=n: gb.next_ids(n), n, s),
                "<= 100",
            )
        )
    gr = snowid.Generator(region=1, host=5)
    rows.append(
        (
            "snowid reserve(4000) as a range, one tick",
            per_id_fresh_tick(lambda: gr.reserve(4000), 4000, s),
            "<= 100",
        )
    )
    gs = snowid.Generator(region=1, host=6)
    rows.append(
        (
            "snowid next_ids(1000) back to back",
            per_id(lambda: gs.next_ids(1000), 1000, s),
            "(clock-bound: 244)",
        )
    )

    try:
        from snowflake import SnowflakeGenerator  # snowflake-id
    except ImportError:
        print("snowflake-id is not installed (requirements-dev.txt pins it)", file=sys.stderr)
        return 1
    peer = SnowflakeGenerator(42)
    rows.append(
        ("snowflake-id 1.0.2 next(SnowflakeGenerator)", per_id(lambda: next(peer), 1, s), "peer")
    )

    if args.socket:
        with snowid.Sidecar(args.socket) as sc:
            rows.append(
                ("snowidd sidecar next_id() (RESP, Unix socket)", per_id(sc.next_id, 1, s), "")
            )
            rows.append(
                ("snowidd sidecar next_ids(1000)", per_id(lambda: sc.next_ids(1000), 1000, s), "")
            )

    print(
        f"Python {platform.python_version()} on {platform.machine()}, "
        f"load average {os.getloadavg()[0]:.2f}; median of {REPS} runs"
    )
    width = max(len(r[0]) for r in rows)
    print(f"{'what':<{width}}  {'ns per id':>10}  target")
    for name, ns, target in rows:
        print(f"{name:<{width}}  {ns:>10.1f}  {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
