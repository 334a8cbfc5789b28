"""JSON POSTs to etcd v3's gateway over http.client, with failover between members,
TLS and user/password authentication.

What the gateway does that a reader must expect: 64-bit integers come as JSON
strings; members at their default are left out (no ``succeeded`` on a failed
compare, no ``kvs`` when a range found nothing, no ``TTL`` when a keepalive found
no lease); keys and values are base64. A reply that is not what the gateway
sends is UNAVAILABLE: a garbled or foreign reply is a transport problem.

A request that timed out may still have been applied: callers treat UNAVAILABLE
from a write as an unknown outcome.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import enum
import http.client
import json
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

from ..errors import FailedPrecondition, InvalidArgument, NotFound, Unavailable

MAX_REPLY_BYTES = 64 << 20

GRPC_INVALID_ARGUMENT = 3
GRPC_NOT_FOUND = 5
GRPC_PERMISSION_DENIED = 7
GRPC_FAILED_PRECONDITION = 9
GRPC_UNAUTHENTICATED = 16


def b64(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode("ascii")


def unb64(text: Any) -> bytes:
    """Strict standard base64; a bad one is an unreadable reply."""
    if text is None:
        return b""
    if not isinstance(text, str):
        raise Unavailable("etcd gateway sent bytes that are not a base64 string")
    try:
        out = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise Unavailable("etcd gateway sent bytes that are not base64") from None
    if base64.b64encode(out).decode("ascii") != text:
        raise Unavailable("etcd gateway sent non-canonical base64")
    return out


def int64(obj: dict[str, Any], name: str) -> int:
    """An int64 member, sent as a string or a number; 0 when left out."""
    v = obj.get(name)
    if v is None:
        return 0
    if isinstance(v, bool):
        raise Unavailable(f"etcd gateway sent {name} as a boolean")
    if isinstance(v, str):
        s = v[1:] if v.startswith("-") else v
        if not s or not s.isascii() or not s.isdigit():
            raise Unavailable(f"etcd gateway sent {name} that is not an integer")
        v = int(v)
    if not isinstance(v, int) or not -(2**63) <= v < 2**64:
        raise Unavailable(f"etcd gateway sent {name} out of range")
    return v


def member(obj: dict[str, Any], name: str, kind: type) -> Any:
    v = obj.get(name)
    if v is None:
        return None
    if not isinstance(v, kind) or isinstance(v, bool) and kind is not bool:
        raise Unavailable(f"etcd gateway sent {name} of the wrong type")
    return v


def is_error_reply(obj: dict[str, Any]) -> bool:
    return "error" in obj or ("code" in obj and "message" in obj)


@dataclasses.dataclass(frozen=True)
class GatewayError:
    code: int
    message: str


def parse_error(doc: Any) -> GatewayError | None:
    """The error of an error reply (unary or stream, etcd 3.4 to 3.7), or None."""
    if not isinstance(doc, dict) or not is_error_reply(doc):
        return None
    err = doc.get("error")
    src = err if isinstance(err, dict) else doc
    code = src.get("grpc_code", src.get("code", 0))
    message = src.get("message")
    if not isinstance(message, str) or not message:
        message = err if isinstance(err, str) and err else "error without a message"
    try:
        code = int(code)
    except (TypeError, ValueError):
        code = 0
    return GatewayError(code, message)


def parse_endpoints(text: str) -> list[str]:
    """Comma-separated client URLs, each ``http[s]://host:port`` without a path."""
    out = []
    for part in text.split(","):
        url = part.strip()
        u = urllib.parse.urlsplit(url)
        try:
            port = u.port
        except ValueError:
            port = None
        if (
            u.scheme not in ("http", "https")
            or not u.hostname
            or port is None
            or u.path not in ("", "/")
            or u.query
            or u.fragment
            or u.username
        ):
            raise InvalidArgument(f"etcd: not an endpoint URL (http[s]://host:port): {url!r}")
        out.append(f"{u.scheme}://{u.netloc}")
    if not out:
        raise InvalidArgument("etcd: at least one endpoint is needed")
    return out


class StreamEnd(enum.Enum):
    STOPPED = 1  # on_line returned False
    TIMED_OUT = 2
    CANCELED = 3
    BROKEN = 4  # unreachable, refused, or ended by the member


class Waiter:
    """A cancel flag for calls and streams; ``cancel()`` also closes open sockets."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._socks: set[socket.socket] = set()

    @property
    def canceled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        self._event.set()
        with self._lock:
            socks = list(self._socks)
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def pause(self, seconds: float) -> None:
        self._event.wait(seconds)

    def add(self, s: socket.socket) -> None:
        with self._lock:
            self._socks.add(s)
        if self._event.is_set():
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def discard(self, s: socket.socket) -> None:
        with self._lock:
            self._socks.discard(s)


@dataclasses.dataclass
class GatewayOptions:
    endpoints: list[str]
    request_timeout: float = 2.0
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    user: str = ""
    password: str = ""


# A fault to inject for tests of lost replies: called with (path, body) before
# each unary request; returns "drop_request", "drop_reply" or None.
FaultHook = Callable[[str, bytes], "str | None"]


class GatewayClient:
    """Thread-safe. Each call tries the members in order, starting with the one
    that last answered, and moves on when one cannot be reached, does not answer
    in time or says it cannot serve. An error about the request itself (not
    found, invalid, permission) is raised at once."""

    def __init__(self, options: GatewayOptions, fault_hook: FaultHook | None = None) -> None:
        self.options = options
        self._fault = fault_hook
        self._preferred = 0
        self._token = ""
        self._lock = threading.Lock()
        self._auth_lock = threading.Lock()
        self._ssl: ssl.SSLContext | None = None
        if any(e.startswith("https://") for e in options.endpoints):
            ctx = ssl.create_default_context(cafile=options.ca_file or None)
            if options.cert_file:
                ctx.load_cert_chain(options.cert_file, options.key_file or None)
            self._ssl = ctx

    @property
    def endpoint_count(self) -> int:
        return len(self.options.endpoints)

    @property
    def preferred(self) -> int:
        return self._preferred

    def prefer(self, i: int) -> None:
        if 0 <= i < self.endpoint_count:
            self._preferred = i

    @property
    def token(self) -> str:
        with self._lock:
            return self._token

    def _connection(self, i: int, timeout: float) -> http.client.HTTPConnection:
        u = urllib.parse.urlsplit(self.options.endpoints[i])
        if u.scheme == "https":
            return http.client.HTTPSConnection(
                u.hostname or "", u.port, timeout=timeout, context=self._ssl
            )
        return http.client.HTTPConnection(u.hostname or "", u.port, timeout=timeout)

    def _headers(self, token: str) -> dict[str, str]:
        h = {"Content-Type": "application/json"}
        if token:
            h["Authorization"] = token
        return h

    def _post(
        self, i: int, path: str, body: bytes, token: str, timeout: float, waiter: Waiter | None
    ) -> tuple[str, Any]:
        """One attempt: ("ok", doc), ("etcd", exception), ("auth", why) or ("elsewhere", why)."""
        fault = self._fault(path, body) if self._fault else None
        if fault == "drop_request":
            return "elsewhere", "request dropped (injected fault)"
        conn = self._connection(i, timeout)
        sock = None
        try:
            conn.connect()
            sock = conn.sock
            if waiter is not None and sock is not None:
                waiter.add(sock)
            conn.request("POST", path, body, self._headers(token))
            resp = conn.getresponse()
            data = resp.read(MAX_REPLY_BYTES + 1)
            status = resp.status
        except (OSError, http.client.HTTPException) as e:
            if waiter is not None and waiter.canceled:
                return "elsewhere", "canceled"
            return "elsewhere", str(e) or type(e).__name__
        finally:
            if waiter is not None and sock is not None:
                waiter.discard(sock)
            conn.close()
        if fault == "drop_reply":
            return "elsewhere", "reply dropped (injected fault)"
        if len(data) > MAX_REPLY_BYTES:
            return "elsewhere", "reply too large"
        try:
            doc = json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError):
            doc = None
        if status == 200 and isinstance(doc, dict) and not is_error_reply(doc):
            return "ok", doc
        err = parse_error(doc)
        if err is None:
            return "elsewhere", f"HTTP status {status}"
        if err.code == GRPC_UNAUTHENTICATED or (
            err.code == GRPC_INVALID_ARGUMENT and "user name is empty" in err.message
        ):
            return "auth", err.message
        if err.code == GRPC_NOT_FOUND:
            return "etcd", NotFound(err.message)
        if err.code == GRPC_INVALID_ARGUMENT:
            return "etcd", InvalidArgument(err.message)
        if err.code in (GRPC_PERMISSION_DENIED, GRPC_FAILED_PRECONDITION):
            return "etcd", FailedPrecondition(err.message)
        return "elsewhere", err.message

    def call(
        self,
        path: str,
        body: dict[str, Any],
        *,
        timeout: float | None = None,
        deadline: float | None = None,
        waiter: Waiter | None = None,
    ) -> dict[str, Any]:
        """POSTs ``body`` to ``path`` (e.g. "/v3/kv/range"); the reply's JSON object.
        ``deadline`` is on time.monotonic(); no attempt starts after it."""
        data = json.dumps(body, separators=(",", ":")).encode()
        n = self.endpoint_count
        start = self._preferred
        failures: list[str] = []
        refreshed = False
        i = 0
        while i < n:
            if waiter is not None and waiter.canceled:
                raise Unavailable(f"{path} canceled")
            per = timeout if timeout is not None else self.options.request_timeout
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Unavailable(
                        f"no etcd member answered {path} in the time left"
                        + (f" ({'; '.join(failures)})" if failures else "")
                    )
                per = max(0.001, min(per, left))
            idx = (start + i) % n
            tok = self.token
            kind, payload = self._post(idx, path, data, tok, per, waiter)
            if kind == "ok":
                self._preferred = idx
                return payload
            if kind == "etcd":
                raise payload
            if kind == "auth":
                if not self.options.user:
                    raise InvalidArgument(
                        f"etcd requires authentication ({payload}); set a user and password"
                    )
                if not refreshed:
                    refreshed = True
                    self.refresh_token(tok)
                    continue
            failures.append(f"{self.options.endpoints[idx]}: {payload}")
            i += 1
        raise Unavailable(f"no etcd member answered {path} ({'; '.join(failures)})")

    def connect(self) -> None:
        """Checks that some member answers, and authenticates when a user is set."""
        if self.options.user:
            self.refresh_token("")
        self.call("/v3/maintenance/status", {})

    def refresh_token(self, stale: str) -> None:
        with self._auth_lock:
            if self.token != stale:
                return
            doc = self._authenticate()
            tok = doc.get("token")
            if not isinstance(tok, str) or not tok:
                raise Unavailable("etcd sent no authentication token")
            with self._lock:
                self._token = tok

    def _authenticate(self) -> dict[str, Any]:
        body = json.dumps({"name": self.options.user, "password": self.options.password}).encode()
        failures = []
        for k in range(self.endpoint_count):
            idx = (self._preferred + k) % self.endpoint_count
            kind, payload = self._post(
                idx, "/v3/auth/authenticate", body, "", self.options.request_timeout, None
            )
            if kind == "ok":
                return payload
            if kind in ("etcd", "auth"):
                raise InvalidArgument(f"etcd refused the user or password: {payload}")
            failures.append(f"{self.options.endpoints[idx]}: {payload}")
        raise Unavailable(f"no etcd member answered the authentication ({'; '.join(failures)})")

    def stream(
        self,
        i: int,
        path: str,
        body: dict[str, Any],
        timeout: float,
        on_line: Callable[[dict[str, Any] | None], bool],
        waiter: Waiter,
    ) -> tuple[StreamEnd, str]:
        """POSTs to member ``i`` only and hands each JSON line of the streamed reply
        to ``on_line`` (None for a line that is not a JSON object), until it returns
        False, ``timeout`` passes or the waiter is canceled.

        Streams require a leader (header ``Grpc-Metadata-hasleader: true``): a
        member that knows none refuses or ends the stream with an error line, so
        a member cut off from the others cannot keep a watch that sees nothing."""
        deadline = time.monotonic() + timeout
        conn = self._connection(i, min(self.options.request_timeout, timeout))
        sock = None
        try:
            conn.connect()
            sock = conn.sock
            if sock is None:
                return StreamEnd.BROKEN, "no socket"
            waiter.add(sock)
            headers = self._headers(self.token)
            headers["Grpc-Metadata-hasleader"] = "true"
            conn.request("POST", path, json.dumps(body).encode(), headers)
            resp = conn.getresponse()
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            while True:
                line = resp.readline(MAX_REPLY_BYTES)
                if waiter.canceled:
                    return StreamEnd.CANCELED, ""
                if not line:
                    return StreamEnd.BROKEN, "the member ended the stream"
                line = line.strip()
                if not line:
                    continue
                try:
                    doc = json.loads(line)
                except (ValueError, UnicodeDecodeError, RecursionError):
                    doc = None
                if not on_line(doc if isinstance(doc, dict) else None):
                    return StreamEnd.STOPPED, ""
                left = deadline - time.monotonic()
                if left <= 0:
                    return StreamEnd.TIMED_OUT, ""
                sock.settimeout(left)
        except TimeoutError:
            if waiter.canceled:
                return StreamEnd.CANCELED, ""
            if time.monotonic() >= deadline - 0.001:
                return StreamEnd.TIMED_OUT, ""
            return StreamEnd.BROKEN, "timed out"
        except (OSError, http.client.HTTPException) as e:
            if waiter.canceled:
                return StreamEnd.CANCELED, ""
            return StreamEnd.BROKEN, str(e) or type(e).__name__
        finally:
            if sock is not None:
                waiter.discard(sock)
            conn.close()
