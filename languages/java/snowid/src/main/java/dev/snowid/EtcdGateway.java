package dev.snowid;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * etcd's v3 JSON gateway: unary calls through {@code java.net.http}, and the watch stream over a
 * socket of its own (so that it can be ended from its own thread at any time), both over TLS for
 * https endpoints and with the user's token when one is set ({@link EtcdAccess}). Endpoints are
 * tried in order, starting with the one that answered last. int64s travel as decimal strings, keys
 * and values as base64, and members at their default are omitted.
 */
final class EtcdGateway {
  record KeyValue(String key, String value, long createRevision, long modRevision, long lease) {}

  record Header(long revision, String clusterId) {}

  private static final int GRPC_INVALID_ARGUMENT = 3;
  private static final int GRPC_NOT_FOUND = 5;
  private static final int GRPC_PERMISSION_DENIED = 7;
  private static final int GRPC_FAILED_PRECONDITION = 9;
  private static final int GRPC_UNAUTHENTICATED = 16;

  final List<String> endpoints;
  private final long timeoutMs;
  private final EtcdAccess access;
  private final SSLContext tls;
  private final HttpClient client;
  private final Object authLock = new Object();
  private final AtomicInteger authentications = new AtomicInteger();
  private volatile int preferred;

  /** The current auth token, empty for none. */
  private volatile String token = "";

  EtcdGateway(List<String> endpoints, long timeoutMs, EtcdAccess access) {
    this.endpoints = List.copyOf(endpoints);
    this.timeoutMs = timeoutMs;
    this.access = access;
    access.check(this.endpoints);
    this.tls =
        access.usesTls(this.endpoints)
            ? EtcdTls.context(access.caFile(), access.certFile(), access.keyFile())
            : null;
    HttpClient.Builder b =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofMillis(timeoutMs));
    if (tls != null) {
      b.sslContext(tls);
    }
    this.client = b.build();
  }

  static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  static String unb64(Object s) {
    return s instanceof String t
        ? new String(Base64.getDecoder().decode(t), StandardCharsets.UTF_8)
        : "";
  }

  static long integer(Object v) {
    if (v == null) {
      return 0;
    }
    if (v instanceof Long n) {
      return n;
    }
    if (v instanceof String s && s.matches("-?[0-9]{1,20}")) {
      try {
        return Long.parseLong(s);
      } catch (NumberFormatException e) {
        return Long.parseUnsignedLong(s);
      }
    }
    throw new SnowidException(
        Code.UNAVAILABLE, "etcd gateway sent a malformed integer " + Json.write(String.valueOf(v)));
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> obj(Object o) {
    return o instanceof Map ? (Map<String, Object>) o : Map.of();
  }

  @SuppressWarnings("unchecked")
  static List<Object> arr(Object o) {
    return o instanceof List ? (List<Object>) o : List.of();
  }

  static KeyValue kvOf(Object raw) {
    Map<String, Object> o = obj(raw);
    return new KeyValue(
        unb64(o.get("key")),
        o.get("value") == null ? "" : unb64(o.get("value")),
        integer(o.get("create_revision")),
        integer(o.get("mod_revision")),
        integer(o.get("lease")));
  }

  static Header headerOf(Object raw) {
    Map<String, Object> o = obj(raw);
    return new Header(integer(o.get("revision")), String.valueOf(o.getOrDefault("cluster_id", "")));
  }

  /** The end of the range of every key starting with {@code prefix}. */
  static String prefixEnd(String prefix) {
    byte[] b = prefix.getBytes(StandardCharsets.UTF_8);
    for (int i = b.length - 1; i >= 0; i--) {
      if ((b[i] & 0xff) < 0xff) {
        b[i]++;
        return new String(b, 0, i + 1, StandardCharsets.ISO_8859_1);
      }
    }
    return "\0";
  }

  /** The range end as base64, from the raw bytes (a key may end in a byte above 0x7f). */
  static String b64RangeEnd(String prefix) {
    return Base64.getEncoder()
        .encodeToString(prefixEnd(prefix).getBytes(StandardCharsets.ISO_8859_1));
  }

  /** A gRPC status in a gateway reply, as {code, message}, or null. Both 3.4-3.5 and 3.6 shapes. */
  static Object[] gatewayError(Map<String, Object> doc) {
    Object e = doc.get("error");
    if (e instanceof Map) {
      Map<String, Object> o = obj(e);
      Object code = o.containsKey("grpc_code") ? o.get("grpc_code") : o.getOrDefault("code", 2L);
      return new Object[] {integer(code), String.valueOf(o.getOrDefault("message", ""))};
    }
    if (e != null || (doc.containsKey("code") && doc.containsKey("message"))) {
      return new Object[] {
        integer(doc.getOrDefault("code", 2L)), String.valueOf(doc.getOrDefault("message", e))
      };
    }
    return null;
  }

  int preferredEndpoint() {
    return preferred;
  }

  /** How many times a token was asked for (tests: an expired token is replaced). */
  int authentications() {
    return authentications.get();
  }

  /** What one member made of one request. */
  private record Reply(Kind kind, Map<String, Object> doc, SnowidException error, String why) {}

  private enum Kind {
    OK,
    /** etcd's answer about the request itself: the same on every member. */
    REFUSED,
    /** The token is missing, expired or unknown. */
    AUTH,
    /** About this member (down, slow, no leader): another one may answer. */
    ELSEWHERE
  }

  private static boolean isAuthError(long code, String message) {
    return code == GRPC_UNAUTHENTICATED
        || (code == GRPC_INVALID_ARGUMENT && message.contains("user name is empty"));
  }

  /**
   * A stream message that refuses the token: an auth error, or a watch that etcd created and
   * canceled at once as unauthenticated (what an expired token gets).
   */
  private static boolean refusedToken(Map<String, Object> doc) {
    Object[] err = gatewayError(doc);
    if (err != null) {
      return isAuthError((Long) err[0], String.valueOf(err[1]));
    }
    Map<String, Object> r = obj(doc.get("result"));
    String reason = String.valueOf(r.get("cancel_reason"));
    return Boolean.TRUE.equals(r.get("canceled"))
        && (reason.contains("code = Unauthenticated") || reason.contains("user name is empty"));
  }

  /** A gRPC error that another member would give too (docs/protocol.md section 1). */
  private static SnowidException refusal(long code, String msg) {
    if (code == GRPC_NOT_FOUND) {
      return new SnowidException(Code.NOT_FOUND, msg);
    }
    if (code == GRPC_INVALID_ARGUMENT) {
      return new SnowidException(Code.INVALID_ARGUMENT, msg);
    }
    if (code == GRPC_PERMISSION_DENIED || code == GRPC_FAILED_PRECONDITION) {
      return new SnowidException(Code.FAILED_PRECONDITION, msg);
    }
    return null;
  }

  private Reply post(int index, String path, String text, long timeout, String token)
      throws InterruptedException {
    HttpResponse<String> res;
    try {
      HttpRequest.Builder req =
          HttpRequest.newBuilder(URI.create(endpoints.get(index) + path))
              .timeout(Duration.ofMillis(timeout))
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString(text));
      if (!token.isEmpty()) {
        req.header("Authorization", token);
      }
      res = client.send(req.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException | IllegalArgumentException e) {
      return new Reply(Kind.ELSEWHERE, null, null, endpoints.get(index) + ": " + e);
    }
    Map<String, Object> doc;
    try {
      doc = obj(Json.parse(res.body()));
    } catch (Json.JsonException e) {
      return new Reply(Kind.ELSEWHERE, null, null, "HTTP " + res.statusCode() + ", not JSON");
    }
    Object[] err = gatewayError(doc);
    if (err != null) {
      long code = (Long) err[0];
      String message = String.valueOf(err[1]);
      if (isAuthError(code, message)) {
        return new Reply(Kind.AUTH, null, null, message);
      }
      String msg = "etcd " + path + ": " + message + " (gRPC code " + code + ")";
      SnowidException refused = refusal(code, msg);
      return refused != null
          ? new Reply(Kind.REFUSED, null, refused, msg)
          : new Reply(Kind.ELSEWHERE, null, null, msg);
    }
    if (res.statusCode() / 100 != 2) {
      return new Reply(Kind.ELSEWHERE, null, null, "etcd " + path + ": HTTP " + res.statusCode());
    }
    return new Reply(Kind.OK, doc, null, "");
  }

  /**
   * One unary call. NOT_FOUND for gRPC code 5 (a lease that is gone), INVALID_ARGUMENT or
   * FAILED_PRECONDITION for etcd's refusal of the request or of the credentials; UNAVAILABLE when
   * no member answered, in which case the outcome of a write is unknown. An expired token is
   * replaced once per call.
   */
  Map<String, Object> call(String path, Map<String, Object> body, long limitMs) {
    long timeout = Math.max(1, Math.min(limitMs, timeoutMs));
    String text = Json.write(body);
    String last = "";
    boolean refreshed = false;
    int n = endpoints.size();
    int start = preferred;
    try {
      for (int i = 0; i < n; i++) {
        int index = (start + i) % n;
        String stale = token;
        Reply r = post(index, path, text, timeout, stale);
        if (r.kind == Kind.AUTH) {
          if (access.user() == null) {
            throw SnowidException.invalid(
                "etcd requires authentication (" + r.why + "); set a user and password");
          }
          if (!refreshed) {
            refreshed = true;
            if (!refresh(stale, timeout)) {
              // No member answered the authentication: not a refusal, so UNAVAILABLE below.
              last = "no member answered the authentication";
              continue;
            }
            r = post(index, path, text, timeout, token);
          }
          if (r.kind == Kind.AUTH) {
            throw SnowidException.invalid(
                "etcd refused the credentials of user " + Json.write(access.user()) + ": " + r.why);
          }
        }
        switch (r.kind) {
          case OK:
            preferred = index;
            return r.doc;
          case REFUSED:
            preferred = index;
            throw r.error;
          default:
            last = r.why;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SnowidException(Code.UNAVAILABLE, "etcd " + path + ": interrupted", 100, e);
    }
    throw new SnowidException(
        Code.UNAVAILABLE, "etcd " + path + ": no member answered: " + last, 100);
  }

  /**
   * Authenticates now if a user is set, so that a wrong password shows before any request:
   * INVALID_ARGUMENT when etcd refuses the user, UNAVAILABLE when no member answered.
   */
  void authenticate() {
    if (access.user() == null) {
      return;
    }
    try {
      if (!refresh(token, timeoutMs)) {
        throw new SnowidException(
            Code.UNAVAILABLE, "etcd: no member answered the authentication", 100);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SnowidException(Code.UNAVAILABLE, "etcd authentication: interrupted", 100, e);
    }
  }

  /**
   * Replaces the token {@code stale} (one thread at a time; a token another thread already replaced
   * is kept). False when no member answered; INVALID_ARGUMENT when etcd refused.
   */
  private boolean refresh(String stale, long timeout) throws InterruptedException {
    synchronized (authLock) {
      if (!token.equals(stale)) {
        return true;
      }
      String text =
          Json.write(Map.of("name", access.user(), "password", String.valueOf(access.password())));
      String who = "etcd refused user " + Json.write(access.user()) + ": ";
      int n = endpoints.size();
      int start = preferred;
      for (int i = 0; i < n; i++) {
        int index = (start + i) % n;
        authentications.incrementAndGet();
        Reply r = post(index, "/v3/auth/authenticate", text, timeout, "");
        switch (r.kind) {
          case OK:
            if (!(r.doc.get("token") instanceof String t) || t.isEmpty()) {
              continue;
            }
            token = t;
            preferred = index;
            return true;
          case REFUSED:
            if (r.why.contains("authentication is not enabled")) {
              // The cluster checks no one: requests go without a token.
              token = "";
              return true;
            }
            throw SnowidException.invalid(who + r.why);
          case AUTH:
            throw SnowidException.invalid(who + r.why);
          default:
            break;
        }
      }
      return false;
    }
  }

  /** How a stream ended. */
  enum StreamEnd {
    STOPPED,
    ENDED,
    ABORTED,
    EXPIRED
  }

  /**
   * Streams {@code path} from one member, calling {@code onMessage} for each JSON message until it
   * returns false (STOPPED), the stream ends or breaks (ENDED), {@code aborted} turns true
   * (ABORTED), or {@code maxMs} has passed (EXPIRED). Polls {@code aborted} every 100 ms.
   */
  StreamEnd stream(
      int endpoint,
      String path,
      Map<String, Object> body,
      Predicate<Map<String, Object>> onMessage,
      BooleanSupplier aborted,
      long maxMs) {
    URI uri = URI.create(endpoints.get(endpoint));
    boolean https = "https".equals(uri.getScheme());
    int port = uri.getPort() > 0 ? uri.getPort() : https ? 443 : 80;
    long end = System.nanoTime() + maxMs * 1_000_000;
    String used = token;
    try (Socket s = open(uri.getHost(), port, https)) {
      s.setSoTimeout(100);
      byte[] payload = Json.write(body).getBytes(StandardCharsets.UTF_8);
      String head =
          "POST "
              + path
              + " HTTP/1.1\r\nHost: "
              + uri.getHost()
              + ":"
              + port
              + "\r\nContent-Type: application/json\r\nGrpc-Metadata-hasleader: true\r\n"
              + (used.isEmpty() ? "" : "Authorization: " + used + "\r\n")
              + "Content-Length: "
              + payload.length
              + "\r\nConnection: close\r\n\r\n";
      OutputStream out = s.getOutputStream();
      out.write(head.getBytes(StandardCharsets.ISO_8859_1));
      out.write(payload);
      out.flush();
      InputStream in = s.getInputStream();
      StreamParser p = new StreamParser();
      byte[] buf = new byte[8192];
      while (true) {
        if (aborted.getAsBoolean()) {
          return StreamEnd.ABORTED;
        }
        if (System.nanoTime() - end > 0) {
          return StreamEnd.EXPIRED;
        }
        int r;
        try {
          r = in.read(buf);
        } catch (SocketTimeoutException e) {
          continue;
        }
        if (r < 0) {
          return StreamEnd.ENDED;
        }
        for (String line : p.feed(buf, r)) {
          Map<String, Object> doc;
          try {
            doc = obj(Json.parse(line));
          } catch (Json.JsonException e) {
            return StreamEnd.ENDED;
          }
          if (access.user() != null && refusedToken(doc)) {
            // The token expired: the next stream gets a fresh one.
            refresh(used, timeoutMs);
            return StreamEnd.ENDED;
          }
          if (!onMessage.test(doc)) {
            return StreamEnd.STOPPED;
          }
        }
        if (p.broken) {
          return StreamEnd.ENDED;
        }
      }
    } catch (IOException | IllegalArgumentException | SnowidException e) {
      return StreamEnd.ENDED;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return StreamEnd.ABORTED;
    }
  }

  /**
   * A connected socket to one member; for https, TLS over it with the member's certificate checked
   * against {@code host} (as the HTTP client checks it).
   */
  private Socket open(String host, int port, boolean https) throws IOException {
    int connectMs = (int) Math.min(timeoutMs, 60_000);
    Socket plain = new Socket();
    try {
      plain.connect(new InetSocketAddress(host, port), connectMs);
      if (!https) {
        return plain;
      }
      SSLSocket s = (SSLSocket) tls.getSocketFactory().createSocket(plain, host, port, true);
      SSLParameters p = s.getSSLParameters();
      p.setEndpointIdentificationAlgorithm("HTTPS");
      s.setSSLParameters(p);
      s.setSoTimeout(connectMs);
      s.startHandshake();
      return s;
    } catch (IOException | RuntimeException e) {
      plain.close();
      throw e;
    }
  }

  /** HTTP/1.1 response head, then a chunked (or plain) body split into lines. */
  private static final class StreamParser {
    private final java.io.ByteArrayOutputStream raw = new java.io.ByteArrayOutputStream();
    private final java.io.ByteArrayOutputStream data = new java.io.ByteArrayOutputStream();
    private boolean headDone;
    private boolean chunked;
    boolean broken;

    List<String> feed(byte[] b, int n) {
      raw.write(b, 0, n);
      byte[] all = raw.toByteArray();
      int pos = 0;
      if (!headDone) {
        int endHead = indexOf(all, 0, "\r\n\r\n");
        if (endHead < 0) {
          return List.of();
        }
        String head = new String(all, 0, endHead, StandardCharsets.ISO_8859_1);
        if (!head.startsWith("HTTP/1.1 200") && !head.startsWith("HTTP/1.0 200")) {
          broken = true;
        }
        chunked = head.toLowerCase(java.util.Locale.ROOT).contains("transfer-encoding: chunked");
        headDone = true;
        pos = endHead + 4;
      }
      if (!chunked) {
        data.write(all, pos, all.length - pos);
        pos = all.length;
      } else {
        while (true) {
          int eol = indexOf(all, pos, "\r\n");
          if (eol < 0) {
            break;
          }
          String size = new String(all, pos, eol - pos, StandardCharsets.ISO_8859_1).trim();
          int semi = size.indexOf(';');
          if (semi >= 0) {
            size = size.substring(0, semi);
          }
          int len;
          try {
            len = Integer.parseInt(size, 16);
          } catch (NumberFormatException e) {
            broken = true;
            break;
          }
          if (len == 0) {
            broken = true;
            break;
          }
          if (all.length < eol + 2 + len + 2) {
            break;
          }
          data.write(all, eol + 2, len);
          pos = eol + 2 + len + 2;
        }
      }
      raw.reset();
      raw.write(all, pos, all.length - pos);
      List<String> lines = new ArrayList<>();
      byte[] d = data.toByteArray();
      int from = 0;
      for (int i = 0; i < d.length; i++) {
        if (d[i] == '\n') {
          String line = new String(d, from, i - from, StandardCharsets.UTF_8).trim();
          if (!line.isEmpty()) {
            lines.add(line);
          }
          from = i + 1;
        }
      }
      data.reset();
      data.write(d, from, d.length - from);
      return lines;
    }

    private static int indexOf(byte[] a, int from, String what) {
      byte[] w = what.getBytes(StandardCharsets.ISO_8859_1);
      outer:
      for (int i = from; i + w.length <= a.length; i++) {
        for (int j = 0; j < w.length; j++) {
          if (a[i + j] != w[j]) {
            continue outer;
          }
        }
        return i;
      }
      return -1;
    }
  }
}
