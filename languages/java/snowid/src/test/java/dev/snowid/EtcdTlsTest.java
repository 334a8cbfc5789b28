package dev.snowid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.snowid.testing.EtcdServer;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The leased generator on a real etcd that serves https and requires client certificates (made by
 * openssl for 127.0.0.1): the unary calls and the watch stream over TLS, and a missing CA, client
 * certificate or PKCS#8 key refused.
 */
@Tag("etcd")
class EtcdTlsTest {
  private static EtcdServer etcd;
  private static EtcdAccess access;

  @BeforeAll
  static void startEtcd() throws Exception {
    etcd = new EtcdServer(EtcdServer.Security.MUTUAL_TLS);
    access = new EtcdAccess(etcd.caFile, etcd.clientCert, etcd.clientKey, null, null);
  }

  @AfterAll
  static void stopEtcd() throws Exception {
    if (etcd != null) {
      etcd.close();
    }
  }

  private static Map<String, String> env(String cluster) {
    Map<String, String> env = new HashMap<>();
    env.put("SNOWID_ETCD_ENDPOINTS", etcd.url);
    env.put("SNOWID_ETCD_CLUSTER", cluster);
    env.put("SNOWID_ETCD_CA", etcd.caFile.toString());
    env.put("SNOWID_ETCD_CERT", etcd.clientCert.toString());
    env.put("SNOWID_ETCD_KEY", etcd.clientKey.toString());
    return env;
  }

  private static LeasedGenerator.Builder shortLease(LeasedGenerator.Builder b) {
    return b.ttlSeconds(2)
        .renewEveryMs(500)
        .stopAfterMs(1500)
        .retryEveryMs(200)
        .reacquireEveryMs(200)
        .quarantineMs(1000)
        .requestTimeoutMs(1000);
  }

  @Test
  void mutualTlsFromTheEnvironmentLeasesRenewsAndWatches() throws Exception {
    String cluster = "tls-" + ProcessHandle.current().pid();
    LeasedGenerator.initializeNamespace(LeasedGenerator.fromEnv(env(cluster)));
    EventLog events = new EventLog();
    try (LeasedGenerator g =
        shortLease(LeasedGenerator.fromEnv(env(cluster))).listener(events).build()) {
      long[] w = g.worker();
      long first = g.nextId();
      Thread.sleep(1200); // past half the TTL: renewed over TLS
      assertTrue(g.ready(), "renewed");
      assertTrue(g.nextId() > first);

      // Another holder's registry takes the key away; only the watch (over TLS) tells.
      TestRegistry.deleteHolder(TestRegistry.of(etcd.url, access, cluster), w);
      assertTrue(events.await("lost", 3000), "the watch saw the delete: " + events.types());
    }
  }

  @Test
  void theWatchStreamRunsOverTls() throws Exception {
    EtcdRegistry r = TestRegistry.of(etcd.url, access, "tls-watch");
    WatchProbe.Seen seen = WatchProbe.watchAndPut(r.gateway, "/snowid/tls-watch/probe");
    assertTrue(seen.created(), "the watch was created");
    assertTrue(seen.event(), "the put arrived on the stream");
    assertEquals(EtcdGateway.StreamEnd.STOPPED, seen.end());
  }

  @Test
  void withoutTheClientCertificateOrTheCaTheMemberIsNotReached() {
    String cluster = "tls-refused-" + ProcessHandle.current().pid();
    Map<String, String> noCert = env(cluster);
    noCert.remove("SNOWID_ETCD_CERT");
    noCert.remove("SNOWID_ETCD_KEY");
    SnowidException e =
        assertThrows(
            SnowidException.class, () -> shortLease(LeasedGenerator.fromEnv(noCert)).build());
    assertEquals(Code.UNAVAILABLE, e.code(), e.getMessage());

    Map<String, String> noCa = env(cluster);
    noCa.remove("SNOWID_ETCD_CA"); // the JVM's trust store does not know the test CA
    e =
        assertThrows(
            SnowidException.class, () -> shortLease(LeasedGenerator.fromEnv(noCa)).build());
    assertEquals(Code.UNAVAILABLE, e.code(), e.getMessage());
  }

  @Test
  void badTlsSettingsAreInvalidArgumentsBeforeAnyRequest() throws Exception {
    // The same EC key in SEC1 form ("BEGIN EC PRIVATE KEY") is refused with how to convert it.
    etcd.openssl("ec", "-in", "client.key", "-out", "client-sec1.key");
    Map<String, String> sec1 = env("tls-bad");
    sec1.put("SNOWID_ETCD_KEY", etcd.file("client-sec1.key").toString());
    SnowidException e =
        assertThrows(SnowidException.class, () -> LeasedGenerator.fromEnv(sec1).build());
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("PKCS#8"), e.getMessage());

    Map<String, String> keyOnly = env("tls-bad");
    keyOnly.remove("SNOWID_ETCD_CERT");
    e = assertThrows(SnowidException.class, () -> LeasedGenerator.fromEnv(keyOnly));
    assertEquals(Code.INVALID_ARGUMENT, e.code());

    Map<String, String> missing = env("tls-bad");
    missing.put("SNOWID_ETCD_CA", etcd.file("no-such-ca.crt").toString());
    e = assertThrows(SnowidException.class, () -> LeasedGenerator.fromEnv(missing).build());
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    assertFalse(e.isRetryable());

    // TLS files with only http:// endpoints would send everything in the clear.
    e =
        assertThrows(
            SnowidException.class,
            () ->
                LeasedGenerator.builder()
                    .endpoints("http://127.0.0.1:1")
                    .caFile(etcd.caFile)
                    .build());
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("https"), e.getMessage());
  }
}
