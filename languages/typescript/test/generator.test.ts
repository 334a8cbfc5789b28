import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Generator, LeaseGuard, SNOWID, SnowidError, type FenceStore } from "../src/index.js";
import { FakeClock, T0 } from "./fake-clock.js";

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof SnowidError, String(e));
    return e.code;
  }
  return "OK";
}

function caught(f: () => unknown): SnowidError {
  try {
    f();
  } catch (e) {
    if (e instanceof SnowidError) return e;
    throw e;
  }
  assert.fail("expected a SnowidError");
}

const exact = (clock: FakeClock, extra: object = {}) =>
  new Generator({ clock, region: 2, host: 17, randomStartBound: 0, maxSpinMs: 0, ...extra });

test("ids compose the clock's tick, the worker and the sequence", () => {
  const clock = new FakeClock(T0);
  const g = exact(clock);
  assert.equal(g.nextId(), 26320794961383466n - 42n);
  assert.equal(g.nextId(), 26320794961383466n - 41n);
  const p = SNOWID.decode(g.nextId());
  assert.deepEqual([p.unixMs, p.region, p.host, p.sequence], [T0, 2, 17, 2]);
});

test("4,096 ids fill a millisecond; the next is SEQUENCE_EXHAUSTED with the time to the next tick, never a wrap", () => {
  const clock = new FakeClock(T0 + 0.25);
  const g = exact(clock);
  const seen = new Set<bigint>();
  for (let i = 0; i < 4096; i++) seen.add(g.nextId());
  assert.equal(seen.size, 4096);
  const e = caught(() => g.nextId());
  assert.equal(e.code, "SEQUENCE_EXHAUSTED");
  assert.equal(e.retryable, true);
  assert.equal(e.retryAfterMs, 0.75);
  clock.advance(0.75);
  assert.equal(SNOWID.decode(g.nextId()).unixMs, T0 + 1);
});

test("a used-up millisecond is spun out within maxSpinMs when the clock moves", () => {
  const clock = new FakeClock(T0);
  const g = new Generator({ clock, randomStartBound: 0 });
  const b = g.reserve(4096);
  assert.equal(b.count, 4096);
  clock.tickPerRead = 0.01;
  const next = g.nextId();
  assert.equal(SNOWID.decode(next).unixMs, T0 + 1);
  assert.equal(next, b.first + 4096n * 0n + (1n << 22n));
});

test("a still clock is not spun on forever: the sync call gives up within its bound", () => {
  const clock = new FakeClock(T0);
  const g = new Generator({ clock, randomStartBound: 0 });
  g.reserve(4096);
  assert.equal(
    code(() => g.nextId()),
    "SEQUENCE_EXHAUSTED",
  );
});

test("reserve gives consecutive ids of one tick, at most what is left of it", () => {
  const clock = new FakeClock(T0);
  const g = exact(clock);
  const a = g.reserve(4000);
  assert.equal(a.count, 4000);
  const b = g.reserve(500);
  assert.equal(b.count, 96);
  assert.equal(b.first, a.first + 4000n);
  assert.equal(
    code(() => g.reserve(0)),
    "INVALID_ARGUMENT",
  );
});

test("a new tick starts its sequence below randomStartBound", () => {
  const clock = new FakeClock(T0);
  const g = new Generator({ clock });
  const starts = new Set<number>();
  for (let i = 0; i < 400; i++) {
    clock.advance(1);
    const s = SNOWID.decode(g.nextId()).sequence;
    assert.ok(s < 16, `sequence ${s}`);
    starts.add(s);
  }
  assert.ok(starts.size > 4, "the start varies");
});

test("a 50 ms step back: the last tick goes on, then CLOCK_BEHIND at once; nextIdAsync waits it out", async () => {
  const clock = new FakeClock(T0);
  const g = exact(clock);
  const first = g.nextId();
  clock.step(-50);
  const during = g.reserve(4095);
  assert.equal(during.first, first + 1n);
  const e = caught(() => g.nextId());
  assert.equal(e.code, "CLOCK_BEHIND");
  assert.equal(e.retryAfterMs, 51);
  assert.deepEqual(clock.sleeps, [], "the synchronous call did not wait");
  const later = await g.nextIdAsync();
  assert.equal(SNOWID.decode(later).unixMs, T0 + 1);
  assert.ok(clock.sleeps.length >= 1);
  assert.ok(g.healthy);
});

test("a wait longer than maxWaitMs is given up at once", async () => {
  const clock = new FakeClock(T0);
  const g = exact(clock, { maxWaitMs: 20 });
  g.reserve(4096);
  clock.step(-50);
  await assert.rejects(g.nextIdAsync(), (e: SnowidError) => e.code === "CLOCK_BEHIND");
  assert.deepEqual(clock.sleeps, []);
  assert.equal(g.stats().waitsGaveUp, 1);
});

test("a step back beyond maxBackwardMs is CLOCK_MOVED_BACK once, then UNHEALTHY for good", () => {
  const clock = new FakeClock(T0);
  const seen: SnowidError[] = [];
  const g = exact(clock, { onUnhealthy: (e: SnowidError) => seen.push(e) });
  g.nextId();
  clock.step(-101);
  const e = caught(() => g.nextId());
  assert.equal(e.code, "CLOCK_MOVED_BACK");
  assert.equal(e.retryable, false);
  assert.equal(seen.length, 1);
  clock.step(1000);
  assert.equal(
    code(() => g.nextId()),
    "UNHEALTHY",
  );
  assert.equal(seen.length, 1);
  assert.equal(g.healthy, false);
});

test("exactly maxBackwardMs back is waited out", () => {
  const clock = new FakeClock(T0);
  const g = exact(clock);
  g.nextId();
  clock.step(-100);
  g.nextId();
  assert.ok(g.healthy);
});

test("before the epoch or notBeforeMs is OUT_OF_RANGE; so is the end of life", () => {
  const clock = new FakeClock(SNOWID.epochMs + 10);
  const g = exact(clock, { notBeforeMs: SNOWID.epochMs + 20 });
  assert.equal(
    code(() => g.nextId()),
    "OUT_OF_RANGE",
  );
  clock.advance(10);
  assert.equal(SNOWID.decode(g.nextId()).unixMs, SNOWID.epochMs + 20);
  const end = new FakeClock(SNOWID.endOfLifeMs - 1);
  const h = exact(end);
  h.reserve(4096);
  end.advance(1);
  assert.equal(
    code(() => h.nextId()),
    "OUT_OF_RANGE",
  );
  assert.equal(
    code(() => exact(new FakeClock(SNOWID.epochMs - 1))),
    "INVALID_ARGUMENT",
  );
});

test("borrowing moves a used-up tick ahead of the clock by at most maxBorrowMs", () => {
  const clock = new FakeClock(T0);
  const g = exact(clock, { maxBorrowMs: 2 });
  for (let i = 0; i < 3; i++) assert.equal(g.reserve(4096).count, 4096);
  assert.equal(g.lastIssuedMs, T0 + 2);
  assert.equal(
    code(() => g.nextId()),
    "SEQUENCE_EXHAUSTED",
  );
  assert.equal(g.stats().borrowedTicks, 2);
});

test("waitUntil: no id carries a time before it", async () => {
  const clock = new FakeClock(T0);
  const g = exact(clock, { waitUntilMs: T0 + 30.5 });
  const e = caught(() => g.nextId());
  assert.equal(e.code, "CLOCK_BEHIND");
  assert.equal(e.retryAfterMs, 31);
  const id = await g.nextIdAsync();
  assert.equal(SNOWID.decode(id).unixMs, T0 + 31);
  const far = exact(new FakeClock(T0), { waitUntilMs: T0 + 10_000 });
  await assert.rejects(far.nextIdAsync(), (x: SnowidError) => x.code === "CLOCK_BEHIND");
});

test("continueAfterMs: the first id is past that tick, and a clock behind it is a backward step", () => {
  const clock = new FakeClock(T0);
  const g = exact(clock, { continueAfterMs: T0 + 5 });
  assert.equal(
    code(() => g.nextId()),
    "CLOCK_BEHIND",
  );
  clock.advance(6);
  assert.equal(SNOWID.decode(g.nextId()).unixMs, T0 + 6);
  assert.equal(
    code(() => exact(new FakeClock(T0), { continueAfterMs: T0 + 101 }).nextId()),
    "CLOCK_MOVED_BACK",
  );
});

test("the lease guard: deadline and mark at their exact boundaries, then LEASE_LOST for good", () => {
  const clock = new FakeClock(T0);
  const guard = new LeaseGuard();
  const g = exact(clock, { lease: guard });
  assert.equal(
    code(() => g.nextId()),
    "LEASE_UNCERTAIN",
  );
  guard.extend(clock.mono + 8000, T0 + 2);
  g.nextId();
  clock.advance(2);
  assert.equal(SNOWID.decode(g.nextId()).unixMs, T0 + 2, "at the mark");
  clock.advance(1);
  const e = caught(() => g.nextId());
  assert.equal(e.code, "LEASE_UNCERTAIN");
  assert.equal(e.retryAfterMs, 10);
  const deadline = guard.deadline;
  guard.extend(0, T0 + 100_000);
  clock.advance(deadline - clock.mono - 1);
  g.nextId();
  clock.advance(1);
  assert.equal(
    code(() => g.nextId()),
    "LEASE_UNCERTAIN",
    "at the deadline",
  );
  guard.markLost();
  guard.extend(clock.mono + 8000, T0 + 10_000);
  assert.equal(
    code(() => g.nextId()),
    "LEASE_LOST",
  );
  assert.equal(g.stats().leaseRefusals, 4);
});

class MemoryFence implements FenceStore {
  value: number | null = null;
  writes: number[] = [];
  failing = false;
  load(): number | null {
    return this.value;
  }
  store(ms: number): void {
    if (this.failing) throw new Error("disk full");
    this.value = ms;
    this.writes.push(ms);
  }
}

test("the fence: stored a window ahead before issuing past it; a failed write is UNAVAILABLE and issues nothing", () => {
  const clock = new FakeClock(T0);
  const fence = new MemoryFence();
  const g = exact(clock, { fenceStore: fence });
  g.nextId();
  assert.deepEqual(fence.writes, [T0 + 1000]);
  clock.advance(999);
  g.nextId();
  assert.equal(fence.writes.length, 1);
  clock.advance(2);
  fence.failing = true;
  const e = caught(() => g.nextId());
  assert.equal(e.code, "UNAVAILABLE");
  assert.equal(e.retryable, true);
  assert.equal(g.lastIssuedMs, T0 + 999, "nothing past the old fence");
  fence.failing = false;
  assert.equal(SNOWID.decode(g.nextId()).unixMs, T0 + 1001);
  g.close();
  assert.equal(fence.value, T0 + 1001, "close records the exact last tick");
  assert.equal(
    code(() => g.nextId()),
    "FAILED_PRECONDITION",
  );
});

test("a restart behind the fence waits within the window and is refused beyond it", async () => {
  const fence = new MemoryFence();
  fence.value = T0 + 1000;
  const clock = new FakeClock(T0 + 1000 - 1100);
  const g = exact(clock, { fenceStore: fence, maxWaitMs: 5000 });
  assert.equal(
    code(() => g.nextId()),
    "CLOCK_BEHIND",
  );
  assert.equal(SNOWID.decode(await g.nextIdAsync()).unixMs, T0 + 1001);
  assert.equal(
    code(() => exact(new FakeClock(T0 + 1000 - 1101), { fenceStore: fence })),
    "FAILED_PRECONDITION",
  );
});

test("fence files: written durably in the exact format; unreadable ones stop the start with DATA_LOSS", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "snowid-ts-fence-"));
  const file = path.join(dir, "fence");
  const clock = new FakeClock(T0);
  const g = exact(clock, { fenceFile: file });
  g.nextId();
  assert.equal(fs.readFileSync(file, "latin1"), `snowid-fence 1 ${T0 + 1000}\n`);
  assert.equal(fs.existsSync(`${file}.tmp`), false);
  g.close();
  assert.equal(fs.readFileSync(file, "latin1"), `snowid-fence 1 ${T0}\n`);
  for (const bad of [
    "",
    "snowid-fence 1 12",
    "snowid-fence 2 12\n",
    "snowid-fence 1 -1\n",
    "snowid-fence 1 12\n\n",
  ]) {
    fs.writeFileSync(file, bad);
    assert.equal(
      code(() => exact(clock, { fenceFile: file })),
      "DATA_LOSS",
      JSON.stringify(bad),
    );
  }
  fs.rmSync(dir, { recursive: true });
});

test("options out of bounds are INVALID_ARGUMENT", () => {
  const clock = new FakeClock(T0);
  for (const o of [
    { region: 4 },
    { host: 256 },
    { maxBackwardMs: -1 },
    { maxBorrowMs: 1001 },
    { randomStartBound: 1025 },
    { fenceWindowMs: 5 },
    { maxSpinMs: 2 },
  ]) {
    assert.equal(
      code(() => new Generator({ clock, ...o })),
      "INVALID_ARGUMENT",
      JSON.stringify(o),
    );
  }
});
