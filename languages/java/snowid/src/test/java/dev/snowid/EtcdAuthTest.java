package dev.snowid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.snowid.testing.EtcdServer;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The leased generator on a real etcd with authentication enabled and tokens that expire after 1 s
 * unused: user "app" has a role on /snowid/ only, "stranger" a role on /elsewhere/ only.
 */
@Tag("etcd")
class EtcdAuthTest {
  private static EtcdServer etcd;

  @BeforeAll
  static void startEtcd() throws Exception {
    etcd = new EtcdServer(EtcdServer.Security.PLAIN, "--auth-token-ttl=1");
    etcd.enableAuth(
        "r00t",
        new String[] {"app", "s3cret", "/snowid/"},
        new String[] {"stranger", "pw", "/elsewhere/"});
  }

  @AfterAll
  static void stopEtcd() throws Exception {
    if (etcd != null) {
      etcd.close();
    }
  }

  private static LeasedGenerator.Builder as(String user, String password, String cluster) {
    LeasedGenerator.Builder b =
        LeasedGenerator.builder()
            .endpoints(etcd.url)
            .cluster(cluster)
            .ttlSeconds(4)
            .renewEveryMs(1500) // past the token's 1 s: every renewal needs a new token
            .stopAfterMs(3500)
            .retryEveryMs(200)
            .reacquireEveryMs(200)
            .quarantineMs(1000)
            .requestTimeoutMs(1000);
    return user == null ? b : b.user(user, password);
  }

  private static EtcdRegistry registry(String user, String password, String cluster) {
    return TestRegistry.of(etcd.url, new EtcdAccess(null, null, null, user, password), cluster);
  }

  @Test
  void anExpiredTokenIsReplacedOnceAndTheRequestSucceeds() throws Exception {
    EtcdRegistry r = registry("app", "s3cret", "auth-expiry");
    r.gateway.authenticate();
    assertEquals(1, r.gateway.authentications());
    Map<String, Object> key = Map.of("key", EtcdGateway.b64(r.keys.store));
    r.gateway.call("/v3/kv/range", key, 1000);
    assertEquals(1, r.gateway.authentications(), "a fresh token is used as it is");
    Thread.sleep(2500); // etcd drops the token after 1 s unused
    r.gateway.call("/v3/kv/range", key, 1000);
    assertEquals(2, r.gateway.authentications(), "the expired token was replaced");
  }

  @Test
  void aWatchOpenedWithAnExpiredTokenGetsANewOneForTheNextStream() throws Exception {
    EtcdRegistry r = registry("app", "s3cret", "auth-watch");
    r.gateway.authenticate();
    WatchProbe.Seen fresh = WatchProbe.watchAndPut(r.gateway, "/snowid/auth-watch/probe");
    assertTrue(fresh.event(), "a watch with the token works: " + fresh);
    Thread.sleep(2500); // etcd drops the token after 1 s unused
    int before = r.gateway.authentications();
    WatchProbe.Seen stale = WatchProbe.watchAndPut(r.gateway, "/snowid/auth-watch/probe");
    assertFalse(stale.event(), "etcd refused the expired token: " + stale);
    assertEquals(EtcdGateway.StreamEnd.ENDED, stale.end());
    assertEquals(before + 1, r.gateway.authentications(), "the stream replaced the token");
    WatchProbe.Seen again = WatchProbe.watchAndPut(r.gateway, "/snowid/auth-watch/probe");
    assertTrue(again.event(), "the next stream works: " + again);
  }

  @Test
  void aUserWithARoleOnThePrefixLeasesRenewsAndWatches() throws Exception {
    String cluster = "auth-" + ProcessHandle.current().pid();
    LeasedGenerator.initializeNamespace(
        LeasedGenerator.fromEnv(
            Map.of(
                "SNOWID_ETCD_ENDPOINTS",
                etcd.url,
                "SNOWID_ETCD_CLUSTER",
                cluster,
                "SNOWID_ETCD_USER",
                "app",
                "SNOWID_ETCD_PASSWORD",
                "s3cret")));
    EventLog events = new EventLog();
    try (LeasedGenerator g = as("app", "s3cret", cluster).listener(events).build()) {
      long[] w = g.worker();
      long first = g.nextId();
      Thread.sleep(3200); // 2 renewals, each after the token expired
      assertTrue(g.ready(), "renewed with fresh tokens");
      assertTrue(g.nextId() > first);
      TestRegistry.deleteHolder(registry("app", "s3cret", cluster), w);
      assertTrue(events.await("lost", 3000), "the watch saw the delete: " + events.types());
    }
  }

  @Test
  void aWrongPasswordNoUserOrNoPermissionIsAClearNonRetryableError() {
    SnowidException e =
        assertThrows(SnowidException.class, () -> as("app", "wrong", "auth-refused").build());
    assertEquals(Code.INVALID_ARGUMENT, e.code(), e.getMessage());
    assertFalse(e.isRetryable());
    assertTrue(e.getMessage().contains("etcd refused user \"app\""), e.getMessage());
    assertTrue(e.getMessage().contains("authentication failed"), e.getMessage());

    e = assertThrows(SnowidException.class, () -> as(null, null, "auth-refused").build());
    assertEquals(Code.INVALID_ARGUMENT, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("etcd requires authentication"), e.getMessage());

    e = assertThrows(SnowidException.class, () -> as("stranger", "pw", "auth-refused").build());
    assertEquals(Code.FAILED_PRECONDITION, e.code(), e.getMessage());
    assertFalse(e.isRetryable());
    assertTrue(e.getMessage().contains("permission denied"), e.getMessage());

    e =
        assertThrows(
            SnowidException.class,
            () ->
                LeasedGenerator.fromEnv(
                    Map.of("SNOWID_ETCD_ENDPOINTS", etcd.url, "SNOWID_ETCD_PASSWORD", "pw")));
    assertEquals(Code.INVALID_ARGUMENT, e.code(), e.getMessage());
  }
}
