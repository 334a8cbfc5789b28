package dev.snowid.bench;

/**
 * The textbook snowflake under one lock (41 bits of ms since 2026, 10 of worker, 12 of sequence),
 * spinning on a used-up millisecond: the floor a lock-free generator is compared with. Not for
 * production use: no clock-step or fence policy.
 */
final class SynchronizedReference {
  private static final long EPOCH = 1_767_225_600_000L;
  private final long worker;
  private long lastMs = -1;
  private long seq;

  SynchronizedReference(long worker) {
    this.worker = worker;
  }

  synchronized long nextId() {
    long now = System.currentTimeMillis();
    if (now < lastMs) {
      now = lastMs;
    }
    if (now == lastMs) {
      seq = (seq + 1) & 4095;
      if (seq == 0) {
        while ((now = System.currentTimeMillis()) <= lastMs) {
          Thread.onSpinWait();
        }
      }
    } else {
      seq = 0;
    }
    lastMs = now;
    return ((now - EPOCH) << 22) | (worker << 12) | seq;
  }
}
