"""A driver as the harness sees it: a child process spoken to in JSON lines (README.md).

The registry (drivers.json) says how to start each kind. A Driver keeps every id it was given,
in order, with the monotonic time its reply arrived, so that the checks can look at them later.
"""

import array
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class DriverError(Exception):
    pass


def load_registry(bins, path=os.path.join(HERE, "drivers.json")):
    """{kind: argv} of the drivers whose needs are met, and {kind: reason} of the others."""
    with open(path) as f:
        spec = json.load(f)["drivers"]
    usable, missing = {}, {}
    for kind, entry in spec.items():
        lacking = []
        for need in entry.get("needs", []):
            what, _, name = need.partition(":")
            if what == "bin" and not bins.get(name):
                lacking.append(f"--bin {name}=PATH")
            elif what == "path" and not os.path.exists(expand(name, bins)):
                lacking.append(expand(name, bins))
        if lacking:
            missing[kind] = "needs " + ", ".join(lacking)
            continue
        usable[kind] = {
            "argv": [expand(a, bins) for a in entry["command"]],
            "env": {k: expand(v, bins) for k, v in entry.get("env", {}).items()},
        }
    return usable, missing


def expand(text, bins):
    out = text.replace("{python}", sys.executable).replace("{here}", HERE).replace("{root}", ROOT)
    for name, value in bins.items():
        out = out.replace("{bin:" + name + "}", value or "")
    return out


class Driver:
    """One driver process and the holder it starts. `name` is for messages ("cpp#2")."""

    def __init__(self, kind, spec, name, log_dir):
        self.kind = kind
        self.name = name
        # Every id given, in order, and per reply (index past its last id, the worker the
        # driver last reported, the monotonic time the reply came).
        self.ids = array.array("Q")
        self.replies = []
        self.worker = None
        self.holder_pid = None
        self.log_path = os.path.join(log_dir, f"{name.replace('#', '-')}.log")
        env = dict(os.environ)
        env.update(spec["env"])
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            spec["argv"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
        )
        self._lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def request(self, req, timeout=30.0):
        """Sends one request and waits for its reply (a dict)."""
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
        except OSError as e:
            raise DriverError(f"{self.name}: cannot send {req['op']}: {e}") from e
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise DriverError(f"{self.name}: no reply to {req['op']} within {timeout} s") from None
        if line is None:
            raise DriverError(
                f"{self.name}: exited ({self.proc.poll()}) before replying to {req['op']}"
            )
        try:
            reply = json.loads(line)
        except ValueError:
            raise DriverError(f"{self.name}: not a JSON reply to {req['op']}: {line!r}") from None
        if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
            raise DriverError(f"{self.name}: a reply without 'ok': {line!r}")
        return reply

    def start(self, **req):
        reply = self.request({"op": "start", **req}, timeout=60.0)
        if reply["ok"]:
            self.worker = tuple(reply["worker"])
            self.holder_pid = reply.get("pid", self.proc.pid)
        return reply

    def next(self, count):
        reply = self.request({"op": "next", "count": count})
        now = time.monotonic()
        texts = reply.get("ids", [])
        if not isinstance(texts, list) or not all(
            isinstance(t, str) and t.isdigit() for t in texts
        ):
            raise DriverError(f"{self.name}: ids that are not decimal strings: {str(texts)[:200]}")
        if texts:
            self.ids.extend(map(int, texts))
            self.replies.append((len(self.ids), self.worker, now))
        return reply

    def entries(self):
        """(id, worker, receive time) of every id given, in order."""
        begin = 0
        for end, worker, at in self.replies:
            for i in self.ids[begin:end]:
                yield i, worker, at
            begin = end

    def clock(self, offset_ms):
        return self.request({"op": "clock", "offset_ms": offset_ms})

    def state(self):
        reply = self.request({"op": "state"})
        if reply["ok"] and reply.get("worker"):
            self.worker = tuple(reply["worker"])
        return reply

    def close(self, timeout=30.0):
        """Sends `close`; the driver must then exit (README.md), or the scenario stops: a
        driver that lingers would shift every timing measured after it."""
        reply = self.request({"op": "close"}, timeout=timeout)
        if self.wait(10.0) is None:
            raise DriverError(f"{self.name}: still running 10 s after its reply to close")
        return reply

    def signal(self, sig):
        os.kill(self.holder_pid, sig)

    def kill(self, timeout=10.0):
        """SIGKILLs the holder and returns once it is dead (a zombie counts)."""
        os.kill(self.holder_pid, signal.SIGKILL)
        if self.holder_pid == self.proc.pid:
            self.wait(timeout)
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{self.holder_pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        return
            except OSError:
                return
            time.sleep(0.005)
        raise DriverError(f"{self.name}: holder {self.holder_pid} still alive after SIGKILL")

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def end(self):
        """Ends the driver and its holder, whatever state they are in (clean-up)."""
        for pid in {self.holder_pid, self.proc.pid} - {None}:
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            if self.wait(5.0) is None:
                if self.holder_pid and self.holder_pid != self.proc.pid:
                    try:
                        os.kill(self.holder_pid, signal.SIGKILL)
                    except OSError:
                        pass
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def last_id(self):
        return max(self.ids, default=None)
