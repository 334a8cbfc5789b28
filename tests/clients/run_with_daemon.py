#!/usr/bin/env python3
"""Runs one client program against a real snowidd of its own.

    run_with_daemon.py --snowidd PATH --name NAME [--snowid PATH] [--timeout S]
                       -- PROGRAM [ARGS...]

Starts snowidd with a fresh state directory, a socket in a temporary
directory, RESP over TCP on a kernel-chosen port of 127.0.0.1, no HTTP, no
sequences, and the worker id pinned to region 1, host 7. With --snowid (the
snowid tool), it first makes a public-id keyring with `snowid public-id
keygen`, and the daemon serves public ids with it. Once the daemon has
logged "ready" the program runs with these variables set:

    SNOWIDD_SOCKET      path of the Unix socket
    SNOWIDD_TCP_HOST    127.0.0.1
    SNOWIDD_TCP_PORT    the TCP port
    SNOWIDD_REGION      the pinned region (1)
    SNOWIDD_HOST        the pinned host (7)
    SNOWIDD_PUBLIC_IDS  "1" when the daemon has a keyring (--snowid)

Then the daemon gets SIGTERM. The run fails (exit 1) if the daemon does not
get ready, the program exits non-zero or times out, or the daemon does not
exit 0; the daemon's log is printed on failure.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

REGION = 1
HOST = 7


class DaemonLog:
    """Collects the daemon's stderr lines and wakes waiters on each one."""

    def __init__(self, stream):
        self.lines = []
        self.cond = threading.Condition()
        self.closed = False
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for raw in stream:
            with self.cond:
                self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def records(self):
        out = []
        for line in self.lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                out.append(record)
        return out

    def wait_for(self, msgs, timeout):
        """The first record whose msg is in msgs, or None at EOF or timeout."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for record in self.records():
                    if record.get("msg") in msgs:
                        return record
                remaining = deadline - time.monotonic()
                if self.closed or remaining <= 0:
                    return None
                self.cond.wait(remaining)

    def text(self):
        with self.cond:
            return "\n".join(self.lines)


def daemon_environment(host_lock):
    # The daemon reads SNOWID_* as settings: none may leak in from the caller.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNOWID_")}
    env["SNOWID_HOST_LOCK"] = host_lock
    return env


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snowidd", required=True, help="path of the snowidd binary")
    parser.add_argument("--name", required=True, help="test name, for the host lock")
    parser.add_argument("--snowid", help="path of the snowid tool: serve public ids")
    parser.add_argument("--timeout", type=float, default=120, help="seconds for the program")
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        parser.error("no program to run")

    work = tempfile.mkdtemp(prefix="snowid-client-")
    try:
        return run(args, program, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, program, work):
    socket_path = os.path.join(work, "snowidd.sock")
    state_dir = os.path.join(work, "state")
    os.mkdir(state_dir)
    argv = [
        args.snowidd,
        "--socket", socket_path,
        "--tcp", "127.0.0.1:0",
        "--http", "off",
        "--sequences", "off",
        "--state-dir", state_dir,
        "--region", str(REGION),
        "--host", str(HOST),
    ]
    if args.snowid:
        keys = os.path.join(work, "public-id.keys")
        made = subprocess.run(
            [args.snowid, "public-id", "keygen", "--not-before", "2026-01-01T00:00:00Z",
             "--keys", keys],
            stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if made.returncode != 0:
            print("FAIL: snowid public-id keygen exited %d: %s" % (made.returncode, made.stderr),
                  file=sys.stderr)
            return 1
        argv += ["--public-id-keys", keys]
    host_lock = "snowid-clients-%s-%d" % (args.name, os.getpid())
    try:
        daemon = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, env=daemon_environment(host_lock))
    except OSError as e:
        print("FAIL: cannot start %s: %s" % (args.snowidd, e), file=sys.stderr)
        return 1
    log = DaemonLog(daemon.stderr)
    failures = []
    try:
        ready = log.wait_for({"ready", "start failed", "stopped"}, timeout=30)
        if ready is None or ready.get("msg") != "ready":
            failures.append("snowidd did not log \"ready\" (got %r)" % (ready,))
            return report(failures, log)
        tcp = [r for r in log.records()
               if r.get("msg") == "listening" and r.get("transport") == "tcp"]
        if not tcp or ":" not in tcp[0].get("address", ""):
            failures.append("snowidd logged no TCP listener")
            return report(failures, log)
        port = tcp[0]["address"].rsplit(":", 1)[1]

        env = dict(os.environ)
        env.update({
            "SNOWIDD_SOCKET": socket_path,
            "SNOWIDD_TCP_HOST": "127.0.0.1",
            "SNOWIDD_TCP_PORT": port,
            "SNOWIDD_REGION": str(REGION),
            "SNOWIDD_HOST": str(HOST),
        })
        if args.snowid:
            env["SNOWIDD_PUBLIC_IDS"] = "1"
        started = time.monotonic()
        try:
            result = subprocess.run(program, env=env, stdin=subprocess.DEVNULL,
                                    timeout=args.timeout)
            if result.returncode != 0:
                failures.append("%s exited %d" % (program[0], result.returncode))
        except subprocess.TimeoutExpired:
            failures.append("%s did not finish in %gs" % (program[0], args.timeout))
        except OSError as e:
            failures.append("cannot run %s: %s" % (program[0], e))
        print("client ran %.2fs" % (time.monotonic() - started))
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
        try:
            code = daemon.wait(timeout=20)
            if code != 0:
                failures.append("snowidd exited %d after SIGTERM, not 0" % code)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
            failures.append("snowidd did not stop within 20s of SIGTERM")
        log.thread.join(timeout=5)
    return report(failures, log)


def report(failures, log):
    if not failures:
        return 0
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    print("---- snowidd stderr ----\n%s\n---- end of snowidd stderr ----" % log.text(),
          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
