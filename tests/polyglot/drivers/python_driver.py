"""The harness's driver for the Python library: one snowid.LeasedGenerator on etcd.

It speaks the driver protocol of README.md on stdin and stdout. The generator runs on an
OffsetClock, a snowid.Clock whose wall time is the system's plus an offset that `clock` sets;
its monotonic time is the system's. Every timing member has a setting in the library, so none
is ignored. The holder is this process.
"""

import datetime as dt
import json
import os
import sys
import time

import snowid

MS = dt.timedelta(milliseconds=1)
MAX_COUNT = 100_000


class OffsetClock:
    """A snowid.Clock: the system's wall clock shifted by `offset_ns`, the real monotonic one."""

    def __init__(self):
        self.offset_ns = 0

    def wall_ns(self):
        return time.time_ns() + self.offset_ns

    mono_ns = staticmethod(time.monotonic_ns)

    @staticmethod
    def sleep_ns(ns):
        if ns > 0:
            time.sleep(ns / 1e9)


class BadRequest(Exception):
    pass


def refusal(code, message, retryable):
    return {"ok": False, "code": code, "retryable": retryable, "message": message}


def error_reply(e):
    return refusal(e.code.name, e.message, e.retryable)


def bad(message):
    return refusal("INVALID_ARGUMENT", message, False)


# Timing members of the protocol: (LeaseTiming field, None) or (None, LeasedGenerator argument).
TIMING = {
    "ttl_ms": ("ttl", None),
    "renew_ms": ("renew_every", None),
    "stop_ms": ("stop_after", None),
    "max_clock_skew_ms": ("max_clock_skew", None),
    "quarantine_ms": (None, "quarantine"),
    "request_timeout_ms": (None, "request_timeout"),
    "retry_ms": (None, "retry_every"),
    "reacquire_ms": (None, "reacquire_every"),
}


def integer(obj, name, default=None, required=False):
    value = obj.get(name, default)
    if value is None and not required:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadRequest(f"{name} must be an integer, not {value!r}")
    return value


def settings(req):
    """LeasedGenerator keyword arguments from a start request, and the timing members ignored."""
    endpoints = req.get("endpoints")
    if not isinstance(endpoints, list) or not all(isinstance(e, str) for e in endpoints):
        raise BadRequest("endpoints must be an array of URLs")
    timing = req.get("timing", {})
    options = req.get("options", {})
    if not isinstance(timing, dict) or not isinstance(options, dict):
        raise BadRequest("timing and options must be objects")
    if options:
        raise BadRequest(f"the Python driver takes no options: {sorted(options)}")
    out = {"etcd": endpoints, "region": integer(req, "region", 0), "host": integer(req, "host")}
    for name in ("prefix", "cluster"):
        if req.get(name) is not None:
            out[name] = req[name]
    lease = {}
    for name in timing:
        value = integer(timing, name)
        if name in TIMING and value is not None:
            field, arg = TIMING[name]
            if field:
                lease[field] = value * MS
            else:
                out[arg] = value * MS
    out["timing"] = snowid.LeaseTiming(**lease)
    return out, sorted(set(timing) - set(TIMING))


def log_event(what, status):
    print(f"event: {what}" + (f" ({status})" if status else ""), file=sys.stderr, flush=True)


class Driver:
    def __init__(self):
        self.clock = OffsetClock()
        self.gen = None

    def handle(self, req):
        op = req.get("op")
        if op == "start":
            return self.start(req)
        if op == "clock":
            self.clock.offset_ns = integer(req, "offset_ms", required=True) * 1_000_000
            return {"ok": True}
        if op not in ("next", "state", "close"):
            return bad(f"unknown op {op!r}")
        if self.gen is None:
            return refusal("FAILED_PRECONDITION", "not started", False)
        return getattr(self, op)(req)

    def start(self, req):
        if self.gen is not None:
            return refusal("FAILED_PRECONDITION", "already started", False)
        kwargs, ignored = settings(req)
        self.clock.offset_ns = integer(req, "clock_offset_ms", 0, required=True) * 1_000_000
        try:
            self.gen = snowid.LeasedGenerator(clock=self.clock, on_event=log_event, **kwargs)
        except snowid.SnowidError as e:
            return error_reply(e)
        reply = {"ok": True, "worker": list(self.gen.worker), "pid": os.getpid()}
        if ignored:
            reply["ignored"] = ignored
        return reply

    def next(self, req):
        count = integer(req, "count", 1, required=True)
        if not 1 <= count <= MAX_COUNT:
            return bad(f"count must be 1 to {MAX_COUNT}")
        # reserve() waits as next_id() does; a loop of it keeps the ids issued before a refusal,
        # which next_ids() would drop with its exception.
        ids = []
        while len(ids) < count:
            try:
                batch = self.gen.reserve(count - len(ids))
            except snowid.SnowidError as e:
                return {**error_reply(e), "ids": ids}
            ids.extend(str(i) for i in batch)
        return {"ok": True, "ids": ids}

    def state(self, req):
        g = self.gen
        return {
            "ok": True,
            "state": g.lease_state.value,
            "ready": g.ready,
            "healthy": g.healthy,
            "worker": list(g.worker),
            "reacquisitions": g.reacquisitions,
            "wall_ms": self.clock.wall_ns() // 1_000_000,
        }

    def close(self, req):
        try:
            self.gen.close()
        except snowid.SnowidError as e:
            return error_reply(e)
        return {"ok": True}


def main():
    driver = Driver()
    for line in sys.stdin:
        req = None
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise BadRequest("a request is a JSON object")
            reply = driver.handle(req)
        except (ValueError, BadRequest) as e:
            reply = bad(f"bad request: {e}")
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if isinstance(req, dict) and req.get("op") == "close":
            break
    if driver.gen is not None:
        try:
            driver.gen.close()
        except snowid.SnowidError as e:
            log_event("close at the end of input failed", e)


if __name__ == "__main__":
    main()
