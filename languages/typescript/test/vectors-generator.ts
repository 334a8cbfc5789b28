/**
 * The runner of vectors/generator.json: each case is a script of clock moves and calls on one
 * generator, on a clock that moves only when the script or a waiting call's sleep moves it.
 */
import * as assert from "node:assert/strict";
import type { TestContext } from "node:test";
import {
  Generator,
  LeaseGuard,
  SnowidError,
  isRetryable,
  type Clock,
  type FenceStore,
  type Layout,
} from "../src/index.js";

/* eslint-disable @typescript-eslint/no-explicit-any */

/** Wall and monotonic readings in whole ms; a sleep of d moves both by exactly d. */
class ScriptClock implements Clock {
  mono = 0;
  constructor(public wall: number) {}
  nowMs(): number {
    return this.wall;
  }
  monoMs(): number {
    return this.mono;
  }
  async sleep(ms: number): Promise<void> {
    this.wall += ms;
    this.mono += ms;
  }
}

/** A fence store in memory whose writes can be made to fail (storing nothing). */
class MemoryFence implements FenceStore {
  failing = false;
  constructor(public value: number | null) {}
  load(): number | null {
    return this.value;
  }
  store(unixMs: number): void {
    if (this.failing) throw new Error("storing the fence failed (injected)");
    this.value = unixMs;
  }
}

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof SnowidError) return e.code;
    throw e;
  }
  return "OK";
}

async function refusal(f: () => Promise<unknown>): Promise<SnowidError> {
  try {
    await f();
  } catch (e) {
    if (e instanceof SnowidError) return e;
    throw e;
  }
  assert.fail("the call succeeded");
}

function create(c: any, layout: Layout, clock: ScriptClock, fence?: MemoryFence, lease?: LeaseGuard) {
  const o = c.options;
  return new Generator({
    layout,
    region: o.region,
    host: o.host,
    clock,
    randomStartBound: o.random_start_bound,
    maxBackwardMs: o.max_backward_ms,
    maxBorrowMs: o.max_borrow_ms,
    maxWaitMs: o.max_wait_ms,
    fenceWindowMs: o.fence_window_ms,
    // try_next never waits: the synchronous calls may not spin for a used-up tick either.
    maxSpinMs: 0,
    ...(fence !== undefined ? { fenceStore: fence } : {}),
    ...(lease !== undefined ? { lease } : {}),
    ...(o.not_before_ms !== undefined ? { notBeforeMs: o.not_before_ms } : {}),
    ...(o.wait_until_ms !== undefined ? { waitUntilMs: o.wait_until_ms } : {}),
    ...(o.continue_after_ms !== undefined ? { continueAfterMs: o.continue_after_ms } : {}),
  });
}

const ACTIONS = ["try_next", "next", "try_reserve", "reserve"] as const;
const CHECKS = new Set(["fence_ms", "healthy", "wall_ms"]);

async function runCase(c: any, layout: Layout): Promise<void> {
  const o = c.options;
  const clock = new ScriptClock(c.start_wall_ms);
  const fence = o.fence !== undefined ? new MemoryFence(o.fence.stored_ms ?? null) : undefined;
  const lease = o.lease === true ? new LeaseGuard() : undefined;
  let g: Generator | undefined;
  assert.equal(
    codeOf(() => (g = create(c, layout, clock, fence, lease))),
    c.create,
    "creating the generator",
  );
  for (const [n, step] of (c.steps as any[]).entries()) {
    const where = `step ${n}: ${JSON.stringify(step)}`;
    const action = ACTIONS.find((a) => a in step);
    if (action !== undefined) {
      const gen = g!;
      const k: number = step[action];
      const call: () => Promise<{ first: bigint; count: number }> =
        action === "try_next"
          ? async () => ({ first: gen.nextId(), count: 1 })
          : action === "next"
            ? async () => ({ first: await gen.nextIdAsync(), count: 1 })
            : action === "try_reserve"
              ? async () => gen.reserve(k)
              : () => gen.reserveAsync(k);
      const calls = action === "try_next" || action === "next" ? k : 1;
      if (step.error !== undefined) {
        assert.equal(calls, 1, where);
        const e = await refusal(call);
        assert.equal(e.code, step.error, `${where}: ${e.message}`);
        assert.equal(e.retryable, isRetryable(e.code), where);
        if (step.retry_after_ms !== undefined) assert.equal(e.retryAfterMs, step.retry_after_ms, where);
      } else {
        const got: { first: bigint; count: number }[] = [];
        for (let i = 0; i < calls; i++) got.push(await call());
        if (step.first_id !== undefined) {
          const first = BigInt(step.first_id);
          if (step.count !== undefined) {
            assert.deepEqual(got, [{ first, count: step.count }], where);
          } else {
            got.forEach((b, i) => assert.equal(b.first, first + BigInt(i), `${where}: call ${i}`));
          }
        }
        if (step.id_min !== undefined) {
          for (const b of got) {
            assert.ok(
              b.first >= BigInt(step.id_min) && b.first <= BigInt(step.id_max),
              `${where}: ${b.first}`,
            );
          }
        }
      }
    } else if ("advance_ms" in step) {
      clock.wall += step.advance_ms;
      clock.mono += step.advance_ms;
    } else if ("set_wall_ms" in step) {
      clock.wall = step.set_wall_ms;
    } else if ("advance_mono_ms" in step) {
      clock.mono += step.advance_mono_ms;
    } else if ("lease_extend" in step) {
      assert.ok(lease, where);
      lease.extend(step.lease_extend.deadline_mono_ms, step.lease_extend.high_water_ms);
    } else if ("lease_lost" in step) {
      assert.ok(lease, where);
      lease.markLost();
    } else if ("fence_fail" in step) {
      assert.ok(fence, where);
      fence.failing = step.fence_fail;
    } else if ("close" in step) {
      g!.close();
    } else if ("restart" in step) {
      g = undefined;
      assert.equal(
        codeOf(() => (g = create(c, layout, clock, fence, lease))),
        step.create,
        where,
      );
    } else if (!Object.keys(step).every((key) => CHECKS.has(key))) {
      assert.fail(`unknown step ${where}`);
    }
    if ("fence_ms" in step) assert.equal(fence?.value, step.fence_ms, `${where}: the stored fence`);
    if ("healthy" in step) assert.equal(g!.healthy, step.healthy, `${where}: health`);
    if ("wall_ms" in step) assert.equal(clock.wall, step.wall_ms, `${where}: the wall clock`);
  }
}

export async function runGeneratorVectors(
  file: any,
  layoutOf: (name: string) => Layout,
  t: TestContext,
): Promise<void> {
  for (const c of file.cases) {
    await t.test(c.name, () => runCase(c, layoutOf(c.layout)));
  }
}
