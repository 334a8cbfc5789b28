/**
 * The fence file (docs/id-format.md section 11): `snowid-fence 1 <unix_ms>\n`, replaced
 * durably through `<path>.tmp`, fsync, rename and a directory fsync.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { SnowidError } from "./errors.js";
import { MAX_UNIX_MS } from "./layout.js";

/** Where a generator keeps its time fence. Both calls are synchronous by contract. */
export interface FenceStore {
  /** The stored fence in Unix ms, or null when none was ever stored; DATA_LOSS if unreadable. */
  load(): number | null;
  /** Stores the fence durably before returning; throws (any error) when it could not. */
  store(unixMs: number): void;
}

const FENCE = /^snowid-fence 1 ([0-9]{1,18})\n$/;

/** The fence a fence file's bytes hold; DATA_LOSS for anything but the exact format. */
export function parseFence(bytes: Uint8Array | string): number {
  const text = typeof bytes === "string" ? bytes : Buffer.from(bytes).toString("latin1");
  const m = FENCE.exec(text);
  const ms = m === null ? NaN : Number(m[1]);
  if (!(ms <= MAX_UNIX_MS)) {
    throw new SnowidError("DATA_LOSS", `not a fence file: ${JSON.stringify(text.slice(0, 60))}`);
  }
  return ms;
}

export function formatFence(unixMs: number): string {
  if (!Number.isSafeInteger(unixMs) || unixMs < 0 || unixMs > MAX_UNIX_MS) {
    throw new SnowidError("INVALID_ARGUMENT", `a fence is 0 to ${MAX_UNIX_MS} ms, not ${unixMs}`);
  }
  return `snowid-fence 1 ${unixMs}\n`;
}

export class FileFenceStore implements FenceStore {
  constructor(readonly file: string) {}

  load(): number | null {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(this.file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw new SnowidError("UNAVAILABLE", `cannot read the fence file ${this.file}: ${String(e)}`, 0, {
        cause: e,
      });
    }
    try {
      return parseFence(bytes);
    } catch (e) {
      throw new SnowidError("DATA_LOSS", `${this.file}: ${(e as Error).message}`, 0, { cause: e });
    }
  }

  /** A fence that cannot be written is refused before any file is touched. */
  store(unixMs: number): void {
    const text = formatFence(Math.ceil(unixMs));
    const tmp = `${this.file}.tmp`;
    const fd = fs.openSync(tmp, "w", 0o644);
    try {
      fs.writeSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, this.file);
    const dir = fs.openSync(path.dirname(path.resolve(this.file)), "r");
    try {
      fs.fsyncSync(dir);
    } finally {
      fs.closeSync(dir);
    }
  }
}
