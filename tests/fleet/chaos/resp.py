"""A small blocking RESP2 client over a Unix socket: enough for NEXTIDS, INFO and PING.

Replies come back as Python values: simple strings and bulk strings as str, integers as int,
arrays as lists, nil as None, and an error as an `RespError` value (returned, not raised: a
refusal is an answer the harness records). A broken or timed-out connection raises OSError;
the connection is then unusable.
"""

import socket


class RespError:
    """An error reply: its first word (LEASE_UNCERTAIN, UNHEALTHY, ...) and the whole text."""

    def __init__(self, text):
        self.text = text
        self.word = text.split(" ", 1)[0] if text else "ERR"

    def __repr__(self):
        return f"RespError({self.text!r})"


class RespConn:
    def __init__(self, path, timeout):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise
        self.reader = self.sock.makefile("rb")

    def close(self):
        try:
            self.reader.close()
        finally:
            self.sock.close()

    def command(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self.sock.sendall(b"".join(out))
        return self._read()

    def _line(self):
        line = self.reader.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("connection closed mid-reply")
        return line[:-2]

    def _read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return RespError(rest.decode("utf-8", "replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.reader.read(n + 2)
            if len(data) != n + 2:
                raise ConnectionError("connection closed mid-reply")
            return data[:-2].decode("utf-8", "replace")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise ConnectionError(f"not RESP: {line[:40]!r}")
