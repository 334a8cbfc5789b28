#!/usr/bin/env python3
"""redis-cli and redis-benchmark against snowidd.

    redis_tools_client.py cli --redis-cli PATH
    redis_tools_client.py benchmark --redis-cli PATH --redis-benchmark PATH

Run by run_with_daemon.py, which sets SNOWIDD_SOCKET, SNOWIDD_TCP_HOST,
SNOWIDD_TCP_PORT, SNOWIDD_REGION and SNOWIDD_HOST.
"""

import argparse
import datetime
import os
import re
import subprocess
import sys
import time

EPOCH_MS = 1767225600000
BENCHMARK_REQUESTS = 100000


def decode_id(id_):
    return {
        "ticks": id_ >> 22,
        "unix_ms": (id_ >> 22) + EPOCH_MS,
        "region": (id_ >> 20) & 3,
        "host": (id_ >> 12) & 255,
        "sequence": id_ & 4095,
    }


def tool(argv):
    """The tool's stdout; any failure or output on stderr is an error."""
    result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and not result.stderr.strip(), (
        "%s exited %d: %s%s" % (" ".join(argv), result.returncode, result.stdout, result.stderr))
    assert "ERR" not in result.stdout, "%s: %s" % (" ".join(argv), result.stdout)
    return result.stdout


class Ids:
    """The ids printed, checked against the pinned worker and the run."""

    def __init__(self):
        self.region = int(os.environ["SNOWIDD_REGION"])
        self.host = int(os.environ["SNOWIDD_HOST"])
        self.start_ms = time.time_ns() // 1_000_000
        self.seen = []

    def accept(self, lines):
        now_ms = time.time_ns() // 1_000_000
        ids = []
        for line in lines:
            # --no-raw quotes a bulk string and marks an integer "(integer)":
            # the quotes show the id came as a string.
            m = re.fullmatch(r'(?:\d+\) )?"([1-9][0-9]{0,18})"', line.strip())
            assert m, "not an id sent as a bulk string: %r" % line
            id_ = int(m.group(1))
            d = decode_id(id_)
            assert (d["region"], d["host"]) == (self.region, self.host), "id %d: worker" % id_
            assert self.start_ms <= d["unix_ms"] <= now_ms, "id %d: time %d" % (id_, d["unix_ms"])
            assert not self.seen or id_ > self.seen[-1], "id %d after %d" % (id_, self.seen[-1])
            self.seen.append(id_)
            ids.append(id_)
        return ids


def ids_issued(cli):
    info = tool(cli + ["INFO", "stats"])
    m = re.search(r"^ids_issued:(\d+)\r?$", info, re.M)
    assert m, "INFO stats has no ids_issued:\n" + info
    return int(m.group(1))


def check_cli(redis_cli):
    over_unix = [redis_cli, "-s", os.environ["SNOWIDD_SOCKET"]]
    over_tcp = [redis_cli, "-h", os.environ["SNOWIDD_TCP_HOST"], "-p",
                os.environ["SNOWIDD_TCP_PORT"]]
    ids = Ids()
    for cli in (over_unix, over_tcp):
        # Plain output, as a user's script reads it: the digits alone.
        plain = tool(cli + ["NEXTID"]).strip()
        assert re.fullmatch(r"[1-9][0-9]{0,18}", plain), "redis-cli NEXTID printed %r" % plain
        ids.accept(['"%s"' % plain])
        ids.accept(tool(cli + ["--no-raw", "NEXTID"]).splitlines())
        batch = ids.accept(tool(cli + ["--no-raw", "NEXTIDS", "5"]).splitlines())
        assert len(batch) == 5, "NEXTIDS 5 printed %d ids" % len(batch)

    last = ids.seen[-1]
    lines = tool(over_unix + ["DECODE", str(last)]).splitlines()
    fields = dict(zip(lines[0::2], lines[1::2]))
    assert fields["id"] == str(last), "DECODE: id %r" % fields["id"]
    for name, want in decode_id(last).items():
        assert fields[name] == str(want), "DECODE: %s %r, not %d" % (name, fields[name], want)
    shown = datetime.datetime.fromisoformat(fields["time"].replace("Z", "+00:00"))
    assert round(shown.timestamp() * 1000) == decode_id(last)["unix_ms"], fields["time"]

    issued = ids_issued(over_tcp)
    assert issued == len(ids.seen), "ids_issued %d, %d ids printed" % (issued, len(ids.seen))
    print("%d ids printed by redis-cli, all exact" % len(ids.seen))


def check_benchmark(redis_cli, redis_benchmark):
    cli = [redis_cli, "-s", os.environ["SNOWIDD_SOCKET"]]
    before = ids_issued(cli)
    out = tool([redis_benchmark, "-s", os.environ["SNOWIDD_SOCKET"], "-n",
                str(BENCHMARK_REQUESTS), "-P", "16", "-q", "NEXTID"])
    assert "requests per second" in out, "redis-benchmark printed: %r" % out
    grew = ids_issued(cli) - before
    assert grew == BENCHMARK_REQUESTS, (
        "ids_issued grew by %d during %d NEXTID" % (grew, BENCHMARK_REQUESTS))
    print("redis-benchmark: %s" % out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["cli", "benchmark"])
    parser.add_argument("--redis-cli", required=True)
    parser.add_argument("--redis-benchmark")
    args = parser.parse_args()
    for path in (args.redis_cli, args.redis_benchmark):
        if path is not None and not os.access(path, os.X_OK):
            print("FAIL: %s is missing: run scripts/install-deps (Debian package redis-tools), "
                  "then re-run cmake" % path, file=sys.stderr)
            return 1
    if args.mode == "cli":
        check_cli(args.redis_cli)
    else:
        check_benchmark(args.redis_cli, args.redis_benchmark)
    return 0


if __name__ == "__main__":
    sys.exit(main())
