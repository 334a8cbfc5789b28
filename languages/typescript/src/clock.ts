/**
 * The time sources a generator and a lease use, injected so that tests can step, stall and
 * reverse them. Wall time is Unix milliseconds; monotonic time is milliseconds from an
 * arbitrary origin and never goes back.
 */
import { setTimeout as delay } from "node:timers/promises";
import { performance } from "node:perf_hooks";

export interface Clock {
  /** Wall clock, Unix milliseconds. */
  nowMs(): number;
  /** Monotonic clock, milliseconds. */
  monoMs(): number;
  /** Resolves after about `ms` milliseconds; never blocks the event loop. */
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = Object.freeze({
  nowMs: () => Date.now(),
  monoMs: () => performance.now(),
  sleep: (ms: number) => delay(Math.max(0, ms), undefined, { ref: false }),
});
