package dev.snowid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The sidecar client against a real snowidd (tests/clients/run_with_daemon.py starts it and sets
 * SNOWIDD_SOCKET, SNOWIDD_TCP_HOST/PORT and the pinned SNOWIDD_REGION/HOST).
 */
@Tag("sidecar")
class SidecarTest {
  private static String env(String name) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) {
      throw new IllegalStateException(name + " is not set: run under run_with_daemon.py");
    }
    return v;
  }

  private static Sidecar connect(String transport) {
    return transport.equals("unix")
        ? Sidecar.connect(Path.of(env("SNOWIDD_SOCKET")))
        : Sidecar.connectTcp(
            env("SNOWIDD_TCP_HOST"), Integer.parseInt(env("SNOWIDD_TCP_PORT")), null, 2000);
  }

  @ParameterizedTest
  @ValueSource(strings = {"unix", "tcp"})
  void idsAreDistinctIncreasingAndOfThePinnedWorker(String transport) {
    long region = Long.parseLong(env("SNOWIDD_REGION"));
    long host = Long.parseLong(env("SNOWIDD_HOST"));
    try (Sidecar sc = connect(transport)) {
      Set<Long> seen = new HashSet<>();
      long last = 0;
      for (int i = 0; i < 2000; i++) {
        long id = sc.nextId();
        assertTrue(id > last);
        last = id;
        assertTrue(seen.add(id));
      }
      long[] batch = sc.nextIds(500);
      assertEquals(500, batch.length);
      for (long id : batch) {
        assertTrue(id > last);
        last = id;
        Parts p = Ids.decode(id);
        assertEquals(region, p.region());
        assertEquals(host, p.host());
      }
      assertTrue(Math.abs(Ids.decode(last).unixMs() - System.currentTimeMillis()) < 60_000);
      Map<String, Object> d = sc.decode(Ids.format(last));
      assertEquals(Ids.format(last), d.get("id"));
      assertEquals(Layout.formatInstant(Ids.decode(last).unixMs()), d.get("time"));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"unix", "tcp"})
  void errorRepliesKeepTheirCodesAndTheConnectionSurvives(String transport) {
    try (Sidecar sc = connect(transport)) {
      SnowidException e = assertThrows(SnowidException.class, () -> sc.decode("12x"));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertFalse(e.isRetryable());
      assertEquals(
          Code.OUT_OF_RANGE,
          assertThrows(SnowidException.class, () -> sc.decode("9223372036854775808")).code());
      assertEquals(
          Code.INVALID_ARGUMENT,
          assertThrows(SnowidException.class, () -> sc.nextIds(100_000_000)).code());
      assertEquals(
          Code.INVALID_ARGUMENT,
          assertThrows(SnowidException.class, () -> sc.command("NOSUCHCOMMAND")).code());
      assertTrue(sc.nextId() > 0);
    }
  }

  @Test
  void aDaemonThatIsNotThereIsUnavailable() {
    SnowidException e =
        assertThrows(
            SnowidException.class,
            () -> Sidecar.connect(Path.of(env("SNOWIDD_SOCKET") + ".absent")));
    assertEquals(Code.UNAVAILABLE, e.code());
    assertTrue(e.isRetryable());
    assertEquals(
        Code.LEASE_UNCERTAIN,
        Sidecar.errorOf("LEASE_UNCERTAIN", "renewals late; retry after 10ms").code());
    assertEquals(
        10, Sidecar.errorOf("LEASE_UNCERTAIN", "renewals late; retry after 10ms").retryAfterMs());
    assertEquals(Code.UNAVAILABLE, Sidecar.errorOf("SHUTTING_DOWN", "").code());
    Stream.of("NOAUTH", "WRONGPASS")
        .forEach(w -> assertEquals(Code.FAILED_PRECONDITION, Sidecar.errorOf(w, "x").code()));
  }
}
