/** A minimal RESP2/RESP3 reader and writer for the snowidd sidecar protocol (docs/daemon.md). */
import { SnowidError } from "./errors.js";

export type RespValue = string | number | bigint | null | RespError | RespValue[] | Map<RespValue, RespValue>;

/** An error reply: its first word and the rest. */
export class RespError {
  constructor(
    readonly word: string,
    readonly message: string,
  ) {}
}

const CRLF = "\r\n";
const MAX_BULK = 64 * 1024 * 1024;
const MAX_ITEMS = 1 << 24;

export function encodeCommand(args: readonly (string | number | bigint)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}${CRLF}`)];
  for (const a of args) {
    const b = Buffer.from(String(a), "utf8");
    parts.push(Buffer.from(`$${b.length}${CRLF}`), b, Buffer.from(CRLF));
  }
  return Buffer.concat(parts);
}

function protocolError(message: string): SnowidError {
  return new SnowidError("DATA_LOSS", `malformed RESP reply: ${message}`);
}

/**
 * Reads one reply from `buf` at `offset`: the value and the offset after it, or undefined when
 * the reply is not complete yet. Malformed input throws DATA_LOSS.
 */
export function readReply(buf: Buffer, offset = 0): { value: RespValue; end: number } | undefined {
  const lineEnd = buf.indexOf(CRLF, offset);
  if (lineEnd < 0) {
    if (buf.length - offset > 64 * 1024) throw protocolError("a line without an end");
    return undefined;
  }
  if (lineEnd === offset) throw protocolError("an empty line");
  const type = String.fromCharCode(buf[offset]!);
  const line = buf.toString("latin1", offset + 1, lineEnd);
  const next = lineEnd + 2;
  const integer = (): number => {
    if (!/^-?[0-9]{1,18}$/.test(line)) throw protocolError(`bad length or integer "${line.slice(0, 40)}"`);
    return Number(line);
  };
  switch (type) {
    case "+":
      return { value: buf.toString("utf8", offset + 1, lineEnd), end: next };
    case "-": {
      const text = buf.toString("utf8", offset + 1, lineEnd);
      const space = text.indexOf(" ");
      return {
        value: new RespError(space < 0 ? text : text.slice(0, space), space < 0 ? "" : text.slice(space + 1)),
        end: next,
      };
    }
    case ":": {
      if (!/^-?[0-9]{1,20}$/.test(line)) throw protocolError(`bad integer "${line.slice(0, 40)}"`);
      const v = BigInt(line);
      return {
        value: v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v,
        end: next,
      };
    }
    case "_":
      return { value: null, end: next };
    case "$": {
      const n = integer();
      if (n === -1) return { value: null, end: next };
      if (n < 0 || n > MAX_BULK) throw protocolError(`bulk length ${n}`);
      if (buf.length < next + n + 2) return undefined;
      if (buf[next + n] !== 13 || buf[next + n + 1] !== 10) throw protocolError("a bulk string without CRLF");
      return { value: buf.toString("utf8", next, next + n), end: next + n + 2 };
    }
    case "*":
    case "%": {
      const n = integer();
      if (n === -1) return { value: null, end: next };
      if (n < 0 || n > MAX_ITEMS) throw protocolError(`aggregate length ${n}`);
      const count = type === "%" ? 2 * n : n;
      const items: RespValue[] = [];
      let at = next;
      for (let i = 0; i < count; i++) {
        const r = readReply(buf, at);
        if (r === undefined) return undefined;
        items.push(r.value);
        at = r.end;
      }
      if (type === "*") return { value: items, end: at };
      const map = new Map<RespValue, RespValue>();
      for (let i = 0; i < items.length; i += 2) map.set(items[i]!, items[i + 1]!);
      return { value: map, end: at };
    }
    default:
      throw protocolError(`unknown type byte 0x${buf[offset]!.toString(16)}`);
  }
}
