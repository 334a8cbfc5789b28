package dev.snowid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.function.Executable;

/** Loads the shared vectors (SNOWID_VECTORS, else the repository's vectors folder). */
final class Vectors {
  private Vectors() {}

  static Path dir() {
    String env = System.getenv("SNOWID_VECTORS");
    Path p = env != null && !env.isEmpty() ? Path.of(env) : Path.of("../../../vectors");
    assertTrue(Files.isDirectory(p), "the vectors folder " + p.toAbsolutePath() + " exists");
    return p;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> load(String file) {
    try {
      String text = Files.readString(dir().resolve(file), StandardCharsets.UTF_8);
      Map<String, Object> v = (Map<String, Object>) Json.parse(text);
      String schema = (String) v.get("schema");
      assertEquals("snowid-vectors/" + file.replace(".json", "") + "/1", schema, file);
      return v;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> list(Map<String, Object> m, String key) {
    Object v = m.get(key);
    return v == null ? List.of() : (List<Map<String, Object>>) v;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object o) {
    return (Map<String, Object>) o;
  }

  static long num(Object o) {
    return ((Number) o).longValue();
  }

  static long u64(Object o) {
    return Long.parseUnsignedLong((String) o);
  }

  static Layout layoutOf(Map<String, Object> v, String nameOverride) {
    List<Field> fields = new ArrayList<>();
    for (Map<String, Object> f : list(v, "fields")) {
      fields.add(
          Field.of(
              (String) f.get("name"), Role.of((String) f.get("role")), (int) num(f.get("width"))));
    }
    return new Layout(
        nameOverride != null ? nameOverride : (String) v.get("name"),
        num(v.get("epoch_ms")),
        (int) num(v.get("unit_ms")),
        Boolean.TRUE.equals(v.get("decode_only")),
        fields);
  }

  private static Map<String, Layout> layouts;

  static synchronized Layout layout(String name) {
    if (layouts == null) {
      layouts = new HashMap<>();
      for (Map<String, Object> v : list(load("layouts.json"), "layouts")) {
        layouts.put((String) v.get("name"), layoutOf(v, null));
      }
    }
    Layout l = layouts.get(name);
    if (l == null) {
      fail("layout " + name + " is in layouts.json");
    }
    return l;
  }

  static void throwsCode(String code, Executable f, String what) {
    try {
      f.execute();
    } catch (SnowidException e) {
      assertEquals(code, e.code().name(), what + ": " + e.getMessage());
      return;
    } catch (Throwable t) {
      fail(what + ": expected " + code + ", got " + t, t);
    }
    fail(what + ": expected " + code + ", got no error");
  }
}
