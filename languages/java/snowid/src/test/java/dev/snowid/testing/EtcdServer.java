package dev.snowid.testing;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * One real etcd member (SNOWID_ETCD_BIN) on free loopback ports in a temporary data directory;
 * optionally serving https with certificates made for it by {@code openssl} (SNOWID_OPENSSL_BIN,
 * else from the PATH), and requiring client certificates. A missing binary is a failure, never a
 * skip.
 */
public final class EtcdServer implements AutoCloseable {
  /** How the member serves its clients. */
  public enum Security {
    PLAIN,
    TLS,
    MUTUAL_TLS
  }

  private static final String P12_PASSWORD = "snowid";

  public final String url;

  /** With TLS: the CA, the server's and a client's certificate and PKCS#8 key (PEM). */
  public final Path caFile;

  public final Path clientCert;
  public final Path clientKey;
  private final Process proc;
  private final Path dir;
  private final SSLContext probeTls;

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  public EtcdServer() throws Exception {
    this(Security.PLAIN);
  }

  public EtcdServer(Security security, String... extraArgs) throws Exception {
    String bin = System.getenv("SNOWID_ETCD_BIN");
    if (bin == null || bin.isEmpty() || !new File(bin).canExecute()) {
      throw new IllegalStateException(
          "SNOWID_ETCD_BIN must name an etcd binary (scripts/install-deps), not " + bin);
    }
    dir = Files.createTempDirectory("snowid-etcd-java-");
    boolean tls = security != Security.PLAIN;
    caFile = tls ? dir.resolve("ca.crt") : null;
    clientCert = tls ? dir.resolve("client.crt") : null;
    clientKey = tls ? dir.resolve("client.key") : null;
    List<String> tlsArgs = new ArrayList<>();
    if (tls) {
      makeCertificates();
      tlsArgs.add("--cert-file=" + dir.resolve("server.crt"));
      tlsArgs.add("--key-file=" + dir.resolve("server.key"));
      if (security == Security.MUTUAL_TLS) {
        tlsArgs.add("--client-cert-auth");
        tlsArgs.add("--trusted-ca-file=" + caFile);
      }
    }
    probeTls = tls ? probeContext() : null;
    Path data = dir.resolve("snowid-etcd-data");
    Exception last = null;
    Process found = null;
    String foundUrl = null;
    for (int attempt = 0; attempt < 3 && found == null; attempt++) {
      int client = freePort();
      int peer = freePort();
      String u = (tls ? "https" : "http") + "://127.0.0.1:" + client;
      List<String> cmd =
          new ArrayList<>(
              List.of(
                  bin,
                  "--name",
                  "java",
                  "--data-dir=" + data,
                  "--listen-client-urls=" + u,
                  "--advertise-client-urls=" + u,
                  "--listen-peer-urls=http://127.0.0.1:" + peer,
                  "--initial-advertise-peer-urls=http://127.0.0.1:" + peer,
                  "--initial-cluster=java=http://127.0.0.1:" + peer));
      cmd.addAll(tlsArgs);
      cmd.addAll(List.of(extraArgs));
      Process p =
          new ProcessBuilder(cmd)
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("etcd.log").toFile())
              .start();
      long end = System.nanoTime() + 15_000_000_000L;
      while (System.nanoTime() < end && p.isAlive()) {
        try {
          HttpURLConnection c =
              (HttpURLConnection) URI.create(u + "/health").toURL().openConnection();
          if (c instanceof HttpsURLConnection s) {
            s.setSSLSocketFactory(probeTls.getSocketFactory());
          }
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

  /** A file in this member's directory (for files a test makes from the certificates). */
  public Path file(String name) {
    return dir.resolve(name);
  }

  /** Runs openssl with {@code args} in this member's directory; a failure throws. */
  public void openssl(String... args) throws Exception {
    String bin = System.getenv().getOrDefault("SNOWID_OPENSSL_BIN", "openssl");
    List<String> cmd = new ArrayList<>(List.of(bin));
    cmd.addAll(List.of(args));
    Path log = dir.resolve("openssl.log");
    Process p =
        new ProcessBuilder(cmd)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IllegalStateException("openssl " + args[0] + " failed: " + Files.readString(log));
    }
  }

  /** A CA, a server certificate for 127.0.0.1 and localhost, and a client certificate. */
  private void makeCertificates() throws Exception {
    List<String> ecKey =
        List.of("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes");
    List<String> ca =
        new ArrayList<>(
            List.of(
                "req",
                "-x509",
                "-days",
                "2",
                "-subj",
                "/CN=snowid test CA",
                "-keyout",
                "ca.key",
                "-out",
                "ca.crt",
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign"));
    ca.addAll(ecKey);
    openssl(ca.toArray(new String[0]));
    String[][] leaves = {
      // etcd's gateway dials the member's own gRPC with the server certificate: clientAuth too.
      {
        "server",
        "127.0.0.1",
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n"
      },
      {"client", "snowid-client", "extendedKeyUsage=clientAuth\n"}
    };
    for (String[] leaf : leaves) {
      Files.writeString(dir.resolve(leaf[0] + ".ext"), leaf[2]);
      List<String> req =
          new ArrayList<>(
              List.of(
                  "req",
                  "-subj",
                  "/CN=" + leaf[1],
                  "-keyout",
                  leaf[0] + ".key",
                  "-out",
                  leaf[0] + ".csr"));
      req.addAll(ecKey);
      openssl(req.toArray(new String[0]));
      openssl(
          "x509",
          "-req",
          "-in",
          leaf[0] + ".csr",
          "-CA",
          "ca.crt",
          "-CAkey",
          "ca.key",
          "-CAcreateserial",
          "-days",
          "2",
          "-out",
          leaf[0] + ".crt",
          "-extfile",
          leaf[0] + ".ext");
    }
    openssl(
        "pkcs12",
        "-export",
        "-in",
        "client.crt",
        "-inkey",
        "client.key",
        "-out",
        "client.p12",
        "-passout",
        "pass:" + P12_PASSWORD);
  }

  /**
   * The health probe's own TLS (from the PKCS#12 bundle, independent of the library's PEM code).
   */
  private SSLContext probeContext() throws Exception {
    KeyStore roots = KeyStore.getInstance("PKCS12");
    roots.load(null, null);
    try (InputStream in = new FileInputStream(caFile.toFile())) {
      roots.setCertificateEntry(
          "ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory t =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    t.init(roots);
    KeyStore client = KeyStore.getInstance("PKCS12");
    try (InputStream in = new FileInputStream(dir.resolve("client.p12").toFile())) {
      client.load(in, P12_PASSWORD.toCharArray());
    }
    KeyManagerFactory k = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    k.init(client, P12_PASSWORD.toCharArray());
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(k.getKeyManagers(), t.getTrustManagers(), null);
    return ctx;
  }

  private static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  /** One gateway call on a plain member before auth is enabled; a refusal throws. */
  private void setup(String path, String json) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(url + path))
                    .POST(HttpRequest.BodyPublishers.ofString(json))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200 || r.body().contains("\"error\"")) {
      throw new IllegalStateException(path + ": HTTP " + r.statusCode() + " " + r.body());
    }
  }

  /**
   * Enables etcd authentication: user root (role root) with {@code rootPassword}, and for each
   * {@code {user, password, keyPrefix}} a user whose own role may read and write the keys under
   * that prefix and nothing else.
   */
  public void enableAuth(String rootPassword, String[]... users) throws Exception {
    setup("/v3/auth/user/add", "{\"name\":\"root\",\"password\":\"" + rootPassword + "\"}");
    setup("/v3/auth/user/grant", "{\"user\":\"root\",\"role\":\"root\"}");
    for (String[] u : users) {
      String role = u[0] + "-role";
      setup("/v3/auth/user/add", "{\"name\":\"" + u[0] + "\",\"password\":\"" + u[1] + "\"}");
      setup("/v3/auth/role/add", "{\"name\":\"" + role + "\"}");
      String end =
          u[2].substring(0, u[2].length() - 1) + (char) (u[2].charAt(u[2].length() - 1) + 1);
      setup(
          "/v3/auth/role/grant",
          "{\"name\":\""
              + role
              + "\",\"perm\":{\"permType\":\"READWRITE\",\"key\":\""
              + b64(u[2])
              + "\",\"range_end\":\""
              + b64(end)
              + "\"}}");
      setup("/v3/auth/user/grant", "{\"user\":\"" + u[0] + "\",\"role\":\"" + role + "\"}");
    }
    setup("/v3/auth/enable", "{}");
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
    if (!proc.waitFor(10, TimeUnit.SECONDS)) {
      proc.destroyForcibly().waitFor();
    }
    deleteTree(dir);
  }
}
