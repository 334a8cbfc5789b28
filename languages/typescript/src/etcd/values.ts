/**
 * The registry's values in etcd, as the C++ registry writes them (docs/leases.md): the
 * holder, the mark and the namespace's store record. Readers ignore members they do not know;
 * a known member of the wrong type or out of range makes the value unreadable (DATA_LOSS).
 */
import { SnowidError } from "../errors.js";
import { MAX_UNIX_MS } from "../layout.js";

export interface Holder {
  host: string;
  pid: number;
  started: string;
  address: string;
  /** Lease id. */
  lease: bigint;
}

export interface Mark {
  highWaterMs?: number;
  releasedAtMs?: number;
  cleanReleaseMs?: number;
}

export interface StoreRecord {
  incarnation: string;
  highWaterMs?: number;
  reason: string;
  writtenMs: number;
}

const MAX_MS = MAX_UNIX_MS - 1;

function dataLoss(what: string, why: string): SnowidError {
  return new SnowidError("DATA_LOSS", `unreadable ${what} value in etcd: ${why}`);
}

function object(what: string, text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw dataLoss(what, "not JSON");
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    throw dataLoss(what, "not a JSON object");
  return doc as Record<string, unknown>;
}

function ms(what: string, doc: Record<string, unknown>, name: string): number | undefined {
  const v = doc[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < -MAX_MS || v > MAX_MS) {
    throw dataLoss(what, `${name} is not an integer in range`);
  }
  return v;
}

function str(what: string, doc: Record<string, unknown>, name: string): string {
  const v = doc[name];
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw dataLoss(what, `${name} is not a string`);
  return v;
}

export function encodeHolder(h: Holder, client: string): string {
  return JSON.stringify({
    address: h.address,
    client,
    host: h.host,
    lease: h.lease.toString(16),
    pid: h.pid,
    started: h.started,
  });
}

export function decodeHolder(text: string): Holder {
  const doc = object("holder", text);
  const lease = str("holder", doc, "lease");
  if (!/^[0-9a-f]{1,16}$/i.test(lease)) throw dataLoss("holder", "bad lease id");
  const pid = doc["pid"] ?? 0;
  if (typeof pid !== "number" || !Number.isInteger(pid)) throw dataLoss("holder", "pid is not an integer");
  return {
    host: str("holder", doc, "host"),
    pid,
    started: str("holder", doc, "started"),
    address: str("holder", doc, "address"),
    lease: BigInt.asIntN(64, BigInt(`0x${lease}`)),
  };
}

export function encodeMark(m: Mark): string {
  const doc: Record<string, number> = {};
  if (m.cleanReleaseMs !== undefined) doc["clean_release_ms"] = Math.ceil(m.cleanReleaseMs);
  if (m.highWaterMs !== undefined) doc["high_water_ms"] = Math.ceil(m.highWaterMs);
  if (m.releasedAtMs !== undefined) doc["released_at_ms"] = Math.ceil(m.releasedAtMs);
  return JSON.stringify(doc);
}

export function decodeMark(text: string | undefined): Mark {
  if (text === undefined) return {};
  const doc = object("mark", text);
  const m: Mark = {};
  const hw = ms("mark", doc, "high_water_ms");
  const at = ms("mark", doc, "released_at_ms");
  const clean = ms("mark", doc, "clean_release_ms");
  if (hw !== undefined) m.highWaterMs = hw;
  if (at !== undefined) m.releasedAtMs = at;
  if (clean !== undefined) m.cleanReleaseMs = clean;
  return m;
}

/** A clean release vouches for the mark only while high_water still equals it. */
export function releasedClean(m: Mark): boolean {
  return (
    m.cleanReleaseMs !== undefined &&
    m.highWaterMs !== undefined &&
    m.releasedAtMs !== undefined &&
    m.cleanReleaseMs === m.highWaterMs
  );
}

/** When an id that is not held becomes free; undefined: free since forever. */
export function freeFromMs(m: Mark, quarantineMs: number): number | undefined {
  const last = later(m.releasedAtMs, m.highWaterMs);
  if (last === undefined) return undefined;
  return releasedClean(m) ? last : last + quarantineMs;
}

export function later(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

export function encodeStore(s: StoreRecord): string {
  const doc: Record<string, unknown> = { incarnation: s.incarnation };
  if (s.highWaterMs !== undefined) doc["high_water_ms"] = Math.ceil(s.highWaterMs);
  doc["reason"] = s.reason;
  doc["written_ms"] = Math.ceil(s.writtenMs);
  return JSON.stringify(doc);
}

export function decodeStore(text: string): StoreRecord {
  const doc = object("store", text);
  const incarnation = str("store", doc, "incarnation");
  if (!/^[0-9a-fA-F]{16}$/.test(incarnation)) throw dataLoss("store", "bad incarnation");
  const r: StoreRecord = {
    incarnation,
    reason: str("store", doc, "reason"),
    writtenMs: ms("store", doc, "written_ms") ?? 0,
  };
  const hw = ms("store", doc, "high_water_ms");
  if (hw !== undefined) r.highWaterMs = hw;
  return r;
}

/** Keys under `<prefix>/<cluster>`; decimal numbers without leading zeros that fit 32 bits. */
export class WorkerKeys {
  readonly base: string;
  readonly store: string;

  constructor(prefix: string, cluster: string) {
    this.base = `${prefix}/${cluster}/workers/`;
    this.store = `${prefix}/${cluster}/store`;
  }

  region(region: number): string {
    return `${this.base}${region}/`;
  }

  holder(region: number, host: number): string {
    return `${this.region(region)}${host}/holder`;
  }

  mark(region: number, host: number): string {
    return `${this.region(region)}${host}/mark`;
  }

  parse(key: string): { region: number; host: number; isHolder: boolean } | undefined {
    if (!key.startsWith(this.base)) return undefined;
    const m = /^(0|[1-9][0-9]{0,9})\/(0|[1-9][0-9]{0,9})\/(holder|mark)$/.exec(key.slice(this.base.length));
    if (m === null) return undefined;
    const region = Number(m[1]);
    const host = Number(m[2]);
    if (region > 0xffffffff || host > 0xffffffff) return undefined;
    return { region, host, isHolder: m[3] === "holder" };
  }
}
