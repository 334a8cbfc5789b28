/**
 * The etcd worker-id registry, the same keys, values and transactions as the C++ registry
 * (etcd/etcd_registry.cc, docs/leases.md), so that holders of both honour each other's marks.
 * Every write to a mark is conditional on the holder key being the writer's own (or absent).
 */
import { randomBytes, randomInt } from "node:crypto";
import { SnowidError } from "../errors.js";
import type { Layout } from "../layout.js";
import { b64, Gateway, headerOf, kvOf, prefixEnd, type Header, type Json, type KeyValue } from "./gateway.js";
import { StoreHistory } from "./store-history.js";
import {
  decodeHolder,
  decodeMark,
  decodeStore,
  encodeHolder,
  encodeMark,
  encodeStore,
  eligible,
  freeFromMs,
  later,
  WorkerKeys,
  type Holder,
  type Mark,
  type StoreRecord,
} from "./values.js";

const ACQUIRE_ROUNDS = 64;
const MARK_ROUNDS = 16;
const ABANDON_TIMEOUT_MS = 500;
const BROKEN_ROUND_PAUSE_MS = 100;
/**
 * docs/protocol.md section 10: a watch stream that has run this long without showing a loss is
 * ended, the holder key read (linearizably, failing over to a member with a leader) and the watch
 * moved to the next member. A member resumed from a pause can accept a watch while it still
 * believes in a leader it has lost, and then never deliver the fence.
 */
export const WATCH_RECHECK_MS = 5000;
// How long a holder under a lost store may have gone on issuing when this process knows of no
// longer stop_after: the default's (other processes' timings are not known).
const MIN_IN_FLIGHT_MS = 8000;

export interface Grant {
  region: number;
  host: number;
  lease: bigint;
  /** The holder key's create revision: the proof that the id is still ours. */
  createRevision: bigint;
  /** The previous holders' high-water mark (and the store-wide mark), Unix ms. */
  previousHighWaterMs: number | undefined;
}

export interface AcquireRequest {
  region: number;
  host?: number;
  ttlSeconds: number;
  stopAfterMs: number;
  /** The first mark: the wall clock plus stop_after. */
  highWaterMs: number;
  holder: Omit<Holder, "lease">;
}

type Compare = { key: string; target: "CREATE" | "MOD"; revision: bigint };
type Op = { put: { key: string; value: string; lease?: bigint } } | { range: string } | { remove: string };

function txnBody(compares: Compare[], success: Op[], failure: Op[]): Json {
  const op = (o: Op): Json => {
    if ("put" in o) {
      const p: Json = { key: b64(o.put.key), value: b64(o.put.value) };
      if (o.put.lease !== undefined) p["lease"] = o.put.lease.toString();
      return { request_put: p };
    }
    if ("range" in o) return { request_range: { key: b64(o.range) } };
    return { request_delete_range: { key: b64(o.remove) } };
  };
  return {
    compare: compares.map((c) => ({
      key: b64(c.key),
      result: "EQUAL",
      target: c.target,
      [c.target === "CREATE" ? "create_revision" : "mod_revision"]: c.revision.toString(),
    })),
    success: success.map(op),
    failure: failure.map(op),
  };
}

interface TxnReply {
  succeeded: boolean;
  revision: bigint;
  ranges: (KeyValue | undefined)[];
}

interface Slot {
  holder?: KeyValue;
  mark?: KeyValue;
}

export interface RegistryOptions {
  endpoints: readonly string[];
  prefix: string;
  cluster: string;
  layout: Layout;
  quarantineMs: number;
  requestTimeoutMs: number;
  nowMs: () => number;
  /** The bound of one watch stream; WATCH_RECHECK_MS unless a test shortens it. */
  watchRecheckMs?: number;
}

/** The key of a grant in the store history. */
const grantKey = (g: Grant) => `${g.lease}/${g.createRevision}`;

export class EtcdRegistry {
  readonly keys: WorkerKeys;
  readonly gateway: Gateway;
  /** What this registry has seen of etcd's store (docs/protocol.md, section 9). */
  readonly history = new StoreHistory();
  private maxStopAfterMs = 0;

  constructor(private readonly o: RegistryOptions) {
    this.keys = new WorkerKeys(o.prefix, o.cluster);
    this.gateway = new Gateway(o.endpoints, o.requestTimeoutMs);
  }

  private async range(key: string, end?: string, timeoutMs?: number): Promise<KeyValue[]> {
    const body: Json = { key: b64(key) };
    if (end !== undefined) body["range_end"] = b64(end);
    const doc = await this.gateway.call("/v3/kv/range", body, { timeoutMs });
    this.observe(headerOf(doc["header"]));
    return ((doc["kvs"] as unknown[] | undefined) ?? []).map(kvOf);
  }

  // Every range and transaction is linearizable, so none may show an earlier store than one
  // already seen: if it does, etcd lost writes.
  private observe(header: Header): void {
    const why = this.history.observe(header);
    if (why !== undefined) this.history.setPending(why);
  }

  /** The longest stop_after of the leases acquired here, and at least the default's. */
  private get inFlightMs(): number {
    return Math.max(this.maxStopAfterMs, MIN_IN_FLIGHT_MS);
  }

  private async get(key: string, timeoutMs?: number): Promise<KeyValue | undefined> {
    return (await this.range(key, undefined, timeoutMs))[0];
  }

  private async txn(
    compares: Compare[],
    success: Op[],
    failure: Op[],
    timeoutMs?: number,
  ): Promise<TxnReply> {
    const doc = await this.gateway.call("/v3/kv/txn", txnBody(compares, success, failure), { timeoutMs });
    this.observe(headerOf(doc["header"]));
    const responses = (doc["responses"] as Json[] | undefined) ?? [];
    return {
      succeeded: doc["succeeded"] === true,
      revision: headerOf(doc["header"]).revision,
      ranges: responses.map((r) => {
        const range = r["response_range"] as Json | undefined;
        const kvs = (range?.["kvs"] as unknown[] | undefined) ?? [];
        return kvs.length > 0 ? kvOf(kvs[0]) : undefined;
      }),
    };
  }

  async revoke(lease: bigint, timeoutMs?: number): Promise<void> {
    try {
      await this.gateway.call("/v3/lease/revoke", { ID: lease.toString() }, { timeoutMs });
    } catch (e) {
      if (!(e instanceof SnowidError && e.code === "NOT_FOUND")) throw e;
    }
  }

  /** Grants a lease and takes a free worker id in one transaction (docs/leases.md). */
  async acquire(req: AcquireRequest): Promise<Grant> {
    this.o.layout.checkWorker(req.region, req.host ?? 0);
    const granted = await this.gateway.call("/v3/lease/grant", { TTL: String(req.ttlSeconds) });
    const lease = BigInt(String(granted["ID"] ?? "0"));
    const ttl = Number(granted["TTL"] ?? 0);
    if (ttl < req.ttlSeconds) {
      await this.revoke(lease).catch(() => undefined);
      throw new SnowidError(
        "FAILED_PRECONDITION",
        `etcd granted a ${ttl} s lease instead of ${req.ttlSeconds} s`,
      );
    }
    try {
      return await this.tryAcquire(req, lease);
    } catch (e) {
      // Also removes a holder key that a transaction with an unknown outcome may have written.
      await this.revoke(lease).catch(() => undefined);
      throw e;
    }
  }

  /**
   * Reads the namespace's store record and returns it, first writing it anew when the store
   * is found new, lost or rolled back: then every id counts as marked at the clock's now plus
   * `inFlightMs` (every holder under the old store stops issuing within its stop_after), or at
   * the record's own mark if later. A loss that cannot be recorded stays pending.
   */
  private async checkStore(inFlightMs: number): Promise<StoreRecord> {
    const key = this.keys.store;
    for (let round = 0; round < MARK_ROUNDS; round++) {
      const kv = await this.get(key);
      let why = this.history.takePending();
      let old: StoreRecord | undefined;
      let reason = "";
      try {
        if (kv !== undefined) {
          old = decodeStore(kv.value);
          const known = this.history.incarnation;
          // Without news, or when the record was written anew since this process last read it
          // (another holder recorded the same loss, or an operator declared it), it stands.
          if (why === undefined || (known !== "" && known !== old.incarnation)) {
            this.history.adopt(old.incarnation);
            return old;
          }
        } else if (why === undefined) {
          if (this.history.incarnation !== "") {
            why = "the store record vanished";
          } else {
            // An empty namespace may be new or lost, and the two look alike; one whose worker
            // keys predate store records gets a record without a mark of its own.
            const all = await this.range(this.keys.base, prefixEnd(this.keys.base));
            if (all.length === 0) {
              why = "no store record and no worker keys: a new namespace, or etcd lost its data";
            } else {
              reason = "first written for worker keys that predate store records";
            }
          }
        }
      } catch (e) {
        if (why !== undefined) this.history.setPending(why);
        throw e;
      }
      const now = this.o.nowMs();
      const next: StoreRecord = { incarnation: randomBytes(8).toString("hex"), reason, writtenMs: now };
      const highWater = why !== undefined ? later(old?.highWaterMs, now + inFlightMs) : old?.highWaterMs;
      if (highWater !== undefined) next.highWaterMs = highWater;
      if (why !== undefined) next.reason = why;
      let reply: TxnReply;
      try {
        reply = await this.txn(
          [{ key, target: "MOD", revision: kv?.modRevision ?? 0n }],
          [{ put: { key, value: encodeStore(next) } }],
          [],
        );
      } catch (e) {
        if (why !== undefined) this.history.setPending(why);
        throw e;
      }
      if (reply.succeeded) {
        this.history.adopt(next.incarnation);
        return next;
      }
      // The record changed under us: read it again, still carrying the news.
      if (why !== undefined) this.history.setPending(why);
    }
    throw new SnowidError("UNAVAILABLE", `the store record ${key} kept changing`, 100);
  }

  /**
   * Declares a namespace that has never issued an id new (`snowid workers init`), so that its
   * first holders need not wait out a stop deadline. ALREADY_EXISTS when it has a record.
   * Never after etcd lost its data: it would lift the wait that protects the old holders' ids.
   */
  async initializeNamespace(): Promise<void> {
    const key = this.keys.store;
    const now = this.o.nowMs();
    const value = encodeStore({
      incarnation: randomBytes(8).toString("hex"),
      reason: "initialized as a new namespace",
      writtenMs: now,
    });
    const reply = await this.txn([{ key, target: "CREATE", revision: 0n }], [{ put: { key, value } }], []);
    if (!reply.succeeded) throw new SnowidError("ALREADY_EXISTS", `${key} already has a store record`);
    this.history.adopt(decodeStore(value).incarnation);
  }

  private choose(
    req: AcquireRequest,
    kvs: KeyValue[],
    prefer: number | undefined,
  ): { host: number; slot: Slot } {
    const slots = new Map<number, Slot>();
    for (const kv of kvs) {
      const p = this.keys.parse(kv.key);
      if (p === undefined || p.region !== req.region) continue;
      const slot = slots.get(p.host) ?? {};
      if (p.isHolder) slot.holder = kv;
      else slot.mark = kv;
      slots.set(p.host, slot);
    }
    const now = this.o.nowMs();
    let held = 0;
    let quarantined = 0;
    let unreadable = 0;
    let nextFree: number | undefined;
    const refusal = (slot: Slot): string | undefined => {
      if (slot.holder !== undefined) {
        held++;
        try {
          const h = decodeHolder(slot.holder.value);
          return `held by ${h.host} (pid ${h.pid})`;
        } catch {
          return "held by an unreadable holder";
        }
      }
      let mark: Mark;
      try {
        mark = decodeMark(slot.mark?.value);
      } catch (e) {
        unreadable++;
        return `its mark is unreadable: ${(e as Error).message}`;
      }
      if (eligible(false, mark, now, this.o.quarantineMs)) return undefined;
      const from = freeFromMs(mark, this.o.quarantineMs)!;
      quarantined++;
      nextFree = nextFree === undefined ? from : Math.min(nextFree, from);
      return `quarantined until ${new Date(from).toISOString()}`;
    };
    if (req.host !== undefined) {
      const slot = slots.get(req.host) ?? {};
      const why = refusal(slot);
      if (why !== undefined)
        throw new SnowidError("RESOURCE_EXHAUSTED", `worker ${req.region}/${req.host} is ${why}`);
      return { host: req.host, slot };
    }
    const free: number[] = [];
    for (let h = 0; h < this.o.layout.workersPerRegion; h++)
      if (refusal(slots.get(h) ?? {}) === undefined) free.push(h);
    if (free.length === 0) {
      throw new SnowidError(
        "RESOURCE_EXHAUSTED",
        `no free worker id in region ${req.region}: all ${this.o.layout.workersPerRegion} are taken (${held} held, ` +
          `${quarantined} quarantined${unreadable > 0 ? `, ${unreadable} with unreadable marks` : ""})` +
          (nextFree !== undefined
            ? `; the next leaves quarantine at ${new Date(nextFree).toISOString()}`
            : ""),
      );
    }
    const host = prefer !== undefined && free.includes(prefer) ? prefer : free[randomInt(free.length)]!;
    return { host, slot: slots.get(host) ?? {} };
  }

  private async tryAcquire(req: AcquireRequest, lease: bigint): Promise<Grant> {
    const regionKey = this.keys.region(req.region);
    const holderValue = encodeHolder({ ...req.holder, lease });
    // After a transaction whose outcome is unknown: its id, tried first again, and the mark it saw.
    let pendingHost: number | undefined;
    let pendingPrevious: number | undefined;
    this.maxStopAfterMs = Math.max(this.maxStopAfterMs, req.stopAfterMs);
    const storeHighWater = (await this.checkStore(this.inFlightMs)).highWaterMs;
    const granted = (host: number, createRevision: bigint, previous: number | undefined): Grant => ({
      region: req.region,
      host,
      lease,
      createRevision,
      previousHighWaterMs: later(previous, storeHighWater),
    });
    for (let round = 0; round < ACQUIRE_ROUNDS; round++) {
      const kvs = await this.range(regionKey, prefixEnd(regionKey));
      // A holder key on our lease: a transaction whose reply was lost did succeed.
      for (const kv of kvs) {
        const p = this.keys.parse(kv.key);
        if (p === undefined || !p.isHolder || kv.lease !== lease) continue;
        let previous = pendingPrevious;
        if (pendingHost !== p.host)
          previous = decodeMark((await this.get(this.keys.mark(p.region, p.host)))?.value).highWaterMs;
        return granted(p.host, kv.createRevision, previous);
      }
      const choice = this.choose(req, kvs, pendingHost);
      const oldMark = decodeMark(choice.slot.mark?.value);
      const newMark: Mark = { ...oldMark };
      const hw = later(oldMark.highWaterMs, req.highWaterMs);
      if (hw !== undefined) newMark.highWaterMs = hw;
      const holderKey = this.keys.holder(req.region, choice.host);
      const markKey = this.keys.mark(req.region, choice.host);
      const seen = choice.slot.mark?.modRevision ?? 0n;
      let reply: TxnReply;
      try {
        reply = await this.txn(
          [
            { key: holderKey, target: "CREATE", revision: 0n },
            { key: markKey, target: "MOD", revision: seen },
          ],
          [
            { put: { key: holderKey, value: holderValue, lease } },
            { put: { key: markKey, value: encodeMark(newMark) } },
          ],
          [{ range: holderKey }],
        );
      } catch (e) {
        if (e instanceof SnowidError && e.code === "NOT_FOUND") {
          throw new SnowidError("UNAVAILABLE", `the lease expired while acquiring: ${e.message}`, 100);
        }
        if (!(e instanceof SnowidError && e.code === "UNAVAILABLE")) throw e;
        // Unknown outcome: ask who holds the id before trying again.
        let holder: KeyValue | undefined;
        try {
          holder = await this.get(holderKey);
        } catch {
          throw new SnowidError(
            "UNAVAILABLE",
            `acquiring ${req.region}/${choice.host}: the outcome is unknown and could not be checked: ${e.message}`,
            100,
          );
        }
        if (holder !== undefined && holder.lease === lease) {
          return granted(choice.host, holder.createRevision, oldMark.highWaterMs);
        }
        // Not applied (yet): the same id again, so a late arrival cannot leave two ids on our lease.
        pendingHost = choice.host;
        pendingPrevious = oldMark.highWaterMs;
        continue;
      }
      if (reply.succeeded) return granted(choice.host, reply.revision, oldMark.highWaterMs);
      const holder = reply.ranges[0];
      if (holder !== undefined && holder.lease === lease) {
        return granted(
          choice.host,
          holder.createRevision,
          pendingHost === choice.host ? pendingPrevious : oldMark.highWaterMs,
        );
      }
      if (pendingHost === choice.host && holder !== undefined) {
        pendingHost = undefined;
        pendingPrevious = undefined;
      }
    }
    throw new SnowidError(
      "UNAVAILABLE",
      `no worker id in region ${req.region} after ${ACQUIRE_ROUNDS} rounds: too many concurrent acquirers`,
      100,
    );
  }

  /** Keepalive, then the new mark guarded by our holder key. LEASE_LOST when the lease is gone. */
  async renew(g: Grant, highWaterMs: number, timeLeftMs: number): Promise<void> {
    if (timeLeftMs <= 0)
      throw new SnowidError("UNAVAILABLE", `no time left to renew worker ${g.region}/${g.host}`);
    const started = performance.now();
    const left = () => Math.max(1, timeLeftMs - (performance.now() - started));
    let doc: Json;
    try {
      doc = await this.gateway.call("/v3/lease/keepalive", { ID: g.lease.toString() }, { timeoutMs: left() });
    } catch (e) {
      if (e instanceof SnowidError && e.code === "NOT_FOUND") {
        throw new SnowidError("LEASE_LOST", `lease of worker ${g.region}/${g.host} is gone: ${e.message}`);
      }
      throw e;
    }
    const result = (doc["result"] as Json | undefined) ?? {};
    if (Number(result["TTL"] ?? 0) <= 0) {
      throw new SnowidError("LEASE_LOST", `lease of worker ${g.region}/${g.host} was revoked or expired`);
    }
    const holderKey = this.keys.holder(g.region, g.host);
    const markKey = this.keys.mark(g.region, g.host);
    let mark = await this.get(markKey, left());
    for (let round = 0; round < MARK_ROUNDS; round++) {
      const old = decodeMark(mark?.value);
      // Every mark read, the one read back after a lost compare included: a rolled-back mark
      // seen only there would otherwise be written over.
      const why = this.history.checkMark(grantKey(g), old.highWaterMs);
      if (why !== undefined) this.history.setPending(why);
      const next: Mark = { ...old, highWaterMs: later(old.highWaterMs, highWaterMs)! };
      const reply = await this.txn(
        [
          { key: holderKey, target: "CREATE", revision: g.createRevision },
          { key: markKey, target: "MOD", revision: mark?.modRevision ?? 0n },
        ],
        [{ put: { key: markKey, value: encodeMark(next) } }],
        [{ range: holderKey }, { range: markKey }],
        left(),
      );
      if (reply.succeeded) {
        this.history.storedMark(grantKey(g), next.highWaterMs!);
        // This lease survived whatever the store lost (a restore from a snapshot that holds
        // it): the holder goes on, and the record tells every acquirer to wait past what the
        // others may have issued. A failure here is retried after the next renewal.
        if (this.history.hasPending) await this.checkStore(this.inFlightMs).catch(() => undefined);
        return;
      }
      const holder = reply.ranges[0];
      if (holder === undefined || holder.createRevision !== g.createRevision) {
        throw new SnowidError("LEASE_LOST", `worker ${g.region}/${g.host} is no longer held by this lease`);
      }
      mark = reply.ranges[1];
    }
    throw new SnowidError("UNAVAILABLE", `the mark of worker ${g.region}/${g.host} kept changing`, 100);
  }

  /**
   * Writes the exact last instant (never below the previous holders' mark) with the release
   * time and a clean-release record, deletes the holder key, then revokes the lease. A failed
   * compare that finds one of the values we sent is our own release, not a lost lease.
   */
  async release(g: Grant, lastIssuedMs: number): Promise<void> {
    this.history.forget(grantKey(g));
    const holderKey = this.keys.holder(g.region, g.host);
    const markKey = this.keys.mark(g.region, g.host);
    let mark = await this.get(markKey);
    const sent: string[] = [];
    const ours = (kv: KeyValue | undefined) => kv !== undefined && sent.includes(kv.value);
    let retried = false;
    let result: SnowidError | undefined = new SnowidError(
      "UNAVAILABLE",
      `the mark of worker ${g.region}/${g.host} kept changing`,
      100,
    );
    for (let round = 0; round < MARK_ROUNDS; round++) {
      const old = decodeMark(mark?.value);
      const hw = later(g.previousHighWaterMs, lastIssuedMs)!;
      const value = encodeMark({ ...old, highWaterMs: hw, releasedAtMs: this.o.nowMs(), cleanReleaseMs: hw });
      sent.push(value);
      let reply: TxnReply;
      try {
        reply = await this.txn(
          [
            { key: holderKey, target: "CREATE", revision: g.createRevision },
            { key: markKey, target: "MOD", revision: mark?.modRevision ?? 0n },
          ],
          [{ put: { key: markKey, value } }, { remove: holderKey }],
          [{ range: holderKey }, { range: markKey }],
        );
      } catch (e) {
        if (!(e instanceof SnowidError && e.code === "UNAVAILABLE") || retried) throw e;
        retried = true;
        mark = await this.get(markKey);
        if (ours(mark)) {
          result = undefined;
          break;
        }
        continue;
      }
      if (reply.succeeded) {
        result = undefined;
        break;
      }
      const holder = reply.ranges[0];
      const now = reply.ranges[1];
      if (holder === undefined || holder.createRevision !== g.createRevision) {
        result = ours(now)
          ? undefined
          : new SnowidError("LEASE_LOST", `worker ${g.region}/${g.host} was no longer held by this lease`);
        break;
      }
      mark = now;
    }
    if (result === undefined || result.code === "LEASE_LOST")
      await this.revoke(g.lease).catch(() => undefined);
    if (result !== undefined) throw result;
  }

  /** Revokes the lease and nothing else, briefly and best effort. */
  async abandon(g: Grant): Promise<void> {
    this.history.forget(grantKey(g));
    await this.revoke(g.lease, Math.min(this.o.requestTimeoutMs, ABANDON_TIMEOUT_MS)).catch(() => undefined);
  }

  /**
   * Watches the holder key from its create revision + 1: resolves true once it is deleted or
   * replaced, false when `signal` aborts. Each stream is ended after WATCH_RECHECK_MS (an unref'd
   * timer aborts it) and after a compaction; then the holder key is read (gone or replaced: true)
   * and a quiet stream is watched again on the next member. Broken streams move on to the next
   * member, pausing after a whole round of them.
   */
  async waitLost(g: Grant, signal: AbortSignal): Promise<boolean> {
    const holderKey = this.keys.holder(g.region, g.host);
    const boundMs = this.o.watchRecheckMs ?? WATCH_RECHECK_MS;
    let nextRevision = g.createRevision + 1n;
    let endpoint = this.gateway.preferredEndpoint;
    let broken = 0;
    const count = this.gateway.endpoints.length;
    while (!signal.aborted) {
      let lost = false;
      let recheck = false;
      let watching = false;
      // One stream: ended by the caller's signal, or quietly by the bound.
      const stream = new AbortController();
      let quiet = false;
      const endStream = () => stream.abort();
      signal.addEventListener("abort", endStream, { once: true });
      const bound = setTimeout(() => {
        quiet = true;
        stream.abort();
      }, boundMs);
      bound.unref();
      let how: "stopped" | "ended" | "aborted";
      try {
        how = await this.gateway.stream(
          endpoint,
          "/v3/watch",
          { create_request: { key: b64(holderKey), start_revision: nextRevision.toString() } },
          (doc) => {
            if (doc["error"] !== undefined) return false;
            const r = (doc["result"] as Json | undefined) ?? {};
            if (r["canceled"] === true) {
              if (BigInt(String(r["compact_revision"] ?? "0")) > 0n) recheck = true;
              return false;
            }
            watching = true;
            for (const ev of (r["events"] as Json[] | undefined) ?? []) {
              const kv = kvOf(ev["kv"]);
              if (kv.modRevision + 1n > nextRevision) nextRevision = kv.modRevision + 1n;
              if (ev["type"] === "DELETE" || kv.createRevision !== g.createRevision || kv.lease !== g.lease) {
                lost = true;
                return false;
              }
            }
            return true;
          },
          stream.signal,
        );
      } finally {
        clearTimeout(bound);
        signal.removeEventListener("abort", endStream);
      }
      if (lost) return true;
      if (signal.aborted) return false;
      // WATCH_RECHECK_MS without a loss: this member may be a stale one that accepted the watch
      // and stays quiet. Read the key, then watch elsewhere.
      quiet = quiet && how === "aborted";
      if (quiet) recheck = true;
      if (watching) broken = 0;
      if (recheck) {
        try {
          const doc = await this.gateway.call("/v3/kv/range", { key: b64(holderKey) }, { signal });
          this.observe(headerOf(doc["header"]));
          const kvs = ((doc["kvs"] as unknown[] | undefined) ?? []).map(kvOf);
          if (kvs.length === 0 || kvs[0]!.createRevision !== g.createRevision) return true;
          nextRevision = headerOf(doc["header"]).revision + 1n;
          if (quiet) endpoint = (endpoint + 1) % count;
          continue;
        } catch {
          if (signal.aborted) return false;
          // a broken member: the next one below
        }
      }
      endpoint = (endpoint + 1) % count;
      if (++broken % count === 0) await pause(BROKEN_ROUND_PAUSE_MS, signal);
    }
    return false;
  }
}

/** Resolves after `ms` (an unref'd timer) or as soon as `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    t.unref();
    signal.addEventListener("abort", done, { once: true });
  });
}
