package dev.snowid;

import static dev.snowid.EtcdGateway.arr;
import static dev.snowid.EtcdGateway.b64;
import static dev.snowid.EtcdGateway.obj;

import dev.snowid.EtcdGateway.KeyValue;
import dev.snowid.EtcdValues.Holder;
import dev.snowid.EtcdValues.Keys;
import dev.snowid.EtcdValues.Mark;
import dev.snowid.EtcdValues.StoreRecord;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The etcd worker-id registry of docs/protocol.md: the same keys, values and transactions as the
 * C++ registry, so that holders in every language honour each other's marks. Every write to a mark
 * is conditional on the holder key being the writer's own (or absent). Thread-safe.
 */
final class EtcdRegistry {
  /** A held worker id: its lease and the holder key's create revision (the proof it is ours). */
  record Grant(long region, long host, long lease, long createRevision, Long previousHighWaterMs) {
    String key() {
      return lease + "/" + createRevision;
    }
  }

  private static final int ACQUIRE_ROUNDS = 64;
  private static final int MARK_ROUNDS = 16;
  private static final int GRANT_ATTEMPTS = 3;
  private static final long ABANDON_TIMEOUT_MS = 500;
  private static final long BROKEN_ROUND_PAUSE_MS = 100;

  /** docs/protocol.md section 10: a watch that showed no loss is rechecked after this long. */
  static final long WATCH_RECHECK_MS = 5000;

  private static final long MIN_IN_FLIGHT_MS = 8000;
  private static final SecureRandom RANDOM = new SecureRandom();

  final Keys keys;
  final EtcdGateway gateway;
  final StoreHistory history = new StoreHistory();
  private final Layout layout;
  private final long quarantineMs;
  private final long requestTimeoutMs;
  private final LongSupplier nowMs;
  private volatile long maxStopAfterMs;

  EtcdRegistry(
      List<String> endpoints,
      EtcdAccess access,
      String prefix,
      String cluster,
      Layout layout,
      long quarantineMs,
      long requestTimeoutMs,
      LongSupplier nowMs) {
    this.keys = new Keys(prefix, cluster);
    this.gateway = new EtcdGateway(endpoints, requestTimeoutMs, access);
    this.layout = layout;
    this.quarantineMs = quarantineMs;
    this.requestTimeoutMs = requestTimeoutMs;
    this.nowMs = nowMs;
  }

  // --- requests ----------------------------------------------------------------------------

  private void observe(Object header) {
    String why = history.observe(EtcdGateway.headerOf(header));
    if (why != null) {
      history.setPending(why);
    }
  }

  private List<KeyValue> range(String key, String prefixForEnd, long timeoutMs) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("key", b64(key));
    if (prefixForEnd != null) {
      body.put("range_end", EtcdGateway.b64RangeEnd(prefixForEnd));
    }
    Map<String, Object> doc = gateway.call("/v3/kv/range", body, timeoutMs);
    observe(doc.get("header"));
    List<KeyValue> out = new ArrayList<>();
    for (Object kv : arr(doc.get("kvs"))) {
      out.add(EtcdGateway.kvOf(kv));
    }
    return out;
  }

  private KeyValue get(String key, long timeoutMs) {
    List<KeyValue> kvs = range(key, null, timeoutMs);
    return kvs.isEmpty() ? null : kvs.get(0);
  }

  private KeyValue get(String key) {
    return get(key, requestTimeoutMs);
  }

  private static Map<String, Object> cmp(String key, String target, long revision) {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("key", b64(key));
    c.put("result", "EQUAL");
    c.put("target", target);
    c.put(target.equals("CREATE") ? "create_revision" : "mod_revision", Long.toString(revision));
    return c;
  }

  private static Map<String, Object> put(String key, String value, Long lease) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("key", b64(key));
    p.put("value", b64(value));
    if (lease != null) {
      p.put("lease", Long.toString(lease));
    }
    return Map.of("request_put", p);
  }

  private static Map<String, Object> rangeOp(String key) {
    return Map.of("request_range", Map.of("key", b64(key)));
  }

  private static Map<String, Object> deleteOp(String key) {
    return Map.of("request_delete_range", Map.of("key", b64(key)));
  }

  private record TxnReply(boolean succeeded, long revision, List<KeyValue> ranges) {}

  private TxnReply txn(
      List<Object> compares, List<Object> success, List<Object> failure, long timeoutMs) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("compare", compares);
    body.put("success", success);
    body.put("failure", failure);
    Map<String, Object> doc = gateway.call("/v3/kv/txn", body, timeoutMs);
    observe(doc.get("header"));
    List<KeyValue> ranges = new ArrayList<>();
    for (Object r : arr(doc.get("responses"))) {
      List<Object> kvs = arr(obj(obj(r).get("response_range")).get("kvs"));
      ranges.add(kvs.isEmpty() ? null : EtcdGateway.kvOf(kvs.get(0)));
    }
    return new TxnReply(
        Boolean.TRUE.equals(doc.get("succeeded")),
        EtcdGateway.headerOf(doc.get("header")).revision(),
        ranges);
  }

  private TxnReply txn(List<Object> compares, List<Object> success, List<Object> failure) {
    return txn(compares, success, failure, requestTimeoutMs);
  }

  void revoke(long lease, long timeoutMs) {
    try {
      gateway.call("/v3/lease/revoke", Map.of("ID", Long.toString(lease)), timeoutMs);
    } catch (SnowidException e) {
      if (e.code() != Code.NOT_FOUND) {
        throw e;
      }
    }
  }

  private void revokeQuietly(long lease) {
    try {
      revoke(lease, requestTimeoutMs);
    } catch (RuntimeException e) {
      // best effort: the lease expires by itself
    }
  }

  private static String incarnation() {
    byte[] b = new byte[8];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  private static String markText(KeyValue kv) {
    return kv == null ? null : kv.value();
  }

  /**
   * One read of the store record, its answer ignored: loads and connects the HTTP client before an
   * acquire starts its stop deadline, which a cold JVM on a loaded machine can otherwise spend.
   */
  /** Authenticates (a refused user is thrown) and opens a connection. */
  void warmUp() {
    try {
      gateway.authenticate();
    } catch (SnowidException e) {
      if (!e.isRetryable()) {
        throw e;
      }
    }
    try {
      get(keys.store);
    } catch (RuntimeException e) {
      // the acquire reports what is wrong
    }
  }

  // --- store record (section 9) ------------------------------------------------------------

  private StoreRecord checkStore(long inFlightMs) {
    String key = keys.store;
    for (int round = 0; round < MARK_ROUNDS; round++) {
      KeyValue kv = get(key);
      String why = history.takePending();
      StoreRecord old = null;
      String reason = "";
      try {
        if (kv != null) {
          old = EtcdValues.decodeStore(kv.value());
          String known = history.incarnation();
          if (why == null || (!known.isEmpty() && !known.equals(old.incarnation()))) {
            history.adopt(old.incarnation());
            return old;
          }
        } else if (why == null) {
          if (!history.incarnation().isEmpty()) {
            why = "the store record vanished";
          } else {
            List<KeyValue> all = range(keys.base, keys.base, requestTimeoutMs);
            if (all.isEmpty()) {
              why = "no store record and no worker keys: a new namespace, or etcd lost its data";
            } else {
              reason = "first written for worker keys that predate store records";
            }
          }
        }
      } catch (RuntimeException e) {
        if (why != null) {
          history.setPending(why);
        }
        throw e;
      }
      long now = nowMs.getAsLong();
      Long highWater =
          why != null
              ? EtcdValues.later(old == null ? null : old.highWaterMs(), now + inFlightMs)
              : old == null ? null : old.highWaterMs();
      StoreRecord next = new StoreRecord(incarnation(), highWater, why != null ? why : reason, now);
      TxnReply reply;
      try {
        reply =
            txn(
                List.of(cmp(key, "MOD", kv == null ? 0 : kv.modRevision())),
                List.of(put(key, EtcdValues.encodeStore(next), null)),
                List.of());
      } catch (RuntimeException e) {
        if (why != null) {
          history.setPending(why);
        }
        throw e;
      }
      if (reply.succeeded()) {
        history.adopt(next.incarnation());
        return next;
      }
      if (why != null) {
        history.setPending(why);
      }
    }
    throw new SnowidException(Code.UNAVAILABLE, "the store record " + key + " kept changing", 100);
  }

  /** Declares a namespace that has never issued an id new; ALREADY_EXISTS when it has a record. */
  void initializeNamespace() {
    String key = keys.store;
    StoreRecord r =
        new StoreRecord(incarnation(), null, "initialized as a new namespace", nowMs.getAsLong());
    TxnReply reply =
        txn(
            List.of(cmp(key, "CREATE", 0)),
            List.of(put(key, EtcdValues.encodeStore(r), null)),
            List.of());
    if (!reply.succeeded()) {
      throw new SnowidException(Code.ALREADY_EXISTS, key + " already has a store record");
    }
    history.adopt(r.incarnation());
  }

  // --- acquire (section 5) -----------------------------------------------------------------

  /** Grants a lease and takes a free worker id in one transaction. */
  Grant acquire(
      long region, Long host, long ttlSeconds, long stopAfterMs, long highWaterMs, Holder holder) {
    layout.checkWorker(region, host == null ? 0 : host);
    // A grant whose reply was lost only leaves a lease that expires by itself: retried a few
    // times, since the first request of a cold JVM on a loaded machine can outlast the timeout.
    Map<String, Object> granted = null;
    for (int attempt = 1; granted == null; attempt++) {
      try {
        granted =
            gateway.call(
                "/v3/lease/grant", Map.of("TTL", Long.toString(ttlSeconds)), requestTimeoutMs);
      } catch (SnowidException e) {
        if (e.code() != Code.UNAVAILABLE || attempt >= GRANT_ATTEMPTS) {
          throw e;
        }
      }
    }
    long lease = EtcdGateway.integer(granted.get("ID"));
    long ttl = EtcdGateway.integer(granted.get("TTL"));
    if (ttl < ttlSeconds) {
      revokeQuietly(lease);
      throw new SnowidException(
          Code.FAILED_PRECONDITION,
          "etcd granted a " + ttl + " s lease instead of " + ttlSeconds + " s");
    }
    try {
      return tryAcquire(region, host, stopAfterMs, highWaterMs, holder, lease);
    } catch (RuntimeException e) {
      // Also removes a holder key that a transaction with an unknown outcome may have written.
      revokeQuietly(lease);
      throw e;
    }
  }

  private record Slot(KeyValue holder, KeyValue mark) {}

  private Grant tryAcquire(
      long region, Long pinned, long stopAfterMs, long highWaterMs, Holder h, long lease) {
    String regionKey = keys.region(region);
    String holderValue =
        EtcdValues.encodeHolder(new Holder(h.host(), h.pid(), h.startedMs(), h.address(), lease));
    Long pendingHost = null;
    Long pendingPrevious = null;
    maxStopAfterMs = Math.max(maxStopAfterMs, stopAfterMs);
    Long storeHighWater = checkStore(Math.max(maxStopAfterMs, MIN_IN_FLIGHT_MS)).highWaterMs();
    for (int round = 0; round < ACQUIRE_ROUNDS; round++) {
      List<KeyValue> kvs = range(regionKey, regionKey, requestTimeoutMs);
      // A holder key on our lease: a transaction whose reply was lost did apply.
      for (KeyValue kv : kvs) {
        Keys.Parsed p = keys.parse(kv.key());
        if (p == null || !p.holder() || kv.lease() != lease) {
          continue;
        }
        Long previous = pendingPrevious;
        if (pendingHost == null || pendingHost != p.host()) {
          previous =
              EtcdValues.decodeMark(markText(get(keys.mark(p.region(), p.host())))).highWaterMs();
        }
        return new Grant(
            region,
            p.host(),
            lease,
            kv.createRevision(),
            EtcdValues.later(previous, storeHighWater));
      }
      Map<Long, Slot> slots = new HashMap<>();
      for (KeyValue kv : kvs) {
        Keys.Parsed p = keys.parse(kv.key());
        if (p == null || p.region() != region) {
          continue;
        }
        Slot s = slots.getOrDefault(p.host(), new Slot(null, null));
        slots.put(p.host(), p.holder() ? new Slot(kv, s.mark()) : new Slot(s.holder(), kv));
      }
      long host = choose(region, pinned, slots, pendingHost);
      Slot slot = slots.getOrDefault(host, new Slot(null, null));
      Mark oldMark = EtcdValues.decodeMark(markText(slot.mark()));
      Mark newMark = oldMark.withHighWater(EtcdValues.later(oldMark.highWaterMs(), highWaterMs));
      String holderKey = keys.holder(region, host);
      String markKey = keys.mark(region, host);
      long seen = slot.mark() == null ? 0 : slot.mark().modRevision();
      TxnReply reply;
      try {
        reply =
            txn(
                List.of(cmp(holderKey, "CREATE", 0), cmp(markKey, "MOD", seen)),
                List.of(
                    put(holderKey, holderValue, lease),
                    put(markKey, EtcdValues.encodeMark(newMark), null)),
                List.of(rangeOp(holderKey)));
      } catch (SnowidException e) {
        if (e.code() == Code.NOT_FOUND) {
          throw new SnowidException(
              Code.UNAVAILABLE, "the lease expired while acquiring: " + e.getMessage(), 100);
        }
        if (e.code() != Code.UNAVAILABLE) {
          throw e;
        }
        // Unknown outcome: ask who holds the id before trying again.
        KeyValue holder;
        try {
          holder = get(holderKey);
        } catch (RuntimeException e2) {
          throw new SnowidException(
              Code.UNAVAILABLE,
              "acquiring "
                  + region
                  + "/"
                  + host
                  + ": the outcome is unknown and could not be checked: "
                  + e.getMessage(),
              100);
        }
        if (holder != null && holder.lease() == lease) {
          return new Grant(
              region,
              host,
              lease,
              holder.createRevision(),
              EtcdValues.later(oldMark.highWaterMs(), storeHighWater));
        }
        // Not applied (yet): the same id again, so a late arrival cannot leave two on our lease.
        pendingHost = host;
        pendingPrevious = oldMark.highWaterMs();
        continue;
      }
      if (reply.succeeded()) {
        return new Grant(
            region,
            host,
            lease,
            reply.revision(),
            EtcdValues.later(oldMark.highWaterMs(), storeHighWater));
      }
      KeyValue holder = reply.ranges().isEmpty() ? null : reply.ranges().get(0);
      if (holder != null && holder.lease() == lease) {
        Long prev =
            pendingHost != null && pendingHost == host ? pendingPrevious : oldMark.highWaterMs();
        return new Grant(
            region, host, lease, holder.createRevision(), EtcdValues.later(prev, storeHighWater));
      }
      if (pendingHost != null && pendingHost == host && holder != null) {
        pendingHost = null;
        pendingPrevious = null;
      }
    }
    throw new SnowidException(
        Code.UNAVAILABLE,
        "no worker id in region "
            + region
            + " after "
            + ACQUIRE_ROUNDS
            + " rounds: too many concurrent acquirers",
        100);
  }

  private long choose(long region, Long pinned, Map<Long, Slot> slots, Long prefer) {
    long now = nowMs.getAsLong();
    int[] counts = new int[3];
    Long[] nextFree = new Long[1];
    java.util.function.Function<Slot, String> refusal =
        slot -> {
          if (slot.holder() != null) {
            counts[0]++;
            try {
              Holder h = EtcdValues.decodeHolder(slot.holder().value());
              return "held by " + h.host() + " (pid " + h.pid() + ")";
            } catch (SnowidException e) {
              return "held by an unreadable holder";
            }
          }
          Mark mark;
          try {
            mark = EtcdValues.decodeMark(markText(slot.mark()));
          } catch (SnowidException e) {
            counts[2]++;
            return "its mark is unreadable: " + e.getMessage();
          }
          if (EtcdValues.eligible(false, mark, now, quarantineMs)) {
            return null;
          }
          long from = EtcdValues.freeFromMs(mark, quarantineMs);
          counts[1]++;
          nextFree[0] = nextFree[0] == null ? from : Math.min(nextFree[0], from);
          return "quarantined until " + Layout.formatInstant(from);
        };
    Slot none = new Slot(null, null);
    if (pinned != null) {
      String why = refusal.apply(slots.getOrDefault(pinned, none));
      if (why != null) {
        throw new SnowidException(
            Code.RESOURCE_EXHAUSTED, "worker " + region + "/" + pinned + " is " + why);
      }
      return pinned;
    }
    List<Long> free = new ArrayList<>();
    for (long h = 0; h < layout.workersPerRegion(); h++) {
      if (refusal.apply(slots.getOrDefault(h, none)) == null) {
        free.add(h);
      }
    }
    if (free.isEmpty()) {
      throw new SnowidException(
          Code.RESOURCE_EXHAUSTED,
          "no free worker id in region "
              + region
              + ": all "
              + layout.workersPerRegion()
              + " are taken ("
              + counts[0]
              + " held, "
              + counts[1]
              + " quarantined"
              + (counts[2] > 0 ? ", " + counts[2] + " with unreadable marks" : "")
              + ")"
              + (nextFree[0] != null
                  ? "; the next leaves quarantine at " + Layout.formatInstant(nextFree[0])
                  : ""));
    }
    if (prefer != null && free.contains(prefer)) {
      return prefer;
    }
    return free.get(RANDOM.nextInt(free.size()));
  }

  // --- renew (section 6) -------------------------------------------------------------------

  /** Keepalive, then the new mark guarded by our holder key. LEASE_LOST when the lease is gone. */
  void renew(Grant g, long highWaterMs, long timeLeftMs) {
    if (timeLeftMs <= 0) {
      throw new SnowidException(
          Code.UNAVAILABLE, "no time left to renew worker " + g.region() + "/" + g.host(), 100);
    }
    long started = System.nanoTime();
    LongSupplier left = () -> Math.max(1, timeLeftMs - (System.nanoTime() - started) / 1_000_000);
    Map<String, Object> doc;
    try {
      doc =
          gateway.call(
              "/v3/lease/keepalive", Map.of("ID", Long.toString(g.lease())), left.getAsLong());
    } catch (SnowidException e) {
      if (e.code() == Code.NOT_FOUND) {
        throw new SnowidException(
            Code.LEASE_LOST,
            "lease of worker " + g.region() + "/" + g.host() + " is gone: " + e.getMessage());
      }
      throw e;
    }
    if (EtcdGateway.integer(obj(doc.get("result")).get("TTL")) <= 0) {
      throw new SnowidException(
          Code.LEASE_LOST,
          "lease of worker " + g.region() + "/" + g.host() + " was revoked or expired");
    }
    String holderKey = keys.holder(g.region(), g.host());
    String markKey = keys.mark(g.region(), g.host());
    KeyValue mark = get(markKey, left.getAsLong());
    for (int round = 0; round < MARK_ROUNDS; round++) {
      Mark old = EtcdValues.decodeMark(markText(mark));
      // Every mark read, the one read back after a lost compare included: a rolled-back mark
      // seen only there would otherwise be written over.
      String why = history.checkMark(g.key(), old.highWaterMs());
      if (why != null) {
        history.setPending(why);
      }
      Mark next = old.withHighWater(EtcdValues.later(old.highWaterMs(), highWaterMs));
      TxnReply reply =
          txn(
              List.of(
                  cmp(holderKey, "CREATE", g.createRevision()),
                  cmp(markKey, "MOD", mark == null ? 0 : mark.modRevision())),
              List.of(put(markKey, EtcdValues.encodeMark(next), null)),
              List.of(rangeOp(holderKey), rangeOp(markKey)),
              left.getAsLong());
      if (reply.succeeded()) {
        history.storedMark(g.key(), next.highWaterMs());
        if (history.hasPending()) {
          try {
            checkStore(Math.max(maxStopAfterMs, MIN_IN_FLIGHT_MS));
          } catch (RuntimeException e) {
            // retried after the next renewal
          }
        }
        return;
      }
      KeyValue holder = reply.ranges().get(0);
      if (holder == null || holder.createRevision() != g.createRevision()) {
        throw new SnowidException(
            Code.LEASE_LOST,
            "worker " + g.region() + "/" + g.host() + " is no longer held by this lease");
      }
      mark = reply.ranges().get(1);
    }
    throw new SnowidException(
        Code.UNAVAILABLE,
        "the mark of worker " + g.region() + "/" + g.host() + " kept changing",
        100);
  }

  // --- release and abandon (section 11) ----------------------------------------------------

  /**
   * Writes the exact last instant (never below the previous holders' mark) with the release time
   * and a clean-release record, deletes the holder key, then revokes the lease. A failed compare
   * that finds one of the values we sent is our own release, not a lost lease.
   */
  void release(Grant g, long lastIssuedMs) {
    history.forget(g.key());
    String holderKey = keys.holder(g.region(), g.host());
    String markKey = keys.mark(g.region(), g.host());
    KeyValue mark = get(markKey);
    List<String> sent = new ArrayList<>();
    boolean retried = false;
    SnowidException result =
        new SnowidException(
            Code.UNAVAILABLE,
            "the mark of worker " + g.region() + "/" + g.host() + " kept changing",
            100);
    for (int round = 0; round < MARK_ROUNDS; round++) {
      Mark old = EtcdValues.decodeMark(markText(mark));
      long hw = EtcdValues.later(g.previousHighWaterMs(), lastIssuedMs);
      String value = EtcdValues.encodeMark(new Mark(hw, nowMs.getAsLong(), hw));
      sent.add(value);
      TxnReply reply;
      try {
        reply =
            txn(
                List.of(
                    cmp(holderKey, "CREATE", g.createRevision()),
                    cmp(markKey, "MOD", mark == null ? 0 : mark.modRevision())),
                List.of(put(markKey, value, null), deleteOp(holderKey)),
                List.of(rangeOp(holderKey), rangeOp(markKey)));
      } catch (SnowidException e) {
        if (e.code() != Code.UNAVAILABLE || retried) {
          throw e;
        }
        retried = true;
        mark = get(markKey);
        if (mark != null && sent.contains(mark.value())) {
          result = null;
          break;
        }
        continue;
      }
      if (reply.succeeded()) {
        result = null;
        break;
      }
      KeyValue holder = reply.ranges().get(0);
      KeyValue now = reply.ranges().get(1);
      if (holder == null || holder.createRevision() != g.createRevision()) {
        result =
            now != null && sent.contains(now.value())
                ? null
                : new SnowidException(
                    Code.LEASE_LOST,
                    "worker " + g.region() + "/" + g.host() + " was no longer held by this lease");
        break;
      }
      mark = now;
    }
    if (result == null || result.code() == Code.LEASE_LOST) {
      revokeQuietly(g.lease());
    }
    if (result != null) {
      throw result;
    }
  }

  /** Revokes the lease and nothing else, briefly and best effort. */
  void abandon(Grant g) {
    history.forget(g.key());
    try {
      revoke(g.lease(), Math.min(requestTimeoutMs, ABANDON_TIMEOUT_MS));
    } catch (RuntimeException e) {
      // best effort: the lease expires by itself
    }
  }

  // --- watch (section 10) ------------------------------------------------------------------

  /**
   * Watches the holder key from its create revision + 1: true once it is deleted or replaced, false
   * when {@code stopped} turns true. A stream that ran {@link #WATCH_RECHECK_MS} without a loss, or
   * was compacted, is followed by a linearizable read of the key; broken streams move on to the
   * next member, pausing after a whole round of them.
   */
  boolean waitLost(Grant g, BooleanSupplier stopped) throws InterruptedException {
    String holderKey = keys.holder(g.region(), g.host());
    long[] nextRevision = {g.createRevision() + 1};
    int endpoint = gateway.preferredEndpoint();
    int broken = 0;
    int count = gateway.endpoints.size();
    while (!stopped.getAsBoolean()) {
      boolean[] lost = {false};
      boolean[] recheck = {false};
      boolean[] watching = {false};
      Map<String, Object> create = new LinkedHashMap<>();
      create.put("key", b64(holderKey));
      create.put("start_revision", Long.toString(nextRevision[0]));
      EtcdGateway.StreamEnd how =
          gateway.stream(
              endpoint,
              "/v3/watch",
              Map.of("create_request", create),
              doc -> {
                if (doc.get("error") != null) {
                  return false;
                }
                Map<String, Object> r = obj(doc.get("result"));
                if (Boolean.TRUE.equals(r.get("canceled"))) {
                  if (EtcdGateway.integer(r.get("compact_revision")) > 0) {
                    recheck[0] = true;
                  }
                  return false;
                }
                watching[0] = true;
                for (Object ev : arr(r.get("events"))) {
                  KeyValue kv = EtcdGateway.kvOf(obj(ev).get("kv"));
                  nextRevision[0] = Math.max(nextRevision[0], kv.modRevision() + 1);
                  if ("DELETE".equals(obj(ev).get("type"))
                      || kv.createRevision() != g.createRevision()
                      || kv.lease() != g.lease()) {
                    lost[0] = true;
                    return false;
                  }
                }
                return true;
              },
              stopped,
              WATCH_RECHECK_MS);
      if (lost[0]) {
        return true;
      }
      if (how == EtcdGateway.StreamEnd.ABORTED || stopped.getAsBoolean()) {
        return false;
      }
      if (watching[0]) {
        broken = 0;
      }
      if (recheck[0] || how == EtcdGateway.StreamEnd.EXPIRED) {
        try {
          Map<String, Object> doc =
              gateway.call("/v3/kv/range", Map.of("key", b64(holderKey)), requestTimeoutMs);
          observe(doc.get("header"));
          List<Object> kvs = arr(doc.get("kvs"));
          if (kvs.isEmpty()
              || EtcdGateway.kvOf(kvs.get(0)).createRevision() != g.createRevision()) {
            return true;
          }
          nextRevision[0] = EtcdGateway.headerOf(doc.get("header")).revision() + 1;
          if (how == EtcdGateway.StreamEnd.EXPIRED) {
            // Watched again on the next member: the last one may be stale and quiet.
            endpoint = (endpoint + 1) % count;
          }
          continue;
        } catch (SnowidException e) {
          if (e.code() == Code.NOT_FOUND) {
            throw e;
          }
          // a broken member: the next one below
        }
      }
      endpoint = (endpoint + 1) % count;
      if (++broken % count == 0) {
        Thread.sleep(BROKEN_ROUND_PAUSE_MS);
      }
    }
    return false;
  }
}
