package dev.snowid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.snowid.testing.EtcdServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The leased generator on a real etcd, with the C++ tool (SNOWID_CLI_BIN) on the other side: marks
 * honoured both ways, a fence seen through the watch, stopped and killed holders waited out. Short
 * timings: TTL 2 s, renew 0.5 s, stop 1.5 s, quarantine 1 s, skew 100 ms.
 */
@Tag("etcd")
class EtcdLeaseTest {
  private static EtcdServer etcd;
  private static final AtomicInteger CLUSTERS = new AtomicInteger();

  @BeforeAll
  static void startEtcd() throws Exception {
    etcd = new EtcdServer();
  }

  @AfterAll
  static void stopEtcd() throws Exception {
    if (etcd != null) {
      etcd.close();
    }
  }

  /** A fresh namespace, declared new (as `snowid workers init`): no store-loss wait. */
  private static String cluster() {
    String c = "java-" + ProcessHandle.current().pid() + "-" + CLUSTERS.incrementAndGet();
    LeasedGenerator.initializeNamespace(List.of(etcd.url), "/snowid", c);
    return c;
  }

  private static LeasedGenerator.Builder shortLease(String cluster) {
    return LeasedGenerator.builder()
        .endpoints(etcd.url)
        .cluster(cluster)
        .ttlSeconds(2)
        .renewEveryMs(500)
        .stopAfterMs(1500)
        .retryEveryMs(200)
        .reacquireEveryMs(200)
        .quarantineMs(1000)
        .maxClockSkewMs(100)
        .requestTimeoutMs(1000);
  }

  private static String cli() {
    String p = System.getenv("SNOWID_CLI_BIN");
    assertNotNull(p, "SNOWID_CLI_BIN names the C++ snowid tool");
    return p;
  }

  private record Run(int code, String out, String err) {}

  private static Run runCli(String cluster, String... args) throws Exception {
    Path state = Files.createTempDirectory("snowid-java-cli-");
    List<String> cmd = new ArrayList<>(List.of(cli()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().keySet().removeIf(k -> k.startsWith("SNOWID_"));
    pb.environment().put("SNOWID_ETCD_ENDPOINTS", etcd.url);
    pb.environment().put("SNOWID_ETCD_CLUSTER", cluster);
    pb.environment().put("SNOWID_STATE_DIR", state.toString());
    pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    Path out = state.resolve("out");
    Path err = state.resolve("err");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    Process p = pb.start();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the tool finished");
    return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> workersList(String cluster) throws Exception {
    Run r = runCli(cluster, "workers", "list", "--json");
    assertEquals(0, r.code(), r.err());
    Object doc = Json.parse(r.out().trim());
    return (List<Map<String, Object>>) (doc instanceof Map<?, ?> m ? m.get("workers") : doc);
  }

  private static long markMs(String cluster, long host) {
    EtcdRegistry r = TestRegistry.of(etcd.url, EtcdAccess.NONE, cluster);
    Map<String, Object> doc =
        r.gateway.call("/v3/kv/range", Map.of("key", EtcdGateway.b64(r.keys.mark(0, host))), 1000);
    List<Object> kvs = EtcdGateway.arr(doc.get("kvs"));
    assertFalse(kvs.isEmpty(), "the mark exists");
    return EtcdValues.decodeMark(EtcdGateway.kvOf(kvs.get(0)).value()).highWaterMs();
  }

  @Test
  void renewsPastTheTtlFourThreadsNoDuplicatesAndTheToolListsIt() throws Exception {
    String cluster = cluster();
    try (LeasedGenerator g = shortLease(cluster).build()) {
      long[] w = g.worker();
      ExecutorService pool = Executors.newFixedThreadPool(4);
      List<Future<List<Long>>> parts = new ArrayList<>();
      long end = System.nanoTime() + 3_000_000_000L;
      for (int t = 0; t < 4; t++) {
        parts.add(
            pool.submit(
                () -> {
                  List<Long> ids = new ArrayList<>();
                  while (System.nanoTime() < end) {
                    Generator.IdBatch b = g.reserve(50);
                    for (int i = 0; i < b.count(); i++) {
                      ids.add(b.first() + i);
                    }
                    Thread.sleep(1);
                  }
                  return ids;
                }));
      }
      Set<Long> all = new HashSet<>();
      int n = 0;
      for (Future<List<Long>> f : parts) {
        for (long id : f.get(30, TimeUnit.SECONDS)) {
          n++;
          assertTrue(all.add(id), "duplicate id " + id);
          assertEquals(w[1], Ids.decode(id).host());
        }
      }
      pool.shutdown();
      assertEquals(n, all.size());
      assertTrue(g.ready(), "still held after 1.5 TTLs: renewals work");
      boolean listed = false;
      for (Map<String, Object> wk : workersList(cluster)) {
        if (Long.valueOf(w[1]).equals(wk.get("host"))
            || String.valueOf(w[1]).equals(String.valueOf(wk.get("host")))) {
          listed = true;
        }
      }
      assertTrue(listed, "the tool lists our holder: " + workersList(cluster));
    }
  }

  @Test
  void aFenceByTheToolIsSeenThroughTheWatchAndReplaced(TestInfo info) throws Exception {
    String cluster = cluster();
    EventLog events = new EventLog();
    try (LeasedGenerator g = shortLease(cluster).listener(events).build()) {
      long[] before = g.worker();
      long last = g.nextId();
      long start = System.nanoTime();
      Run r =
          runCli(cluster, "workers", "fence", String.valueOf(before[0]), String.valueOf(before[1]));
      assertEquals(0, r.code(), r.err());
      long refusedAt = 0;
      while (System.nanoTime() - start < 5_000_000_000L) {
        try {
          long id = g.tryNextId();
          assertTrue(id > last);
          last = id;
          if (Ids.decode(id).host() != before[1]) {
            break;
          }
        } catch (SnowidException e) {
          if (refusedAt == 0) {
            refusedAt = System.nanoTime();
          }
          assertTrue(e.isRetryable(), e.getMessage());
        }
        Thread.sleep(1);
      }
      assertTrue(refusedAt > 0, "refused after the fence");
      System.out.printf(
          "[ measured ] fence to first refusal: %.1f ms%n", (refusedAt - start) / 1e6);
      long deadline = System.nanoTime() + 6_000_000_000L;
      while (g.worker() == null && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertNotNull(g.worker(), "a fresh id was acquired");
      assertNotEquals(before[1], g.worker()[1]);
      long after = g.nextId();
      assertTrue(after > last, "ids never go back across the replacement");
      assertTrue(events.types().contains("lost"), events.types().toString());
    }
  }

  @Test
  void cleanReleaseThenTheToolHonoursTheMarkAndBack() throws Exception {
    String cluster = cluster();
    long host = 9;
    long ours;
    try (LeasedGenerator g = shortLease(cluster).host(host).build()) {
      long id = 0;
      for (int i = 0; i < 3000; i++) {
        id = g.nextId();
      }
      ours = id;
    }
    Run r = runCli(cluster, "next", "-n", "5", "--host", String.valueOf(host));
    assertEquals(0, r.code(), r.err());
    List<Long> theirs = new ArrayList<>();
    for (String s : r.out().trim().split("\\s+")) {
      theirs.add(Ids.parse(s));
    }
    assertEquals(5, theirs.size());
    for (long t : theirs) {
      assertEquals(host, Ids.decode(t).host());
    }
    // The tool waited past our exact last instant plus the skew, no quarantine.
    assertTrue(Ids.decode(theirs.get(0)).unixMs() >= Ids.decode(ours).unixMs() + 100);
    long started = System.nanoTime();
    try (LeasedGenerator g = shortLease(cluster).host(host).build()) {
      long again = g.nextId();
      System.out.printf(
          "[ measured ] re-acquire after the tool's release: %.3f s%n",
          (System.nanoTime() - started) / 1e9);
      assertTrue(Ids.decode(again).unixMs() >= Ids.decode(theirs.get(4)).unixMs() + 100);
    }
  }

  @Test
  void aHeldPinnedIdIsResourceExhaustedAndBadOptionsAreRefused() {
    String cluster = cluster();
    try (LeasedGenerator g = shortLease(cluster).host(3).build()) {
      SnowidException e =
          assertThrows(SnowidException.class, () -> shortLease(cluster).host(3).build());
      assertEquals(Code.RESOURCE_EXHAUSTED, e.code());
      assertFalse(e.isRetryable());
      assertEquals(3, Ids.decode(g.nextId()).host());
    }
    assertEquals(
        Code.INVALID_ARGUMENT,
        assertThrows(SnowidException.class, () -> shortLease(cluster).stopAfterMs(2500).build())
            .code());
    assertEquals(
        Code.INVALID_ARGUMENT,
        assertThrows(SnowidException.class, () -> shortLease(cluster).cluster("a/b").build())
            .code());
    assertEquals(
        Code.INVALID_ARGUMENT,
        assertThrows(SnowidException.class, () -> LeasedGenerator.builder().build()).code());
  }

  /** The driver of the harness as a child process: a holder the test can stop and kill. */
  private static final class Child implements AutoCloseable {
    final Process proc;
    final Writer in;
    final BufferedReader out;

    Child(String cluster, long host) throws Exception {
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      proc =
          new ProcessBuilder(
                  java, "-cp", System.getProperty("snowid.classpath"), "dev.snowid.testing.Driver")
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      in = new OutputStreamWriter(proc.getOutputStream(), StandardCharsets.UTF_8);
      out =
          new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8));
      Map<String, Object> r =
          ask(
              "{\"op\":\"start\",\"endpoints\":[\""
                  + etcd.url
                  + "\"],\"cluster\":\""
                  + cluster
                  + "\",\"region\":0,\"host\":"
                  + host
                  + ",\"timing\":{\"ttl_ms\":2000,\"renew_ms\":500,\"stop_ms\":1500,\"quarantine_ms\":1000,"
                  + "\"max_clock_skew_ms\":100,\"request_timeout_ms\":1000}}");
      assertEquals(true, r.get("ok"), r.toString());
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> ask(String line) throws Exception {
      in.write(line + "\n");
      in.flush();
      return (Map<String, Object>) Json.parse(out.readLine());
    }

    @SuppressWarnings("unchecked")
    List<Long> next(int n) throws Exception {
      List<Long> ids = new ArrayList<>();
      for (Object s : (List<Object>) ask("{\"op\":\"next\",\"count\":" + n + "}").get("ids")) {
        ids.add(Ids.parse((String) s));
      }
      return ids;
    }

    void signal(String sig) throws Exception {
      new ProcessBuilder("kill", "-" + sig, String.valueOf(proc.pid())).start().waitFor();
    }

    @Override
    public void close() throws Exception {
      proc.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  /** Acquires the pinned id as soon as it is free; returns it and how long that took. */
  private static LeasedGenerator acquireWhenFree(String cluster, long host, long[] waitedMs)
      throws Exception {
    long start = System.nanoTime();
    while (true) {
      try {
        LeasedGenerator g = shortLease(cluster).host(host).build();
        waitedMs[0] = (System.nanoTime() - start) / 1_000_000;
        return g;
      } catch (SnowidException e) {
        assertEquals(Code.RESOURCE_EXHAUSTED, e.code(), e.getMessage());
        assertTrue(System.nanoTime() - start < 8_000_000_000L, "the id never became free");
        Thread.sleep(50);
      }
    }
  }

  @Test
  void sigkillTheSuccessorWaitsOutTheMark() throws Exception {
    String cluster = cluster();
    List<Long> issued;
    try (Child holder = new Child(cluster, 6)) {
      issued = holder.next(500);
      Thread.sleep(300);
      issued.addAll(holder.next(500));
      holder.signal("KILL");
      holder.proc.waitFor(10, TimeUnit.SECONDS);
    }
    long mark = markMs(cluster, 6);
    long[] waited = new long[1];
    try (LeasedGenerator successor = acquireWhenFree(cluster, 6, waited)) {
      long first = successor.nextId();
      System.out.printf(
          "[ measured ] successor of a killed holder waited %.2f s%n", waited[0] / 1e3);
      assertTrue(waited[0] >= 1000, "the lease outlived the kill, then the quarantine ran");
      assertTrue(Ids.decode(first).unixMs() >= mark + 100);
      assertTrue(first > issued.stream().mapToLong(Long::longValue).max().getAsLong());
    }
  }

  @Test
  void sigstopPastTheDeadlineStopsIssuingAndTheSuccessorNeverCollides() throws Exception {
    String cluster = cluster();
    try (Child holder = new Child(cluster, 5)) {
      Set<Long> ours = new HashSet<>(holder.next(1000));
      holder.signal("STOP");
      long stopped = System.nanoTime();
      long mark = markMs(cluster, 5);
      long[] waited = new long[1];
      List<Long> theirs = new ArrayList<>();
      try (LeasedGenerator successor = acquireWhenFree(cluster, 5, waited)) {
        for (int i = 0; i < 2000; i++) {
          theirs.add(successor.nextId());
        }
        long paused = (System.nanoTime() - stopped) / 1_000_000;
        if (paused < 3000) {
          Thread.sleep(3000 - paused);
        }
        holder.signal("CONT");
        Thread.sleep(500);
        // The resumed holder refuses on the old id (its guard ran out), then takes another.
        Map<String, Object> r = holder.ask("{\"op\":\"next\",\"count\":100}");
        @SuppressWarnings("unchecked")
        List<Object> got = (List<Object>) r.get("ids");
        for (Object s : got) {
          long id = Ids.parse((String) s);
          assertTrue(
              Ids.decode(id).host() != 5 || Ids.decode(id).unixMs() <= mark,
              "nothing on the old id past its mark");
          ours.add(id);
        }
        for (int i = 0; i < 2000; i++) {
          theirs.add(successor.nextId());
        }
      }
      System.out.printf(
          "[ measured ] successor of a stopped holder waited %.2f s%n", waited[0] / 1e3);
      for (long t : theirs) {
        assertFalse(ours.contains(t), "duplicate id " + t);
      }
      assertTrue(Ids.decode(theirs.get(0)).unixMs() >= mark + 100);
    }
  }
}
