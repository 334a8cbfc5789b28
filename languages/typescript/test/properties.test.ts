import { test } from "node:test";
import * as assert from "node:assert/strict";
import fc from "fast-check";
import {
  Generator,
  SNOWID,
  SnowidError,
  formatFence,
  formatId,
  parseFence,
  parseId,
  type FenceStore,
  readReply,
  encodeCommand,
} from "../src/index.js";
import { FakeClock, T0 } from "./fake-clock.js";

const RUNS = Number(process.env["SNOWID_PROPERTY_RUNS"] ?? 100);

type Op =
  | { kind: "advance"; ms: number }
  | { kind: "step"; ms: number }
  | { kind: "next" }
  | { kind: "reserve"; n: number }
  | { kind: "async" };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      ms: fc.double({ min: 0, max: 3, noNaN: true }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("step" as const), ms: fc.integer({ min: -160, max: 160 }) }),
  },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("next" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("reserve" as const), n: fc.integer({ min: 1, max: 5000 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("async" as const) }) },
);

test("generator on random clock scripts: ids unique, strictly increasing, of its worker, never ahead of the clock", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(op, { maxLength: 120 }),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 255 }),
      fc.constantFrom(0, 16),
      async (ops, region, host, bound) => {
        const clock = new FakeClock(T0);
        const g = new Generator({ clock, region, host, randomStartBound: bound, maxSpinMs: 0 });
        let last = -1n;
        let maxClockTick = SNOWID.ticksAt(clock.wall);
        let maxIssuedTick = -1;
        const seen = new Set<bigint>();
        const take = (first: bigint, count: number) => {
          for (let i = 0n; i < BigInt(count); i++) {
            const id = first + i;
            assert.ok(id > last, `ids increase: ${id} after ${last}`);
            assert.ok(!seen.has(id));
            seen.add(id);
            last = id;
            const p = SNOWID.decode(id);
            maxClockTick = Math.max(maxClockTick, SNOWID.ticksAt(clock.wall));
            assert.equal(p.region, region);
            assert.equal(p.host, host);
            assert.ok(p.ticks <= maxClockTick, "no id ahead of every clock reading");
            maxIssuedTick = Math.max(maxIssuedTick, p.ticks);
          }
        };
        for (const o of ops) {
          const nowTick = SNOWID.ticksAt(clock.wall);
          try {
            if (o.kind === "advance") clock.advance(o.ms);
            else if (o.kind === "step") clock.step(o.ms);
            else if (o.kind === "next") take(g.nextId(), 1);
            else if (o.kind === "reserve") {
              const b = g.reserve(o.n);
              assert.ok(b.count >= 1 && b.count <= o.n);
              take(b.first, b.count);
            } else take(await g.nextIdAsync(), 1);
          } catch (e) {
            if (!(e instanceof SnowidError)) throw e;
            if (e.code === "CLOCK_MOVED_BACK") {
              assert.ok(maxIssuedTick - nowTick > 100, `refused a step of ${maxIssuedTick - nowTick} ms`);
            } else if (e.code === "CLOCK_BEHIND") {
              assert.ok(maxIssuedTick > nowTick);
            } else {
              assert.ok(["SEQUENCE_EXHAUSTED", "UNHEALTHY"].includes(e.code), e.message);
              if (e.code === "UNHEALTHY") assert.equal(g.healthy, false);
            }
          }
          maxClockTick = Math.max(maxClockTick, SNOWID.ticksAt(clock.wall));
        }
      },
    ),
    { numRuns: RUNS },
  );
});

class MemoryFence implements FenceStore {
  value: number | null = null;
  load(): number | null {
    return this.value;
  }
  store(ms: number): void {
    this.value = ms;
  }
}

test("restarts with a fence: random lives, crashes, clean stops and clock steps never repeat an id", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          stepMs: fc.integer({ min: -1500, max: 300 }),
          ids: fc.integer({ min: 0, max: 3000 }),
          clean: fc.boolean(),
        }),
        { minLength: 1, maxLength: 25 },
      ),
      (lives) => {
        const fence = new MemoryFence();
        const clock = new FakeClock(T0);
        const seen = new Set<bigint>();
        for (const life of lives) {
          clock.step(life.stepMs);
          let g: Generator;
          try {
            g = new Generator({ clock, fenceStore: fence, maxSpinMs: 0 });
          } catch (e) {
            assert.ok(e instanceof SnowidError && e.code === "FAILED_PRECONDITION", String(e));
            clock.step(2000);
            continue;
          }
          for (let i = 0; i < life.ids; i++) {
            try {
              const id = g.nextId();
              assert.ok(!seen.has(id), `id ${id} repeated after a restart`);
              seen.add(id);
            } catch (e) {
              assert.ok(e instanceof SnowidError && e.retryable, String(e));
              clock.advance(0.5);
            }
            if (i % 97 === 0) clock.advance(1);
          }
          if (life.clean) g.close();
        }
      },
    ),
    { numRuns: RUNS },
  );
});

test("parseId over arbitrary strings: an exact id or INVALID_ARGUMENT / OUT_OF_RANGE, nothing else", () => {
  const text = fc.oneof(
    fc.string({ unit: "binary" }),
    fc.stringMatching(/^[0-9]{0,22}$/),
    fc.bigInt({ min: 0n, max: 1n << 66n }).map((v) => v.toString()),
  );
  fc.assert(
    fc.property(text, (s) => {
      let v: bigint;
      try {
        v = parseId(s);
      } catch (e) {
        assert.ok(e instanceof SnowidError, String(e));
        assert.ok(e.code === "INVALID_ARGUMENT" || e.code === "OUT_OF_RANGE");
        if (e.code === "OUT_OF_RANGE") assert.ok(/^[0-9]{1,20}$/.test(s) && BigInt(s) >= 1n << 64n);
        else assert.ok(!/^[0-9]{1,20}$/.test(s));
        return;
      }
      assert.match(s, /^[0-9]{1,20}$/);
      assert.equal(formatId(v), s.replace(/^0+(?=.)/, ""));
      assert.equal(parseId(formatId(v)), v);
    }),
    { numRuns: RUNS * 10 },
  );
});

test("parseFence over arbitrary bytes: the exact format or DATA_LOSS; formatFence reads back", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 40 }),
        fc.stringMatching(/^snowid-fence [0-9] [0-9]{0,20}\n?.?$/).map((s) => Buffer.from(s, "latin1")),
      ),
      (bytes) => {
        try {
          const ms = parseFence(bytes);
          assert.match(Buffer.from(bytes).toString("latin1"), /^snowid-fence 1 [0-9]{1,18}\n$/);
          assert.equal(parseFence(formatFence(ms)), ms);
        } catch (e) {
          assert.ok(e instanceof SnowidError && e.code === "DATA_LOSS", String(e));
        }
      },
    ),
    { numRuns: RUNS * 10 },
  );
});

test("readReply over arbitrary bytes: a reply, incomplete, or DATA_LOSS; a command's own encoding reads back", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 60 }),
        fc
          .stringMatching(/^[-+:$*%_][-0-9a-z ]{0,8}(\r\n[-+:$*%_]?[0-9a-z]{0,6}){0,4}(\r\n)?$/)
          .map((s) => Buffer.from(s)),
      ),
      (bytes) => {
        try {
          const r = readReply(Buffer.from(bytes));
          if (r !== undefined) assert.ok(r.end > 0 && r.end <= bytes.length);
        } catch (e) {
          assert.ok(e instanceof SnowidError && e.code === "DATA_LOSS", String(e));
        }
      },
    ),
    { numRuns: RUNS * 10 },
  );
  fc.assert(
    fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 5 }), (args) => {
      const r = readReply(encodeCommand(args));
      assert.deepEqual(r?.value, args);
    }),
    { numRuns: RUNS },
  );
});
