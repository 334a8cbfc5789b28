package dev.snowid;

import java.time.Instant;
import java.util.Map;

/**
 * What an id says, by the layout that decoded it. Field values are unsigned 64-bit; {@code region},
 * {@code host} and {@code sequence} are 0 when the layout has no field of that role.
 *
 * @param ticks the time field: ticks since the layout's epoch
 * @param unixMs the start of the id's tick, Unix milliseconds
 * @param fields every field's value by name, in layout order
 */
public record Parts(
    long id,
    long ticks,
    long unixMs,
    long region,
    long host,
    long sequence,
    Map<String, Long> fields) {
  public Instant time() {
    return Instant.ofEpochMilli(unixMs);
  }
}
