package dev.snowid.bench;

import com.github.f4b6a3.tsid.TsidFactory;
import dev.snowid.Generator;
import java.util.Arrays;
import java.util.function.LongSupplier;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/** Runs the JMH benchmark with 1 and 2 threads, then checks each generator for duplicates. */
public final class BenchMain {
  private BenchMain() {}

  private static long duplicates(LongSupplier next, int threads, int perThread) throws Exception {
    long[][] ids = new long[threads][perThread];
    Thread[] ts = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      int me = t;
      ts[t] =
          new Thread(
              () -> {
                for (int i = 0; i < perThread; i++) {
                  ids[me][i] = next.getAsLong();
                }
              });
      ts[t].start();
    }
    for (Thread t : ts) {
      t.join();
    }
    long[] all = Arrays.stream(ids).flatMapToLong(Arrays::stream).sorted().toArray();
    long dups = 0;
    for (int i = 1; i < all.length; i++) {
      if (all[i] == all[i - 1]) {
        dups++;
      }
    }
    return dups;
  }

  public static void main(String[] args) throws Exception {
    for (int threads : new int[] {1, 2}) {
      Options o =
          new OptionsBuilder()
              .include(IdBenchmark.class.getSimpleName())
              .threads(threads)
              .forks(1)
              .warmupIterations(2)
              .warmupTime(TimeValue.seconds(1))
              .measurementIterations(3)
              .measurementTime(TimeValue.seconds(1))
              .build();
      new Runner(o).run();
    }
    Generator g = Generator.builder().worker(0, 1).maxWaitMs(1000).build();
    SynchronizedReference r = new SynchronizedReference(1);
    TsidFactory f = TsidFactory.builder().withNode(1).build();
    System.out.println(
        "duplicates in 2 threads x 2,000,000 ids: snowid "
            + duplicates(g::nextId, 2, 2_000_000)
            + ", synchronized reference "
            + duplicates(r::nextId, 2, 2_000_000)
            + ", tsid-creator "
            + duplicates(() -> f.create().toLong(), 2, 2_000_000));
  }
}
