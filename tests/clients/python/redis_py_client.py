"""redis-py against snowidd, over the Unix socket (RESP2) and TCP (RESP3).

Ids arrive as strings of decimal digits; int() makes them exact Python ints.
"""

import datetime
import os
import re
import sys
import time

import redis

EPOCH_MS = 1767225600000
ID_TEXT = re.compile(r"[1-9][0-9]{0,18}")


def decode_id(id_):
    """The layout's fields: 41 bits of ms, 2 region, 8 host, 12 sequence."""
    return {
        "ticks": id_ >> 22,
        "unix_ms": (id_ >> 22) + EPOCH_MS,
        "region": (id_ >> 20) & 3,
        "host": (id_ >> 12) & 255,
        "sequence": id_ & 4095,
    }


def parse_id(reply):
    assert isinstance(reply, str), "an id is a string, not %r" % (reply,)
    assert ID_TEXT.fullmatch(reply), "not an id: %r" % reply
    id_ = int(reply)
    assert id_ < 1 << 63, "id %s does not fit 63 bits" % reply
    return id_


class Ledger:
    """Every id received, checked against the pinned worker, the run's time
    window and the ids seen before."""

    def __init__(self):
        self.region = int(os.environ["SNOWIDD_REGION"])
        self.host = int(os.environ["SNOWIDD_HOST"])
        self.start_ms = time.time_ns() // 1_000_000
        self.seen = set()
        self.received = 0

    def stream(self):
        return Stream(self)


class Stream:
    """The ids of one connection, which must increase."""

    def __init__(self, ledger):
        self.ledger = ledger
        self.last = 0

    def accept(self, replies):
        now_ms = time.time_ns() // 1_000_000
        ids = [parse_id(r) for r in replies]
        for id_ in ids:
            d = decode_id(id_)
            assert d["region"] == self.ledger.region, "id %d: region %d" % (id_, d["region"])
            assert d["host"] == self.ledger.host, "id %d: host %d" % (id_, d["host"])
            assert self.ledger.start_ms <= d["unix_ms"] <= now_ms, (
                "id %d: time %d outside the run [%d, %d]"
                % (id_, d["unix_ms"], self.ledger.start_ms, now_ms))
            assert id_ > self.last, "id %d does not follow %d" % (id_, self.last)
            assert id_ not in self.ledger.seen, "id %d issued twice" % id_
            self.ledger.seen.add(id_)
            self.last = id_
        self.ledger.received += len(ids)
        return ids


def fields_of(reply):
    """DECODE's reply: a RESP3 map, or a RESP2 flat array."""
    if isinstance(reply, dict):
        return reply
    assert isinstance(reply, list) and len(reply) % 2 == 0, "DECODE gave %r" % (reply,)
    return dict(zip(reply[0::2], reply[1::2]))


def check_decode(r, id_):
    fields = fields_of(r.execute_command("DECODE", str(id_)))
    assert fields["id"] == str(id_), "DECODE: id %r" % (fields["id"],)
    for name, want in decode_id(id_).items():
        assert type(fields[name]) is int, "DECODE: %s is %r" % (name, fields[name])
        assert fields[name] == want, "DECODE: %s %d, not %d" % (name, fields[name], want)
    shown = datetime.datetime.fromisoformat(fields["time"].replace("Z", "+00:00"))
    assert round(shown.timestamp() * 1000) == decode_id(id_)["unix_ms"], fields["time"]


def ids_on_one_connection(r, ledger):
    stream = ledger.stream()
    for _ in range(10):
        stream.accept([r.execute_command("NEXTID")])

    pipe = r.pipeline(transaction=False)
    for _ in range(2000):
        pipe.execute_command("NEXTID")
    pipelined = pipe.execute()
    assert len(pipelined) == 2000
    stream.accept(pipelined)

    batch = r.execute_command("NEXTIDS", 5)
    assert isinstance(batch, list) and len(batch) == 5, "NEXTIDS 5 gave %r" % (batch,)
    ids = stream.accept(batch)
    check_decode(r, ids[-1])


def integer_opt_in(r, ledger):
    """IDFORMAT INTEGER: native integers on this connection, still exact in
    Python; IDFORMAT STRING restores strings."""
    assert r.execute_command("IDFORMAT", "INTEGER") == "OK"
    stream = ledger.stream()
    as_int = r.execute_command("NEXTID")
    assert type(as_int) is int, "after IDFORMAT INTEGER: %r" % (as_int,)
    batch = r.execute_command("NEXTIDS", 3)
    assert all(type(v) is int for v in batch), batch
    stream.accept([str(v) for v in [as_int] + batch])
    assert r.execute_command("IDFORMAT", "STRING") == "OK"
    stream.accept([r.execute_command("NEXTID")])


PUBLIC_ID = re.compile(r"ord_[0-9a-hjkmnp-tv-z]{13}")


def public_ids_on_one_connection(r, ledger):
    """NEXTPUBIDS and NEXTPUBID give exact ids beside their public ids; UNWRAP
    reads every public id back to its id; WRAP gives the same public ids."""
    assert os.environ.get("SNOWIDD_PUBLIC_IDS") == "1", "the daemon has no keyring"
    stream = ledger.stream()
    pairs = r.execute_command("NEXTPUBIDS", "ord", 500)
    assert isinstance(pairs, list) and len(pairs) == 500, "NEXTPUBIDS gave %r" % (pairs,)
    pipe = r.pipeline(transaction=False)
    for _ in range(200):
        pipe.execute_command("NEXTPUBID", "ord")
    pairs += pipe.execute()
    assert all(isinstance(p, list) and len(p) == 2 for p in pairs), pairs[:3]
    ids = stream.accept([p[0] for p in pairs])
    publics = [p[1] for p in pairs]
    assert all(PUBLIC_ID.fullmatch(p) for p in publics), publics[:3]
    assert len(set(publics)) == len(publics), "a public id was given twice"
    back = r.execute_command("UNWRAP", *publics)
    assert back == [str(i) for i in ids], "UNWRAP did not give the ids back"
    again = r.execute_command("WRAP", "ord", *[str(i) for i in ids[:100]])
    assert again == publics[:100], "WRAP gave other public ids"


def check_time(r):
    """TIME as Redis answers it: redis-py's time() gives (seconds,
    microseconds), the daemon's clock between this process's reads."""
    before_us = time.time_ns() // 1000
    seconds, micros = r.time()
    after_us = time.time_ns() // 1000
    assert type(seconds) is int and type(micros) is int, (seconds, micros)
    assert 0 <= micros < 1_000_000, micros
    at_us = seconds * 1_000_000 + micros
    assert before_us - 1 <= at_us <= after_us + 1, (
        "TIME %d us, outside this process's [%d, %d]" % (at_us, before_us, after_us))


def main():
    ledger = Ledger()
    # One connection each, so that IDFORMAT and the order of ids hold on it.
    over_unix = redis.Redis(unix_socket_path=os.environ["SNOWIDD_SOCKET"],
                            decode_responses=True, protocol=2,
                            single_connection_client=True)
    over_tcp = redis.Redis(host=os.environ["SNOWIDD_TCP_HOST"],
                           port=int(os.environ["SNOWIDD_TCP_PORT"]),
                           decode_responses=True, protocol=3,
                           single_connection_client=True)
    try:
        ids_on_one_connection(over_unix, ledger)
        ids_on_one_connection(over_tcp, ledger)
        integer_opt_in(over_unix, ledger)
        integer_opt_in(over_tcp, ledger)
        public_ids_on_one_connection(over_unix, ledger)
        public_ids_on_one_connection(over_tcp, ledger)
        check_time(over_unix)
        check_time(over_tcp)
        issued = over_unix.info("stats")["ids_issued"]
        assert issued == ledger.received, (
            "INFO ids_issued %d, but %d ids received" % (issued, ledger.received))
        print("%d ids checked, all exact and distinct" % len(ledger.seen))
    finally:
        over_unix.close()
        over_tcp.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
