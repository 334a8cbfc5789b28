package dev.snowid;

import java.util.List;
import java.util.Map;

/**
 * A registry on one test member (quarantine and timeout 1 s), and its keys changed behind a
 * holder's back.
 */
final class TestRegistry {
  private TestRegistry() {}

  static EtcdRegistry of(String url, EtcdAccess access, String cluster) {
    return new EtcdRegistry(
        List.of(url),
        access,
        "/snowid",
        cluster,
        Presets.SNOWID,
        1000,
        1000,
        System::currentTimeMillis);
  }

  /** Deletes the holder key of {@code worker} ({region, host}), as a fence or a revoke would. */
  static void deleteHolder(EtcdRegistry r, long[] worker) {
    r.gateway.call(
        "/v3/kv/deleterange",
        Map.of("key", EtcdGateway.b64(r.keys.holder(worker[0], worker[1]))),
        1000);
  }
}
