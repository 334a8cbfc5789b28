package dev.snowid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.snowid.EtcdValues.Holder;
import dev.snowid.EtcdValues.Keys;
import dev.snowid.EtcdValues.Mark;
import dev.snowid.EtcdValues.StoreRecord;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Properties of every parser over seeded random input ({@link Fuzz}): what is written reads back
 * the same, and malformed input is refused with the parser's own exception and code (id text:
 * INVALID_ARGUMENT or OUT_OF_RANGE; etcd values: DATA_LOSS; JSON: JsonException), never another
 * exception. A foreign etcd key is skipped (null), never an error.
 */
class ParserPropertiesTest {
  private static final BigInteger MAX_U64 = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
  private static final long MAX_MS = Layout.MAX_UNIX_MS - 1;

  /** The exception {@code parse} throws, or null; any exception but a SnowidException fails. */
  private static SnowidException refusal(Runnable parse) {
    try {
      parse.run();
      return null;
    } catch (SnowidException e) {
      return e;
    }
  }

  private static long anyLong(SplittableRandom r) {
    return switch (r.nextInt(4)) {
      case 0 -> r.nextLong();
      case 1 -> r.nextLong(1L << r.nextInt(1, 63));
      case 2 -> new long[] {0, 1, -1, Long.MAX_VALUE, Long.MIN_VALUE}[r.nextInt(5)];
      default -> -1L - r.nextInt(1000);
    };
  }

  // --- id text ---------------------------------------------------------------------------

  @Test
  void idTextRoundTripsAndLeadingZerosReadTheSame() {
    Fuzz.forAll(
        20_000,
        r -> {
          long id = anyLong(r);
          String text = Ids.format(id);
          assertEquals(new BigInteger(Long.toUnsignedString(id)).toString(), text);
          assertEquals(id, Ids.parse(text));
          String padded = "0".repeat(r.nextInt(21 - text.length())) + text;
          assertEquals(id, Ids.parse(padded), padded);
        });
  }

  @Test
  void idTextIsReadAsItsDecimalValueOrRefusedWithTheRightCode() {
    int[] seen = new int[3]; // invalid, out of range, read
    Fuzz.forAll(
        20_000,
        r -> {
          String text =
              switch (r.nextInt(4)) {
                case 0 -> Fuzz.mutate(r, Ids.format(anyLong(r)));
                // around 2^64 - 1, and 20 digits from 2 * 10^19 up: out of range
                case 1 -> MAX_U64.add(BigInteger.valueOf(r.nextInt(-1000, 1000))).toString();
                case 2 ->
                    r.nextInt(2, 10)
                        + String.format("%019d", r.nextLong(1_000_000_000_000_000_000L));
                default -> Fuzz.anyString(r, 24);
              };
          boolean digits = text.chars().allMatch(c -> c >= '0' && c <= '9');
          SnowidException e = refusal(() -> Ids.parse(text));
          if (!digits || text.isEmpty() || text.length() > 20) {
            assertNotNull(e, "accepted " + Json.write(text));
            assertEquals(Code.INVALID_ARGUMENT, e.code(), text);
            seen[0]++;
          } else if (new BigInteger(text).compareTo(MAX_U64) > 0) {
            assertNotNull(e, "accepted " + text);
            assertEquals(Code.OUT_OF_RANGE, e.code(), text);
            seen[1]++;
          } else {
            assertNull(e, text);
            assertEquals(new BigInteger(text).longValue(), Ids.parse(text), text);
            seen[2]++;
          }
        });
    assertTrue(seen[0] > 1000 && seen[1] > 1000 && seen[2] > 1000, "every outcome is tried");
  }

  @Test
  void idTextAboveALayoutsLargestIdIsOutOfRange() {
    Layout layout = Presets.byName("sonyflake");
    Fuzz.forAll(
        5_000,
        r -> {
          long id = anyLong(r);
          SnowidException e = refusal(() -> Ids.parse(Ids.format(id), layout));
          if (Long.compareUnsigned(id, layout.maxId()) > 0) {
            assertNotNull(e);
            assertEquals(Code.OUT_OF_RANGE, e.code());
          } else {
            assertNull(e);
          }
        });
  }

  // --- JSON ------------------------------------------------------------------------------

  private static Object anyJson(SplittableRandom r, int depth) {
    int kind = r.nextInt(depth >= 4 ? 5 : 7);
    switch (kind) {
      case 0:
        return null;
      case 1:
        return r.nextBoolean();
      case 2:
        return anyLong(r);
      case 3:
        return r.nextBoolean()
            ? BigInteger.valueOf(r.nextLong()).shiftLeft(64).add(BigInteger.TEN)
            : (Object) (r.nextDouble() * Math.pow(10, r.nextInt(-20, 20)));
      case 4:
        return Fuzz.anyString(r, 12);
      case 5:
        {
          List<Object> a = new ArrayList<>();
          for (int i = r.nextInt(4); i > 0; i--) {
            a.add(anyJson(r, depth + 1));
          }
          return a;
        }
      default:
        {
          Map<String, Object> o = new LinkedHashMap<>();
          for (int i = r.nextInt(4); i > 0; i--) {
            o.put(Fuzz.anyString(r, 6), anyJson(r, depth + 1));
          }
          return o;
        }
    }
  }

  @Test
  void jsonWrittenReadsBackEqual() {
    Fuzz.forAll(
        10_000,
        r -> {
          Object v = anyJson(r, 0);
          String text = Json.write(v);
          assertEquals(v, Json.parse(text), text);
        });
  }

  /** Only the documented kinds of value, all the way down. */
  private static void assertReaderKinds(Object v) {
    if (v instanceof Map<?, ?> m) {
      m.forEach(
          (k, x) -> {
            assertTrue(k instanceof String);
            assertReaderKinds(x);
          });
    } else if (v instanceof List<?> a) {
      a.forEach(ParserPropertiesTest::assertReaderKinds);
    } else if (v instanceof BigInteger b) {
      assertTrue(b.bitLength() >= 64, "a BigInteger only where a Long does not fit: " + b);
    } else {
      assertTrue(
          v == null
              || v instanceof String
              || v instanceof Boolean
              || v instanceof Long
              || v instanceof Double,
          () -> String.valueOf(v.getClass()));
    }
  }

  @Test
  void malformedJsonIsAJsonExceptionAndNothingElse() {
    int[] seen = new int[2]; // refused, read
    Fuzz.forAll(
        50_000,
        r -> {
          String text =
              r.nextInt(4) == 0 ? Fuzz.anyString(r, 16) : Fuzz.mutate(r, Json.write(anyJson(r, 0)));
          Object v;
          try {
            v = Json.parse(text);
          } catch (Json.JsonException e) {
            seen[0]++;
            return;
          }
          assertReaderKinds(v);
          seen[1]++;
        });
    assertTrue(seen[0] > 10_000 && seen[1] > 1000, "both outcomes are tried");
    StringBuilder deep = new StringBuilder();
    for (int i = 0; i < 100_000; i++) {
      deep.append('[');
    }
    try {
      Json.parse(deep.toString());
      fail("100,000 nested arrays were accepted");
    } catch (Json.JsonException e) {
      assertTrue(e.getMessage().contains("nested too deeply"), e.getMessage());
    }
  }

  // --- etcd keys -------------------------------------------------------------------------

  @Test
  void workerKeysReadBackAndForeignKeysAreSkipped() {
    Keys keys = new Keys("/snowid", "default");
    int[] seen = new int[2]; // skipped, read
    Fuzz.forAll(
        20_000,
        r -> {
          long region = r.nextBoolean() ? r.nextLong(256) : r.nextLong(1L << 32);
          long host = r.nextBoolean() ? r.nextLong(256) : r.nextLong(1L << 32);
          boolean holder = r.nextBoolean();
          String key = holder ? keys.holder(region, host) : keys.mark(region, host);
          assertEquals(new Keys.Parsed(region, host, holder), keys.parse(key));

          String other = r.nextBoolean() ? Fuzz.mutate(r, key) : keys.base + Fuzz.anyString(r, 24);
          Keys.Parsed p = keys.parse(other);
          seen[p == null ? 0 : 1]++;
          if (p != null) {
            String again =
                p.holder() ? keys.holder(p.region(), p.host()) : keys.mark(p.region(), p.host());
            assertEquals(again, other, "a key is read only in its one canonical spelling");
          }
        });
    assertTrue(seen[0] > 1000 && seen[1] > 100, "both outcomes are tried");
  }

  // --- holder, mark and store values -----------------------------------------------------

  private static long anyMs(SplittableRandom r) {
    return r.nextBoolean()
        ? r.nextLong(-MAX_MS, MAX_MS + 1)
        : 1_700_000_000_000L + r.nextLong(1L << 40);
  }

  private static Holder anyHolder(SplittableRandom r) {
    return new Holder(
        Fuzz.anyString(r, 10),
        r.nextLong(),
        r.nextLong(253_402_300_800_000L),
        Fuzz.anyString(r, 10),
        anyLong(r));
  }

  private static Mark anyMark(SplittableRandom r) {
    Supplier<Long> maybe = () -> r.nextBoolean() ? anyMs(r) : null;
    return new Mark(maybe.get(), maybe.get(), maybe.get());
  }

  private static StoreRecord anyStore(SplittableRandom r) {
    return new StoreRecord(
        String.format("%016x", r.nextLong()),
        r.nextBoolean() ? anyMs(r) : null,
        Fuzz.anyString(r, 10),
        anyMs(r));
  }

  @Test
  void holderMarkAndStoreValuesRoundTrip() {
    Fuzz.forAll(
        3_000,
        r -> {
          Holder h = anyHolder(r);
          assertEquals(h, EtcdValues.decodeHolder(EtcdValues.encodeHolder(h)));
          Mark m = anyMark(r);
          assertEquals(m, EtcdValues.decodeMark(EtcdValues.encodeMark(m)));
          StoreRecord s = anyStore(r);
          assertEquals(s, EtcdValues.decodeStore(EtcdValues.encodeStore(s)));
        });
  }

  /** A value of the right shape with members of random kinds, or a mutated real one. */
  private static String anyValueText(SplittableRandom r, String real, String... members) {
    if (r.nextBoolean()) {
      return Fuzz.mutate(r, real);
    }
    Map<String, Object> doc = new LinkedHashMap<>();
    for (String name : members) {
      if (r.nextInt(4) > 0) {
        doc.put(name, anyJson(r, 3));
      }
    }
    return r.nextInt(8) == 0 ? Json.write(anyJson(r, 2)) : Json.write(doc);
  }

  @Test
  void unreadableValuesAreDataLossAndNothingElse() {
    int[][] seen = new int[3][2]; // per kind: refused, read
    Fuzz.forAll(
        10_000,
        r -> {
          String holder =
              anyValueText(
                  r,
                  EtcdValues.encodeHolder(anyHolder(r)),
                  "host",
                  "pid",
                  "started",
                  "address",
                  "lease");
          String mark =
              anyValueText(
                  r,
                  EtcdValues.encodeMark(anyMark(r)),
                  "high_water_ms",
                  "released_at_ms",
                  "clean_release_ms");
          String store =
              anyValueText(
                  r,
                  EtcdValues.encodeStore(anyStore(r)),
                  "incarnation",
                  "high_water_ms",
                  "reason",
                  "written_ms");
          SnowidException[] outcomes = {
            refusal(() -> EtcdValues.decodeHolder(holder)),
            refusal(() -> EtcdValues.decodeMark(mark)),
            refusal(() -> EtcdValues.decodeStore(store))
          };
          for (int kind = 0; kind < 3; kind++) {
            SnowidException e = outcomes[kind];
            if (e != null) {
              assertEquals(Code.DATA_LOSS, e.code(), e.getMessage());
            }
            seen[kind][e == null ? 1 : 0]++;
          }
        });
    for (int[] kind : seen) {
      assertTrue(kind[0] > 1000 && kind[1] > 100, "both outcomes are tried");
    }
  }
}
