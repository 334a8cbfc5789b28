/** fast-check properties (the fuzzers) of the JSON reader and the etcd value parsers. */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import fc from "fast-check";
import { SnowidError } from "../src/index.js";
import { JsonSyntaxError, NumberText, parseJsonText, type JsonValue } from "../src/etcd/json-text.js";
import {
  decodeHolder,
  decodeMark,
  decodeStore,
  encodeHolder,
  encodeMark,
  encodeStore,
} from "../src/etcd/values.js";

const RUNS = Number(process.env["SNOWID_PROPERTY_RUNS"] ?? 100);

/** The reader's value with every number as JSON.parse would give it. */
function plain(v: JsonValue): unknown {
  if (v instanceof NumberText) return Number(v.text);
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  }
  return v;
}

function agreesWithJsonParse(text: string): void {
  let expected: unknown;
  let valid = true;
  try {
    expected = JSON.parse(text);
  } catch {
    valid = false;
  }
  try {
    const got = parseJsonText(text);
    assert.ok(valid, `JSON.parse refuses ${JSON.stringify(text)}`);
    assert.deepEqual(plain(got), expected);
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    assert.ok(!valid, `${JSON.stringify(text)} refused: ${e.message}`);
  }
}

test("parseJsonText over arbitrary text: exactly the texts JSON.parse reads, with the same values", () => {
  fc.assert(
    fc.property(
      fc.json({ maxDepth: 3 }),
      fc.nat(),
      fc.nat(3),
      fc.constantFrom("", " ", "}", '"', "\\", ",", "e", "-"),
      (json, at, cut, ins) => {
        agreesWithJsonParse(json);
        const i = at % (json.length + 1);
        agreesWithJsonParse(json.slice(0, i) + ins + json.slice(i + cut));
      },
    ),
    { numRuns: RUNS * 10 },
  );
  fc.assert(fc.property(fc.string({ maxLength: 30 }), agreesWithJsonParse), { numRuns: RUNS * 10 });
});

test("parseJsonText keeps number texts: integers exact past 2^53, fractions and exponents not integers", () => {
  fc.assert(
    fc.property(fc.bigInt({ min: -(1n << 70n), max: 1n << 70n }), (n) => {
      const v = parseJsonText(`{"n":${n}}`) as { n: NumberText };
      assert.equal(v.n.integer, n);
      assert.equal((parseJsonText(`${n}.0`) as NumberText).integer, undefined);
      assert.equal((parseJsonText(`${n}e0`) as NumberText).integer, undefined);
    }),
    { numRuns: RUNS * 5 },
  );
});

function valueOrDataLoss(decode: (text: string) => unknown, text: string): unknown {
  try {
    return decode(text);
  } catch (e) {
    assert.ok(e instanceof SnowidError && e.code === "DATA_LOSS", String(e));
    return undefined;
  }
}

test("etcd value decoders over arbitrary text: a value or DATA_LOSS; a decoded value encodes and reads back", () => {
  const member = fc.constantFrom(
    "lease",
    "pid",
    "host",
    "address",
    "started",
    "high_water_ms",
    "released_at_ms",
    "clean_release_ms",
    "incarnation",
    "reason",
    "written_ms",
  );
  const memberValue = fc.oneof(
    fc.json({ maxDepth: 1 }),
    fc.stringMatching(/^-?[0-9]{1,20}(\.[0-9])?(e[0-9])?$/),
    fc.stringMatching(/^"[0-9a-fA-F]{1,17}"$/),
    fc.constantFrom(
      '"2026-03-01T10:00:00.123Z"',
      '"2026-02-30T10:00:00Z"',
      '"1969-12-31T23:59:59.999+01:00"',
    ),
  );
  const text = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc
      .array(fc.tuple(member, memberValue), { maxLength: 5 })
      .map((ms) => `{${ms.map(([k, v]) => `"${k}":${v}`).join(",")}}`),
  );
  fc.assert(
    fc.property(text, (t) => {
      const h = valueOrDataLoss(decodeHolder, t) as ReturnType<typeof decodeHolder> | undefined;
      if (h !== undefined) {
        const again = decodeHolder(encodeHolder(h));
        assert.deepEqual({ ...again, startedMs: 0 }, { ...h, startedMs: 0 });
        assert.equal(again.startedMs, Math.max(0, h.startedMs));
      }
      const m = valueOrDataLoss(decodeMark, t) as ReturnType<typeof decodeMark> | undefined;
      if (m !== undefined) assert.deepEqual(decodeMark(encodeMark(m)), m);
      const s = valueOrDataLoss(decodeStore, t) as ReturnType<typeof decodeStore> | undefined;
      if (s !== undefined) assert.deepEqual(decodeStore(encodeStore(s)), s);
    }),
    { numRuns: RUNS * 10 },
  );
});
