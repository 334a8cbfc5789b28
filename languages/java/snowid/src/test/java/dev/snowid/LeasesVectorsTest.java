package dev.snowid;

import static dev.snowid.Vectors.list;
import static dev.snowid.Vectors.map;
import static dev.snowid.Vectors.num;
import static dev.snowid.Vectors.throwsCode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.snowid.EtcdValues.Holder;
import dev.snowid.EtcdValues.Keys;
import dev.snowid.EtcdValues.Mark;
import dev.snowid.EtcdValues.StoreRecord;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** vectors/leases.json: keys, values, quarantine, wait_until and the settings' bounds. */
class LeasesVectorsTest {
  private static final Map<String, Object> FILE = Vectors.load("leases.json");

  private static String label(Map<String, Object> c) {
    return String.valueOf(c.getOrDefault("note", Json.write(c)));
  }

  private static Long optNum(Map<String, Object> m, String k) {
    return m.get(k) == null ? null : num(m.get(k));
  }

  private static Map<String, Object> holderValue(Holder h) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("host", h.host());
    m.put("pid", h.pid());
    m.put("started_ms", h.startedMs());
    m.put("address", h.address());
    m.put("lease", Long.toString(h.lease()));
    return m;
  }

  private static Map<String, Object> markValue(Mark mk) {
    Map<String, Object> m = new LinkedHashMap<>();
    if (mk.highWaterMs() != null) {
      m.put("high_water_ms", mk.highWaterMs());
    }
    if (mk.releasedAtMs() != null) {
      m.put("released_at_ms", mk.releasedAtMs());
    }
    if (mk.cleanReleaseMs() != null) {
      m.put("clean_release_ms", mk.cleanReleaseMs());
    }
    return m;
  }

  private static Map<String, Object> storeValue(StoreRecord s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("incarnation", s.incarnation());
    m.put("reason", s.reason());
    m.put("written_ms", s.writtenMs());
    if (s.highWaterMs() != null) {
      m.put("high_water_ms", s.highWaterMs());
    }
    return m;
  }

  private static Long nsToMs(Map<String, Object> v, String name) {
    Object ns = v.get(name + "_ns");
    return ns == null ? null : EtcdValues.msOfNs(Long.parseLong((String) ns));
  }

  private static Mark markOfMs(Map<String, Object> v) {
    return new Mark(
        optNum(v, "high_water_ms"), optNum(v, "released_at_ms"), optNum(v, "clean_release_ms"));
  }

  @Test
  void keysAndNamespaces() {
    for (Map<String, Object> c : list(FILE, "namespaces")) {
      if (c.get("error") != null) {
        throwsCode(
            (String) c.get("error"),
            () -> EtcdValues.checkNamespace((String) c.get("prefix"), (String) c.get("cluster")),
            label(c));
      } else {
        EtcdValues.checkNamespace((String) c.get("prefix"), (String) c.get("cluster"));
      }
    }
    for (Map<String, Object> c : list(FILE, "keys")) {
      Keys k = new Keys((String) c.get("prefix"), (String) c.get("cluster"));
      long r = num(c.get("region"));
      long h = num(c.get("host"));
      assertEquals(
          List.of(
              c.get("holder"),
              c.get("mark"),
              c.get("region_prefix"),
              c.get("workers_prefix"),
              c.get("store")),
          List.of(k.holder(r, h), k.mark(r, h), k.region(r), k.base, k.store));
    }
    for (Map<String, Object> c : list(FILE, "key_parses")) {
      Keys.Parsed p =
          new Keys((String) c.get("prefix"), (String) c.get("cluster"))
              .parse((String) c.get("key"));
      if (c.get("parsed") == null) {
        assertNull(p, label(c));
      } else {
        Map<String, Object> want = map(c.get("parsed"));
        assertEquals(num(want.get("region")), p.region(), label(c));
        assertEquals(num(want.get("host")), p.host(), label(c));
        assertEquals(want.get("kind"), p.holder() ? "holder" : "mark", label(c));
      }
    }
  }

  @Test
  void holders() {
    for (Map<String, Object> c : list(FILE, "holders")) {
      Map<String, Object> v = map(c.get("value"));
      Holder h =
          new Holder(
              (String) v.get("host"),
              num(v.get("pid")),
              num(v.get("started_ms")),
              (String) v.get("address"),
              Long.parseLong((String) v.get("lease")));
      assertEquals(c.get("text"), EtcdValues.encodeHolder(h));
      Object want = c.get("decoded") != null ? c.get("decoded") : v;
      assertEquals(want, holderValue(EtcdValues.decodeHolder((String) c.get("text"))));
    }
    for (Map<String, Object> c : list(FILE, "holder_reads")) {
      assertEquals(
          c.get("value"), holderValue(EtcdValues.decodeHolder((String) c.get("text"))), label(c));
    }
    for (Map<String, Object> c : list(FILE, "holder_errors")) {
      throwsCode(
          (String) c.get("error"), () -> EtcdValues.decodeHolder((String) c.get("text")), label(c));
    }
  }

  @Test
  void marks() {
    for (Map<String, Object> c : list(FILE, "marks")) {
      Map<String, Object> v = map(c.get("value"));
      Mark m =
          new Mark(nsToMs(v, "high_water"), nsToMs(v, "released_at"), nsToMs(v, "clean_release"));
      assertEquals(c.get("text"), EtcdValues.encodeMark(m));
      assertEquals(c.get("decoded"), markValue(EtcdValues.decodeMark((String) c.get("text"))));
    }
    for (Map<String, Object> c : list(FILE, "mark_reads")) {
      Mark m = EtcdValues.decodeMark((String) c.get("text"));
      assertEquals(c.get("value"), markValue(m), label(c));
      assertEquals(c.get("clean"), EtcdValues.releasedClean(m), label(c));
    }
    for (Map<String, Object> c : list(FILE, "mark_errors")) {
      throwsCode(
          (String) c.get("error"), () -> EtcdValues.decodeMark((String) c.get("text")), label(c));
    }
  }

  @Test
  void stores() {
    for (Map<String, Object> c : list(FILE, "stores")) {
      Map<String, Object> v = map(c.get("value"));
      StoreRecord s =
          new StoreRecord(
              (String) v.get("incarnation"),
              nsToMs(v, "high_water"),
              (String) v.get("reason"),
              nsToMs(v, "written"));
      assertEquals(c.get("text"), EtcdValues.encodeStore(s));
      Object want = c.get("decoded") != null ? c.get("decoded") : storeValue(s);
      assertEquals(want, storeValue(EtcdValues.decodeStore((String) c.get("text"))));
    }
    for (Map<String, Object> c : list(FILE, "store_reads")) {
      assertEquals(
          c.get("value"), storeValue(EtcdValues.decodeStore((String) c.get("text"))), label(c));
    }
    for (Map<String, Object> c : list(FILE, "store_errors")) {
      throwsCode(
          (String) c.get("error"), () -> EtcdValues.decodeStore((String) c.get("text")), label(c));
    }
  }

  @Test
  void quarantineWaitAndSettings() {
    for (Map<String, Object> c : list(FILE, "eligibility")) {
      Mark m = markOfMs(c.get("mark") == null ? Map.of() : map(c.get("mark")));
      boolean held = Boolean.TRUE.equals(c.get("held"));
      long q = num(c.get("quarantine_ms"));
      assertEquals(
          c.get("eligible"), EtcdValues.eligible(held, m, num(c.get("now_ms")), q), label(c));
      if (!held) {
        assertEquals(optNum(c, "free_from_ms"), EtcdValues.freeFromMs(m, q), label(c));
      }
    }
    for (Map<String, Object> c : list(FILE, "wait_until")) {
      assertEquals(
          optNum(c, "wait_until_ms"),
          EtcdValues.waitUntilMs(
              optNum(c, "previous_high_water_ms"),
              optNum(c, "store_high_water_ms"),
              num(c.get("max_clock_skew_ms"))),
          label(c));
    }
    for (Map<String, Object> c : list(FILE, "timings")) {
      Runnable r =
          () ->
              EtcdValues.checkLeaseTiming(
                  num(c.get("ttl_ms")),
                  num(c.get("renew_every_ms")),
                  num(c.get("stop_after_ms")),
                  num(c.get("max_clock_skew_ms")));
      if (c.get("error") != null) {
        throwsCode((String) c.get("error"), r::run, label(c));
      } else {
        r.run();
      }
    }
    for (Map<String, Object> c : list(FILE, "etcd_options")) {
      Runnable r =
          () ->
              EtcdValues.checkEtcdOptions(
                  num(c.get("quarantine_ms")), num(c.get("request_timeout_ms")));
      if (c.get("error") != null) {
        throwsCode((String) c.get("error"), r::run, label(c));
      } else {
        r.run();
      }
    }
  }
}
