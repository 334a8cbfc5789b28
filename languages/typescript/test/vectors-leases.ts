/**
 * The runner of vectors/leases.json: the etcd keys, the holder, mark and store values
 * (encoded, decoded and refused), quarantine, wait_until, and the bounds of the settings.
 */
import * as assert from "node:assert/strict";
import type { TestContext } from "node:test";
import { SnowidError } from "../src/index.js";
import { checkEtcdOptions, checkLeaseTiming, checkNamespace, waitUntilMs } from "../src/etcd/settings.js";
import {
  WorkerKeys,
  decodeHolder,
  decodeMark,
  decodeStore,
  eligible,
  encodeHolder,
  encodeMark,
  encodeStore,
  freeFromMs,
  msOfNs,
  releasedClean,
  type Holder,
  type Mark,
  type StoreRecord,
} from "../src/etcd/values.js";

/* eslint-disable @typescript-eslint/no-explicit-any */

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof SnowidError) return e.code;
    throw e;
  }
  return "OK";
}

const label = (c: any) => c.note ?? c.text ?? JSON.stringify(c);

function holderOf(v: any): Holder {
  return {
    host: v.host,
    pid: BigInt(v.pid),
    startedMs: v.started_ms,
    address: v.address,
    lease: BigInt(v.lease),
  };
}

function holderValue(h: Holder): any {
  return {
    host: h.host,
    pid: Number(h.pid),
    started_ms: h.startedMs,
    address: h.address,
    lease: h.lease.toString(),
  };
}

const MARK_MEMBERS = [
  ["high_water", "highWaterMs"],
  ["released_at", "releasedAtMs"],
  ["clean_release", "cleanReleaseMs"],
] as const;

function markOfNs(v: any): Mark {
  const m: Mark = {};
  for (const [name, field] of MARK_MEMBERS)
    if (v[`${name}_ns`] !== undefined) m[field] = msOfNs(BigInt(v[`${name}_ns`]));
  return m;
}

function markOfMs(v: any): Mark {
  const m: Mark = {};
  for (const [name, field] of MARK_MEMBERS) if (v[`${name}_ms`] !== undefined) m[field] = v[`${name}_ms`];
  return m;
}

function markValue(m: Mark): any {
  const out: any = {};
  for (const [name, field] of MARK_MEMBERS) if (m[field] !== undefined) out[`${name}_ms`] = m[field];
  return out;
}

function storeValue(s: StoreRecord): any {
  const out: any = { incarnation: s.incarnation, reason: s.reason, written_ms: s.writtenMs };
  if (s.highWaterMs !== undefined) out.high_water_ms = s.highWaterMs;
  return out;
}

const SECTIONS: Record<string, (c: any) => void> = {
  namespaces: (c) =>
    assert.equal(
      codeOf(() => checkNamespace(c.prefix, c.cluster)),
      c.error ?? "OK",
    ),
  keys: (c) => {
    const k = new WorkerKeys(c.prefix, c.cluster);
    assert.deepEqual(
      [k.holder(c.region, c.host), k.mark(c.region, c.host), k.region(c.region), k.base, k.store],
      [c.holder, c.mark, c.region_prefix, c.workers_prefix, c.store],
    );
  },
  key_parses: (c) => {
    const p = new WorkerKeys(c.prefix, c.cluster).parse(c.key);
    assert.deepEqual(
      p === undefined ? undefined : { region: p.region, host: p.host, kind: p.isHolder ? "holder" : "mark" },
      c.parsed,
    );
  },
  holders: (c) => {
    assert.equal(encodeHolder(holderOf(c.value)), c.text);
    assert.deepEqual(holderValue(decodeHolder(c.text)), c.decoded ?? c.value);
  },
  holder_reads: (c) => assert.deepEqual(holderValue(decodeHolder(c.text)), c.value),
  holder_errors: (c) =>
    assert.equal(
      codeOf(() => decodeHolder(c.text)),
      c.error,
    ),
  marks: (c) => {
    assert.equal(encodeMark(markOfNs(c.value)), c.text);
    assert.deepEqual(markValue(decodeMark(c.text)), c.decoded);
  },
  mark_reads: (c) => {
    const m = decodeMark(c.text);
    assert.deepEqual(markValue(m), c.value);
    assert.equal(releasedClean(m), c.clean);
  },
  mark_errors: (c) =>
    assert.equal(
      codeOf(() => decodeMark(c.text)),
      c.error,
    ),
  stores: (c) => {
    const v = c.value;
    const s: StoreRecord = {
      incarnation: v.incarnation,
      reason: v.reason,
      writtenMs: msOfNs(BigInt(v.written_ns)),
    };
    if (v.high_water_ns !== undefined) s.highWaterMs = msOfNs(BigInt(v.high_water_ns));
    assert.equal(encodeStore(s), c.text);
    assert.deepEqual(storeValue(decodeStore(c.text)), c.decoded ?? storeValue(s));
  },
  store_reads: (c) => assert.deepEqual(storeValue(decodeStore(c.text)), c.value),
  store_errors: (c) =>
    assert.equal(
      codeOf(() => decodeStore(c.text)),
      c.error,
    ),
  eligibility: (c) => {
    const m = markOfMs(c.mark ?? {});
    assert.equal(eligible(c.held, m, c.now_ms, c.quarantine_ms), c.eligible);
    if (!c.held) assert.equal(freeFromMs(m, c.quarantine_ms), c.free_from_ms);
  },
  wait_until: (c) =>
    assert.equal(
      waitUntilMs(c.previous_high_water_ms, c.store_high_water_ms, c.max_clock_skew_ms),
      c.wait_until_ms,
    ),
  timings: (c) => {
    const timing = {
      ttlMs: c.ttl_ms,
      renewEveryMs: c.renew_every_ms,
      stopAfterMs: c.stop_after_ms,
      maxClockSkewMs: c.max_clock_skew_ms,
    };
    assert.equal(
      codeOf(() => checkLeaseTiming(timing)),
      c.error ?? "OK",
    );
  },
  etcd_options: (c) =>
    assert.equal(
      codeOf(() => checkEtcdOptions(c.quarantine_ms, c.request_timeout_ms)),
      c.error ?? "OK",
    ),
};

export async function runLeaseVectors(file: any, t: TestContext): Promise<void> {
  for (const section of Object.keys(file).filter((k) => k !== "schema")) {
    const check = SECTIONS[section];
    await t.test(section, () => {
      assert.ok(check, `a runner for the section ${section} of leases.json`);
      for (const c of file[section]) {
        try {
          check(c);
        } catch (e) {
          if (e instanceof assert.AssertionError) e.message = `${label(c)}: ${e.message}`;
          throw e;
        }
      }
    });
  }
}
