"""The harness's driver for snowidd: it runs one real daemon on etcd and speaks RESP to it.

The daemon is the holder: `start` answers with its pid, which the harness stops and kills. Its
wall clock is offset through libfaketime, which reads the offset from a file on every clock
read; the monotonic clock stays real. The daemon exposes no setting for its etcd request
timeout, its renewal retry or its re-acquire back-off, so `start` ignores those members of
`timing` and lists them in its reply.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

RETRYABLE = {"CLOCK_BEHIND", "SEQUENCE_EXHAUSTED", "LEASE_UNCERTAIN", "UNAVAILABLE"}
FLAGS = {
    "ttl_ms": "--lease-ttl",
    "renew_ms": "--lease-renew",
    "stop_ms": "--lease-stop",
    "quarantine_ms": "--quarantine",
    "max_clock_skew_ms": "--max-clock-skew",
}
MAX_BATCH = 10000


def error(code, message, retryable=None):
    if retryable is None:
        retryable = code in RETRYABLE
    return {"ok": False, "code": code, "retryable": retryable, "message": message}


class Resp:
    """A RESP2 connection: commands out, replies in (bulk strings, arrays, errors)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(path)
        self.file = self.sock.makefile("rb")

    def command(self, *args):
        out = f"*{len(args)}\r\n"
        for a in args:
            a = str(a)
            out += f"${len(a.encode())}\r\n{a}\r\n"
        self.sock.sendall(out.encode())
        return self._read()

    def _read(self):
        line = self.file.readline()
        if not line:
            raise OSError("connection closed")
        kind, rest = line[:1], line[1:-2].decode()
        if kind == b"+":
            return rest
        if kind == b"-":
            return RespError(rest)
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)
            return data[:-2].decode()
        if kind == b"*":
            return [self._read() for _ in range(int(rest))]
        raise OSError(f"unexpected RESP reply {line!r}")

    def close(self):
        self.sock.close()


class RespError:
    def __init__(self, text):
        self.word, _, self.message = text.partition(" ")


class Daemon:
    def __init__(self, snowidd, libfaketime):
        self.snowidd = snowidd
        self.libfaketime = libfaketime
        self.dir = tempfile.mkdtemp(prefix="snowid-polyglot-d-")
        self.clock_file = os.path.join(self.dir, "faketime.rc")
        self.socket = os.path.join(self.dir, "s.sock")
        self.log = os.path.join(self.dir, "snowidd.log")
        self.proc = None
        self.conn = None

    def set_offset(self, ms):
        tmp = self.clock_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{ms / 1000:+.3f}\n")
        os.replace(tmp, self.clock_file)

    def start(self, req):
        self.set_offset(int(req.get("clock_offset_ms", 0)))
        argv = [
            self.snowidd,
            "--etcd",
            ",".join(req["endpoints"]),
            "--region",
            str(req.get("region", 0)),
            "--socket",
            self.socket,
            "--http",
            "off",
            "--state-dir",
            os.path.join(self.dir, "state"),
            "--sequences",
            "off",
        ]
        for name, flag in (("prefix", "--etcd-prefix"), ("cluster", "--etcd-cluster")):
            if req.get(name):
                argv += [flag, req[name]]
        if req.get("host") is not None:
            argv += ["--host", str(req["host"])]
        timing = req.get("timing", {})
        ignored = []
        for name, value in timing.items():
            if name in FLAGS:
                argv += [FLAGS[name], f"{int(value)}ms"]
            else:
                ignored.append(name)
        if req.get("options"):
            return error("INVALID_ARGUMENT", f"snowidd takes no options: {req['options']}")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SNOWID_")}
        env.update(
            {
                "LD_PRELOAD": self.libfaketime,
                "FAKETIME_TIMESTAMP_FILE": self.clock_file,
                "FAKETIME_NO_CACHE": "1",
                "FAKETIME_DONT_FAKE_MONOTONIC": "1",
            }
        )
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for entry in self.log_entries():
                if entry.get("msg") == "ready":
                    return self.started(ignored)
                if entry.get("msg") == "start failed":
                    self.proc.wait(10)
                    return error(entry.get("code", "UNAVAILABLE"), entry.get("error", ""))
            if self.proc.poll() is not None:
                return error("UNAVAILABLE", f"snowidd exited with {self.proc.returncode}")
            time.sleep(0.02)
        return error("UNAVAILABLE", "snowidd not ready within 60 s")

    def started(self, ignored):
        self.conn = Resp(self.socket)
        info = self.info()
        reply = {
            "ok": True,
            "worker": [int(info["region"]), int(info["host"])],
            "pid": self.proc.pid,
        }
        if ignored:
            reply["ignored"] = sorted(ignored)
        return reply

    def log_entries(self):
        try:
            with open(self.log, "rb") as f:
                lines = f.read().splitlines()
        except OSError:
            return []
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    def info(self):
        text = self.conn.command("INFO")
        if isinstance(text, RespError):
            raise OSError(f"INFO refused: {text.word} {text.message}")
        fields = {}
        for line in text.splitlines():
            key, sep, value = line.partition(":")
            if sep and not line.startswith("#"):
                fields[key] = value
        return fields

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def next(self, count):
        ids = []
        while len(ids) < count:
            reply = self.conn.command("NEXTIDS", min(MAX_BATCH, count - len(ids)))
            if isinstance(reply, RespError):
                code = "INVALID_ARGUMENT" if reply.word == "ERR" else reply.word
                out = error(code, reply.message, "retry after" in reply.message or None)
                out["ids"] = ids
                return out
            ids += reply
        return {"ok": True, "ids": ids}

    def state(self):
        info = self.info()
        return {
            "ok": True,
            "state": info["lease_state"].upper(),
            "ready": info["ready"] == "1",
            "healthy": info["healthy"] == "1",
            "worker": [int(info["region"]), int(info["host"])],
            "reacquisitions": int(info["lease_reacquisitions"]),
            "wall_ms": int(info["server_time_usec"]) // 1000,
        }

    def close(self):
        if self.conn:
            self.conn.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return error("UNAVAILABLE", "snowidd did not stop within 20 s of SIGTERM")
            rc = self.proc.returncode
            return {"ok": True} if rc == 0 else error("UNAVAILABLE", f"snowidd exited with {rc}")
        return error("FAILED_PRECONDITION", f"snowidd had exited ({self.proc.returncode})", False)


def handle(daemon, req):
    op = req.get("op")
    if op == "start":
        if daemon.proc is not None:
            return error("FAILED_PRECONDITION", "already started")
        return daemon.start(req)
    if op == "clock":
        daemon.set_offset(int(req["offset_ms"]))
        return {"ok": True}
    if daemon.proc is None:
        return error("FAILED_PRECONDITION", "not started")
    if op == "close":
        return daemon.close()
    if not daemon.alive():
        return error("UNAVAILABLE", f"snowidd is not running ({daemon.proc.returncode})")
    if op == "next":
        count = req.get("count", 1)
        if not isinstance(count, int) or not 1 <= count <= 100000:
            return error("INVALID_ARGUMENT", "count must be 1 to 100000")
        return daemon.next(count)
    if op == "state":
        return daemon.state()
    return error("INVALID_ARGUMENT", f"unknown op {op!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--snowidd", required=True)
    ap.add_argument("--libfaketime", required=True)
    args = ap.parse_args()
    daemon = Daemon(args.snowidd, args.libfaketime)
    for line in sys.stdin:
        try:
            req = json.loads(line)
            reply = handle(daemon, req) if isinstance(req, dict) else None
            if reply is None:
                reply = error("INVALID_ARGUMENT", "a request is a JSON object")
        except (ValueError, KeyError, TypeError) as e:
            req, reply = {}, error("INVALID_ARGUMENT", f"bad request: {e}")
        except OSError as e:
            reply = error("UNAVAILABLE", f"snowidd: {e}")
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if isinstance(req, dict) and req.get("op") == "close":
            break
    if daemon.alive():
        daemon.close()
    # The daemon's log goes to the harness's log of this driver.
    try:
        with open(daemon.log, "rb") as f:
            sys.stderr.buffer.write(f.read())
    except OSError:
        pass
    shutil.rmtree(daemon.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
