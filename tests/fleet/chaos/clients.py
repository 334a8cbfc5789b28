"""Clients that pull ids from every daemon all the time, and keep every id with where it came from.

One thread per slot, one connection at a time, `NEXTIDS batch` every `interval`: each request is
recorded as a `Pull` (sent and received at harness monotonic time, the incarnation the
connection belongs to, the refusal word or None, and where its ids sit in the slot's id array).
The ids themselves go to one array('q') per slot, 8 bytes each, in the order they arrived, so
that a 10-minute run's millions fit and the checks can sort them.
"""

import threading
import time
from array import array
from collections import namedtuple

from .resp import RespConn, RespError

# Words for requests that got no reply (a daemon's own refusal words are kept as they come).
NO_CONNECTION = "NO_CONNECTION"  # connect() failed: no process, or not listening yet
NO_REPLY = "NO_REPLY"  # the connection closed before a reply
TIMEOUT = "TIMEOUT"  # no reply within the client's timeout: a hang unless the daemon was stopped

UNHEALTHY_WORDS = {"UNHEALTHY", "CLOCK_MOVED_BACK"}

# One request: sent and received (harness times), the incarnation its connection belongs to (-1:
# none), the refusal word or None for ids, and where its ids sit in the client's id array.
Pull = namedtuple("Pull", "sent received inc word start n")


class Puller:
    def __init__(self, fleet, slot, batch, interval_s, timeout_s):
        self.fleet = fleet
        self.slot = slot
        self.batch = batch
        self.interval = interval_s
        self.timeout = timeout_s
        self.ids = array("q")
        self.pulls = []  # every request, a Pull
        self.errors = {}  # word -> one full error text, for the report
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"pull-{slot.name}", daemon=True)

    def start(self):
        self.thread.start()

    def join(self):
        self.stop.set()
        self.thread.join(self.timeout + 5)

    def _record(self, sent, inc, word, ids=None):
        received = self.fleet.now()
        start = len(self.ids)
        if ids:
            self.ids.extend(ids)
        self.pulls.append(Pull(sent, received, inc, word, start, len(ids) if ids else 0))

    def _run(self):
        conn, inc = None, None
        command = ("NEXTIDS", str(self.batch))
        while not self.stop.is_set():
            if conn is None:
                current = self.slot.current
                sent = self.fleet.now()
                try:
                    conn = RespConn(self.slot.socket, self.timeout)
                    inc = current.number if current is not None else -1
                except OSError:
                    self._record(sent, -1, NO_CONNECTION)
                    time.sleep(0.05)
                    continue
            sent = self.fleet.now()
            try:
                reply = conn.command(*command)
            except TimeoutError:
                self._record(sent, inc, TIMEOUT)
                conn.close()
                conn = None
                continue
            except (OSError, ValueError):
                self._record(sent, inc, NO_REPLY)
                conn.close()
                conn = None
                time.sleep(0.02)
                continue
            if isinstance(reply, RespError):
                self.errors.setdefault(reply.word, reply.text)
                self._record(sent, inc, reply.word)
                if reply.word in UNHEALTHY_WORDS:
                    # The first sighting since this process started: the supervisor restarts
                    # it a fixed delay later, as a liveness probe would.
                    seen, current = self.slot.unhealthy_seen, self.slot.current
                    if seen is None or (current is not None and seen < current.started):
                        self.slot.unhealthy_seen = self.fleet.now()
            elif isinstance(reply, list):
                self._record(sent, inc, None, [int(x) for x in reply])
            else:
                self._record(sent, inc, "UNEXPECTED_REPLY")
            time.sleep(self.interval)
        if conn is not None:
            conn.close()
