"""A client of the snowidd sidecar: RESP over its Unix socket (or TCP).

Ids arrive as bulk strings of decimal digits (the daemon's default) and are
returned as ints. Errors keep the daemon's first word as the code: the same
codes and retryability as everywhere else in this package.
"""

from __future__ import annotations

import os
import re
import socket
import threading
from typing import Any

from .errors import (
    Code,
    FailedPrecondition,
    InvalidArgument,
    SnowidError,
    Unavailable,
    error_for,
)
from .text import parse_id

_RETRY = re.compile(r"; retry after (\d+)ms$")
_MAX_LINE = 64 * 1024
_MAX_BULK = 64 * 1024 * 1024
_MAX_DEPTH = 8


def default_socket_path(environ: Any = os.environ) -> str:
    """The socket snowidd listens on by default (SNOWID_SOCKET overrides it)."""
    if environ.get("SNOWID_SOCKET"):
        return environ["SNOWID_SOCKET"]
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "snowid", "snowidd.sock")
    if os.geteuid() == 0:
        return "/run/snowid/snowidd.sock"
    return f"/tmp/snowid-{os.geteuid()}/snowidd.sock"


def error_of_reply(text: str) -> SnowidError:
    """The exception for a RESP error line ``WORD message[; retry after Nms]``."""
    word, _, message = text.partition(" ")
    retry_after = None
    m = _RETRY.search(message)
    if m:
        retry_after = int(m.group(1)) / 1000
        message = message[: m.start()]
    try:
        code = Code[word]
    except KeyError:
        code = None
    if code is None or code is Code.OK:
        if word == "ERR":
            return InvalidArgument(f"snowidd: {message}")
        return FailedPrecondition(f"snowidd {word}: {message}")
    return error_for(code, f"snowidd: {message}", retry_after=retry_after)


class Sidecar:
    """One connection to snowidd; thread-safe (calls take turns on it).

    ``Sidecar()`` connects to the default socket; ``Sidecar(path)`` to another;
    ``Sidecar(host=..., port=...)`` over TCP (``token`` for its AUTH)."""

    def __init__(
        self,
        path: str | None = None,
        *,
        host: str | None = None,
        port: int | None = None,
        token: str | None = None,
        timeout: float = 2.0,
    ) -> None:
        self._lock = threading.Lock()
        try:
            if host is not None:
                if port is None:
                    raise InvalidArgument("a TCP sidecar needs a port")
                self._sock = socket.create_connection((host, port), timeout=timeout)
                self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.address = f"{host}:{port}"
            else:
                self.address = path or default_socket_path()
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self._sock.settimeout(timeout)
                self._sock.connect(self.address)
        except OSError as e:
            raise Unavailable(f"cannot reach snowidd at {path or host}: {e}") from None
        self._file = self._sock.makefile("rb")
        if token is not None:
            self._command(b"AUTH", token.encode())

    # --- the protocol ---------------------------------------------------------

    def _command(self, *args: bytes) -> Any:
        frame = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)
        with self._lock:
            try:
                self._sock.sendall(frame)
                reply = self._read()
            except OSError as e:
                raise Unavailable(f"snowidd at {self.address}: {e}") from None
        if isinstance(reply, SnowidError):
            raise reply
        return reply

    def _line(self) -> bytes:
        line = self._file.readline(_MAX_LINE)
        if not line.endswith(b"\r\n"):
            raise Unavailable(f"snowidd at {self.address} closed the connection or sent garbage")
        return line[:-2]

    @staticmethod
    def _number(rest: bytes) -> int:
        if not re.fullmatch(rb"-?[0-9]{1,20}", rest):
            raise Unavailable(f"snowidd sent {rest[:24]!r} where a RESP number was expected")
        return int(rest)

    def _read(self, depth: int = 0) -> Any:
        """One RESP2 reply; anything malformed is UNAVAILABLE (the connection is
        then of no further use)."""
        if depth > _MAX_DEPTH:
            raise Unavailable("snowidd sent replies nested too deep")
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode("utf-8", "replace")
        if kind == b"-":
            return error_of_reply(rest.decode("utf-8", "replace"))
        if kind == b":":
            return self._number(rest)
        if kind == b"$":
            n = self._number(rest)
            if n < 0:
                return None
            if n > _MAX_BULK:
                raise Unavailable("snowidd sent a bulk string too large")
            data = self._file.read(n + 2)
            if len(data) != n + 2 or not data.endswith(b"\r\n"):
                raise Unavailable("snowidd sent a truncated bulk string")
            return data[:-2]
        if kind == b"*":
            n = self._number(rest)
            return None if n < 0 else [self._read(depth + 1) for _ in range(n)]
        raise Unavailable(f"snowidd sent an unknown RESP type {kind!r}")

    @staticmethod
    def _id(value: Any) -> int:
        if isinstance(value, int):
            return value
        if isinstance(value, bytes):
            return parse_id(value)
        raise Unavailable(f"snowidd sent {value!r} where an id was expected")

    # --- commands -------------------------------------------------------------

    def ping(self) -> str:
        return str(self._command(b"PING"))

    def next_id(self) -> int:
        return self._id(self._command(b"NEXTID"))

    def next_ids(self, n: int) -> list[int]:
        """``n`` increasing ids (1 <= n <= the daemon's max_batch)."""
        if not isinstance(n, int) or n < 1:
            raise InvalidArgument(f"a batch is at least 1 id, not {n!r}")
        reply = self._command(b"NEXTIDS", str(n).encode())
        if not isinstance(reply, list):
            raise Unavailable("snowidd sent no array for NEXTIDS")
        return [self._id(v) for v in reply]

    def decode(self, id: int) -> dict[str, Any]:
        """The daemon's DECODE: id, time, unix_ms, ticks and each field by name."""
        reply = self._command(b"DECODE", str(id).encode())
        if not isinstance(reply, list) or len(reply) % 2:
            raise Unavailable("snowidd sent no map for DECODE")
        out: dict[str, Any] = {}
        for k, v in zip(reply[::2], reply[1::2], strict=True):
            key = k.decode() if isinstance(k, bytes) else str(k)
            out[key] = v.decode() if isinstance(v, bytes) else v
        out["id"] = int(out["id"])
        return out

    def close(self) -> None:
        try:
            self._file.close()
        finally:
            self._sock.close()

    def __enter__(self) -> Sidecar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
