package dev.snowid.testing;

import dev.snowid.Generator;
import dev.snowid.Ids;
import dev.snowid.Json;
import dev.snowid.LeasedGenerator;
import dev.snowid.SnowidException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The cross-language harness's driver for the Java library (tests/polyglot/README.md, "Driver
 * protocol"): one LeasedGenerator on etcd, JSON lines on stdin and stdout. Its clock is the
 * system's with an offset that {@code clock} sets; {@code next} loops on {@code reserve()}, which
 * waits as {@code nextId()} does, so that the ids before a refusal are in its reply. Every timing
 * member has a setting.
 */
public final class Driver {
  private static final int MAX_COUNT = 100_000;

  private final OffsetClock clock = new OffsetClock();
  private final AtomicInteger acquisitions = new AtomicInteger();
  private LeasedGenerator gen;
  private boolean closed;

  private static final class BadRequest extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BadRequest(String m) {
      super(m);
    }
  }

  private static Map<String, Object> refusal(String code, String message, boolean retryable) {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("ok", false);
    r.put("code", code);
    r.put("retryable", retryable);
    r.put("message", message);
    return r;
  }

  private static Map<String, Object> errorReply(SnowidException e) {
    String prefix = e.code().name() + ": ";
    String m = e.getMessage();
    return refusal(
        e.code().name(), m.startsWith(prefix) ? m.substring(prefix.length()) : m, e.isRetryable());
  }

  private static long integer(Map<String, Object> o, String name, Long fallback) {
    Object v = o.containsKey(name) && o.get(name) != null ? o.get(name) : fallback;
    if (!(v instanceof Long n)) {
      throw new BadRequest(name + " must be an integer, not " + Json.write(String.valueOf(v)));
    }
    return n;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(Object o, String what) {
    if (o == null) {
      return Map.of();
    }
    if (!(o instanceof Map)) {
      throw new BadRequest(what + " must be an object");
    }
    return (Map<String, Object>) o;
  }

  Map<String, Object> handle(Map<String, Object> req) {
    Object op = req.get("op");
    if ("start".equals(op)) {
      return start(req);
    }
    if ("clock".equals(op)) {
      clock.setOffsetMs(integer(req, "offset_ms", null));
      return Map.of("ok", true);
    }
    if ("next".equals(op) || "state".equals(op) || "close".equals(op)) {
      if (gen == null) {
        return refusal("FAILED_PRECONDITION", "not started", false);
      }
      return switch ((String) op) {
        case "next" -> next(req);
        case "state" -> state();
        default -> close();
      };
    }
    return refusal("INVALID_ARGUMENT", "unknown op " + Json.write(String.valueOf(op)), false);
  }

  private Map<String, Object> start(Map<String, Object> req) {
    if (gen != null) {
      return refusal("FAILED_PRECONDITION", "already started", false);
    }
    Object eps = req.get("endpoints");
    if (!(eps instanceof List<?> list) || list.stream().anyMatch(e -> !(e instanceof String))) {
      throw new BadRequest("endpoints must be an array of URLs");
    }
    Map<String, Object> timing = object(req.get("timing"), "timing");
    Map<String, Object> extra = object(req.get("options"), "options");
    if (!extra.isEmpty()) {
      throw new BadRequest("the Java driver takes no options: " + extra.keySet());
    }
    LeasedGenerator.Builder b = LeasedGenerator.builder().clock(clock);
    List<String> endpoints = new ArrayList<>();
    for (Object e : (List<?>) eps) {
      endpoints.add((String) e);
    }
    b.endpoints(endpoints);
    if (req.get("prefix") != null) {
      b.prefix((String) req.get("prefix"));
    }
    if (req.get("cluster") != null) {
      b.cluster((String) req.get("cluster"));
    }
    b.region(integer(req, "region", 0L));
    if (req.get("host") != null) {
      b.host(integer(req, "host", null));
    }
    TreeSet<String> ignored = new TreeSet<>();
    for (Map.Entry<String, Object> t : timing.entrySet()) {
      if (t.getValue() == null) {
        continue;
      }
      long ms = integer(timing, t.getKey(), null);
      switch (t.getKey()) {
        case "ttl_ms" -> {
          if (ms % 1000 != 0) {
            throw new BadRequest("ttl_ms must be whole seconds for this library, not " + ms);
          }
          b.ttlSeconds(ms / 1000);
        }
        case "renew_ms" -> b.renewEveryMs(ms);
        case "stop_ms" -> b.stopAfterMs(ms);
        case "max_clock_skew_ms" -> b.maxClockSkewMs(ms);
        case "quarantine_ms" -> b.quarantineMs(ms);
        case "request_timeout_ms" -> b.requestTimeoutMs(ms);
        case "retry_ms" -> b.retryEveryMs(ms);
        case "reacquire_ms" -> b.reacquireEveryMs(ms);
        default -> ignored.add(t.getKey());
      }
    }
    b.listener(
        ev -> {
          if (ev.type().equals("acquired")) {
            acquisitions.incrementAndGet();
          }
          System.err.println(
              "event: "
                  + ev.type()
                  + " "
                  + ev.region()
                  + "/"
                  + ev.host()
                  + (ev.error() != null ? " (" + ev.error().getMessage() + ")" : ""));
        });
    clock.setOffsetMs(integer(req, "clock_offset_ms", 0L));
    try {
      gen = b.build();
    } catch (SnowidException e) {
      return errorReply(e);
    }
    long[] w = gen.worker();
    Map<String, Object> reply = new LinkedHashMap<>();
    reply.put("ok", true);
    reply.put("worker", List.of(w[0], w[1]));
    reply.put("pid", ProcessHandle.current().pid());
    if (!ignored.isEmpty()) {
      reply.put("ignored", new ArrayList<>(ignored));
    }
    return reply;
  }

  private Map<String, Object> next(Map<String, Object> req) {
    long count = integer(req, "count", 1L);
    if (count < 1 || count > MAX_COUNT) {
      return refusal("INVALID_ARGUMENT", "count must be 1 to " + MAX_COUNT, false);
    }
    List<Object> ids = new ArrayList<>();
    while (ids.size() < count) {
      try {
        Generator.IdBatch b = gen.reserve((int) (count - ids.size()));
        for (int i = 0; i < b.count(); i++) {
          ids.add(Ids.format(b.first() + i));
        }
      } catch (SnowidException e) {
        Map<String, Object> r = errorReply(e);
        r.put("ids", ids);
        return r;
      }
    }
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("ok", true);
    r.put("ids", ids);
    return r;
  }

  private Map<String, Object> state() {
    long[] w = gen.worker();
    String state = "UNCERTAIN";
    if (closed) {
      state = "RELEASED";
    } else if (w == null) {
      state = "LOST";
    } else if (gen.ready()) {
      state = "HELD";
    }
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("ok", true);
    r.put("state", state);
    r.put("ready", gen.ready());
    r.put("healthy", gen.healthy());
    r.put("worker", w == null ? null : List.of(w[0], w[1]));
    r.put("reacquisitions", (long) Math.max(0, acquisitions.get() - 1));
    r.put("wall_ms", clock.nowMs());
    return r;
  }

  private Map<String, Object> close() {
    closed = true;
    try {
      gen.close();
    } catch (SnowidException e) {
      return errorReply(e);
    }
    return Map.of("ok", true);
  }

  public static void main(String[] args) throws Exception {
    Driver d = new Driver();
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    boolean closing = false;
    while ((line = in.readLine()) != null) {
      Map<String, Object> reply;
      Object req = null;
      try {
        req = Json.parse(line);
        if (!(req instanceof Map)) {
          throw new BadRequest("a request is a JSON object");
        }
        reply = d.handle(object(req, "a request"));
      } catch (BadRequest | Json.JsonException e) {
        reply = refusal("INVALID_ARGUMENT", "bad request: " + e.getMessage(), false);
      } catch (SnowidException e) {
        reply = errorReply(e);
      }
      out.println(Json.write(reply));
      if (req instanceof Map<?, ?> m && "close".equals(m.get("op"))) {
        closing = true;
        break;
      }
    }
    if (!closing && d.gen != null && !d.closed) {
      d.close();
    }
    System.exit(0);
  }
}
