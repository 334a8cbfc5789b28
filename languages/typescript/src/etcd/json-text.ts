/**
 * A JSON reader for the registry's values that keeps every number as its text. JSON.parse
 * cannot tell `1.0` or `1e3` from `1`, nor 2^63 from 2^63 + 1, and the protocol refuses
 * the first two as integers and needs exact 64-bit ranges (docs/protocol.md, "Values").
 * Strings, arrays, objects, true, false and null read as JSON.parse reads them; a later
 * duplicate member replaces an earlier one, as there.
 */

/** A JSON number, as written. */
export class NumberText {
  constructor(readonly text: string) {}

  /** The value when the text is an integer without fraction or exponent, else undefined. */
  get integer(): bigint | undefined {
    return /^-?(0|[1-9][0-9]*)$/.test(this.text) ? BigInt(this.text) : undefined;
  }
}

export type JsonValue = null | boolean | string | NumberText | JsonValue[] | { [key: string]: JsonValue };

/** Thrown for text that is not exactly one JSON value (white space around it allowed). */
export class JsonSyntaxError extends Error {
  override name = "JsonSyntaxError";
}

const MAX_DEPTH = 64;
const NUMBER = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const WS = /[ \t\n\r]*/y;
const PLAIN = /[^"\\\u0000-\u001f]*/y;
const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

export function parseJsonText(text: string): JsonValue {
  let i = 0;
  const fail = (why: string): never => {
    throw new JsonSyntaxError(`${why} at offset ${i}`);
  };
  const ws = () => {
    WS.lastIndex = i;
    WS.exec(text);
    i = WS.lastIndex;
  };
  const str = (): string => {
    i++; // the opening quote
    let out = "";
    for (;;) {
      PLAIN.lastIndex = i;
      PLAIN.exec(text);
      out += text.slice(i, PLAIN.lastIndex);
      i = PLAIN.lastIndex;
      const c = text[i];
      if (c === '"') {
        i++;
        return out;
      }
      if (c !== "\\") return fail(c === undefined ? "unterminated string" : "control character in a string");
      const e = text[i + 1];
      if (e === "u") {
        const hex = text.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return fail("bad \\u escape");
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      } else if (e !== undefined && e in ESCAPES) {
        out += ESCAPES[e];
        i += 2;
      } else {
        return fail("bad escape");
      }
    }
  };
  const value = (depth: number): JsonValue => {
    if (depth > MAX_DEPTH) return fail("nested too deeply");
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const obj: { [key: string]: JsonValue } = {};
      ws();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') return fail("expected a member name");
        const key = str();
        ws();
        if (text[i] !== ":") return fail("expected ':'");
        i++;
        Object.defineProperty(obj, key, {
          value: value(depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return obj;
        }
        return fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const arr: JsonValue[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return arr;
        }
        return fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    for (const [word, v] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m === null) return fail("expected a value");
    i = NUMBER.lastIndex;
    return new NumberText(m[0]);
  };
  const v = value(0);
  ws();
  if (i !== text.length) fail("text after the value");
  return v;
}
