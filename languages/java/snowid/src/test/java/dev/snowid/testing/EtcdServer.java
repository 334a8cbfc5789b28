package dev.snowid.testing;

import java.io.File;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * One real etcd member (SNOWID_ETCD_BIN) on free loopback ports in a temporary data directory.
 * A missing binary is a failure, never a skip.
 */
public final class EtcdServer implements AutoCloseable {
  public final String url;
  private final Process proc;
  private final Path dir;

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  public EtcdServer() throws Exception {
    String bin = System.getenv("SNOWID_ETCD_BIN");
    if (bin == null || bin.isEmpty() || !new File(bin).canExecute()) {
      throw new IllegalStateException(
          "SNOWID_ETCD_BIN must name an etcd binary (scripts/install-deps), not " + bin);
    }
    dir = Files.createTempDirectory("snowid-etcd-java-");
    Path data = dir.resolve("snowid-etcd-data");
    Exception last = null;
    Process found = null;
    String foundUrl = null;
    for (int attempt = 0; attempt < 3 && found == null; attempt++) {
      int client = freePort();
      int peer = freePort();
      String u = "http://127.0.0.1:" + client;
      Process p = new ProcessBuilder(List.of(bin, "--name", "java", "--data-dir=" + data,
          "--listen-client-urls=" + u, "--advertise-client-urls=" + u,
          "--listen-peer-urls=http://127.0.0.1:" + peer,
          "--initial-advertise-peer-urls=http://127.0.0.1:" + peer,
          "--initial-cluster=java=http://127.0.0.1:" + peer))
          .redirectErrorStream(true)
          .redirectOutput(dir.resolve("etcd.log").toFile())
          .start();
      long end = System.nanoTime() + 15_000_000_000L;
      while (System.nanoTime() < end && p.isAlive()) {
        try {
          HttpURLConnection c = (HttpURLConnection) URI.create(u + "/health").toURL()
              .openConnection();
          c.setConnectTimeout(200);
          c.setReadTimeout(500);
          if (c.getResponseCode() == 200) {
            found = p;
            foundUrl = u;
            break;
          }
        } catch (IOException e) {
          last = e;
        }
        Thread.sleep(50);
      }
      if (found == null) {
        p.destroyForcibly().waitFor();
        deleteTree(data);
      }
    }
    if (found == null) {
      throw new IllegalStateException("etcd did not start; see " + dir + "/etcd.log", last);
    }
    this.url = foundUrl;
    this.proc = found;
  }

  private static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(q);
      }
    }
  }

  @Override
  public void close() throws Exception {
    proc.destroy();
    if (!proc.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
      proc.destroyForcibly().waitFor();
    }
    deleteTree(dir);
  }
}
