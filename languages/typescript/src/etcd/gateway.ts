/**
 * etcd's v3 JSON gateway over fetch (unary calls) and node:http (the watch stream, whose socket
 * is unref'd so that an open watch does not keep the process alive). Endpoints are tried in
 * order; the one that last answered is tried first. int64s travel as decimal strings, keys and
 * values as base64, and fields at their default are omitted.
 */
import * as http from "node:http";
import * as https from "node:https";
import { SnowidError } from "../errors.js";

export interface KeyValue {
  key: string;
  value: string;
  createRevision: bigint;
  modRevision: bigint;
  lease: bigint;
}

export interface Header {
  revision: bigint;
  clusterId: string;
}

export type Json = Record<string, unknown>;

export const b64 = (s: string): string => Buffer.from(s, "utf8").toString("base64");
const unb64 = (s: unknown): string =>
  typeof s === "string" ? Buffer.from(s, "base64").toString("utf8") : "";
const int = (v: unknown): bigint => {
  if (v === undefined || v === null) return 0n;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === "string" && /^-?[0-9]{1,20}$/.test(v)) return BigInt(v);
  throw new SnowidError("UNAVAILABLE", `etcd gateway sent a malformed integer ${JSON.stringify(v)}`);
};

export function kvOf(raw: unknown): KeyValue {
  const o = (raw ?? {}) as Json;
  return {
    key: unb64(o["key"]),
    value: unb64(o["value"]),
    createRevision: int(o["create_revision"]),
    modRevision: int(o["mod_revision"]),
    lease: int(o["lease"]),
  };
}

export function headerOf(raw: unknown): Header {
  const o = (raw ?? {}) as Json;
  return { revision: int(o["revision"]), clusterId: String(o["cluster_id"] ?? "") };
}

/** The end of the range of every key starting with `prefix`. */
export function prefixEnd(prefix: string): string {
  const b = Buffer.from(prefix, "utf8");
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < 0xff) {
      b[i]! += 1;
      return b.subarray(0, i + 1).toString("latin1");
    }
  }
  return "\0";
}

/** A gRPC status carried in a gateway reply, or undefined. Both the 3.4/3.5 and 3.6+ shapes. */
export function gatewayError(doc: Json): { code: number; message: string } | undefined {
  const e = doc["error"];
  if (e !== undefined && typeof e === "object" && e !== null) {
    const o = e as Json;
    return { code: Number(o["grpc_code"] ?? o["code"] ?? 2), message: String(o["message"] ?? "") };
  }
  if (e !== undefined || ("code" in doc && "message" in doc)) {
    return { code: Number(doc["code"] ?? 2), message: String(doc["message"] ?? e ?? "") };
  }
  return undefined;
}

const GRPC_NOT_FOUND = 5;

export interface CallOptions {
  timeoutMs?: number;
  /** Ends the call (UNAVAILABLE, no further member tried) when it aborts. */
  signal?: AbortSignal;
}

/** The signal of one attempt: aborts after `timeoutMs` (an unref'd timer) or with `outer`. */
function attemptSignal(timeoutMs: number, outer: AbortSignal | undefined): [AbortSignal, () => void] {
  if (outer === undefined) return [AbortSignal.timeout(timeoutMs), () => undefined];
  const c = new AbortController();
  const onAbort = () => c.abort(outer.reason);
  outer.addEventListener("abort", onAbort, { once: true });
  const t = setTimeout(() => c.abort(new DOMException("the request timed out", "TimeoutError")), timeoutMs);
  t.unref();
  return [
    c.signal,
    () => {
      clearTimeout(t);
      outer.removeEventListener("abort", onAbort);
    },
  ];
}

export class Gateway {
  private preferred = 0;

  constructor(
    readonly endpoints: readonly string[],
    private readonly timeoutMs: number,
  ) {}

  /**
   * One unary call. NOT_FOUND for gRPC code 5 (a lease that is gone); UNAVAILABLE when no
   * member answered, in which case the outcome of a write is unknown.
   */
  async call(path: string, body: Json, options: CallOptions = {}): Promise<Json> {
    const timeout = Math.max(1, Math.floor(Math.min(options.timeoutMs ?? this.timeoutMs, this.timeoutMs)));
    let last: unknown;
    for (let i = 0; i < this.endpoints.length; i++) {
      if (options.signal?.aborted) throw new SnowidError("UNAVAILABLE", `etcd ${path}: canceled`, 100);
      const index = (this.preferred + i) % this.endpoints.length;
      const [signal, done] = attemptSignal(timeout, options.signal);
      try {
        const res = await fetch(this.endpoints[index] + path, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
          signal,
        });
        const text = await res.text();
        let doc: Json;
        try {
          doc = JSON.parse(text) as Json;
        } catch {
          throw new SnowidError("UNAVAILABLE", `etcd ${path}: HTTP ${res.status}, not JSON`);
        }
        const err = gatewayError(doc);
        if (err !== undefined) {
          const code = err.code === GRPC_NOT_FOUND ? "NOT_FOUND" : "UNAVAILABLE";
          const e = new SnowidError(code, `etcd ${path}: ${err.message} (gRPC code ${err.code})`, 100);
          // A member's own answer: another member would say the same about a lease.
          if (code === "NOT_FOUND") throw e;
          last = e;
          continue;
        }
        if (!res.ok) {
          last = new SnowidError("UNAVAILABLE", `etcd ${path}: HTTP ${res.status}`, 100);
          continue;
        }
        this.preferred = index;
        return doc;
      } catch (e) {
        if (e instanceof SnowidError && e.code === "NOT_FOUND") throw e;
        last = e;
      } finally {
        done();
      }
    }
    if (options.signal?.aborted) throw new SnowidError("UNAVAILABLE", `etcd ${path}: canceled`, 100);
    const why = last instanceof Error ? last.message : String(last);
    throw new SnowidError("UNAVAILABLE", `etcd ${path}: no member answered: ${why}`, 100, { cause: last });
  }

  get preferredEndpoint(): number {
    return this.preferred;
  }

  /**
   * Streams `path` from one member, calling `onMessage` for each JSON line until it returns
   * false, the stream ends, or `signal` aborts. Resolves with how it ended.
   */
  stream(
    endpoint: number,
    path: string,
    body: Json,
    onMessage: (doc: Json) => boolean,
    signal: AbortSignal,
  ): Promise<"stopped" | "ended" | "aborted"> {
    const url = new URL(this.endpoints[endpoint]! + path);
    const mod = url.protocol === "https:" ? https : http;
    return new Promise((resolve) => {
      let done = false;
      const finish = (how: "stopped" | "ended" | "aborted") => {
        if (done) return;
        done = true;
        signal.removeEventListener("abort", onAbort);
        req.destroy();
        resolve(how);
      };
      const onAbort = () => finish("aborted");
      const req = mod.request(url, {
        method: "POST",
        headers: { "content-type": "application/json", "Grpc-Metadata-hasleader": "true" },
        agent: false,
      });
      req.on("socket", (s) => s.unref());
      req.on("error", () => finish("ended"));
      req.on("response", (res) => {
        let buf = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line === "") continue;
            let doc: Json;
            try {
              doc = JSON.parse(line) as Json;
            } catch {
              return finish("ended");
            }
            if (!onMessage(doc)) return finish("stopped");
          }
        });
        res.on("end", () => finish("ended"));
        res.on("error", () => finish("ended"));
      });
      if (signal.aborted) return finish("aborted");
      signal.addEventListener("abort", onAbort);
      req.end(JSON.stringify(body));
    });
  }
}
