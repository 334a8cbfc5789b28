/**
 * The in-process generator (docs/generator.md), policy by policy as the C++ Generator.
 *
 * A JavaScript isolate runs one call at a time, so the state word of the C++ generator is a
 * pair of plain fields here: the last tick and the last sequence issued in it. Every call reads
 * the clock once and decides from that reading and the state.
 *
 * Node's event loop must never stall for a clock step: `nextId()` answers a clock behind the
 * last tick (or a `waitUntil` not reached yet) at once with a retryable SnowidError carrying
 * `retryAfterMs`, and `nextIdAsync()` waits it out with timers, within `maxWaitMs`. A used-up
 * tick is spun out inside `nextId()` only while the wait is at most `maxSpinMs` (1 ms by
 * default, so with 1 ms ticks it always is); otherwise it is refused the same way.
 */
import { SnowidError, type Code } from "./errors.js";
import { systemClock, type Clock } from "./clock.js";
import { FileFenceStore, type FenceStore } from "./fence.js";
import { formatInstant, type Layout } from "./layout.js";
import type { LeaseGuard } from "./lease-guard.js";
import { SNOWID } from "./presets.js";

export interface GeneratorOptions {
  /** Must be able to generate (not decode-only). Default: the snowid layout. */
  layout?: Layout;
  region?: number;
  host?: number;
  clock?: Clock;
  /** Largest backward clock step waited out rather than refused. 0 to 1 hour; default 100. */
  maxBackwardMs?: number;
  /** Exclusive bound of a new tick's first sequence; 0 turns it off. Default 16. */
  randomStartBound?: number;
  /** How far ahead of the clock a used-up tick may move. 0 (default) to 1000 ms. */
  maxBorrowMs?: number;
  /** Longest wait of nextIdAsync()/reserveAsync() on the monotonic clock. Default maxBackwardMs + 50. */
  maxWaitMs?: number;
  /** Longest busy wait of the synchronous calls for a used-up tick. 0 to 1; default 1. */
  maxSpinMs?: number;
  /** A fence file path, or a store of one's own. */
  fenceFile?: string;
  fenceStore?: FenceStore;
  /** How far ahead of the current tick each stored fence is. 10 ms to 1 hour; default 1000. */
  fenceWindowMs?: number;
  /** Ids before this instant are OUT_OF_RANGE (a layout era's cut-over). */
  notBeforeMs?: number;
  /** No id carries a time before this instant (a lease's previous holder's mark plus skew). */
  waitUntilMs?: number;
  /** The time of the last id this process issued under a generator this one replaces. */
  continueAfterMs?: number;
  /** Every id also needs the permission of this lease guard. */
  lease?: LeaseGuard;
  /** Called once when a large backward step makes the generator unhealthy. */
  onUnhealthy?: (error: SnowidError) => void;
}

export interface IdBatch {
  /** `count` consecutive ids: first, first + 1n, ... */
  readonly first: bigint;
  readonly count: number;
}

export interface GeneratorStats {
  sequenceExhausted: number;
  clockBehind: number;
  wait: number;
  waitsGaveUp: number;
  borrowedTicks: number;
  fenceWrites: number;
  fenceWriteFailures: number;
  refusals: number;
  leaseRefusals: number;
}

const LEASE_RETRY_MS = 10;
const SPIN_LIMIT = 1 << 20;

function waitingHelps(code: Code): boolean {
  return code === "SEQUENCE_EXHAUSTED" || code === "CLOCK_BEHIND";
}

function checkRange(name: string, v: number, lo: number, hi: number): number {
  if (typeof v !== "number" || !(v >= lo && v <= hi)) {
    throw new SnowidError("INVALID_ARGUMENT", `${name} must be between ${lo} and ${hi}, not ${v}`);
  }
  return v;
}

export class Generator {
  readonly layout: Layout;
  readonly region: number;
  readonly host: number;
  private readonly clock: Clock;
  private readonly seqMask: number;
  private readonly timeShift: bigint;
  private readonly workerBits: bigint;
  private readonly epochMs: number;
  private readonly unitMs: number;
  private readonly minMs: number;
  private readonly gateMs: number;
  private readonly waitTicks: number;
  private readonly maxTicks: number;
  private readonly backwardTicks: number;
  private readonly restartBackwardTicks: number;
  private readonly borrowTicks: number;
  private readonly windowTicks: number;
  private readonly restartFloor: number;
  private readonly maxWaitMs: number;
  private readonly maxSpinMs: number;
  private readonly randomBound: number;
  private readonly maxBackwardMs: number;
  private readonly fence: FenceStore | undefined;
  private readonly lease: LeaseGuard | undefined;
  private readonly onUnhealthy: ((e: SnowidError) => void) | undefined;
  private readonly seqBig: readonly bigint[] | undefined;

  private lastTick: number;
  private lastSeq: number;
  private stopped = false;
  private unhealthy: SnowidError | undefined;
  private fenceTicks: number;
  // The id of the first sequence value of lastTick, cached: one bigint operation per id.
  private tickBase: bigint;
  private tickBaseOf: number;
  // The refusal of the last attempt that issued nothing.
  private failCode: Code = "UNAVAILABLE";
  private failRetryMs = 0;
  private failDetail = "";
  private readonly counters: GeneratorStats = {
    sequenceExhausted: 0,
    clockBehind: 0,
    wait: 0,
    waitsGaveUp: 0,
    borrowedTicks: 0,
    fenceWrites: 0,
    fenceWriteFailures: 0,
    refusals: 0,
    leaseRefusals: 0,
  };

  /** Validates the options, reads the stored fence and checks the clock against it. */
  constructor(options: GeneratorOptions = {}) {
    const layout = options.layout ?? SNOWID;
    const clock = options.clock ?? systemClock;
    if (!layout.canGenerate) {
      throw new SnowidError("INVALID_ARGUMENT", `layout ${layout.name} cannot be used to generate ids`);
    }
    const now = clock.nowMs();
    layout.check(now);
    const region = options.region ?? 0;
    const host = options.host ?? 0;
    layout.checkWorker(region, host);
    const maxBackward = checkRange("maxBackwardMs", options.maxBackwardMs ?? 100, 0, 3_600_000);
    const maxBorrow = checkRange("maxBorrowMs", options.maxBorrowMs ?? 0, 0, 1000);
    const bound = options.randomStartBound ?? 16;
    if (!Number.isInteger(bound) || bound < 0 || bound > layout.sequenceCapacity / 4) {
      throw new SnowidError(
        "INVALID_ARGUMENT",
        `randomStartBound ${bound} is not an integer from 0 to a quarter of the sequence capacity (${layout.sequenceCapacity})`,
      );
    }
    const window = checkRange("fenceWindowMs", options.fenceWindowMs ?? 1000, 10, 3_600_000);
    const maxWait = checkRange(
      "maxWaitMs",
      options.maxWaitMs ?? maxBackward + 50,
      0,
      Number.MAX_SAFE_INTEGER,
    );
    this.maxSpinMs = checkRange("maxSpinMs", options.maxSpinMs ?? 1, 0, 1);
    if (options.fenceFile !== undefined && options.fenceStore !== undefined) {
      throw new SnowidError("INVALID_ARGUMENT", "give fenceFile or fenceStore, not both");
    }

    this.layout = layout;
    this.region = region;
    this.host = host;
    this.clock = clock;
    this.seqMask = layout.sequenceCapacity - 1;
    this.timeShift = BigInt(layout.timeShift);
    this.workerBits =
      (BigInt(region) << BigInt(layout.shiftOf("region"))) | (BigInt(host) << BigInt(layout.shiftOf("host")));
    this.epochMs = layout.epochMs;
    this.unitMs = layout.unitMs;
    this.minMs = Math.max(this.epochMs, options.notBeforeMs ?? this.epochMs);
    this.maxTicks = layout.maxTicks;
    let gate = this.minMs;
    let waitTicks = -Infinity;
    if (options.waitUntilMs !== undefined && options.waitUntilMs > this.minMs) {
      // Ids carry the start of their tick: the first permitted tick starts at or after it.
      waitTicks = Math.ceil((options.waitUntilMs - this.epochMs) / this.unitMs);
      gate = waitTicks > this.maxTicks ? Infinity : this.epochMs + waitTicks * this.unitMs;
    }
    this.gateMs = gate;
    this.waitTicks = waitTicks;
    this.lease = options.lease;
    this.onUnhealthy = options.onUnhealthy;
    this.maxBackwardMs = maxBackward;
    this.backwardTicks = Math.floor(maxBackward / this.unitMs);
    this.borrowTicks = Math.floor(maxBorrow / this.unitMs);
    this.windowTicks = Math.ceil(window / this.unitMs);
    this.restartBackwardTicks = this.windowTicks + this.backwardTicks;
    this.maxWaitMs = maxWait;
    this.randomBound = bound;
    this.fence =
      options.fenceStore ??
      (options.fenceFile !== undefined ? new FileFenceStore(options.fenceFile) : undefined);
    this.seqBig =
      layout.sequenceCapacity <= 65536
        ? Array.from({ length: layout.sequenceCapacity }, (_, i) => BigInt(i))
        : undefined;

    let initial = 0;
    this.fenceTicks = Infinity;
    if (this.fence !== undefined) {
      const stored = this.fence.load();
      this.fenceTicks = -1;
      if (stored !== null) {
        const fence = Math.min(layout.ticksAt(stored), this.maxTicks);
        const nowTicks = layout.ticksAt(now);
        if (fence - nowTicks > this.restartBackwardTicks + this.borrowTicks) {
          throw new SnowidError(
            "FAILED_PRECONDITION",
            `the clock (${formatInstant(now)}) is ${(fence - nowTicks) * this.unitMs} ms behind the time fence ` +
              `stored before the last stop (${formatInstant(stored)}), more than the fence window plus ` +
              `maxBackwardMs; ids up to the fence may exist, so none will be issued until the clock is fixed`,
          );
        }
        if (fence >= 0) {
          initial = fence;
          this.fenceTicks = fence;
        }
      }
    }
    this.restartFloor = initial;
    if (options.continueAfterMs !== undefined && options.continueAfterMs > this.epochMs) {
      initial = Math.max(initial, Math.min(layout.ticksAt(options.continueAfterMs), this.maxTicks));
    }
    // Start used up at the initial tick: nothing is issued in it or before it.
    this.lastTick = initial;
    this.lastSeq = this.seqMask;
    this.tickBaseOf = -1;
    this.tickBase = 0n;
  }

  /**
   * The next id. Never blocks the event loop for a clock step: throws a SnowidError with
   * `retryable` and `retryAfterMs` instead (see nextIdAsync() to wait).
   */
  nextId(): bigint {
    const id = this.attempt(1);
    if (id >= 0n) return id;
    return this.spinOrThrow();
  }

  /** As nextId(), but waits out retryable refusals that waiting helps, within maxWaitMs. */
  async nextIdAsync(): Promise<bigint> {
    const b = await this.waitFor(1);
    return b.first;
  }

  /** Up to `n` consecutive ids of one tick (at least 1). Throws like nextId(). */
  reserve(n: number): IdBatch {
    this.checkCount(n);
    const first = this.attempt(n);
    if (first >= 0n) return { first, count: this.claimed };
    this.spinOrThrow(n);
    return { first: this.spunFirst, count: this.claimed };
  }

  async reserveAsync(n: number): Promise<IdBatch> {
    this.checkCount(n);
    return this.waitFor(n);
  }

  /**
   * Stops issuing for good and records the exact last tick as the fence, so that a restart
   * waits no longer than needed. Later calls answer FAILED_PRECONDITION.
   */
  close(): void {
    if (this.closedOnce) return;
    this.closedOnce = true;
    this.stopped = true;
    if (this.fence === undefined) return;
    if (this.lastTick >= this.fenceTicks) return;
    this.fence.store(this.layout.tickStartMs(this.lastTick));
    this.fenceTicks = this.lastTick;
  }

  get healthy(): boolean {
    return this.unhealthy === undefined;
  }

  /** The refusal that made the generator unhealthy, if any. */
  get health(): SnowidError | undefined {
    return this.unhealthy;
  }

  get closed(): boolean {
    return this.stopped;
  }

  stats(): GeneratorStats {
    return { ...this.counters };
  }

  /** The last tick any id was issued in (or the restored fence / continueAfter tick before the first). */
  get lastTicks(): number {
    return this.lastTick;
  }

  /** The start of the last tick issued in, Unix ms. */
  get lastIssuedMs(): number {
    return this.layout.tickStartMs(this.lastTick);
  }

  // --- internals ---------------------------------------------------------------------------

  private closedOnce = false;
  private claimed = 0;
  private spunFirst = 0n;

  private checkCount(n: number): void {
    if (!Number.isInteger(n) || n < 1) {
      throw new SnowidError("INVALID_ARGUMENT", `a batch has at least 1 id, not ${n}`);
    }
  }

  private spinOrThrow(n = 1): bigint {
    if (this.failCode === "SEQUENCE_EXHAUSTED" && this.failRetryMs <= this.maxSpinMs) {
      const start = this.clock.monoMs();
      for (let i = 0; i < SPIN_LIMIT; i++) {
        const id = this.attempt(n);
        if (id >= 0n) {
          this.spunFirst = id;
          return id;
        }
        if (this.failCode !== "SEQUENCE_EXHAUSTED" || this.clock.monoMs() - start > this.maxSpinMs) break;
      }
    }
    throw this.failure();
  }

  private async waitFor(n: number): Promise<IdBatch> {
    let first = this.attempt(n);
    if (first >= 0n) return { first, count: this.claimed };
    if (!waitingHelps(this.failCode)) throw this.failure();
    const start = this.clock.monoMs();
    for (;;) {
      const left = this.maxWaitMs - (this.clock.monoMs() - start);
      if (left < 0 || this.failRetryMs > left) {
        this.counters.waitsGaveUp++;
        throw this.failure();
      }
      this.counters.wait++;
      await this.clock.sleep(this.failRetryMs);
      first = this.attempt(n);
      if (first >= 0n) return { first, count: this.claimed };
      if (!waitingHelps(this.failCode)) throw this.failure();
    }
  }

  private failure(): SnowidError {
    const code = this.failCode;
    if (code === "UNHEALTHY" && this.unhealthy !== undefined) {
      return new SnowidError("UNHEALTHY", `an earlier refusal stands: ${this.unhealthy.message}`);
    }
    const text: Record<string, string> = {
      SEQUENCE_EXHAUSTED: "the sequence of the current tick is used up",
      CLOCK_BEHIND: "the clock is behind the last issued time or the time to wait for",
      UNAVAILABLE: "the time fence could not be stored",
      LEASE_UNCERTAIN: "the worker-id lease is not confirmed (renewals late, or the time is past its mark)",
      LEASE_LOST: "the worker-id lease is lost; this generator never issues again",
      CLOCK_MOVED_BACK: this.unhealthy?.message ?? "the clock moved back",
      OUT_OF_RANGE: "the time is before the epoch or notBeforeMs, or past the layout's end of life",
      FAILED_PRECONDITION: "the generator is closed",
    };
    const detail = this.failDetail === "" ? "" : `: ${this.failDetail}`;
    return new SnowidError(code, (text[code] ?? code) + detail, this.failRetryMs);
  }

  private fail(code: Code, retryMs = 0, detail = ""): bigint {
    this.failCode = code;
    this.failRetryMs = retryMs;
    this.failDetail = detail;
    return -1n;
  }

  private refuse(code: Code): bigint {
    this.counters.refusals++;
    return this.fail(code);
  }

  private stoppedRefusal(): bigint {
    return this.refuse(this.unhealthy !== undefined ? "UNHEALTHY" : "FAILED_PRECONDITION");
  }

  private startSequence(): number {
    return this.randomBound === 0 ? 0 : Math.floor(Math.random() * this.randomBound);
  }

  private movedBack(now: number, last: number): bigint {
    if (this.stopped) return this.stoppedRefusal();
    const err = new SnowidError(
      "CLOCK_MOVED_BACK",
      `clock moved back ${(last - now) * this.unitMs} ms behind the last issued time, more than the ` +
        `${this.maxBackwardMs} ms allowed; refusing to issue ids`,
    );
    this.unhealthy = err;
    this.stopped = true;
    this.counters.refusals++;
    if (this.onUnhealthy !== undefined) this.onUnhealthy(err);
    return this.fail("CLOCK_MOVED_BACK");
  }

  private leaseRefusal(): bigint {
    this.counters.leaseRefusals++;
    if (this.lease!.lost) return this.refuse("LEASE_LOST");
    return this.fail("LEASE_UNCERTAIN", LEASE_RETRY_MS);
  }

  private gatePassed(nowMs: number): boolean {
    return nowMs >= this.minMs && this.lastTick >= this.waitTicks;
  }

  private beforeGate(nowMs: number): bigint {
    if (nowMs < this.minMs) return this.beforeStart(nowMs);
    if (this.stopped) return this.stoppedRefusal();
    if (this.lease !== undefined && this.lease.lost) return this.leaseRefusal();
    if (this.waitTicks > this.maxTicks) return this.refuse("OUT_OF_RANGE");
    this.counters.clockBehind++;
    return this.fail("CLOCK_BEHIND", this.gateMs - nowMs, `waiting until ${formatInstant(this.gateMs)}`);
  }

  private beforeStart(nowMs: number): bigint {
    if (this.stopped) return this.stoppedRefusal();
    const last = this.lastTick;
    const now = this.layout.ticksAt(nowMs);
    if (last > this.restartFloor && last - now > this.backwardTicks + this.borrowTicks) {
      return this.movedBack(now, last);
    }
    return this.refuse("OUT_OF_RANGE");
  }

  private extendFence(t: number): boolean {
    if (t <= this.fenceTicks) return true;
    const fence = Math.min(t + this.windowTicks, this.maxTicks);
    try {
      this.fence!.store(this.layout.tickStartMs(fence));
    } catch (e) {
      this.counters.fenceWriteFailures++;
      this.failDetail = String(e);
      return false;
    }
    this.counters.fenceWrites++;
    this.fenceTicks = fence;
    return true;
  }

  /** One attempt: reads the clock once; claims up to n ids of one tick, or records why not (-1n). */
  private attempt(n: number): bigint {
    const nowMs = this.clock.nowMs();
    if (nowMs < this.gateMs && !this.gatePassed(nowMs)) return this.beforeGate(nowMs);
    if (this.stopped) return this.stoppedRefusal();
    const now = Math.floor((nowMs - this.epochMs) / this.unitMs);
    const last = this.lastTick;
    const seq = this.lastSeq;
    let t: number;
    let first: number;
    if (now > last) {
      t = now;
      first = this.startSequence();
    } else {
      // Borrowing legitimately puts the last tick up to borrowTicks ahead of the clock.
      const clockBehind = last - now > this.borrowTicks;
      if (clockBehind) {
        this.counters.clockBehind++;
        // Until this process issues past the restored fence, the allowance is the one the
        // constructor checked; afterwards, maxBackwardMs.
        const limit =
          (last > this.restartFloor ? this.backwardTicks : this.restartBackwardTicks) + this.borrowTicks;
        if (last - now > limit) return this.movedBack(now, last);
      }
      if (seq < this.seqMask) {
        t = last;
        first = seq + 1;
      } else if (last + 1 - now <= this.borrowTicks) {
        t = last + 1;
        first = this.startSequence();
        this.counters.borrowedTicks++;
      } else {
        // Until the clock reaches the tick from which the next may be started.
        const wait = (last + 1 - this.borrowTicks) * this.unitMs + this.epochMs - nowMs;
        if (clockBehind) return this.fail("CLOCK_BEHIND", wait);
        this.counters.sequenceExhausted++;
        return this.fail("SEQUENCE_EXHAUSTED", wait);
      }
    }
    if (t > this.maxTicks) return this.refuse("OUT_OF_RANGE");
    if (
      this.lease !== undefined &&
      !this.lease.permits(this.clock.monoMs(), t * this.unitMs + this.epochMs)
    ) {
      return this.leaseRefusal();
    }
    if (t > this.fenceTicks && !this.extendFence(t)) return this.fail("UNAVAILABLE", 1);
    const room = this.seqMask - first + 1;
    const count = n < room ? n : room;
    this.lastTick = t;
    this.lastSeq = first + count - 1;
    this.claimed = count;
    if (this.tickBaseOf !== t) {
      this.tickBase = (BigInt(t) << this.timeShift) | this.workerBits;
      this.tickBaseOf = t;
    }
    return this.tickBase | (this.seqBig !== undefined ? this.seqBig[first]! : BigInt(first));
  }
}
