/**
 * The hot-path view of a worker-id lease, written by the lease keeper and read by a
 * generator on every id: the monotonic clock must be before the stop deadline, and the
 * id's time at or before the high-water mark already stored in the registry.
 */
export class LeaseGuard {
  private deadlineMono = -Infinity;
  private highWater = -Infinity;
  private isLost = false;

  /** Permits issuing until `deadlineMono` for ids up to `highWaterMs`; never moves either back. */
  extend(deadlineMono: number, highWaterMs: number): void {
    if (this.isLost) return;
    if (deadlineMono > this.deadlineMono) this.deadlineMono = deadlineMono;
    if (highWaterMs > this.highWater) this.highWater = highWaterMs;
  }

  markLost(): void {
    this.isLost = true;
  }

  get lost(): boolean {
    return this.isLost;
  }

  get deadline(): number {
    return this.deadlineMono;
  }

  get highWaterMs(): number {
    return this.highWater;
  }

  permits(monoNow: number, idTimeMs: number): boolean {
    return !this.isLost && monoNow < this.deadlineMono && idTimeMs <= this.highWater;
  }
}
