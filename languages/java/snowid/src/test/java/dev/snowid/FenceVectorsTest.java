package dev.snowid;

import static dev.snowid.Vectors.list;
import static dev.snowid.Vectors.num;
import static dev.snowid.Vectors.throwsCode;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** vectors/fence.json: fence-file texts read, written and refused, in memory and on disk. */
class FenceVectorsTest {
  @TempDir Path dir;

  @Test
  void fenceVectors() throws Exception {
    Map<String, Object> file = Vectors.load("fence.json");
    Path fence = dir.resolve("fence");
    Path tmp = dir.resolve("fence.tmp");
    FileFenceStore store = new FileFenceStore(fence);
    for (Map<String, Object> c : list(file, "valid")) {
      byte[] bytes = ((String) c.get("text")).getBytes(StandardCharsets.UTF_8);
      assertEquals(num(c.get("fence_ms")), FileFenceStore.parse(bytes), (String) c.get("note"));
      Files.write(fence, bytes);
      assertEquals(OptionalLong.of(num(c.get("fence_ms"))), store.load(), (String) c.get("note"));
    }
    for (Map<String, Object> c : list(file, "invalid")) {
      byte[] bytes = ((String) c.get("text")).getBytes(StandardCharsets.UTF_8);
      throwsCode(
          (String) c.get("error"), () -> FileFenceStore.parse(bytes), (String) c.get("note"));
      Files.write(fence, bytes);
      throwsCode((String) c.get("error"), store::load, c.get("note") + ", from a file");
    }
    for (Map<String, Object> c : list(file, "write")) {
      long ms = num(c.get("fence_ms"));
      assertEquals(c.get("text"), FileFenceStore.format(ms));
      Files.deleteIfExists(fence);
      store.store(ms);
      assertArrayEquals(
          ((String) c.get("text")).getBytes(StandardCharsets.UTF_8),
          Files.readAllBytes(fence),
          ms + " stored");
      assertFalse(Files.exists(tmp), "no temporary file left");
    }
    for (Map<String, Object> c : list(file, "write_errors")) {
      byte[] before = "snowid-fence 1 5\n".getBytes(StandardCharsets.US_ASCII);
      Files.write(fence, before);
      long ms = num(c.get("fence_ms"));
      throwsCode((String) c.get("error"), () -> FileFenceStore.format(ms), (String) c.get("note"));
      throwsCode((String) c.get("error"), () -> store.store(ms), (String) c.get("note"));
      assertArrayEquals(before, Files.readAllBytes(fence), c.get("note") + ": file unchanged");
      assertFalse(Files.exists(tmp), c.get("note") + ": no temporary file left");
    }
    Files.deleteIfExists(fence);
    assertEquals(OptionalLong.empty(), store.load(), "a missing file is no fence");
  }
}
