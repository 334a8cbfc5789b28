package dev.snowid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GeneratorTest {
  @TempDir Path dir;

  /** Threads issue ids from one generator; the union has no duplicate and decodes to the worker. */
  private static void noDuplicates(int threads, int perThread, boolean batches) throws Exception {
    Generator g = Generator.builder().worker(2, 200).build();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    try {
      Future<?>[] work = new Future<?>[threads];
      long[][] ids = new long[threads][perThread];
      for (int t = 0; t < threads; t++) {
        int me = t;
        work[t] =
            pool.submit(
                () -> {
                  start.await();
                  long prev = -1;
                  int i = 0;
                  while (i < perThread) {
                    if (batches) {
                      Generator.IdBatch b = g.reserve(Math.min(7, perThread - i));
                      for (int j = 0; j < b.count(); j++) {
                        ids[me][i++] = b.first() + j;
                      }
                    } else {
                      ids[me][i++] = g.nextId();
                    }
                    assertTrue(ids[me][i - 1] > prev, "each thread's ids increase");
                    prev = ids[me][i - 1];
                  }
                  return null;
                });
      }
      start.countDown();
      for (Future<?> f : work) {
        f.get(60, TimeUnit.SECONDS);
      }
      long[] all = Arrays.stream(ids).flatMapToLong(Arrays::stream).toArray();
      Arrays.sort(all);
      for (int i = 1; i < all.length; i++) {
        if (all[i] == all[i - 1]) {
          throw new AssertionError("duplicate id " + all[i]);
        }
      }
      assertEquals((long) threads * perThread, all.length);
      Parts p = Ids.decode(all[all.length / 2]);
      assertEquals(2, p.region());
      assertEquals(200, p.host());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void eightThreadsNoDuplicates() throws Exception {
    noDuplicates(8, 100_000, false);
  }

  @Test
  void fourThreadsReservingNoDuplicates() throws Exception {
    noDuplicates(4, 100_000, true);
  }

  @Test
  void fenceFileIsWrittenAheadAndClosedAtTheLastTick() {
    Path f = dir.resolve("fence-r0-h1");
    Generator g = Generator.builder().worker(0, 1).fenceFile(f).build();
    long id = g.nextId();
    long fence = new FileFenceStore(f).load().getAsLong();
    long t = Ids.decode(id).unixMs();
    assertTrue(fence >= t + 1000 - 1 && fence <= t + 1001, "the fence is a window ahead: " + fence);
    g.close();
    g.close();
    assertEquals(OptionalLong.of(g.lastIssuedMs()), new FileFenceStore(f).load());
    SnowidException e = assertThrows(SnowidException.class, g::nextId);
    assertEquals(Code.FAILED_PRECONDITION, e.code());
    assertFalse(e.isRetryable());
    // A restart issues after the recorded fence.
    Generator again = Generator.builder().worker(0, 1).fenceFile(f).build();
    assertTrue(again.nextId() > id);
    again.close();
  }

  @Test
  void unreadableFenceRefusesToStart() throws Exception {
    Path f = dir.resolve("fence");
    Files.writeString(f, "snowid-fence 1 12\r\n");
    SnowidException e =
        assertThrows(SnowidException.class, () -> Generator.builder().fenceFile(f).build());
    assertEquals(Code.DATA_LOSS, e.code());
  }

  @Test
  void badOptionsAreInvalidArgument() {
    assertEquals(
        Code.INVALID_ARGUMENT,
        assertThrows(SnowidException.class, () -> Generator.builder().worker(4, 0).build()).code());
    assertEquals(
        Code.INVALID_ARGUMENT,
        assertThrows(SnowidException.class, () -> Generator.builder().maxBorrowMs(1001).build())
            .code());
    assertEquals(
        Code.INVALID_ARGUMENT,
        assertThrows(
                SnowidException.class, () -> Generator.builder().layout(Presets.TWITTER).build())
            .code());
  }

  @Test
  void idTextRoundTripsUnsigned() {
    assertEquals("18446744073709551615", Ids.format(-1L));
    assertEquals(-1L, Ids.parse("18446744073709551615"));
    assertEquals(
        Code.OUT_OF_RANGE,
        assertThrows(SnowidException.class, () -> Ids.parse("18446744073709551616")).code());
    assertEquals(
        Code.INVALID_ARGUMENT, assertThrows(SnowidException.class, () -> Ids.parse("+1")).code());
  }
}
