"""A fake etcd JSON gateway for the watch's unit tests: members on loopback ports
that accept a watch and then stay quiet (or send only progress messages), as a
member resumed from a pause may, and answer ranges of the holder key from one
shared state. Each read is logged."""

from __future__ import annotations

import dataclasses
import http.server
import json
import select
import socket
import threading
import time


@dataclasses.dataclass
class FakeHolder:
    create_revision: int
    lease: int


@dataclasses.dataclass
class ReadLog:
    member: int
    at: float


class FakeEtcd:
    def __init__(self, members: int, holder: FakeHolder | None) -> None:
        # The holder key as a linearizable read finds it; None: deleted.
        self.holder = holder
        self.revision = 20
        # Send a progress message (a watch response without events) every 50 ms.
        self.chatty = False
        self.reads: list[ReadLog] = []
        self._closing = threading.Event()
        self._servers: list[http.server.ThreadingHTTPServer] = []
        self.urls: list[str] = []
        for m in range(members):
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(self, m))
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
            self._servers.append(server)
            self.urls.append(f"http://127.0.0.1:{server.server_address[1]}")

    def header(self, member: int) -> dict:
        return {"cluster_id": "1", "member_id": str(member + 1), "revision": str(self.revision)}

    def close(self) -> None:
        self._closing.set()
        for s in self._servers:
            s.shutdown()
            s.server_close()

    @property
    def closing(self) -> bool:
        return self._closing.is_set()


def _handler(fake: FakeEtcd, member: int) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if self.path == "/v3/kv/range":
                fake.reads.append(ReadLog(member, time.monotonic()))
                reply: dict = {"header": fake.header(member)}
                if fake.holder is not None:
                    rev = str(fake.holder.create_revision)
                    reply["kvs"] = [
                        {
                            "key": body.get("key", ""),
                            "create_revision": rev,
                            "mod_revision": rev,
                            "lease": str(fake.holder.lease),
                        }
                    ]
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            elif self.path == "/v3/watch":
                self._watch()
            else:
                self.send_error(404)

        def _line(self, doc: dict) -> None:
            self.wfile.write(json.dumps(doc).encode() + b"\n")
            self.wfile.flush()

        def _watch(self) -> None:
            # HTTP/1.0 without a length: the stream lasts until either side closes.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            try:
                self._line({"result": {"header": fake.header(member), "created": True}})
                next_progress = time.monotonic() + 0.05
                while not fake.closing:
                    readable, _, _ = select.select([self.connection], [], [], 0.01)
                    if readable and not self.connection.recv(1, socket.MSG_PEEK):
                        return  # the client ended the stream
                    if fake.chatty and time.monotonic() >= next_progress:
                        self._line({"result": {"header": fake.header(member)}})
                        next_progress += 0.05
            except OSError:
                pass

    return Handler
