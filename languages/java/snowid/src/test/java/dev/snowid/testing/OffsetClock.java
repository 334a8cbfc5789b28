package dev.snowid.testing;

import dev.snowid.Clock;

/** The system clock with a wall-clock offset that can change at run time; monotonic time real. */
public final class OffsetClock implements Clock {
  private volatile long offsetMs;

  public void setOffsetMs(long v) {
    offsetMs = v;
  }

  @Override
  public long nowMs() {
    return System.currentTimeMillis() + offsetMs;
  }

  @Override
  public long monoMs() {
    return Clock.SYSTEM.monoMs();
  }

  @Override
  public void sleep(long ms) throws InterruptedException {
    Clock.SYSTEM.sleep(ms);
  }
}
