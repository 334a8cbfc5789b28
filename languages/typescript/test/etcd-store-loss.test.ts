/**
 * When etcd loses data (docs/protocol.md, section 9), against a real etcd started here
 * (SNOWID_ETCD_BIN): a member restarted on an empty data directory, a mark that reads back
 * lower than this process wrote, a store record that vanished. Each time the holder writes a
 * store record with a fresh incarnation and a store-wide mark of now plus the in-flight window
 * (8 s), and every acquirer, itself included, issues nothing before that mark.
 */
import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import { LeasedGenerator, SnowidError, type LeaseEvent } from "../src/index.js";
import { EtcdServer } from "./etcd-server.js";

let etcd: EtcdServer;
let clusters = 0;

before(async () => {
  etcd = await EtcdServer.start();
});
after(async () => {
  await etcd?.stop();
});

const FAST = {
  ttlSeconds: 2,
  renewEveryMs: 300,
  retryEveryMs: 200,
  stopAfterMs: 1500,
  quarantineMs: 1000,
} as const;
const IN_FLIGHT_MS = 8000;
const SKEW_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  what: string,
  f: () => Promise<T | undefined> | T | undefined,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface Store {
  incarnation: string;
  high_water_ms?: number;
  reason: string;
  written_ms: number;
}

async function store(cluster: string): Promise<Store | undefined> {
  const kv = await etcd.get(`/snowid/${cluster}/store`);
  return kv === undefined ? undefined : (JSON.parse(kv.value) as Store);
}

/** A record with a store-wide mark, written at `sinceMs` or later for the reason `why`. */
async function lossRecorded(
  cluster: string,
  before: Store | undefined,
  why: RegExp,
  sinceMs: number,
): Promise<Store> {
  const rec = await until("the loss to be recorded", async () => {
    const s = await store(cluster);
    return s !== undefined && s.incarnation !== before?.incarnation ? s : undefined;
  });
  assert.match(rec.reason, why);
  assert.ok(rec.high_water_ms !== undefined, "the record carries a store-wide mark");
  assert.ok(rec.written_ms >= sinceMs && rec.written_ms <= Date.now(), `written at ${rec.written_ms}`);
  assert.equal(rec.high_water_ms, rec.written_ms + IN_FLIGHT_MS, "marked at now plus the in-flight window");
  return rec;
}

/** The generator issues nothing before the store-wide mark plus the skew, and says when to retry. */
function waitsPast(gen: LeasedGenerator, rec: Store, who: string): void {
  const before = Date.now();
  assert.throws(
    () => gen.nextId(),
    (e: unknown) => {
      assert.ok(e instanceof SnowidError, String(e));
      assert.equal(e.code, "CLOCK_BEHIND", `${who}: ${e.message}`);
      const wait = rec.high_water_ms! + SKEW_MS - before;
      assert.ok(
        Math.abs(e.retryAfterMs - wait) <= 50,
        `${who} retries after ${e.retryAfterMs} ms, not ${wait}`,
      );
      return true;
    },
  );
}

async function namespace(): Promise<string> {
  const cluster = `loss-${process.pid}-${++clusters}`;
  await LeasedGenerator.initializeNamespace({ endpoints: [etcd.url], cluster });
  return cluster;
}

test("a member restarted on an empty data directory: the holder records the loss, and acquirers wait it out", async () => {
  const cluster = await namespace();
  const events: LeaseEvent[] = [];
  await using a = await LeasedGenerator.create({
    etcd: { endpoints: [etcd.url], cluster },
    ...FAST,
    onEvent: (e) => events.push(e),
  });
  const before = await store(cluster);
  assert.ok(before && before.high_water_ms === undefined, "a namespace initialized as new");
  const lastBefore = await a.nextIdAsync();
  await sleep(700); // renewals: revisions seen, a mark stored

  const wiped = Date.now();
  await etcd.restartEmpty();
  assert.equal(await store(cluster), undefined, "etcd has lost everything");

  // The holder's lease is gone with the data; on acquiring again its first range shows a
  // revision lower than one it had seen: a loss, which it records before taking an id.
  const rec = await lossRecorded(cluster, before, /revision went back|another cluster/, wiped);
  await until("the holder to hold an id again", () => a.worker);
  assert.ok(events.some((e) => e.type === "lost"));
  waitsPast(a, rec, "the holder");

  // A new acquirer, which saw nothing of the old store, reads the record and waits as long.
  await using b = await LeasedGenerator.create({ etcd: { endpoints: [etcd.url], cluster }, ...FAST });
  waitsPast(b, rec, "a new acquirer");
  assert.equal((await store(cluster))?.incarnation, rec.incarnation, "the new acquirer adopted the record");
  assert.ok(lastBefore > 0n);
});

test("a mark read back lower than the holder wrote: the loss is recorded after the renewal, and the holder goes on", async () => {
  const cluster = await namespace();
  await using a = await LeasedGenerator.create({ etcd: { endpoints: [etcd.url], cluster }, ...FAST });
  const w = a.worker!;
  await a.nextIdAsync();
  await sleep(700);
  const before = await store(cluster);
  const markKey = `/snowid/${cluster}/workers/${w.region}/${w.host}/mark`;
  const written = JSON.parse((await etcd.get(markKey))!.value) as { high_water_ms: number };
  // As a store restored from an older snapshot would show it: the lease lives, the mark is older.
  const rolledBack = Date.now();
  await etcd.put(markKey, JSON.stringify({ high_water_ms: written.high_water_ms - 5000 }));

  const rec = await lossRecorded(cluster, before, /a mark this process stored went back/, rolledBack);
  assert.deepEqual(a.worker, w, "the holder keeps its id");
  const id = a.nextId();
  assert.ok(id > 0n, "the holder goes on issuing: its ids are covered by its own mark");
  await using b = await LeasedGenerator.create({ etcd: { endpoints: [etcd.url], cluster }, ...FAST });
  waitsPast(b, rec, "a new acquirer");
});

test("a store record that vanished: the next acquire records the loss", async () => {
  const cluster = await namespace();
  const events: LeaseEvent[] = [];
  await using a = await LeasedGenerator.create({
    etcd: { endpoints: [etcd.url], cluster },
    ...FAST,
    onEvent: (e) => events.push(e),
  });
  const w = a.worker!;
  await a.nextIdAsync();
  const removed = Date.now();
  await etcd.remove(`/snowid/${cluster}/store`);
  // A fence (the holder key deleted): the holder acquires again, and finds no record where it had read one.
  await etcd.remove(`/snowid/${cluster}/workers/${w.region}/${w.host}/holder`);
  const rec = await lossRecorded(cluster, undefined, /^the store record vanished$/, removed);
  await until("the holder to hold an id again", () => a.worker);
  assert.ok(events.some((e) => e.type === "lost"));
  waitsPast(a, rec, "the holder");
});
