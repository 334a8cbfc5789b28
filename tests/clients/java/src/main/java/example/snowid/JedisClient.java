package example.snowid;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.Response;
import redis.clients.jedis.commands.ProtocolCommand;

/**
 * Jedis against snowidd over TCP, once with RESP2 and once with RESP3. Ids arrive as bulk strings
 * of decimal digits; Long.parseLong makes them exact longs.
 */
public final class JedisClient {
  private static final long EPOCH_MS = 1767225600000L;
  private static final Pattern ID_TEXT = Pattern.compile("[1-9][0-9]{0,18}");

  /** snowidd's commands, which Jedis does not know by name. */
  enum Snowid implements ProtocolCommand {
    NEXTID,
    NEXTIDS,
    DECODE,
    IDFORMAT;

    @Override
    public byte[] getRaw() {
      return name().getBytes(StandardCharsets.US_ASCII);
    }
  }

  /** The layout: 41 bits of ms, 2 region, 8 host, 12 sequence. */
  static Map<String, Long> decode(long id) {
    Map<String, Long> f = new HashMap<>();
    f.put("ticks", id >> 22);
    f.put("unix_ms", (id >> 22) + EPOCH_MS);
    f.put("region", (id >> 20) & 3);
    f.put("host", (id >> 12) & 255);
    f.put("sequence", id & 4095);
    return f;
  }

  static long parseId(Object reply) {
    check(reply instanceof byte[], "an id is a bulk string, not " + reply);
    String text = new String((byte[]) reply, StandardCharsets.US_ASCII);
    check(ID_TEXT.matcher(text).matches(), "not an id: '" + text + "'");
    return Long.parseLong(text);
  }

  static void check(boolean ok, String what) {
    if (!ok) throw new AssertionError(what);
  }

  /** Every id received, checked against the pinned worker, the run and the ids before. */
  static final class Ledger {
    final long region = Long.parseLong(System.getenv("SNOWIDD_REGION"));
    final long host = Long.parseLong(System.getenv("SNOWIDD_HOST"));
    final long startMs = System.currentTimeMillis();
    final Set<Long> seen = new HashSet<>();
    long received;
  }

  /** The ids of one connection, which must increase. */
  static final class Stream {
    final Ledger ledger;
    long last;

    Stream(Ledger ledger) {
      this.ledger = ledger;
    }

    List<Long> accept(List<?> replies) {
      long nowMs = System.currentTimeMillis();
      List<Long> ids = new ArrayList<>();
      for (Object r : replies) {
        long id = parseId(r);
        Map<String, Long> d = decode(id);
        check(d.get("region") == ledger.region && d.get("host") == ledger.host,
            "id " + id + ": worker " + d.get("region") + "/" + d.get("host"));
        long ms = d.get("unix_ms");
        check(ms >= ledger.startMs && ms <= nowMs,
            "id " + id + ": time " + ms + " outside [" + ledger.startMs + ", " + nowMs + "]");
        check(id > last, "id " + id + " does not follow " + last);
        check(ledger.seen.add(id), "id " + id + " issued twice");
        last = id;
        ids.add(id);
      }
      ledger.received += ids.size();
      return ids;
    }
  }

  /** DECODE's reply: a RESP3 map (a list of entries in Jedis), or a RESP2 flat array. */
  static Map<String, Object> fieldsOf(Object reply) {
    check(reply instanceof List, "DECODE gave " + reply);
    List<?> list = (List<?>) reply;
    Map<String, Object> out = new HashMap<>();
    if (!list.isEmpty() && list.get(0) instanceof Map.Entry) {
      for (Object e : list) {
        Map.Entry<?, ?> kv = (Map.Entry<?, ?>) e;
        out.put(text(kv.getKey()), kv.getValue());
      }
      return out;
    }
    check(list.size() % 2 == 0, "DECODE: odd flat array");
    for (int i = 0; i < list.size(); i += 2) out.put(text(list.get(i)), list.get(i + 1));
    return out;
  }

  static String text(Object bulk) {
    return new String((byte[]) bulk, StandardCharsets.UTF_8);
  }

  static void checkDecode(Jedis jedis, long id) {
    Map<String, Object> f = fieldsOf(jedis.sendCommand(Snowid.DECODE, Long.toString(id)));
    check(Long.toString(id).equals(text(f.get("id"))), "DECODE: id " + text(f.get("id")));
    for (Map.Entry<String, Long> want : decode(id).entrySet()) {
      Object got = f.get(want.getKey());
      check(want.getValue().equals(got), "DECODE: " + want.getKey() + " is " + got);
    }
    long shown = Instant.parse(text(f.get("time"))).toEpochMilli();
    check(shown == decode(id).get("unix_ms"), "DECODE: time " + text(f.get("time")));
  }

  static void idsOnOneConnection(Jedis jedis, Ledger ledger) {
    Stream stream = new Stream(ledger);
    for (int i = 0; i < 10; ++i) stream.accept(List.of(jedis.sendCommand(Snowid.NEXTID)));

    Pipeline pipe = jedis.pipelined();
    List<Response<Object>> replies = new ArrayList<>();
    for (int i = 0; i < 2000; ++i) replies.add(pipe.sendCommand(Snowid.NEXTID, new String[0]));
    pipe.sync();
    List<Object> pipelined = new ArrayList<>();
    for (Response<Object> r : replies) pipelined.add(r.get());
    stream.accept(pipelined);

    Object batch = jedis.sendCommand(Snowid.NEXTIDS, "5");
    check(batch instanceof List && ((List<?>) batch).size() == 5, "NEXTIDS 5 gave " + batch);
    List<Long> ids = stream.accept((List<?>) batch);
    checkDecode(jedis, ids.get(4));
  }

  /** IDFORMAT INTEGER: native integers (Long) on this connection; STRING restores strings. */
  static void integerOptIn(Jedis jedis, Ledger ledger) {
    check("OK".equals(text(jedis.sendCommand(Snowid.IDFORMAT, "INTEGER"))), "IDFORMAT INTEGER");
    Object asInteger = jedis.sendCommand(Snowid.NEXTID);
    check(asInteger instanceof Long, "after IDFORMAT INTEGER: " + asInteger);
    Stream stream = new Stream(ledger);
    stream.accept(List.of(asInteger.toString().getBytes(StandardCharsets.US_ASCII)));
    check("OK".equals(text(jedis.sendCommand(Snowid.IDFORMAT, "STRING"))), "IDFORMAT STRING");
    stream.accept(List.of(jedis.sendCommand(Snowid.NEXTID)));
  }

  static long idsIssued(Jedis jedis) {
    Matcher m = Pattern.compile("(?m)^ids_issued:(\\d+)\\r?$").matcher(jedis.info("stats"));
    check(m.find(), "INFO stats has no ids_issued");
    return Long.parseLong(m.group(1));
  }

  public static void main(String[] args) {
    HostAndPort tcp = new HostAndPort(System.getenv("SNOWIDD_TCP_HOST"),
        Integer.parseInt(System.getenv("SNOWIDD_TCP_PORT")));
    Ledger ledger = new Ledger();
    try (Jedis resp2 = new Jedis(tcp,
             DefaultJedisClientConfig.builder().protocol(RedisProtocol.RESP2).build());
        Jedis resp3 = new Jedis(tcp,
            DefaultJedisClientConfig.builder().protocol(RedisProtocol.RESP3).build())) {
      idsOnOneConnection(resp2, ledger);
      idsOnOneConnection(resp3, ledger);
      integerOptIn(resp2, ledger);
      integerOptIn(resp3, ledger);
      long issued = idsIssued(resp2);
      check(issued == ledger.received,
          "INFO ids_issued " + issued + ", but " + ledger.received + " ids received");
      System.out.println(ledger.seen.size() + " ids checked, all exact and distinct");
    }
  }
}
