package dev.snowid;

/** Shards of ids (docs/id-format.md section 10): part of the format, never changed. */
public final class Shards {
  private Shards() {}

  /** The fixed 64-bit mixing function. */
  public static long mix64(long id) {
    long x = id;
    x ^= x >>> 30;
    x *= 0xbf58476d1ce4e5b9L;
    x ^= x >>> 27;
    x *= 0x94d049bb133111ebL;
    x ^= x >>> 31;
    return x;
  }

  /**
   * The shard of {@code id} among {@code shards} (1 to 2^32 - 1): the high half of the mix,
   * multiplied by the shard count, shifted down by 32.
   */
  public static long shardOf(long id, long shards) {
    if (shards < 1 || shards > 0xffffffffL) {
      throw SnowidException.invalid("the number of shards must be 1 to 2^32 - 1, not " + shards);
    }
    long high = mix64(id) >>> 32;
    // high < 2^32 and shards < 2^32: the product fits 64 unsigned bits.
    return (high * shards) >>> 32;
  }
}
