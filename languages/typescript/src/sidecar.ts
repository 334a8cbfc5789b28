/**
 * A client of snowidd (docs/daemon.md): RESP over its Unix socket or TCP. Ids arrive as bulk
 * strings and become bigint; error words become SnowidError codes with the same retry rule.
 * Replies are pipelined in order on one connection.
 */
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { isCode, SnowidError, type Code } from "./errors.js";
import { parseId } from "./id-text.js";
import { encodeCommand, readReply, RespError, type RespValue } from "./resp.js";

export interface SidecarOptions {
  /** Unix socket path; default the daemon's own default. Ignored when `port` is given. */
  socket?: string;
  host?: string;
  port?: number;
  /** Bearer token for TCP (`AUTH`). */
  token?: string;
  /** Per-request timeout; default 2000 ms. */
  timeoutMs?: number;
}

/** The daemon's default socket: the runtime directory, else /run as root, else /tmp/snowid-<uid>. */
export function defaultSocketPath(): string {
  const runtime = process.env["XDG_RUNTIME_DIR"];
  if (runtime !== undefined && runtime !== "") return path.join(runtime, "snowid", "snowidd.sock");
  const uid = os.userInfo().uid;
  return uid === 0 ? "/run/snowid/snowidd.sock" : `/tmp/snowid-${uid}/snowidd.sock`;
}

const RETRY = /; retry after ([0-9]+)ms$/;

/** The SnowidError for a daemon's error reply. */
export function errorOfReply(e: RespError): SnowidError {
  const retry = RETRY.exec(e.message);
  const after = retry === null ? 0 : Number(retry[1]);
  let code: Code;
  if (isCode(e.word)) code = e.word;
  else if (e.word === "SHUTTING_DOWN") code = "UNAVAILABLE";
  else if (e.word === "NOAUTH" || e.word === "WRONGPASS") code = "FAILED_PRECONDITION";
  else code = "INVALID_ARGUMENT";
  return new SnowidError(code, `snowidd: ${e.word} ${e.message}`.trim(), after);
}

interface Pending {
  resolve: (v: RespValue) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class Sidecar {
  private readonly socket: net.Socket;
  private readonly pending: Pending[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  private failed: SnowidError | undefined;
  private readonly timeoutMs: number;
  private readonly ready: Promise<void>;

  private constructor(options: SidecarOptions) {
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.socket =
      options.port !== undefined
        ? net.createConnection({ host: options.host ?? "127.0.0.1", port: options.port })
        : net.createConnection({ path: options.socket ?? defaultSocketPath() });
    this.ready = new Promise((resolve, reject) => {
      this.socket.once("connect", () => {
        // An idle client does not keep the process alive; one awaiting a reply does.
        this.socket.unref();
        resolve();
      });
      this.socket.once("error", (e) => reject(this.fail(e)));
    });
    this.socket.on("data", (chunk) => this.onData(chunk));
    this.socket.on("error", (e) => this.fail(e));
    this.socket.on("close", () => this.fail(new Error("connection closed")));
  }

  /** Connects (and authenticates, with a token). UNAVAILABLE when the daemon cannot be reached. */
  static async connect(options: SidecarOptions = {}): Promise<Sidecar> {
    const s = new Sidecar(options);
    await s.ready;
    if (options.token !== undefined) await s.command("AUTH", options.token);
    return s;
  }

  async nextId(): Promise<bigint> {
    return this.idOf(await this.command("NEXTID"));
  }

  /** `n` increasing ids, 1 <= n <= the daemon's max_batch. */
  async nextIds(n: number): Promise<bigint[]> {
    if (!Number.isInteger(n) || n < 1)
      throw new SnowidError("INVALID_ARGUMENT", `count must be at least 1, not ${n}`);
    const reply = await this.command("NEXTIDS", n);
    if (!Array.isArray(reply)) throw new SnowidError("DATA_LOSS", "NEXTIDS did not answer an array");
    return reply.map((v) => this.idOf(v));
  }

  /** The daemon's decoding of an id: `id`, `time`, `unix_ms`, `ticks` and each field. */
  async decode(id: bigint | string): Promise<Record<string, string | number | bigint>> {
    const reply = await this.command("DECODE", typeof id === "bigint" ? id.toString() : id);
    const entries: [RespValue, RespValue][] = reply instanceof Map ? [...reply] : pairs(reply);
    const out: Record<string, string | number | bigint> = {};
    for (const [k, v] of entries) {
      if (
        typeof k !== "string" ||
        !(typeof v === "string" || typeof v === "number" || typeof v === "bigint")
      ) {
        throw new SnowidError("DATA_LOSS", "DECODE answered an unexpected shape");
      }
      out[k] = k === "id" && typeof v === "string" ? parseId(v) : v;
    }
    return out;
  }

  async ping(): Promise<string> {
    return String(await this.command("PING"));
  }

  /** Sends one command; error replies reject with their SnowidError. */
  command(...args: (string | number | bigint)[]): Promise<RespValue> {
    if (this.failed !== undefined) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new Error(`no reply within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      timer.unref();
      this.pending.push({ resolve, reject, timer });
      if (this.pending.length === 1) this.socket.ref();
      this.socket.write(encodeCommand(args));
    }).then((v) => {
      if (v instanceof RespError) throw errorOfReply(v);
      return v as RespValue;
    });
  }

  async close(): Promise<void> {
    if (this.failed === undefined) {
      this.failed = new SnowidError("FAILED_PRECONDITION", "the sidecar client is closed");
    }
    for (const p of this.pending.splice(0)) {
      clearTimeout(p.timer);
      p.reject(this.failed);
    }
    if (this.socket.destroyed) return;
    await new Promise<void>((resolve) => {
      this.socket.once("close", () => resolve());
      this.socket.ref();
      this.socket.destroy();
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private idOf(v: RespValue): bigint {
    if (typeof v === "string") return parseId(v);
    if (typeof v === "bigint" || (typeof v === "number" && Number.isSafeInteger(v))) return BigInt(v);
    throw new SnowidError("DATA_LOSS", "the daemon answered something that is not an id");
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let at = 0;
    try {
      for (;;) {
        if (at >= this.buffer.length) break;
        const r = readReply(this.buffer, at);
        if (r === undefined) break;
        at = r.end;
        const p = this.pending.shift();
        if (p === undefined) throw new SnowidError("DATA_LOSS", "a reply nobody asked for");
        clearTimeout(p.timer);
        p.resolve(r.value);
        if (this.pending.length === 0) this.socket.unref();
      }
    } catch (e) {
      this.fail(e as Error);
      return;
    }
    this.buffer = this.buffer.subarray(at);
  }

  private fail(e: Error): SnowidError {
    const err =
      e instanceof SnowidError
        ? e
        : new SnowidError("UNAVAILABLE", `snowidd connection: ${e.message}`, 100, { cause: e });
    if (this.failed === undefined) this.failed = err;
    for (const p of this.pending.splice(0)) {
      clearTimeout(p.timer);
      p.reject(this.failed);
    }
    this.socket.destroy();
    return this.failed;
  }
}

function pairs(reply: RespValue): [RespValue, RespValue][] {
  if (!Array.isArray(reply) || reply.length % 2 !== 0)
    throw new SnowidError("DATA_LOSS", "DECODE answered an odd array");
  const out: [RespValue, RespValue][] = [];
  for (let i = 0; i < reply.length; i += 2) out.push([reply[i]!, reply[i + 1]!]);
  return out;
}
