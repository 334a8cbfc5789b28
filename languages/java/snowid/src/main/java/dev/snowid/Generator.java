package dev.snowid;

import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The in-process generator (docs/generator.md), policy by policy as the C++ one, and safe to share
 * between threads.
 *
 * <p>The whole mutable state of the hot path is one {@link AtomicLong}: {@code (last tick <<
 * sequence bits) | last sequence}; bit 63 means stopped. A call loads the word, reads the clock
 * (after the load, so the reading is never older than the state it is compared with), decides, and
 * publishes with one {@code compareAndSet}. Counters, the fence file and the health are touched
 * only on slow paths.
 *
 * <p>{@link #nextId()} and {@link #reserve(int)} wait out a used-up tick or a small clock step,
 * within {@code maxWaitMs}; {@link #tryNextId()} and {@link #tryReserve(int)} never wait. A refusal
 * is a {@link SnowidException}.
 */
public final class Generator implements AutoCloseable {
  private static final long STOPPED = Long.MIN_VALUE;
  private static final long LEASE_RETRY_MS = 10;
  private static final Code[] CODES = Code.values();

  /** {@code count} consecutive ids: first, first + 1, ... */
  public record IdBatch(long first, int count) {}

  /** Slow-path counters. */
  public record Stats(
      long sequenceExhausted,
      long clockBehind,
      long waits,
      long waitsGaveUp,
      long borrowedTicks,
      long fenceWrites,
      long fenceWriteFailures,
      long refusals,
      long leaseRefusals) {}

  private final Layout layout;
  private final long region;
  private final long host;
  private final Clock clock;
  private final int seqBits;
  private final long seqMask;
  private final int timeShift;
  private final long workerBits;
  private final long epochMs;
  private final long unitMs;
  private final long minMs;
  private final long gateMs;
  private final long waitTicks;
  private final long maxTicks;
  private final long backwardTicks;
  private final long restartBackwardTicks;
  private final long borrowTicks;
  private final long windowTicks;
  private final long restartFloor;
  private final long maxWaitMs;
  private final int randomBound;
  private final long maxBackwardMs;
  private final FenceStore fence;
  private final LeaseGuard lease;
  private final Consumer<SnowidException> onUnhealthy;

  private final AtomicLong state;
  private final Object fenceLock = new Object();
  private volatile long fenceTicks;
  private volatile SnowidException unhealthy;
  private volatile String fenceError = "";
  private boolean closedOnce;

  private final AtomicLong sequenceExhausted = new AtomicLong();
  private final AtomicLong clockBehind = new AtomicLong();
  private final AtomicLong waits = new AtomicLong();
  private final AtomicLong waitsGaveUp = new AtomicLong();
  private final AtomicLong borrowedTicks = new AtomicLong();
  private final AtomicLong fenceWrites = new AtomicLong();
  private final AtomicLong fenceWriteFailures = new AtomicLong();
  private final AtomicLong refusals = new AtomicLong();
  private final AtomicLong leaseRefusals = new AtomicLong();

  /** Options of a generator; every one has the default of docs/generator.md. */
  public static final class Builder {
    private Layout layout = Presets.SNOWID;
    private long region;
    private long host;
    private Clock clock = Clock.SYSTEM;
    private long maxBackwardMs = 100;
    private int randomStartBound = 16;
    private long maxBorrowMs;
    private Long maxWaitMs;
    private FenceStore fenceStore;
    private long fenceWindowMs = 1000;
    private Long notBeforeMs;
    private Long waitUntilMs;
    private Long continueAfterMs;
    private LeaseGuard lease;
    private Consumer<SnowidException> onUnhealthy;

    private Builder() {}

    /** Must be able to generate (not decode-only). Default: the snowid layout. */
    public Builder layout(Layout v) {
      layout = v;
      return this;
    }

    public Builder worker(long region, long host) {
      this.region = region;
      this.host = host;
      return this;
    }

    public Builder clock(Clock v) {
      clock = v;
      return this;
    }

    /** Largest backward clock step waited out rather than refused: 0 to 1 hour; default 100. */
    public Builder maxBackwardMs(long v) {
      maxBackwardMs = v;
      return this;
    }

    /** Exclusive bound of a new tick's first sequence; 0 turns it off. Default 16. */
    public Builder randomStartBound(int v) {
      randomStartBound = v;
      return this;
    }

    /** How far ahead of the clock a used-up tick may move: 0 (default) to 1000 ms. */
    public Builder maxBorrowMs(long v) {
      maxBorrowMs = v;
      return this;
    }

    /** Longest wait of nextId()/reserve() on the monotonic clock. Default maxBackwardMs + 50. */
    public Builder maxWaitMs(long v) {
      maxWaitMs = v;
      return this;
    }

    public Builder fenceFile(Path file) {
      fenceStore = new FileFenceStore(file);
      return this;
    }

    public Builder fenceStore(FenceStore v) {
      fenceStore = v;
      return this;
    }

    /** How far ahead of the current tick each stored fence is: 10 ms to 1 hour; default 1000. */
    public Builder fenceWindowMs(long v) {
      fenceWindowMs = v;
      return this;
    }

    /** Ids before this instant are OUT_OF_RANGE (a layout era's cut-over). */
    public Builder notBeforeMs(long v) {
      notBeforeMs = v;
      return this;
    }

    /** No id carries a time before this instant (a previous holder's mark plus skew). */
    public Builder waitUntilMs(long v) {
      waitUntilMs = v;
      return this;
    }

    /** The time of the last id this process issued under a generator this one replaces. */
    public Builder continueAfterMs(long v) {
      continueAfterMs = v;
      return this;
    }

    /** Every id also needs the permission of this lease guard. */
    public Builder lease(LeaseGuard v) {
      lease = v;
      return this;
    }

    /** Called once, on the refusing thread, when a large backward step makes it unhealthy. */
    public Builder onUnhealthy(Consumer<SnowidException> v) {
      onUnhealthy = v;
      return this;
    }

    /** Validates the options, reads the stored fence and checks the clock against it. */
    public Generator build() {
      return new Generator(this);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  private static long checkRange(String name, long v, long lo, long hi) {
    if (v < lo || v > hi) {
      throw SnowidException.invalid(name + " must be between " + lo + " and " + hi + ", not " + v);
    }
    return v;
  }

  private Generator(Builder b) {
    Layout l = b.layout;
    if (!l.canGenerate()) {
      throw SnowidException.invalid("layout " + l.name() + " cannot be used to generate ids");
    }
    Clock c = b.clock;
    long now = c.nowMs();
    l.check(now);
    l.checkWorker(b.region, b.host);
    long maxBackward = checkRange("maxBackwardMs", b.maxBackwardMs, 0, 3_600_000);
    long maxBorrow = checkRange("maxBorrowMs", b.maxBorrowMs, 0, 1000);
    if (b.randomStartBound < 0 || b.randomStartBound > l.sequenceCapacity() / 4) {
      throw SnowidException.invalid(
          "randomStartBound "
              + b.randomStartBound
              + " is not from 0 to a quarter of the sequence capacity ("
              + l.sequenceCapacity()
              + ")");
    }
    long window = checkRange("fenceWindowMs", b.fenceWindowMs, 10, 3_600_000);
    long maxWait =
        checkRange(
            "maxWaitMs", b.maxWaitMs != null ? b.maxWaitMs : maxBackward + 50, 0, Long.MAX_VALUE);
    this.layout = l;
    this.region = b.region;
    this.host = b.host;
    this.clock = c;
    this.seqBits = l.widthOf(Role.SEQUENCE);
    this.seqMask = l.sequenceCapacity() - 1;
    this.timeShift = l.timeShift();
    this.workerBits = (b.region << l.shiftOf(Role.REGION)) | (b.host << l.shiftOf(Role.HOST));
    this.epochMs = l.epochMs();
    this.unitMs = l.unitMs();
    this.minMs = Math.max(epochMs, b.notBeforeMs != null ? b.notBeforeMs : epochMs);
    this.maxTicks = l.maxTicks();
    long gate = minMs;
    long wt = Long.MIN_VALUE;
    if (b.waitUntilMs != null && b.waitUntilMs > minMs) {
      // Ids carry the start of their tick: the first permitted tick starts at or after it.
      wt = Math.floorDiv(b.waitUntilMs - epochMs + unitMs - 1, unitMs);
      gate = wt > maxTicks ? Long.MAX_VALUE : epochMs + wt * unitMs;
    }
    this.gateMs = gate;
    this.waitTicks = wt;
    this.lease = b.lease;
    this.onUnhealthy = b.onUnhealthy;
    this.maxBackwardMs = maxBackward;
    this.backwardTicks = maxBackward / unitMs;
    this.borrowTicks = maxBorrow / unitMs;
    this.windowTicks = (window + unitMs - 1) / unitMs;
    this.restartBackwardTicks = windowTicks + backwardTicks;
    this.maxWaitMs = maxWait;
    this.randomBound = b.randomStartBound;
    this.fence = b.fenceStore;

    long initial = 0;
    long fenceAt = Long.MAX_VALUE;
    if (fence != null) {
      OptionalLong stored = fence.load();
      fenceAt = -1;
      if (stored.isPresent()) {
        long f = Math.min(l.ticksAt(stored.getAsLong()), maxTicks);
        long nowTicks = l.ticksAt(now);
        if (f - nowTicks > restartBackwardTicks + borrowTicks) {
          throw new SnowidException(
              Code.FAILED_PRECONDITION,
              "the clock ("
                  + Layout.formatInstant(now)
                  + ") is "
                  + (f - nowTicks) * unitMs
                  + " ms behind the time fence stored before the last stop ("
                  + Layout.formatInstant(stored.getAsLong())
                  + "), more than the fence window plus maxBackwardMs; ids up to the fence may"
                  + " exist, so none will be issued until the clock is fixed");
        }
        if (f >= 0) {
          initial = f;
          fenceAt = f;
        }
      }
    }
    this.fenceTicks = fenceAt;
    this.restartFloor = initial;
    if (b.continueAfterMs != null && b.continueAfterMs > epochMs) {
      initial = Math.max(initial, Math.min(l.ticksAt(b.continueAfterMs), maxTicks));
    }
    // Start used up at the initial tick: nothing is issued in it or before it.
    this.state = new AtomicLong((initial << seqBits) | seqMask);
  }

  public Layout layout() {
    return layout;
  }

  public long region() {
    return region;
  }

  public long host() {
    return host;
  }

  /** The next id; waits out a used-up tick or a small clock step, within maxWaitMs. */
  public long nextId() {
    return waitFor(1);
  }

  /** The next id, or the refusal at once: never waits. */
  public long tryNextId() {
    long r = attempt(1);
    if (r >= 0) {
      return r;
    }
    throw failure(r);
  }

  /** Up to {@code n} consecutive ids of one tick (at least 1); waits like {@link #nextId()}. */
  public IdBatch reserve(int n) {
    checkCount(n);
    return batch(waitFor(n), n);
  }

  /** As {@link #reserve(int)}, but never waits. */
  public IdBatch tryReserve(int n) {
    checkCount(n);
    long r = attempt(n);
    if (r < 0) {
      throw failure(r);
    }
    return batch(r, n);
  }

  private IdBatch batch(long first, int n) {
    long room = seqMask - (first & seqMask) + 1;
    return new IdBatch(first, (int) Math.min(n, room));
  }

  /**
   * Stops issuing for good and records the exact last tick as the fence, so that a restart waits no
   * longer than needed. Later calls answer FAILED_PRECONDITION (UNHEALTHY after a refusal).
   * Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closedOnce) {
      return;
    }
    closedOnce = true;
    stop();
    if (fence == null) {
      return;
    }
    synchronized (fenceLock) {
      long last = lastTicks();
      if (last >= fenceTicks) {
        return;
      }
      fence.store(layout.tickStartMs(last));
      fenceTicks = last;
    }
  }

  private void stop() {
    while (true) {
      long s = state.get();
      if (s < 0 || state.compareAndSet(s, s | STOPPED)) {
        return;
      }
    }
  }

  public boolean healthy() {
    return unhealthy == null;
  }

  /** The refusal that made the generator unhealthy, or null. */
  public SnowidException health() {
    return unhealthy;
  }

  public boolean closed() {
    return state.get() < 0;
  }

  /** The last tick issued in (or the restored fence's or continueAfter's before the first id). */
  public long lastTicks() {
    return (state.get() & ~STOPPED) >>> seqBits;
  }

  /** The start of the last tick issued in, Unix ms. */
  public long lastIssuedMs() {
    return layout.tickStartMs(lastTicks());
  }

  public Stats stats() {
    return new Stats(
        sequenceExhausted.get(),
        clockBehind.get(),
        waits.get(),
        waitsGaveUp.get(),
        borrowedTicks.get(),
        fenceWrites.get(),
        fenceWriteFailures.get(),
        refusals.get(),
        leaseRefusals.get());
  }

  // --- internals: a refusal is a negative long, -1 - (retry ms << 5 | code ordinal) ---------

  private static long fail(Code code, long retryMs) {
    return -1 - ((Math.max(0, retryMs) << 5) | code.ordinal());
  }

  private static Code codeOf(long r) {
    return CODES[(int) ((-1 - r) & 31)];
  }

  private static long retryOf(long r) {
    return (-1 - r) >>> 5;
  }

  private static void checkCount(int n) {
    if (n < 1) {
      throw SnowidException.invalid("a batch has at least 1 id, not " + n);
    }
  }

  private static boolean waitingHelps(Code code) {
    return code == Code.SEQUENCE_EXHAUSTED || code == Code.CLOCK_BEHIND;
  }

  private long waitFor(int n) {
    long r = attempt(n);
    if (r >= 0) {
      return r;
    }
    if (!waitingHelps(codeOf(r))) {
      throw failure(r);
    }
    long start = clock.monoMs();
    while (true) {
      long left = maxWaitMs - (clock.monoMs() - start);
      long retry = retryOf(r);
      if (left < 0 || retry > left) {
        waitsGaveUp.incrementAndGet();
        throw failure(r);
      }
      waits.incrementAndGet();
      try {
        clock.sleep(retry);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SnowidException(Code.UNAVAILABLE, "interrupted while waiting for an id", 1, e);
      }
      r = attempt(n);
      if (r >= 0) {
        return r;
      }
      if (!waitingHelps(codeOf(r))) {
        throw failure(r);
      }
    }
  }

  private SnowidException failure(long r) {
    Code code = codeOf(r);
    SnowidException bad = unhealthy;
    if (code == Code.UNHEALTHY && bad != null) {
      return new SnowidException(Code.UNHEALTHY, "an earlier refusal stands: " + bad.getMessage());
    }
    String text =
        switch (code) {
          case SEQUENCE_EXHAUSTED -> "the sequence of the current tick is used up";
          case CLOCK_BEHIND -> "the clock is behind the last issued time or the time to wait for";
          case UNAVAILABLE -> "the time fence could not be stored: " + fenceError;
          case LEASE_UNCERTAIN ->
              "the worker-id lease is not confirmed (renewals late, or the time is past its mark)";
          case LEASE_LOST -> "the worker-id lease is lost; this generator never issues again";
          case CLOCK_MOVED_BACK -> bad != null ? bad.getMessage() : "the clock moved back";
          case OUT_OF_RANGE ->
              "the time is before the epoch or notBeforeMs, or past the layout's end of life";
          case FAILED_PRECONDITION -> "the generator is closed";
          default -> code.name();
        };
    return new SnowidException(code, text, retryOf(r));
  }

  private long refuse(Code code) {
    refusals.incrementAndGet();
    return fail(code, 0);
  }

  private long stoppedRefusal() {
    return refuse(unhealthy != null ? Code.UNHEALTHY : Code.FAILED_PRECONDITION);
  }

  private long startSequence() {
    return randomBound == 0 ? 0 : ThreadLocalRandom.current().nextInt(randomBound);
  }

  private synchronized long movedBack(long now, long last) {
    if (state.get() < 0) {
      return stoppedRefusal();
    }
    SnowidException err =
        new SnowidException(
            Code.CLOCK_MOVED_BACK,
            "clock moved back "
                + (last - now) * unitMs
                + " ms behind the last issued time, more than the "
                + maxBackwardMs
                + " ms allowed; refusing to issue ids");
    unhealthy = err;
    stop();
    refusals.incrementAndGet();
    if (onUnhealthy != null) {
      onUnhealthy.accept(err);
    }
    return fail(Code.CLOCK_MOVED_BACK, 0);
  }

  private long leaseRefusal() {
    leaseRefusals.incrementAndGet();
    if (lease.lost()) {
      return refuse(Code.LEASE_LOST);
    }
    return fail(Code.LEASE_UNCERTAIN, LEASE_RETRY_MS);
  }

  private long beforeGate(long nowMs, long last) {
    if (nowMs < minMs) {
      if (last > restartFloor
          && last - Math.floorDiv(nowMs - epochMs, unitMs) > backwardTicks + borrowTicks) {
        return movedBack(Math.floorDiv(nowMs - epochMs, unitMs), last);
      }
      return refuse(Code.OUT_OF_RANGE);
    }
    if (lease != null && lease.lost()) {
      return leaseRefusal();
    }
    if (waitTicks > maxTicks) {
      return refuse(Code.OUT_OF_RANGE);
    }
    clockBehind.incrementAndGet();
    return fail(Code.CLOCK_BEHIND, gateMs - nowMs);
  }

  private boolean extendFence(long t) {
    synchronized (fenceLock) {
      if (t <= fenceTicks) {
        return true;
      }
      if (state.get() < 0) {
        return false;
      }
      long f = Math.min(t + windowTicks, maxTicks);
      try {
        fence.store(layout.tickStartMs(f));
      } catch (RuntimeException e) {
        fenceWriteFailures.incrementAndGet();
        fenceError = String.valueOf(e.getMessage());
        return false;
      }
      fenceWrites.incrementAndGet();
      fenceTicks = f;
      return true;
    }
  }

  /** One claim of up to n ids of one tick: the first id, or a refusal (negative). */
  private long attempt(int n) {
    boolean reread = false;
    while (true) {
      long s = state.get();
      if (s < 0) {
        return stoppedRefusal();
      }
      long nowMs = clock.nowMs();
      long last = s >>> seqBits;
      long seq = s & seqMask;
      if (nowMs < gateMs && !(nowMs >= minMs && last >= waitTicks)) {
        return beforeGate(nowMs, last);
      }
      long now = Math.floorDiv(nowMs - epochMs, unitMs);
      long t;
      long first;
      if (now > last) {
        t = now;
        first = startSequence();
      } else {
        // Borrowing legitimately puts the last tick up to borrowTicks ahead of the clock.
        boolean behind = last - now > borrowTicks;
        if (behind) {
          // Until this process issues past the restored fence, the allowance is the one the
          // constructor checked; afterwards, maxBackwardMs.
          long limit = (last > restartFloor ? backwardTicks : restartBackwardTicks) + borrowTicks;
          if (last - now > limit) {
            if (!reread) {
              // A stale reading is not a backward step: load the state and read the clock again.
              reread = true;
              continue;
            }
            return movedBack(now, last);
          }
          clockBehind.incrementAndGet();
        }
        if (seq < seqMask) {
          t = last;
          first = seq + 1;
        } else if (last + 1 - now <= borrowTicks) {
          t = last + 1;
          first = startSequence();
          borrowedTicks.incrementAndGet();
        } else {
          // Until the clock reaches the tick from which the next may be started.
          long wait = (last + 1 - borrowTicks) * unitMs + epochMs - nowMs;
          if (behind) {
            return fail(Code.CLOCK_BEHIND, wait);
          }
          sequenceExhausted.incrementAndGet();
          return fail(Code.SEQUENCE_EXHAUSTED, wait);
        }
      }
      if (t > maxTicks) {
        return refuse(Code.OUT_OF_RANGE);
      }
      if (lease != null && !lease.permits(clock.monoMs(), t * unitMs + epochMs)) {
        return leaseRefusal();
      }
      if (t > fenceTicks && !extendFence(t)) {
        if (state.get() < 0) {
          return stoppedRefusal();
        }
        return fail(Code.UNAVAILABLE, 1);
      }
      long count = Math.min(n, seqMask - first + 1);
      if (state.compareAndSet(s, (t << seqBits) | (first + count - 1))) {
        return (t << timeShift) | workerBits | first;
      }
    }
  }
}
