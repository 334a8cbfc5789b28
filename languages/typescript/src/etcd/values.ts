/**
 * The registry's values in etcd, as the C++ registry writes them (docs/leases.md): the
 * holder, the mark and the namespace's store record. Readers ignore members they do not know;
 * a known member of the wrong type or out of range makes the value unreadable (DATA_LOSS).
 */
import { SnowidError } from "../errors.js";
import { MAX_UNIX_MS, formatInstant } from "../layout.js";
import { NumberText, parseJsonText, type JsonValue } from "./json-text.js";

export interface Holder {
  host: string;
  /** Signed 64-bit. */
  pid: bigint;
  /** When the holding process started, Unix ms (written as RFC 3339, 1970 at the earliest). */
  startedMs: number;
  address: string;
  /** Lease id, as the signed 64-bit integer etcd's gateway prints. */
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
const MAX_MS_BIG = BigInt(MAX_MS);
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const NS_PER_MS = 1_000_000n;

/**
 * An instant in ns since 1970 (as other libraries and the vectors carry them) as the ms a
 * value records: rounded up, also before 1970, so that a later holder only waits longer.
 */
export function msOfNs(ns: bigint): number {
  const q = ns / NS_PER_MS;
  return Number(ns > q * NS_PER_MS ? q + 1n : q);
}

function dataLoss(what: string, why: string): SnowidError {
  return new SnowidError("DATA_LOSS", `unreadable ${what} value in etcd: ${why}`);
}

type Doc = { [key: string]: JsonValue };

function object(what: string, text: string): Doc {
  let doc: JsonValue;
  try {
    doc = parseJsonText(text);
  } catch (e) {
    throw dataLoss(what, `not JSON (${(e as Error).message})`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc) || doc instanceof NumberText)
    throw dataLoss(what, "not a JSON object");
  return doc;
}

function member(doc: Doc, name: string): JsonValue | undefined {
  return Object.prototype.hasOwnProperty.call(doc, name) ? doc[name] : undefined;
}

function integer(what: string, doc: Doc, name: string, lo: bigint, hi: bigint): bigint | undefined {
  const v = member(doc, name);
  if (v === undefined || v === null) return undefined;
  const n = v instanceof NumberText ? v.integer : undefined;
  if (n === undefined || n < lo || n > hi) {
    throw dataLoss(what, `${name} is not an integer from ${lo} to ${hi}`);
  }
  return n;
}

function ms(what: string, doc: Doc, name: string): number | undefined {
  const n = integer(what, doc, name, -MAX_MS_BIG, MAX_MS_BIG);
  return n === undefined ? undefined : Number(n);
}

function str(what: string, doc: Doc, name: string): string {
  const v = member(doc, name);
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw dataLoss(what, `${name} is not a string`);
  return v;
}

// RFC 3339 with a zone; the written form has exactly three fraction digits and Z.
const INSTANT =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))$/;

function instantMs(what: string, text: string): number {
  const m = INSTANT.exec(text);
  if (m !== null) {
    const [y, mo, d, h, mi, sec, offH, offM] = [1, 2, 3, 4, 5, 6, 10, 11].map((k) => Number(m[k] ?? 0)) as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const t = new Date(0);
    t.setUTCFullYear(y, mo - 1, d);
    t.setUTCHours(h, mi, sec, Math.floor(Number(`0.${m[7] ?? "0"}`) * 1000));
    const exact = t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
    if (exact && h <= 23 && mi <= 59 && sec <= 59 && offH <= 23 && offM <= 59) {
      return t.getTime() - (m[9] === "-" ? -1 : 1) * (offH * 60 + offM) * 60_000;
    }
  }
  throw dataLoss(what, `started is not an RFC 3339 time: ${JSON.stringify(text.slice(0, 40))}`);
}

/** Compact, members sorted by name, as the C++ registry writes it. */
export function encodeHolder(h: Holder): string {
  const started = formatInstant(Math.max(0, Math.floor(h.startedMs)));
  return (
    `{"address":${JSON.stringify(h.address)},"host":${JSON.stringify(h.host)},` +
    `"lease":"${BigInt.asUintN(64, h.lease).toString(16)}","pid":${BigInt.asIntN(64, h.pid)},` +
    `"started":"${started}"}`
  );
}

export function decodeHolder(text: string): Holder {
  const doc = object("holder", text);
  const lease = member(doc, "lease");
  if (typeof lease !== "string" || !/^[0-9a-fA-F]{1,16}$/.test(lease))
    throw dataLoss("holder", "the lease is not 1 to 16 hexadecimal digits");
  const started = member(doc, "started");
  if (started !== undefined && started !== null && typeof started !== "string")
    throw dataLoss("holder", "started is not a string");
  return {
    host: str("holder", doc, "host"),
    pid: integer("holder", doc, "pid", INT64_MIN, INT64_MAX) ?? 0n,
    startedMs: typeof started === "string" ? instantMs("holder", started) : 0,
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

/** Whether an acquirer whose wall clock reads `nowMs` may take the id (docs/protocol.md, section 8). */
export function eligible(held: boolean, m: Mark, nowMs: number, quarantineMs: number): boolean {
  if (held) return false;
  const from = freeFromMs(m, quarantineMs);
  return from === undefined || nowMs >= from;
}

export function later(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

/** Compact, members sorted by name, as the C++ registry writes it. */
export function encodeStore(s: StoreRecord): string {
  const doc: Record<string, unknown> = {};
  if (s.highWaterMs !== undefined) doc["high_water_ms"] = Math.ceil(s.highWaterMs);
  doc["incarnation"] = s.incarnation;
  doc["reason"] = s.reason;
  doc["written_ms"] = Math.ceil(s.writtenMs);
  return JSON.stringify(doc);
}

export function decodeStore(text: string): StoreRecord {
  const doc = object("store", text);
  const incarnation = member(doc, "incarnation");
  if (typeof incarnation !== "string" || !/^[0-9a-fA-F]{16}$/.test(incarnation))
    throw dataLoss("store", "the incarnation is not 16 hexadecimal digits");
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
