/** Ids as text (docs/id-format.md section 8) and in JSON, where they always travel as strings. */
import { invalid, outOfRange } from "./errors.js";
import type { Layout } from "./layout.js";

const U64_MAX = (1n << 64n) - 1n;
const DIGITS = /^[0-9]{1,20}$/;

/**
 * Reads an id strictly: 1 to 20 ASCII digits and nothing else (INVALID_ARGUMENT), at most
 * 2^64 - 1 and, with a layout, at most its largest id (OUT_OF_RANGE). Leading zeros are read.
 */
export function parseId(text: string, layout?: Layout): bigint {
  if (typeof text !== "string") throw invalid("id text must be a string");
  if (!DIGITS.test(text)) {
    throw invalid(`id text must be 1 to 20 ASCII digits, not ${JSON.stringify(text.slice(0, 40))}`);
  }
  const v = BigInt(text);
  if (v > U64_MAX) throw outOfRange(`id ${text} is above 2^64 - 1`);
  if (layout !== undefined && v > layout.maxId) {
    throw outOfRange(`id ${text} is above the largest id of layout ${layout.name} (${layout.maxId})`);
  }
  return v;
}

/** The canonical text of an id: decimal digits without leading zeros. */
export function formatId(id: bigint): string {
  if (typeof id !== "bigint") throw invalid("an id is a bigint");
  if (id < 0n || id > U64_MAX) throw outOfRange(`${id} is not an unsigned 64-bit integer`);
  return id.toString(10);
}

/** A JSON.stringify replacer that writes every bigint as its decimal string. */
export function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? formatId(value) : value;
}

/** JSON.stringify with every bigint written as an id string: `{"id":"26320794961383466"}`. */
export function stringifyIds(value: unknown, space?: string | number): string {
  return JSON.stringify(value, jsonReplacer, space);
}

/**
 * A JSON.parse reviver that reads the string members named in `keys` as ids, strictly
 * (a malformed one throws). Other members are left alone.
 */
export function idReviver(...keys: string[]): (key: string, value: unknown) => unknown {
  const names = new Set(keys);
  return (key, value) => {
    if (!names.has(key)) return value;
    if (typeof value === "string") return parseId(value);
    if (Array.isArray(value)) return value.map((v) => (typeof v === "string" ? parseId(v) : v));
    if (typeof value === "number") {
      throw invalid(`member "${key}" is a JSON number; ids travel as strings`);
    }
    return value;
  };
}

/** JSON.parse reading the members named in `keys` (strings or arrays of strings) as ids. */
export function parseJsonWithIds(text: string, ...keys: string[]): unknown {
  return JSON.parse(text, idReviver(...keys));
}
