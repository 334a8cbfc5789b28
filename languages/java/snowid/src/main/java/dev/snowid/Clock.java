package dev.snowid;

import java.util.concurrent.locks.LockSupport;

/**
 * The time sources a generator and a lease use, injected so that tests can step, stall and reverse
 * them. Wall time is Unix ms; monotonic time is ms from an arbitrary origin and never goes back.
 * Implementations must be thread-safe.
 */
public interface Clock {
  /** Wall clock, Unix milliseconds. */
  long nowMs();

  /** Monotonic clock, milliseconds. */
  long monoMs();

  /** Waits about {@code ms} milliseconds (a waiting call sleeps for a refusal's retry hint). */
  void sleep(long ms) throws InterruptedException;

  /** The system clocks: {@link System#currentTimeMillis()} and {@link System#nanoTime()}. */
  Clock SYSTEM =
      new Clock() {
        @Override
        public long nowMs() {
          return System.currentTimeMillis();
        }

        @Override
        public long monoMs() {
          return System.nanoTime() / 1_000_000;
        }

        @Override
        public void sleep(long ms) throws InterruptedException {
          if (ms <= 0) {
            Thread.onSpinWait();
            return;
          }
          if (ms <= 2) {
            // Waits for the next tick are short; a timed park overshoots by tens of microseconds
            // where Thread.sleep can overshoot by a millisecond.
            long end = System.nanoTime() + ms * 1_000_000;
            while (System.nanoTime() < end) {
              if (Thread.interrupted()) {
                throw new InterruptedException();
              }
              LockSupport.parkNanos(50_000);
            }
            return;
          }
          Thread.sleep(ms);
        }
      };
}
