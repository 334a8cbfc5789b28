package dev.snowid;

/**
 * Ids as text (docs/id-format.md section 8) and shorthands on the default layout. An id is an
 * unsigned 64-bit value in a {@code long}; in JSON it always travels as a decimal string, because
 * many readers lose digits above 2^53.
 */
public final class Ids {
  private Ids() {}

  /** The canonical text of an id: unsigned decimal digits without leading zeros. */
  public static String format(long id) {
    return Long.toUnsignedString(id);
  }

  /**
   * Reads an id strictly: 1 to 20 ASCII digits and nothing else (INVALID_ARGUMENT), at most 2^64 -
   * 1 (OUT_OF_RANGE). Leading zeros are read.
   */
  public static long parse(CharSequence text) {
    if (text == null) {
      throw SnowidException.invalid("id text is null");
    }
    int n = text.length();
    if (n < 1 || n > 20) {
      throw SnowidException.invalid("id text must be 1 to 20 ASCII digits, not " + quote(text));
    }
    long v = 0;
    boolean over = false;
    for (int i = 0; i < n; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        throw SnowidException.invalid("id text must be 1 to 20 ASCII digits, not " + quote(text));
      }
      int d = c - '0';
      // v * 10 + d overflows 64 unsigned bits when v > (2^64 - 1 - d) / 10.
      if (Long.compareUnsigned(v, Long.divideUnsigned(-1L - d, 10)) > 0) {
        over = true;
      }
      v = v * 10 + d;
    }
    if (over) {
      throw SnowidException.outOfRange("id " + text + " is above 2^64 - 1");
    }
    return v;
  }

  /** {@link #parse(CharSequence)}, and at most the layout's largest id (OUT_OF_RANGE). */
  public static long parse(CharSequence text, Layout layout) {
    long v = parse(text);
    if (Long.compareUnsigned(v, layout.maxId()) > 0) {
      throw SnowidException.outOfRange(
          "id "
              + text
              + " is above the largest id of layout "
              + layout.name()
              + " ("
              + format(layout.maxId())
              + ")");
    }
    return v;
  }

  private static String quote(CharSequence text) {
    String s = text.toString();
    if (s.length() > 40) {
      s = s.substring(0, 40);
    }
    return Json.write(s);
  }

  /** Decodes an id of the default snowid layout. */
  public static Parts decode(long id) {
    return Presets.SNOWID.decode(id);
  }

  /** Composes an id of the default snowid layout. */
  public static long compose(long ticks, long region, long host, long sequence) {
    return Presets.SNOWID.compose(ticks, region, host, sequence);
  }

  /** The smallest id of the default layout issued at or after {@code fromMs}. */
  public static long minId(long fromMs) {
    return Presets.SNOWID.minId(fromMs);
  }

  /** The largest id of the default layout issued at or before {@code toMs}. */
  public static long maxId(long toMs) {
    return Presets.SNOWID.maxIdAt(toMs);
  }

  /** The shard of an id among {@code shards} (docs/id-format.md section 10). */
  public static int shard(long id, long shards) {
    return (int) Shards.shardOf(id, shards);
  }
}
