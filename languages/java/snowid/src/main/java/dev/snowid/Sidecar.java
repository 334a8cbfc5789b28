package dev.snowid;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A client of snowidd (docs/daemon.md): RESP over its Unix socket or TCP, one connection, requests
 * in order. Ids arrive as bulk strings of digits and become exact {@code long}s; error words become
 * {@link SnowidException} codes with the daemon's retry hint. Thread-safe (one request at a time);
 * every request is bounded by the timeout.
 */
public final class Sidecar implements AutoCloseable {
  private static final Pattern RETRY = Pattern.compile("; retry after ([0-9]+)ms$");

  private final SocketChannel channel;
  private final Selector selector;
  private final long timeoutMs;
  private final ByteBuffer in = ByteBuffer.allocate(64 * 1024);
  private boolean broken;

  /** An error reply of the daemon: its first word and the rest. */
  private record RespError(String word, String message) {}

  private Sidecar(SocketAddress address, long timeoutMs) {
    this.timeoutMs = timeoutMs;
    try {
      channel = SocketChannel.open(address);
      channel.configureBlocking(false);
      selector = Selector.open();
      channel.register(selector, SelectionKey.OP_READ);
    } catch (IOException e) {
      throw new SnowidException(
          Code.UNAVAILABLE, "snowidd at " + address + " cannot be reached: " + e, 100, e);
    }
    in.flip();
  }

  /** The daemon's default socket: the runtime directory, else /run as root, else /tmp. */
  public static Path defaultSocketPath() {
    String runtime = System.getenv("XDG_RUNTIME_DIR");
    if (runtime != null && !runtime.isEmpty()) {
      return Path.of(runtime, "snowid", "snowidd.sock");
    }
    String user = System.getProperty("user.name");
    if ("root".equals(user)) {
      return Path.of("/run/snowid/snowidd.sock");
    }
    long uid = 0;
    try {
      uid =
          ((Number)
                  java.nio.file.Files.getAttribute(
                      Path.of(System.getProperty("user.home")), "unix:uid"))
              .longValue();
    } catch (IOException | UnsupportedOperationException e) {
      // falls back to uid 0's name below, which does not exist for this user
    }
    return Path.of("/tmp/snowid-" + uid, "snowidd.sock");
  }

  /** Connects to the daemon's Unix socket; UNAVAILABLE when it cannot be reached. */
  public static Sidecar connect(Path socket, long timeoutMs) {
    return new Sidecar(UnixDomainSocketAddress.of(socket), timeoutMs);
  }

  public static Sidecar connect(Path socket) {
    return connect(socket, 2000);
  }

  /** Connects over TCP, and authenticates with {@code token} when it is not null. */
  public static Sidecar connectTcp(String host, int port, String token, long timeoutMs) {
    Sidecar s = new Sidecar(new InetSocketAddress(host, port), timeoutMs);
    if (token != null) {
      try {
        s.command("AUTH", token);
      } catch (RuntimeException e) {
        s.close();
        throw e;
      }
    }
    return s;
  }

  /** The next id. */
  public long nextId() {
    return Ids.parse(text(command("NEXTID")));
  }

  /** {@code n} increasing ids (1 to the daemon's max_batch). */
  public long[] nextIds(int n) {
    Object r = command("NEXTIDS", Integer.toString(n));
    if (!(r instanceof List<?> l)) {
      throw new SnowidException(Code.UNAVAILABLE, "snowidd: NEXTIDS answered " + r, 100);
    }
    long[] ids = new long[l.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = Ids.parse(text(l.get(i)));
    }
    return ids;
  }

  /** The daemon's DECODE of an id: {@code id}, {@code time}, {@code unix_ms}, ... by name. */
  public Map<String, Object> decode(String id) {
    Object r = command("DECODE", id);
    Map<String, Object> out = new LinkedHashMap<>();
    if (r instanceof List<?> l) {
      for (int i = 0; i + 1 < l.size(); i += 2) {
        out.put(text(l.get(i)), l.get(i + 1));
      }
    }
    return out;
  }

  private static String text(Object o) {
    if (o instanceof String s) {
      return s;
    }
    if (o instanceof Long n) {
      return Long.toUnsignedString(n);
    }
    throw new SnowidException(Code.UNAVAILABLE, "snowidd answered " + o + ", not an id", 100);
  }

  /**
   * One command; the reply as String (simple or bulk), Long, List or null. An error reply is a
   * SnowidException with the daemon's code; a broken connection is UNAVAILABLE and stays so.
   */
  public synchronized Object command(String... args) {
    if (broken) {
      throw new SnowidException(Code.UNAVAILABLE, "snowidd: the connection is closed", 100);
    }
    long deadline = System.nanoTime() + timeoutMs * 1_000_000;
    try {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      b.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
      for (String a : args) {
        byte[] v = a.getBytes(StandardCharsets.UTF_8);
        b.writeBytes(("$" + v.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(v);
        b.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
      }
      ByteBuffer out = ByteBuffer.wrap(b.toByteArray());
      while (out.hasRemaining()) {
        if (channel.write(out) == 0) {
          waitFor(deadline, SelectionKey.OP_WRITE);
        }
      }
      Object r = reply(deadline);
      if (r instanceof RespError e) {
        throw errorOf(e);
      }
      return r;
    } catch (IOException e) {
      broken = true;
      throw new SnowidException(Code.UNAVAILABLE, "snowidd: " + e, 100, e);
    }
  }

  /** The SnowidException for a daemon's error reply (docs/daemon.md, "Errors"). */
  static SnowidException errorOf(String word, String message) {
    Matcher m = RETRY.matcher(message);
    long after = m.find() ? Long.parseLong(m.group(1)) : 0;
    Code code;
    try {
      code = Code.valueOf(word);
    } catch (IllegalArgumentException e) {
      code =
          switch (word) {
            case "SHUTTING_DOWN" -> Code.UNAVAILABLE;
            case "NOAUTH", "WRONGPASS" -> Code.FAILED_PRECONDITION;
            default -> Code.INVALID_ARGUMENT;
          };
    }
    return new SnowidException(code, ("snowidd: " + word + " " + message).trim(), after);
  }

  private static SnowidException errorOf(RespError e) {
    return errorOf(e.word(), e.message());
  }

  private void waitFor(long deadline, int op) throws IOException {
    long left = (deadline - System.nanoTime()) / 1_000_000;
    if (left <= 0) {
      broken = true;
      throw new SnowidException(Code.UNAVAILABLE, "snowidd did not answer in time", 100);
    }
    SelectionKey key = channel.keyFor(selector);
    key.interestOps(op);
    selector.select(left);
    selector.selectedKeys().clear();
  }

  private int readByte(long deadline) throws IOException {
    while (!in.hasRemaining()) {
      in.clear();
      int n = channel.read(in);
      in.flip();
      if (n < 0) {
        broken = true;
        throw new SnowidException(Code.UNAVAILABLE, "snowidd closed the connection", 100);
      }
      if (n == 0) {
        waitFor(deadline, SelectionKey.OP_READ);
      }
    }
    return in.get() & 0xff;
  }

  private String line(long deadline) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    while (true) {
      int c = readByte(deadline);
      if (c == '\r') {
        if (readByte(deadline) != '\n') {
          throw new IOException("malformed RESP line");
        }
        return b.toString(StandardCharsets.UTF_8);
      }
      b.write(c);
    }
  }

  private Object reply(long deadline) throws IOException {
    int type = readByte(deadline);
    String l = line(deadline);
    switch (type) {
      case '+':
        return l;
      case '-':
        {
          int sp = l.indexOf(' ');
          return sp < 0
              ? new RespError(l, "")
              : new RespError(l.substring(0, sp), l.substring(sp + 1));
        }
      case ':':
        return Long.parseLong(l);
      case '$':
        {
          int n = Integer.parseInt(l);
          if (n < 0) {
            return null;
          }
          byte[] v = new byte[n];
          for (int i = 0; i < n; i++) {
            v[i] = (byte) readByte(deadline);
          }
          if (readByte(deadline) != '\r' || readByte(deadline) != '\n') {
            throw new IOException("malformed RESP bulk string");
          }
          return new String(v, StandardCharsets.UTF_8);
        }
      case '*':
        {
          int n = Integer.parseInt(l);
          if (n < 0) {
            return null;
          }
          List<Object> items = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            Object item = reply(deadline);
            if (item instanceof RespError e) {
              throw errorOf(e);
            }
            items.add(item);
          }
          return items;
        }
      default:
        throw new IOException("unknown RESP type '" + (char) type + "'");
    }
  }

  @Override
  public synchronized void close() {
    broken = true;
    try {
      selector.close();
      channel.close();
    } catch (IOException e) {
      // closing: nothing to recover
    }
  }
}
