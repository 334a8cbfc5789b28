package dev.snowid.bench;

import com.github.f4b6a3.tsid.TsidFactory;
import dev.snowid.Generator;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** ns per id of snowid's nextId() beside a synchronized reference and tsid-creator. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class IdBenchmark {
  Generator snowid;
  SynchronizedReference reference;
  TsidFactory tsid;

  @Setup
  public void setup() {
    // maxWaitMs covers a used-up millisecond under 2 threads: nextId() waits, never refuses.
    snowid = Generator.builder().worker(0, 1).maxWaitMs(1000).build();
    reference = new SynchronizedReference(1);
    tsid = TsidFactory.builder().withNode(1).build();
  }

  @Benchmark
  public long snowidNextId() {
    return snowid.nextId();
  }

  @Benchmark
  public long synchronizedReference() {
    return reference.nextId();
  }

  @Benchmark
  public long tsidCreator() {
    return tsid.create().toLong();
  }
}
