"""The etcd worker-id registry, kept with the same keys, values and transactions
as the C++ registry, so that holders of both honour each other's marks.

Each worker id has a ``holder`` key attached to the holder's lease (etcd deletes
it when the lease is revoked or expires) and a ``mark`` key without a lease,
which outlives every holder. Every write to the mark is conditional on the
holder key being the writer's own (or absent, for acquire and fence), so a
holder that lost its lease can never move the mark after a successor read it.

Wall time (marks, release times, quarantine) comes from the injected clock;
network deadlines are real elapsed time (time.monotonic).
"""

from __future__ import annotations

import dataclasses
import os
import random
import socket
import threading
import time
from typing import Any

from .._time import format_ms
from ..clock import Clock
from ..errors import (
    AlreadyExists,
    DataLoss,
    FailedPrecondition,
    InvalidArgument,
    LeaseLost,
    NotFound,
    ResourceExhausted,
    SnowidError,
    Unavailable,
)
from .gateway import GatewayClient, GatewayOptions, StreamEnd, Waiter, b64, int64, parse_error
from .keys import WorkerKeys, check_namespace, prefix_end
from .replies import (
    KV,
    Header,
    TxnReply,
    cmp_create,
    cmp_mod,
    header,
    kvs,
    op_delete,
    op_put,
    op_range,
    range_body,
    range_of,
    refuse_error,
    txn_body,
    txn_reply,
)
from .values import (
    Mark,
    Store,
    Token,
    decode_holder,
    decode_mark,
    decode_store,
    decode_token,
    encode_holder,
    encode_mark,
    encode_store,
    free_from_ns,
)

MS = 1_000_000
S = 1_000_000_000
# Rounds of read-then-transact before acquire gives up on a contended block.
ACQUIRE_ROUNDS = 64
# Rounds of compare-and-set on a mark before renew, release or fence give up.
MARK_ROUNDS = 16
# abandon() takes at most this long in all.
ABANDON_TIMEOUT_S = 0.5
# A pause after a whole round of members failed to keep a watch.
BROKEN_ROUND_PAUSE_S = 0.1
# docs/protocol.md section 10: a watch stream that has run this long without showing a loss is
# ended, the holder key read (linearizably, failing over to a member with a leader) and the
# watch moved to the next member. A member resumed from a pause can accept a watch while it
# still believes in a leader it has lost, and then never deliver the fence.
WATCH_RECHECK_S = 5.0
# The default stop_after: the least a holder of a lost store may go on issuing.
DEFAULT_STOP_AFTER_NS = 8 * S


@dataclasses.dataclass
class LeaseRequest:
    region: int
    host: int | None
    ttl_s: int
    stop_after_ns: int
    high_water_ns: int
    holder_host: str
    pid: int
    started_ns: int
    address: str = ""


@dataclasses.dataclass(frozen=True)
class LeaseGrant:
    region: int
    host: int
    token: str
    # The previous holders' mark (or the store-wide one, if later), if any.
    previous_high_water_ns: int | None


@dataclasses.dataclass(frozen=True)
class WorkerRecord:
    region: int
    host: int
    holder: dict[str, Any] | None
    high_water_ns: int | None
    released_at_ns: int | None
    quarantined_until_ns: int | None


def _later(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _worker(region: int, host: int) -> str:
    return f"{region}/{host}"


class _StoreHistory:
    """What this registry has seen of etcd's store, to notice lost or rolled-back
    data: another cluster id, a lower revision, a vanished or lowered mark."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cluster_id = 0
        self.revision = 0
        self.incarnation = ""
        self.marks: dict[str, int] = {}
        self.pending: str | None = None

    def observe(self, h: Header) -> None:
        with self._lock:
            why = None
            if h.cluster_id and self.cluster_id and h.cluster_id != self.cluster_id:
                why = f"etcd answered as another cluster (id {h.cluster_id}, was {self.cluster_id})"
                self.revision = 0
            elif h.revision and h.revision < self.revision:
                why = f"etcd's revision went back from {self.revision} to {h.revision}"
                self.revision = 0
            if h.cluster_id:
                self.cluster_id = h.cluster_id
            if h.revision > self.revision:
                self.revision = h.revision
            if why and self.pending is None:
                self.pending = why

    def set_pending(self, why: str) -> None:
        with self._lock:
            if self.pending is None:
                self.pending = why

    def take_pending(self) -> str | None:
        with self._lock:
            why, self.pending = self.pending, None
            return why

    def stored_mark(self, token: str, hw_ns: int) -> None:
        with self._lock:
            if hw_ns > self.marks.get(token, -(2**63)):
                self.marks[token] = hw_ns

    def check_mark(self, token: str, read_ns: int | None) -> None:
        with self._lock:
            stored = self.marks.get(token)
            if stored is None:
                return
            why = None
            if read_ns is None:
                why = "a mark this process stored has vanished"
            elif read_ns + MS <= stored:
                why = (
                    f"a mark this process stored went back from {format_ms(stored // MS)} "
                    f"to {format_ms(read_ns // MS)}"
                )
            if why and self.pending is None:
                self.pending = why

    def forget(self, token: str) -> None:
        with self._lock:
            self.marks.pop(token, None)


@dataclasses.dataclass
class EtcdOptions:
    endpoints: list[str]
    prefix: str = "/snowid"
    cluster: str = "default"
    quarantine_s: float = 10.0
    request_timeout_s: float = 2.0
    regions: int = 4
    workers_per_region: int = 256
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    user: str = ""
    password: str = ""


def check_timeouts(quarantine_s: float, request_timeout_s: float) -> None:
    """INVALID_ARGUMENT unless quarantine is 0 to 1 hour and the request timeout
    1 ms to 1 minute."""
    if not 0 <= quarantine_s <= 3600:
        raise InvalidArgument("etcd: quarantine must be from 0 to 1 hour")
    if not 0.001 <= request_timeout_s <= 60:
        raise InvalidArgument("etcd: request_timeout must be from 1 ms to 1 minute")


class EtcdRegistry:
    def __init__(self, clock: Clock, options: EtcdOptions, fault_hook: Any = None) -> None:
        check_namespace(options.prefix, options.cluster)
        if not options.endpoints:
            raise InvalidArgument("etcd: at least one endpoint is needed")
        check_timeouts(options.quarantine_s, options.request_timeout_s)
        if options.key_file and not options.cert_file:
            raise InvalidArgument("etcd: a client key needs a client certificate")
        if options.password and not options.user:
            raise InvalidArgument("etcd: a password needs a user")
        self.clock = clock
        self.options = options
        self.keys = WorkerKeys(options.prefix, options.cluster)
        self.client = GatewayClient(
            GatewayOptions(
                list(options.endpoints),
                options.request_timeout_s,
                options.ca_file,
                options.cert_file,
                options.key_file,
                options.user,
                options.password,
            ),
            fault_hook,
        )
        self._quarantine_ns = int(options.quarantine_s * S)
        self._rng = random.SystemRandom()
        self._history = _StoreHistory()
        self._max_stop_after_ns = 0
        self._lock = threading.Lock()
        self._waiters: set[Waiter] = set()
        self._closing = False

    def connect(self) -> None:
        self.client.connect()

    # --- small helpers ---------------------------------------------------------

    def _range(self, key: str, end: bytes | None = None, **call: Any) -> tuple[Header, list[KV]]:
        doc = self.client.call("/v3/kv/range", range_body(key, end), **call)
        refuse_error(doc)
        h = header(doc)
        self._history.observe(h)
        return h, kvs(doc)

    def _get(self, key: str, **call: Any) -> KV | None:
        found = self._range(key, **call)[1]
        return found[0] if found else None

    def _txn(
        self, compares: list[Any], success: list[Any], failure: list[Any], **call: Any
    ) -> TxnReply:
        doc = self.client.call("/v3/kv/txn", txn_body(compares, success, failure), **call)
        reply = txn_reply(doc)
        self._history.observe(reply.header)
        return reply

    def _revoke(self, lease: int) -> None:
        try:
            self.client.call("/v3/lease/revoke", {"ID": str(lease)})
        except NotFound:
            pass

    def _check_worker(self, region: int, host: int) -> None:
        if not 0 <= region < self.options.regions:
            raise InvalidArgument(
                f"region {region} is outside the layout's {self.options.regions} regions"
            )
        if not 0 <= host < self.options.workers_per_region:
            raise InvalidArgument(
                f"host {host} is outside the layout's {self.options.workers_per_region} "
                "hosts per region"
            )

    @staticmethod
    def _mark_of(found: KV | None) -> Mark:
        return decode_mark(found.value) if found is not None else Mark()

    def _in_flight_ns(self) -> int:
        return max(self._max_stop_after_ns, DEFAULT_STOP_AFTER_NS)

    # --- acquire ---------------------------------------------------------------

    def acquire(self, request: LeaseRequest) -> LeaseGrant:
        self._check_worker(request.region, request.host or 0)
        reply = self.client.call("/v3/lease/grant", {"TTL": str(request.ttl_s)})
        refuse_error(reply)
        lease, ttl = int64(reply, "ID"), int64(reply, "TTL")
        if lease == 0:
            raise Unavailable("etcd gateway sent a lease grant without an ID")
        if ttl < request.ttl_s:
            self._quiet_revoke(lease)
            raise FailedPrecondition(f"etcd granted a {ttl} s lease instead of {request.ttl_s} s")
        try:
            return self._try_acquire(request, lease)
        except BaseException:
            # Also deletes a holder key a transaction of unknown outcome may have
            # written: nothing of this attempt stays behind.
            self._quiet_revoke(lease)
            raise

    def _quiet_revoke(self, lease: int) -> None:
        try:
            self._revoke(lease)
        except SnowidError:
            pass

    def _choose(
        self, request: LeaseRequest, region_kvs: list[KV], prefer: int | None
    ) -> tuple[int, KV | None]:
        slots: dict[int, list[KV | None]] = {}
        for item in region_kvs:
            p = self.keys.parse(item.key.decode("utf-8", "replace"))
            if p is None or p.region != request.region:
                continue
            slot = slots.setdefault(p.host, [None, None])
            slot[0 if p.is_holder else 1] = item
        now = self.clock.wall_ns()
        counts = {"held": 0, "quarantined": 0, "unreadable": 0}
        next_free: list[int] = []

        def refusal(slot: list[KV | None]) -> str | None:
            if slot[0] is not None:
                counts["held"] += 1
                try:
                    h = decode_holder(slot[0].value)
                    return f"held by {h.host} (pid {h.pid})"
                except SnowidError:
                    return "held by an unreadable holder"
            try:
                mark = self._mark_of(slot[1])
            except SnowidError as e:
                counts["unreadable"] += 1
                return f"its mark is unreadable: {e.message}"
            frm = free_from_ns(mark, self._quarantine_ns)
            if frm is not None and now < frm:
                counts["quarantined"] += 1
                next_free.append(frm)
                return f"quarantined until {format_ms(-(-frm // MS))}"
            return None

        if request.host is not None:
            slot = slots.get(request.host, [None, None])
            why = refusal(slot)
            if why:
                raise ResourceExhausted(f"worker {_worker(request.region, request.host)} is {why}")
            return request.host, slot[1]
        free = [
            h
            for h in range(self.options.workers_per_region)
            if refusal(slots.get(h, [None, None])) is None
        ]
        if not free:
            msg = (
                f"no free worker id in region {request.region}: all "
                f"{self.options.workers_per_region} are taken ({counts['held']} held, "
                f"{counts['quarantined']} quarantined"
            )
            if counts["unreadable"]:
                msg += f", {counts['unreadable']} with unreadable marks"
            msg += ")"
            if next_free:
                msg += f"; the next leaves quarantine at {format_ms(-(-min(next_free) // MS))}"
            raise ResourceExhausted(msg)
        host = prefer if prefer in free else self._rng.choice(free)
        return host, slots.get(host, [None, None])[1]

    def _try_acquire(self, request: LeaseRequest, lease: int) -> LeaseGrant:
        region_key = self.keys.region(request.region)
        holder_value = encode_holder(
            request.holder_host, request.pid, request.started_ns, request.address, lease
        )
        pending_host: int | None = None
        pending_previous: int | None = None
        with self._lock:
            self._max_stop_after_ns = max(self._max_stop_after_ns, request.stop_after_ns)
        store = self._check_store(self._in_flight_ns())
        store_hw = store.high_water_ns

        def granted(host: int, create_revision: int, previous: int | None) -> LeaseGrant:
            token = Token(lease, create_revision, request.region, host).encode()
            return LeaseGrant(request.region, host, token, _later(previous, store_hw))

        for _ in range(ACQUIRE_ROUNDS):
            _, region_kvs = self._range(region_key, prefix_end(region_key.encode()))
            # A holder key on our lease: a transaction whose reply was lost did
            # succeed. Its previous mark is the one it saw when known, else
            # (conservative) the current one.
            for item in region_kvs:
                p = self.keys.parse(item.key.decode("utf-8", "replace"))
                if p is None or not p.is_holder or item.lease != lease:
                    continue
                previous = pending_previous
                if pending_host != p.host:
                    previous = self._mark_of(
                        self._get(self.keys.mark(p.region, p.host))
                    ).high_water_ns
                return granted(p.host, item.create_revision, previous)

            host, mark_kv = self._choose(request, region_kvs, pending_host)
            old = self._mark_of(mark_kv)
            new = dataclasses.replace(
                old, high_water_ns=_later(old.high_water_ns, request.high_water_ns)
            )
            holder_key = self.keys.holder(request.region, host)
            mark_key = self.keys.mark(request.region, host)
            seen = mark_kv.mod_revision if mark_kv is not None else 0
            try:
                reply = self._txn(
                    [cmp_create(holder_key, 0), cmp_mod(mark_key, seen)],
                    [op_put(holder_key, holder_value, lease), op_put(mark_key, encode_mark(new))],
                    [op_range(holder_key)],
                )
            except NotFound as e:
                raise Unavailable(f"the lease expired while acquiring: {e.message}") from None
            except Unavailable as e:
                # Unknown outcome: ask who holds the id before trying again.
                try:
                    now_holder = self._get(holder_key)
                except SnowidError:
                    raise Unavailable(
                        f"acquiring {_worker(request.region, host)}: the outcome is unknown and "
                        f"could not be checked: {e.message}"
                    ) from None
                if now_holder is not None and now_holder.lease == lease:
                    return granted(host, now_holder.create_revision, old.high_water_ns)
                # Not applied (yet): the same id first, so that a late arrival of
                # the first transaction cannot leave a second id on our lease.
                pending_host, pending_previous = host, old.high_water_ns
                continue
            if reply.succeeded:
                # Both puts happened at the transaction's revision.
                return granted(host, reply.header.revision, old.high_water_ns)
            now_holder = range_of(reply, 0)
            if now_holder is not None and now_holder.lease == lease:
                return granted(
                    host,
                    now_holder.create_revision,
                    pending_previous if pending_host == host else old.high_water_ns,
                )
            if pending_host == host and now_holder is not None:
                pending_host = pending_previous = None
        raise Unavailable(
            f"no worker id in region {request.region} after {ACQUIRE_ROUNDS} rounds: "
            "too many concurrent acquirers"
        )

    # --- renew, release, abandon -----------------------------------------------

    def renew(self, grant: LeaseGrant, high_water_ns: int, time_left_s: float) -> None:
        """Keepalive, then raise the mark. LEASE_LOST if the lease or key is gone."""
        token = decode_token(grant.token)
        if time_left_s <= 0:
            raise Unavailable(
                f"no time left to renew the lease of worker {_worker(token.region, token.host)}"
            )
        bounded = {"deadline": time.monotonic() + time_left_s}
        w = _worker(token.region, token.host)
        try:
            doc = self.client.call("/v3/lease/keepalive", {"ID": str(token.lease)}, **bounded)
        except NotFound as e:
            raise LeaseLost(f"lease of worker {w} is gone: {e.message}") from None
        result = doc.get("result", doc)
        if not isinstance(result, dict) or parse_error(doc) is not None:
            raise Unavailable("etcd gateway sent an unreadable keepalive reply")
        if int64(result, "TTL") <= 0:
            raise LeaseLost(f"lease of worker {w} was revoked or expired")
        holder_key = self.keys.holder(token.region, token.host)
        mark_key = self.keys.mark(token.region, token.host)
        mark_kv = self._get(mark_key, **bounded)
        for _ in range(MARK_ROUNDS):
            old = self._mark_of(mark_kv)
            # Every mark read, the one read back after a lost compare included: a
            # rolled-back mark seen only there would otherwise be written over.
            self._history.check_mark(grant.token, old.high_water_ns)
            new = dataclasses.replace(old, high_water_ns=_later(old.high_water_ns, high_water_ns))
            seen = mark_kv.mod_revision if mark_kv is not None else 0
            reply = self._txn(
                [cmp_create(holder_key, token.create_revision), cmp_mod(mark_key, seen)],
                [op_put(mark_key, encode_mark(new))],
                [op_range(holder_key), op_range(mark_key)],
                **bounded,
            )
            if reply.succeeded:
                assert new.high_water_ns is not None
                self._history.stored_mark(grant.token, new.high_water_ns)
                if self._history.pending is not None:
                    try:
                        self._check_store(self._in_flight_ns())
                    except SnowidError:
                        pass  # retried by the next call
                return
            now_holder = range_of(reply, 0)
            if now_holder is None or now_holder.create_revision != token.create_revision:
                raise LeaseLost(f"worker {w} is no longer held by this lease")
            mark_kv = range_of(reply, 1)
        raise Unavailable(f"the mark of worker {w} kept changing")

    def release(self, grant: LeaseGrant, high_water_ns: int) -> None:
        """Writes the exact last instant with released_at and deletes the holder key
        in one transaction, then revokes the lease. No quarantine follows."""
        token = decode_token(grant.token)
        self._history.forget(grant.token)
        w = _worker(token.region, token.host)
        holder_key = self.keys.holder(token.region, token.host)
        mark_key = self.keys.mark(token.region, token.host)
        mark_kv = self._get(mark_key)
        # Every mark value sent: any may have landed without our hearing of it.
        # Finding one in place once our holder key is gone means we released.
        sent: list[bytes] = []
        retried = False
        result: SnowidError | None = Unavailable(f"the mark of worker {w} kept changing")
        for _ in range(MARK_ROUNDS):
            self._mark_of(mark_kv)  # an unreadable mark is DATA_LOSS, as everywhere
            hw = _later(grant.previous_high_water_ns, high_water_ns)
            new = Mark(hw, self.clock.wall_ns(), hw)
            value = encode_mark(new)
            sent.append(value.encode())
            seen = mark_kv.mod_revision if mark_kv is not None else 0
            try:
                reply = self._txn(
                    [cmp_create(holder_key, token.create_revision), cmp_mod(mark_key, seen)],
                    [op_put(mark_key, value), op_delete(holder_key)],
                    [op_range(holder_key), op_range(mark_key)],
                )
            except Unavailable as e:
                if retried:
                    raise
                retried = True
                try:
                    mark_kv = self._get(mark_key)
                except SnowidError:
                    raise e from None
                if mark_kv is not None and mark_kv.value in sent:
                    result = None
                    break
                continue
            if reply.succeeded:
                result = None
                break
            now_holder = range_of(reply, 0)
            now_mark = range_of(reply, 1)
            if now_holder is None or now_holder.create_revision != token.create_revision:
                if now_mark is not None and now_mark.value in sent:
                    result = None
                else:
                    result = LeaseLost(f"worker {w} was no longer held by this lease")
                break
            mark_kv = now_mark
        if result is None or isinstance(result, LeaseLost):
            self._quiet_revoke(token.lease)
        if result is not None:
            raise result

    def abandon(self, grant: LeaseGrant) -> None:
        """Revokes the lease and nothing else, briefly; every failure is swallowed."""
        try:
            token = decode_token(grant.token)
            limit = min(self.options.request_timeout_s, ABANDON_TIMEOUT_S)
            self.client.call(
                "/v3/lease/revoke",
                {"ID": str(token.lease)},
                timeout=limit,
                deadline=time.monotonic() + limit,
            )
        except Exception:  # noqa: BLE001 - best effort on the way out
            pass

    # --- watch -------------------------------------------------------------------

    def wake_waiters(self) -> None:
        with self._lock:
            waiters = list(self._waiters)
        for w in waiters:
            w.cancel()

    def close(self) -> None:
        self._closing = True
        self.wake_waiters()

    def wait_lost(self, grant: LeaseGrant, timeout_s: float) -> bool:
        """True once the holder key is deleted or replaced; False on timeout or wake.
        Watches from the holder's create_revision + 1. After a compaction, and after each
        WATCH_RECHECK_S of a stream that showed no loss, reads the holder key instead (gone
        or replaced: True); a quiet stream is then watched again on the next member."""
        token = decode_token(grant.token)
        holder_key = self.keys.holder(token.region, token.host)
        deadline = time.monotonic() + timeout_s
        next_rev = token.create_revision + 1
        endpoint = self.client.preferred
        broken = 0
        waiter = Waiter()
        with self._lock:
            self._waiters.add(waiter)
            if self._closing:
                waiter.cancel()
        try:
            while not waiter.canceled:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                state = {"lost": False, "recheck": False, "reauth": False, "watching": False}

                def on_line(doc: dict[str, Any] | None, state: dict[str, bool] = state) -> bool:
                    nonlocal next_rev
                    if doc is None:
                        return False
                    err = parse_error(doc)
                    if err is not None:
                        state["reauth"] = err.code == 16
                        return False
                    res = doc.get("result", doc)
                    if not isinstance(res, dict):
                        return False
                    try:
                        if res.get("canceled"):
                            if int64(res, "compact_revision") > 0:
                                state["recheck"] = True
                            return False
                        state["watching"] = True
                        for ev in res.get("events") or []:
                            item = kvs({"kvs": [ev.get("kv") or {}]})[0]
                            next_rev = max(next_rev, item.mod_revision + 1)
                            if (
                                ev.get("type") == "DELETE"
                                or item.create_revision != token.create_revision
                                or item.lease != token.lease
                            ):
                                state["lost"] = True
                                return False
                    except (SnowidError, AttributeError, TypeError):
                        return False
                    return True

                stale = self.client.token
                # Every stream is bounded (section 10), except the last one before the
                # caller's deadline, which that deadline already bounds.
                bounded = left > WATCH_RECHECK_S
                end, _ = self.client.stream(
                    endpoint,
                    "/v3/watch",
                    {
                        "create_request": {
                            "key": b64(holder_key),
                            "start_revision": str(next_rev),
                        }
                    },
                    WATCH_RECHECK_S if bounded else left,
                    on_line,
                    waiter,
                )
                if state["lost"]:
                    return True
                if end is StreamEnd.CANCELED or waiter.canceled:
                    return False
                quiet = False
                if end is StreamEnd.TIMED_OUT:
                    if not bounded:
                        return False
                    # WATCH_RECHECK_S without a loss: this member may be a stale one that
                    # accepted the watch and stays quiet. Read the key, then watch elsewhere.
                    state["recheck"] = True
                    quiet = True
                if state["watching"]:
                    broken = 0
                if state["reauth"] and self.client.options.user:
                    try:
                        self.client.refresh_token(stale)
                    except InvalidArgument:
                        raise
                    except SnowidError:
                        pass
                if state["recheck"] and not waiter.canceled:
                    try:
                        h, found = self._range(holder_key, waiter=waiter)
                        if not found or found[0].create_revision != token.create_revision:
                            return True
                        next_rev = h.revision + 1
                        if quiet:
                            endpoint = (endpoint + 1) % self.client.endpoint_count
                        continue
                    except SnowidError:
                        pass
                endpoint = (endpoint + 1) % self.client.endpoint_count
                broken += 1
                if broken % self.client.endpoint_count == 0:
                    waiter.pause(min(BROKEN_ROUND_PAUSE_S, max(0.0, deadline - time.monotonic())))
            return False
        finally:
            with self._lock:
                self._waiters.discard(waiter)

    # --- operators -----------------------------------------------------------------

    def list(self, region: int | None = None) -> list[WorkerRecord]:
        if region is not None:
            self._check_worker(region, 0)
        key = self.keys.region(region) if region is not None else self.keys.all
        _, found = self._range(key, prefix_end(key.encode()))
        slots: dict[tuple[int, int], list[KV | None]] = {}
        for item in found:
            p = self.keys.parse(item.key.decode("utf-8", "replace"))
            if p is None:
                continue
            slots.setdefault((p.region, p.host), [None, None])[0 if p.is_holder else 1] = item
        now = self.clock.wall_ns()
        out = []
        for (r, h), (holder_kv, mark_kv) in sorted(slots.items()):
            try:
                mark = self._mark_of(mark_kv)
            except DataLoss as e:
                raise DataLoss(f"worker {_worker(r, h)}: {e.message}") from None
            holder = None
            until = None
            if holder_kv is not None:
                try:
                    hv = decode_holder(holder_kv.value)
                except DataLoss as e:
                    raise DataLoss(f"worker {_worker(r, h)}: {e.message}") from None
                holder = dataclasses.asdict(hv)
            else:
                frm = free_from_ns(mark, self._quarantine_ns)
                if frm is not None and now < frm:
                    until = frm
            out.append(WorkerRecord(r, h, holder, mark.high_water_ns, mark.released_at_ns, until))
        return out

    def fence(self, region: int, host: int) -> None:
        """Revokes the holder's lease and starts the quarantine (released_at = now)."""
        self._check_worker(region, host)
        holder_key = self.keys.holder(region, host)
        mark_key = self.keys.mark(region, host)
        held = self._get(holder_key)
        if held is None:
            raise NotFound(f"worker {_worker(region, host)} is not held")
        if held.lease:
            self._revoke(held.lease)
        else:
            self._txn([cmp_create(holder_key, held.create_revision)], [op_delete(holder_key)], [])
        mark_kv = self._get(mark_key)
        for _ in range(MARK_ROUNDS):
            new = dataclasses.replace(self._mark_of(mark_kv), released_at_ns=self.clock.wall_ns())
            seen = mark_kv.mod_revision if mark_kv is not None else 0
            reply = self._txn(
                [cmp_create(holder_key, 0), cmp_mod(mark_key, seen)],
                [op_put(mark_key, encode_mark(new))],
                [op_range(holder_key), op_range(mark_key)],
            )
            if reply.succeeded or range_of(reply, 0) is not None:
                return
            mark_kv = range_of(reply, 1)
        raise Unavailable(f"the mark of worker {_worker(region, host)} kept changing")

    # --- the store record -------------------------------------------------------

    def _new_incarnation(self) -> str:
        return f"{self._rng.getrandbits(64):016x}"

    def _check_store(self, in_flight_ns: int) -> Store:
        """The namespace's store record, first written anew when the store is found
        new, lost or rolled back: every id then counts as marked at now + in_flight."""
        key = self.keys.store
        for _ in range(MARK_ROUNDS):
            found = self._get(key)
            why = self._history.take_pending()
            old: Store | None = None
            reason = ""
            if found is not None:
                old = decode_store(found.value)
                known = self._history.incarnation
                if why is None or (known and known != old.incarnation):
                    self._history.incarnation = old.incarnation
                    return old
            elif why is None:
                if self._history.incarnation:
                    why = "the store record vanished"
                else:
                    _, every = self._range(self.keys.all, prefix_end(self.keys.all.encode()))
                    if not every:
                        why = (
                            "no store record and no worker keys: a new namespace, or etcd lost "
                            "its data"
                        )
                    else:
                        reason = "first written for worker keys that predate store records"
            now = self.clock.wall_ns()
            hw = old.high_water_ns if old else None
            if why is not None:
                hw = _later(hw, now + in_flight_ns)
                reason = why
            nxt = Store(self._new_incarnation(), hw, reason, now)
            seen = found.mod_revision if found is not None else 0
            try:
                reply = self._txn([cmp_mod(key, seen)], [op_put(key, encode_store(nxt))], [])
            except SnowidError:
                if why is not None:
                    self._history.set_pending(why)
                raise
            if reply.succeeded:
                self._history.incarnation = nxt.incarnation
                return nxt
            if why is not None:
                self._history.set_pending(why)
        raise Unavailable(f"the store record of {key} kept changing")

    def initialize_namespace(self) -> None:
        """Declares a namespace that has never issued an id new, so its first holders
        need not wait out a stop deadline. ALREADY_EXISTS if it has a record."""
        key = self.keys.store
        v = Store(
            self._new_incarnation(), None, "initialized as a new namespace", self.clock.wall_ns()
        )
        reply = self._txn([cmp_create(key, 0)], [op_put(key, encode_store(v))], [])
        if not reply.succeeded:
            raise AlreadyExists(f"{key} already has a store record")
        self._history.incarnation = v.incarnation


def default_holder() -> tuple[str, int]:
    return socket.gethostname(), os.getpid()
