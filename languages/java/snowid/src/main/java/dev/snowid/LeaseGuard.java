package dev.snowid;

/**
 * The hot-path view of a worker-id lease, written by the lease keeper and read by a generator
 * before every claim: the monotonic clock must be before the stop deadline, and the id's time at or
 * before the high-water mark already stored in the registry. Thread-safe; neither bound ever moves
 * back, and a lost guard stays lost.
 */
public final class LeaseGuard {
  private volatile long deadlineMono = Long.MIN_VALUE;
  private volatile long highWaterMs = Long.MIN_VALUE;
  private volatile boolean lost;

  /** Permits issuing until {@code deadlineMono} for ids up to {@code highWaterMs}. */
  public synchronized void extend(long deadlineMono, long highWaterMs) {
    if (lost) {
      return;
    }
    if (highWaterMs > this.highWaterMs) {
      this.highWaterMs = highWaterMs;
    }
    if (deadlineMono > this.deadlineMono) {
      this.deadlineMono = deadlineMono;
    }
  }

  public void markLost() {
    lost = true;
  }

  public boolean lost() {
    return lost;
  }

  public long deadlineMono() {
    return deadlineMono;
  }

  public long highWaterMs() {
    return highWaterMs;
  }

  public boolean permits(long monoNow, long idTimeMs) {
    return !lost && monoNow < deadlineMono && idTimeMs <= highWaterMs;
  }
}
