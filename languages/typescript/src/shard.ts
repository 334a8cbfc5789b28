/** Shards of ids (docs/id-format.md section 10): part of the format, never changed. */
import { invalid } from "./errors.js";

const M64 = (1n << 64n) - 1n;

/** The fixed 64-bit mixing function. */
export function mix64(id: bigint): bigint {
  let x = id & M64;
  x ^= x >> 30n;
  x = (x * 0xbf58476d1ce4e5b9n) & M64;
  x ^= x >> 27n;
  x = (x * 0x94d049bb133111ebn) & M64;
  x ^= x >> 31n;
  return x;
}

/** The shard of `id` among `shards` (1 to 2^32 - 1) by multiply-shift of the mix's high half. */
export function shardOf(id: bigint, shards: number): number {
  if (!Number.isInteger(shards) || shards < 1 || shards > 0xffffffff) {
    throw invalid(`the number of shards must be 1 to 2^32 - 1, not ${shards}`);
  }
  if (typeof id !== "bigint" || id < 0n || id > M64) throw invalid("an id is an unsigned 64-bit bigint");
  return Number(((mix64(id) >> 32n) * BigInt(shards)) >> 32n);
}
