package dev.snowid;

import java.time.DateTimeException;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The values and keys of the holder protocol in etcd (docs/protocol.md sections 2, 3 and 8): the
 * holder, the mark and the namespace's store record. Readers ignore members they do not know; a
 * known member of the wrong type or out of range makes the value unreadable (DATA_LOSS). Writers
 * write compact JSON with the members sorted by name, as the C++ library does.
 */
public final class EtcdValues {
  private EtcdValues() {}

  /** A holder value; {@code lease} is the etcd lease id as a signed 64-bit integer. */
  public record Holder(String host, long pid, long startedMs, String address, long lease) {}

  /** A mark; every member is optional (null). Unix ms. */
  public record Mark(Long highWaterMs, Long releasedAtMs, Long cleanReleaseMs) {
    public static final Mark EMPTY = new Mark(null, null, null);

    public Mark withHighWater(Long v) {
      return new Mark(v, releasedAtMs, cleanReleaseMs);
    }
  }

  /** The namespace's store record. */
  public record StoreRecord(String incarnation, Long highWaterMs, String reason, long writtenMs) {}

  private static final long MAX_MS = Layout.MAX_UNIX_MS - 1;
  private static final Pattern HEX16 = Pattern.compile("[0-9a-fA-F]{1,16}");
  private static final Pattern INCARNATION = Pattern.compile("[0-9a-fA-F]{16}");
  private static final Pattern INSTANT =
      Pattern.compile(
          "([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\\.([0-9]{1,9}))?"
              + "(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))");

  /** Nanoseconds since 1970 as the ms a value records: rounded up, also before 1970. */
  public static long msOfNs(long ns) {
    return Math.floorDiv(ns, 1_000_000L) + (Math.floorMod(ns, 1_000_000L) != 0 ? 1 : 0);
  }

  private static SnowidException dataLoss(String what, String why) {
    return SnowidException.dataLoss("unreadable " + what + " value in etcd: " + why);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(String what, String text) {
    Object doc;
    try {
      doc = Json.parse(text);
    } catch (Json.JsonException e) {
      throw dataLoss(what, "not JSON (" + e.getMessage() + ")");
    }
    if (!(doc instanceof Map)) {
      throw dataLoss(what, "not a JSON object");
    }
    return (Map<String, Object>) doc;
  }

  private static Long integer(String what, Map<String, Object> doc, String name, long lo, long hi) {
    Object v = doc.get(name);
    if (v == null) {
      return null;
    }
    if (!(v instanceof Long n) || n < lo || n > hi) {
      throw dataLoss(what, name + " is not an integer from " + lo + " to " + hi);
    }
    return n;
  }

  private static Long ms(String what, Map<String, Object> doc, String name) {
    return integer(what, doc, name, -MAX_MS, MAX_MS);
  }

  private static String str(String what, Map<String, Object> doc, String name) {
    Object v = doc.get(name);
    if (v == null) {
      return "";
    }
    if (!(v instanceof String s)) {
      throw dataLoss(what, name + " is not a string");
    }
    return s;
  }

  private static long instantMs(String what, String text) {
    Matcher m = INSTANT.matcher(text);
    if (m.matches()) {
      try {
        int offH = m.group(10) == null ? 0 : Integer.parseInt(m.group(10));
        int offM = m.group(11) == null ? 0 : Integer.parseInt(m.group(11));
        String frac = m.group(7) == null ? "0" : m.group(7);
        int millis = Integer.parseInt((frac + "00").substring(0, 3));
        if (offH <= 23 && offM <= 59) {
          LocalDateTime t =
              LocalDateTime.of(
                  Integer.parseInt(m.group(1)),
                  Integer.parseInt(m.group(2)),
                  Integer.parseInt(m.group(3)),
                  Integer.parseInt(m.group(4)),
                  Integer.parseInt(m.group(5)),
                  Integer.parseInt(m.group(6)),
                  millis * 1_000_000);
          long sign = "-".equals(m.group(9)) ? -1 : 1;
          return t.toInstant(ZoneOffset.UTC).toEpochMilli() - sign * (offH * 60L + offM) * 60_000;
        }
      } catch (DateTimeException e) {
        // falls through to the refusal
      }
    }
    String shown = text.length() > 40 ? text.substring(0, 40) : text;
    throw dataLoss(what, "started is not an RFC 3339 time: " + Json.write(shown));
  }

  public static String encodeHolder(Holder h) {
    Map<String, Object> doc = new TreeMap<>();
    doc.put("address", h.address());
    doc.put("host", h.host());
    doc.put("lease", Long.toHexString(h.lease()));
    doc.put("pid", h.pid());
    doc.put("started", Layout.formatInstant(Math.max(0, h.startedMs())));
    return Json.write(doc);
  }

  public static Holder decodeHolder(String text) {
    Map<String, Object> doc = object("holder", text);
    Object lease = doc.get("lease");
    if (!(lease instanceof String l) || !HEX16.matcher(l).matches()) {
      throw dataLoss("holder", "the lease is not 1 to 16 hexadecimal digits");
    }
    Object started = doc.get("started");
    if (started != null && !(started instanceof String)) {
      throw dataLoss("holder", "started is not a string");
    }
    Long pid = integer("holder", doc, "pid", Long.MIN_VALUE, Long.MAX_VALUE);
    return new Holder(
        str("holder", doc, "host"),
        pid == null ? 0 : pid,
        started == null ? 0 : instantMs("holder", (String) started),
        str("holder", doc, "address"),
        Long.parseUnsignedLong(l, 16));
  }

  public static String encodeMark(Mark m) {
    Map<String, Object> doc = new TreeMap<>();
    if (m.cleanReleaseMs() != null) {
      doc.put("clean_release_ms", m.cleanReleaseMs());
    }
    if (m.highWaterMs() != null) {
      doc.put("high_water_ms", m.highWaterMs());
    }
    if (m.releasedAtMs() != null) {
      doc.put("released_at_ms", m.releasedAtMs());
    }
    return Json.write(doc);
  }

  /** The mark of a key's text; an absent key (null) is the empty mark. */
  public static Mark decodeMark(String text) {
    if (text == null) {
      return Mark.EMPTY;
    }
    Map<String, Object> doc = object("mark", text);
    return new Mark(
        ms("mark", doc, "high_water_ms"),
        ms("mark", doc, "released_at_ms"),
        ms("mark", doc, "clean_release_ms"));
  }

  /** A clean release vouches for the mark only while high_water still equals it. */
  public static boolean releasedClean(Mark m) {
    return m.cleanReleaseMs() != null
        && m.highWaterMs() != null
        && m.releasedAtMs() != null
        && m.cleanReleaseMs().longValue() == m.highWaterMs().longValue();
  }

  public static Long later(Long a, Long b) {
    if (a == null) {
      return b;
    }
    if (b == null) {
      return a;
    }
    return Math.max(a, b);
  }

  /** When an id that is not held becomes free; null: free since forever. */
  public static Long freeFromMs(Mark m, long quarantineMs) {
    Long last = later(m.releasedAtMs(), m.highWaterMs());
    if (last == null) {
      return null;
    }
    return releasedClean(m) ? last : last + quarantineMs;
  }

  /** Whether an acquirer whose wall clock reads {@code nowMs} may take the id (section 8). */
  public static boolean eligible(boolean held, Mark m, long nowMs, long quarantineMs) {
    if (held) {
      return false;
    }
    Long from = freeFromMs(m, quarantineMs);
    return from == null || nowMs >= from;
  }

  public static String encodeStore(StoreRecord s) {
    Map<String, Object> doc = new TreeMap<>();
    if (s.highWaterMs() != null) {
      doc.put("high_water_ms", s.highWaterMs());
    }
    doc.put("incarnation", s.incarnation());
    doc.put("reason", s.reason());
    doc.put("written_ms", s.writtenMs());
    return Json.write(doc);
  }

  public static StoreRecord decodeStore(String text) {
    Map<String, Object> doc = object("store", text);
    Object inc = doc.get("incarnation");
    if (!(inc instanceof String i) || !INCARNATION.matcher(i).matches()) {
      throw dataLoss("store", "the incarnation is not 16 hexadecimal digits");
    }
    Long written = ms("store", doc, "written_ms");
    return new StoreRecord(
        i,
        ms("store", doc, "high_water_ms"),
        str("store", doc, "reason"),
        written == null ? 0 : written);
  }

  /** The keys of a namespace (section 2). */
  public static final class Keys {
    private static final Pattern WORKER =
        Pattern.compile("(0|[1-9][0-9]{0,9})/(0|[1-9][0-9]{0,9})/(holder|mark)");

    /** A worker key read back: its region, host and whether it is the holder key. */
    public record Parsed(long region, long host, boolean holder) {}

    public final String base;
    public final String store;

    public Keys(String prefix, String cluster) {
      base = prefix + "/" + cluster + "/workers/";
      store = prefix + "/" + cluster + "/store";
    }

    public String region(long region) {
      return base + region + "/";
    }

    public String holder(long region, long host) {
      return region(region) + host + "/holder";
    }

    public String mark(long region, long host) {
      return region(region) + host + "/mark";
    }

    /** A worker key of a listing, or null for a foreign one (skipped, never an error). */
    public Parsed parse(String key) {
      if (!key.startsWith(base)) {
        return null;
      }
      Matcher m = WORKER.matcher(key.substring(base.length()));
      if (!m.matches()) {
        return null;
      }
      long region = Long.parseLong(m.group(1));
      long host = Long.parseLong(m.group(2));
      if (region > 0xffffffffL || host > 0xffffffffL) {
        return null;
      }
      return new Parsed(region, host, m.group(3).equals("holder"));
    }
  }

  private static final Pattern CLUSTER = Pattern.compile("[A-Za-z0-9._-]{1,128}");

  /** INVALID_ARGUMENT unless the prefix and cluster name make a namespace. */
  public static void checkNamespace(String prefix, String cluster) {
    if (!prefix.startsWith("/") || prefix.endsWith("/") || prefix.contains("//")) {
      throw SnowidException.invalid(
          "etcd: the key prefix must start with '/', not end with one and not hold '//', not "
              + Json.write(prefix));
    }
    if (!CLUSTER.matcher(cluster).matches()) {
      throw SnowidException.invalid(
          "etcd: the cluster name is 1 to 128 letters, digits, '-', '_' or '.', not "
              + Json.write(cluster));
    }
  }

  /** The lease timing bounds of section 4. */
  public static void checkLeaseTiming(
      long ttlMs, long renewEveryMs, long stopAfterMs, long maxClockSkewMs) {
    if (ttlMs % 1000 != 0 || ttlMs < 2000 || ttlMs > 3_600_000) {
      throw SnowidException.invalid(
          "the lease TTL is whole seconds from 2 s to 1 hour, not " + ttlMs + " ms");
    }
    if (!(renewEveryMs > 0 && renewEveryMs < stopAfterMs && stopAfterMs < ttlMs)) {
      throw SnowidException.invalid(
          "the lease timing must satisfy 0 < renew every ("
              + renewEveryMs
              + " ms) < stop after ("
              + stopAfterMs
              + " ms) < TTL ("
              + ttlMs
              + " ms)");
    }
    if (maxClockSkewMs < 0 || maxClockSkewMs > 60_000) {
      throw SnowidException.invalid(
          "the largest clock skew is 0 to 60000 ms, not " + maxClockSkewMs);
    }
  }

  public static void checkEtcdOptions(long quarantineMs, long requestTimeoutMs) {
    if (quarantineMs < 0 || quarantineMs > 3_600_000) {
      throw SnowidException.invalid("the quarantine is 0 to 3600000 ms, not " + quarantineMs);
    }
    if (requestTimeoutMs < 1 || requestTimeoutMs > 60_000) {
      throw SnowidException.invalid(
          "etcd: the request timeout is 1 ms to 1 minute, not " + requestTimeoutMs + " ms");
    }
  }

  /**
   * The instant before which a new holder issues nothing: the later of the id's previous mark and
   * the store-wide mark, plus the skew (at least 1 ms); null when neither exists.
   */
  public static Long waitUntilMs(Long previousHighWaterMs, Long storeHighWaterMs, long skewMs) {
    Long mark = later(previousHighWaterMs, storeHighWaterMs);
    return mark == null ? null : mark + Math.max(skewMs, 1);
  }
}
