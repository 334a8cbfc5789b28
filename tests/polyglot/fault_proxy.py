"""A TCP proxy between one driver and etcd that loses the replies of chosen requests.

Each client connection gets its own connection to etcd. Requests from the client are read as
HTTP/1.1 (request line, headers, a Content-Length body) so that a rule can look at the path and
the JSON body; everything is forwarded as is. When a rule matches a request, the request still
goes to etcd (so it is applied), but nothing etcd sends back on that connection from then on
reaches the client: the client sees a request that timed out, an unknown outcome. The connection
is held open until the client gives up on it.
"""

import json
import socket
import threading


class Rule:
    """Lose the reply of up to `times` requests for which `match(path, body)` is true."""

    def __init__(self, name, match, times=1):
        self.name = name
        self.match = match
        self.left = times
        self.hits = 0


def is_acquire_txn(path, body):
    """The acquire transaction: a txn whose success branch puts a key on a lease."""
    if path != "/v3/kv/txn":
        return False
    return any(op.get("request_put", {}).get("lease") for op in body.get("success", []))


def is_release_txn(path, body):
    """The release transaction: a txn whose success branch deletes a key (the holder)."""
    if path != "/v3/kv/txn":
        return False
    return any("request_delete_range" in op for op in body.get("success", []))


def is_keepalive(path, body):
    return path == "/v3/lease/keepalive"


class FaultProxy:
    def __init__(self, upstream_url):
        host_port = upstream_url.split("//", 1)[1]
        host, port = host_port.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.rules = []
        self.lock = threading.Lock()
        self.lost = []  # (rule name, path) of every reply lost
        self.requests = 0
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def add_rule(self, rule):
        with self.lock:
            self.rules.append(rule)
        return rule

    def close(self):
        self.closed = True
        try:
            self.listener.close()
        except OSError:
            pass

    def _take_rule(self, path, body):
        with self.lock:
            self.requests += 1
            for rule in self.rules:
                if rule.left > 0 and rule.match(path, body):
                    rule.left -= 1
                    rule.hits += 1
                    self.lost.append((rule.name, path))
                    return rule
        return None

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        try:
            upstream = socket.create_connection(self.upstream, timeout=5)
            upstream.settimeout(None)
        except OSError:
            client.close()
            return
        state = {"swallow": False}
        threading.Thread(
            target=self._relay_back, args=(upstream, client, state), daemon=True
        ).start()
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = client.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                head, buf = buf.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else ""
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                kept = [line for line in lines if not line.lower().startswith("expect:")]
                if len(kept) != len(lines):
                    # Answer the 100-continue here, so the body comes without etcd's.
                    client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                while len(buf) < length:
                    chunk = client.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                body, buf = buf[:length], buf[length:]
                try:
                    parsed = json.loads(body) if body else {}
                except ValueError:
                    parsed = {}
                if self._take_rule(path, parsed if isinstance(parsed, dict) else {}):
                    # Decided before etcd can answer: from here on nothing comes back.
                    state["swallow"] = True
                upstream.sendall(("\r\n".join(kept) + "\r\n\r\n").encode("latin-1") + body)
                if state["swallow"]:
                    # Hold the connection until the client gives up on its reply.
                    while client.recv(65536):
                        pass
                    return
        except OSError:
            return
        finally:
            for s in (client, upstream):
                try:
                    s.close()
                except OSError:
                    pass

    def _relay_back(self, upstream, client, state):
        try:
            while True:
                data = upstream.recv(65536)
                if not data:
                    break
                if not state["swallow"]:
                    client.sendall(data)
        except OSError:
            pass
        if not state["swallow"]:
            try:
                client.shutdown(socket.SHUT_WR)
            except OSError:
                pass
