package dev.snowid;

import static dev.snowid.Vectors.layout;
import static dev.snowid.Vectors.list;
import static dev.snowid.Vectors.map;
import static dev.snowid.Vectors.num;
import static dev.snowid.Vectors.throwsCode;
import static dev.snowid.Vectors.u64;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** layouts.json, ids.json, bounds.json, shards.json and histories.json. */
class CodecVectorsTest {
  @Test
  void layouts() {
    Map<String, Object> file = Vectors.load("layouts.json");
    int n = 0;
    for (Map<String, Object> v : list(file, "layouts")) {
      String name = (String) v.get("name");
      List<Layout> made = new ArrayList<>(List.of(Vectors.layoutOf(v, null)));
      if (Boolean.TRUE.equals(v.get("preset"))) {
        made.add(Presets.byName(name));
      }
      for (Layout l : made) {
        List<Map<String, Object>> fs = list(v, "fields");
        assertEquals(fs.size(), l.fields().size(), name);
        for (int i = 0; i < fs.size(); i++) {
          Field f = l.fields().get(i);
          assertEquals(fs.get(i).get("name"), f.name(), name);
          assertEquals(fs.get(i).get("role"), f.role().wireName(), name);
          assertEquals(num(fs.get(i).get("width")), f.width(), name);
          assertEquals(num(fs.get(i).get("shift")), f.shift(), name);
        }
        assertEquals(name, l.name());
        assertEquals(num(v.get("epoch_ms")), l.epochMs(), name);
        assertEquals(num(v.get("unit_ms")), l.unitMs(), name);
        assertEquals(v.get("decode_only"), l.decodeOnly(), name);
        assertEquals(num(v.get("total_width")), l.totalWidth(), name);
        assertEquals(u64(v.get("max_id")), l.maxId(), name);
        assertEquals(u64(v.get("max_ticks")), l.maxTicks(), name);
        assertEquals(v.get("can_generate"), l.canGenerate(), name);
        assertEquals(num(v.get("regions")), l.regions(), name);
        assertEquals(num(v.get("workers_per_region")), l.workersPerRegion(), name);
        assertEquals(num(v.get("sequence_capacity")), l.sequenceCapacity(), name);
        assertEquals(num(v.get("end_of_life_ms")), l.endOfLifeMs(), name);
        assertEquals(v.get("end_of_life"), Layout.formatInstant(l.endOfLifeMs()), name);
        n++;
      }
    }
    for (Map<String, Object> v : list(file, "invalid_layouts")) {
      String what = v.get("description") + " (" + v.get("reason") + ")";
      throwsCode((String) v.get("error"), () -> Vectors.layoutOf(map(v.get("spec")), "x"), what);
      n++;
    }
    for (Map<String, Object> c : list(file, "checks")) {
      Layout l = layout((String) c.get("layout"));
      String what = c.get("layout") + " at " + c.get("now");
      if (c.get("error") != null) {
        throwsCode((String) c.get("error"), () -> l.check(num(c.get("now_ms"))), what);
      } else {
        assertEquals(c.get("outcome"), l.check(num(c.get("now_ms"))).outcome(), what);
      }
      n++;
    }
    assertEquals(true, n > 50, "cases run: " + n);
  }

  @Test
  void ids() {
    Map<String, Object> file = Vectors.load("ids.json");
    for (Map<String, Object> c : list(file, "cases")) {
      Layout l = layout((String) c.get("layout"));
      String note = (String) c.get("note");
      long id = u64(c.get("id"));
      Parts p = l.decode(id);
      Map<String, Long> values = new LinkedHashMap<>();
      for (Map.Entry<String, Object> e : map(c.get("fields")).entrySet()) {
        assertEquals(u64(e.getValue()), p.fields().get(e.getKey()), note);
        values.put(e.getKey(), u64(e.getValue()));
      }
      assertEquals(u64(c.get("ticks")), p.ticks(), note);
      assertEquals(num(c.get("unix_ms")), p.unixMs(), note);
      assertEquals(c.get("time"), Layout.formatInstant(p.unixMs()), note);
      assertEquals(id, l.encode(values), note);
      if (l.fields().stream().noneMatch(f -> f.role() == Role.OTHER)) {
        assertEquals(id, l.compose(p.ticks(), p.region(), p.host(), p.sequence()), note);
        assertEquals(id, Ids.parse((String) c.get("id")), note);
        assertEquals(c.get("id"), Ids.format(id), note);
      }
    }
    for (Map<String, Object> c : list(file, "decode_errors")) {
      throwsCode(
          (String) c.get("error"),
          () -> layout((String) c.get("layout")).decode(u64(c.get("id"))),
          (String) c.get("note"));
    }
    for (Map<String, Object> c : list(file, "encode_errors")) {
      Map<String, Long> values = new LinkedHashMap<>();
      for (Map.Entry<String, Object> e : map(c.get("fields")).entrySet()) {
        values.put(e.getKey(), u64(e.getValue()));
      }
      throwsCode(
          (String) c.get("error"),
          () -> layout((String) c.get("layout")).encode(values),
          (String) c.get("note"));
    }
    for (Map<String, Object> c : list(file, "parse")) {
      String text = (String) c.get("text");
      long got =
          c.get("layout") == null
              ? Ids.parse(text)
              : Ids.parse(text, layout((String) c.get("layout")));
      assertEquals(u64(c.get("id")), got, (String) c.get("note"));
    }
    for (Map<String, Object> c : list(file, "parse_errors")) {
      String text = (String) c.get("text");
      throwsCode(
          (String) c.get("error"),
          () -> {
            if (c.get("layout") == null) {
              Ids.parse(text);
            } else {
              Ids.parse(text, layout((String) c.get("layout")));
            }
          },
          (String) c.get("note"));
    }
  }

  @Test
  void bounds() {
    Map<String, Object> file = Vectors.load("bounds.json");
    for (Map<String, Object> c : list(file, "cases")) {
      Layout l = layout((String) c.get("layout"));
      String note = (String) c.get("note");
      long ms = num(c.get("unix_ms"));
      assertEquals(Long.parseLong((String) c.get("ticks")), l.ticksAt(ms), note);
      assertEquals(u64(c.get("min_id")), l.minId(ms), note);
      assertEquals(u64(c.get("max_id")), l.maxIdAt(ms), note);
    }
    for (Map<String, Object> c : list(file, "errors")) {
      Layout l = layout((String) c.get("layout"));
      long ms = num(c.get("unix_ms"));
      throwsCode((String) c.get("error"), () -> l.minId(ms), (String) c.get("note"));
      throwsCode((String) c.get("error"), () -> l.maxIdAt(ms), (String) c.get("note"));
    }
  }

  @Test
  void shards() {
    Map<String, Object> file = Vectors.load("shards.json");
    for (Map<String, Object> c : list(file, "mix")) {
      assertEquals(u64(c.get("mixed")), Shards.mix64(u64(c.get("id"))), (String) c.get("id"));
    }
    for (Map<String, Object> c : list(file, "cases")) {
      assertEquals(
          num(c.get("shard")),
          Shards.shardOf(u64(c.get("id")), num(c.get("shards"))),
          c.get("id") + " over " + c.get("shards"));
    }
  }

  @Test
  void histories() {
    Map<String, Object> file = Vectors.load("histories.json");
    for (Map<String, Object> h : list(file, "histories")) {
      String what = (String) h.get("description");
      List<LayoutHistory.Era> eras = new ArrayList<>();
      for (Map<String, Object> e : list(h, "eras")) {
        eras.add(new LayoutHistory.Era(layout((String) e.get("layout")), num(e.get("cutover_ms"))));
      }
      if (h.get("error") != null) {
        throwsCode(
            (String) h.get("error"),
            () -> new LayoutHistory(eras),
            what + " (" + h.get("reason") + ")");
        continue;
      }
      LayoutHistory history = new LayoutHistory(eras);
      @SuppressWarnings("unchecked")
      List<Object> first = (List<Object>) h.get("first_ids");
      assertArrayEquals(first.stream().mapToLong(Vectors::u64).toArray(), history.firstIds(), what);
      for (Map<String, Object> d : list(h, "decode")) {
        LayoutHistory.EraParts p = history.decode(u64(d.get("id")));
        assertEquals(num(d.get("era")), p.era(), what + ": " + d.get("id"));
        assertEquals(num(d.get("unix_ms")), p.parts().unixMs(), what + ": " + d.get("id"));
      }
    }
  }
}
