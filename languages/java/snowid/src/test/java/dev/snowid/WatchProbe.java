package dev.snowid;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/** Opens a watch stream through a gateway, writes the watched key, and tells what came back. */
final class WatchProbe {
  /** How the stream ended, whether the watch was created and the put seen; every message. */
  record Seen(EtcdGateway.StreamEnd end, boolean created, boolean event, List<String> messages) {}

  private WatchProbe() {}

  /** One stream on endpoint 0 watching {@code key}; the key is put once the watch is created. */
  static Seen watchAndPut(EtcdGateway gateway, String key) throws Exception {
    AtomicBoolean created = new AtomicBoolean();
    AtomicBoolean event = new AtomicBoolean();
    List<String> messages = new CopyOnWriteArrayList<>();
    Map<String, Object> create = new LinkedHashMap<>();
    create.put("key", EtcdGateway.b64(key));
    CompletableFuture<EtcdGateway.StreamEnd> end =
        CompletableFuture.supplyAsync(
            () ->
                gateway.stream(
                    0,
                    "/v3/watch",
                    Map.of("create_request", create),
                    doc -> {
                      messages.add(Json.write(doc));
                      Map<String, Object> r = EtcdGateway.obj(doc.get("result"));
                      if (!EtcdGateway.arr(r.get("events")).isEmpty()) {
                        event.set(true);
                        return false;
                      }
                      created.compareAndSet(false, Boolean.TRUE.equals(r.get("created")));
                      return !Boolean.TRUE.equals(r.get("canceled"));
                    },
                    () -> false,
                    3000));
    long deadline = System.nanoTime() + 2_000_000_000L;
    while (!created.get() && !end.isDone() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    if (created.get()) {
      Map<String, Object> put = new LinkedHashMap<>();
      put.put("key", EtcdGateway.b64(key));
      put.put("value", EtcdGateway.b64("probe"));
      gateway.call("/v3/kv/put", put, 1000);
    }
    return new Seen(end.get(5, TimeUnit.SECONDS), created.get(), event.get(), messages);
  }
}
