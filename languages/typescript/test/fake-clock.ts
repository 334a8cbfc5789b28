import type { Clock } from "../src/index.js";

/** A clock the test moves by hand; sleep() moves both clocks forward and resolves at once. */
export class FakeClock implements Clock {
  wall: number;
  mono = 1_000_000;
  sleeps: number[] = [];
  /** Moves the wall clock by this much on every read (0: still). */
  tickPerRead = 0;

  constructor(wallMs: number) {
    this.wall = wallMs;
  }

  nowMs(): number {
    const w = this.wall;
    this.wall += this.tickPerRead;
    return w;
  }

  monoMs(): number {
    return this.mono;
  }

  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.advance(Math.max(ms, 0.001));
  }

  advance(ms: number): void {
    this.wall += ms;
    this.mono += ms;
  }

  /** A wall-clock step alone (NTP, an operator): the monotonic clock does not move. */
  step(ms: number): void {
    this.wall += ms;
  }
}

export const T0 = 1_773_500_966_535; // 2026-03-14T15:09:26.535Z
