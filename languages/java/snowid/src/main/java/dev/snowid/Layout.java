package dev.snowid;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A bit layout (docs/id-format.md sections 1-6 and 9): validation, compose and decode, time bounds.
 * Ids are unsigned 64-bit values held in a {@code long}; tick counts and Unix milliseconds are
 * signed {@code long}s. Immutable and thread-safe.
 */
public final class Layout {
  /** The last millisecond that signed 64-bit nanoseconds since 1970 can hold. */
  public static final long MAX_UNIX_MS = 9_223_372_036_854L;

  private static final double MS_PER_YEAR = 365.2425 * 86_400_000;
  private static final Pattern NAME = Pattern.compile("[a-z0-9_]{1,32}");
  private static final Pattern GENERATION_SHAPE =
      Pattern.compile("TIME(,REGION)?(,HOST)?,SEQUENCE");
  private static final DateTimeFormatter RFC3339 =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT)
          .withZone(ZoneOffset.UTC);

  private final String name;
  private final long epochMs;
  private final int unitMs;
  private final boolean decodeOnly;
  private final List<Field> fields;
  private final int totalWidth;
  private final long maxId;
  private final long maxTicks;
  private final long endOfLifeMs;
  private final int timeShift;
  private final Map<Role, Field> byRole;
  private final boolean hasOther;

  /**
   * Validates a layout by the rules of docs/id-format.md section 5, in their order; any broken rule
   * is INVALID_ARGUMENT. Field shifts in {@code specs} are ignored.
   */
  public Layout(String name, long epochMs, int unitMs, boolean decodeOnly, List<Field> specs) {
    if (unitMs != 1 && unitMs != 10) {
      throw SnowidException.invalid("unit must be 1 or 10 ms, not " + unitMs);
    }
    if (epochMs < 0 || epochMs >= MAX_UNIX_MS) {
      throw SnowidException.invalid(
          "epoch must be from 1970 to before 2262-04-11, not " + epochMs + " ms");
    }
    if (specs.size() < 1 || specs.size() > 8) {
      throw SnowidException.invalid("a layout has 1 to 8 fields, not " + specs.size());
    }
    Set<String> names = new HashSet<>();
    Set<Role> roles = EnumSet.noneOf(Role.class);
    int total = 0;
    for (Field f : specs) {
      if (f.name() == null || !NAME.matcher(f.name()).matches()) {
        throw SnowidException.invalid(
            "field name \"" + f.name() + "\" must be 1 to 32 characters of a-z, 0-9 and _");
      }
      if (!names.add(f.name())) {
        throw SnowidException.invalid("field name \"" + f.name() + "\" is used twice");
      }
      if (f.width() < 1 || f.width() > 64) {
        throw SnowidException.invalid(
            "field " + f.name() + " must be 1 to 64 bits wide, not " + f.width());
      }
      if (f.role() == null) {
        throw SnowidException.invalid("field " + f.name() + " has no role");
      }
      if (f.role() != Role.OTHER && !roles.add(f.role())) {
        throw SnowidException.invalid("more than one field has the role " + f.role().wireName());
      }
      total += f.width();
    }
    if (total > 64) {
      throw SnowidException.invalid("the fields add up to " + total + " bits, more than 64");
    }
    Field first = specs.get(0);
    if (first.role() != Role.TIME) {
      throw SnowidException.invalid("the most significant field must have the role time");
    }
    // width <= 61 keeps 2^width * 10 within a long; the sum is then exact.
    if (first.width() > 61 || epochMs + (1L << first.width()) * unitMs > MAX_UNIX_MS) {
      throw SnowidException.invalid(
          "the time field of "
              + first.width()
              + " bits ends after 2262-04-11 (the end of 64-bit nanosecond time)");
    }
    if (!decodeOnly) {
      StringBuilder order = new StringBuilder();
      for (Field f : specs) {
        order.append(order.length() == 0 ? "" : ",").append(f.role().name());
      }
      if (!GENERATION_SHAPE.matcher(order).matches() || total != 63) {
        throw SnowidException.invalid(
            "a layout to generate with has the fields time, [region], [host], sequence in that"
                + " order and 63 bits in all");
      }
    }
    for (Field f : specs) {
      // A limit of this library, not of the format: capacities are plain longs here.
      if (f.role() != Role.OTHER && f.role() != Role.TIME && f.width() > 62) {
        throw SnowidException.invalid(
            "field "
                + f.name()
                + ": a "
                + f.role().wireName()
                + " field wider than 62 bits is not"
                + " supported");
      }
    }
    int shift = total;
    List<Field> made = new ArrayList<>();
    Map<Role, Field> index = new EnumMap<>(Role.class);
    boolean other = false;
    for (Field f : specs) {
      shift -= f.width();
      Field g = new Field(f.name(), f.role(), f.width(), shift);
      made.add(g);
      if (g.role() == Role.OTHER) {
        other = true;
      } else {
        index.put(g.role(), g);
      }
    }
    this.name = name == null || name.isEmpty() ? "custom" : name;
    this.epochMs = epochMs;
    this.unitMs = unitMs;
    this.decodeOnly = decodeOnly;
    this.fields = Collections.unmodifiableList(made);
    this.totalWidth = total;
    this.maxId = total == 64 ? -1L : (1L << total) - 1;
    this.maxTicks = (1L << first.width()) - 1;
    this.endOfLifeMs = epochMs + (1L << first.width()) * unitMs;
    this.timeShift = made.get(0).shift();
    this.byRole = index;
    this.hasOther = other;
  }

  /** RFC 3339 in UTC with three fraction digits, as the vectors and the tools write instants. */
  public static String formatInstant(long unixMs) {
    return RFC3339.format(Instant.ofEpochMilli(unixMs));
  }

  public String name() {
    return name;
  }

  public long epochMs() {
    return epochMs;
  }

  public int unitMs() {
    return unitMs;
  }

  public boolean decodeOnly() {
    return decodeOnly;
  }

  public boolean canGenerate() {
    return !decodeOnly;
  }

  public List<Field> fields() {
    return fields;
  }

  public int totalWidth() {
    return totalWidth;
  }

  /** The largest id, unsigned: 2^totalWidth - 1. */
  public long maxId() {
    return maxId;
  }

  public long maxTicks() {
    return maxTicks;
  }

  public long endOfLifeMs() {
    return endOfLifeMs;
  }

  int timeShift() {
    return timeShift;
  }

  /** The field of that role, or null. */
  public Field field(Role role) {
    return byRole.get(role);
  }

  public int widthOf(Role role) {
    Field f = byRole.get(role);
    return f == null ? 0 : f.width();
  }

  int shiftOf(Role role) {
    Field f = byRole.get(role);
    return f == null ? 0 : f.shift();
  }

  public long regions() {
    return 1L << widthOf(Role.REGION);
  }

  public long workersPerRegion() {
    return 1L << widthOf(Role.HOST);
  }

  public long sequenceCapacity() {
    return 1L << widthOf(Role.SEQUENCE);
  }

  /** The tick containing {@code unixMs}: a floor division, negative before the epoch. */
  public long ticksAt(long unixMs) {
    return Math.floorDiv(unixMs - epochMs, (long) unitMs);
  }

  public long tickStartMs(long ticks) {
    return epochMs + ticks * unitMs;
  }

  /** Decodes an id; OUT_OF_RANGE when it has bits above the layout's width. */
  public Parts decode(long id) {
    if (Long.compareUnsigned(id, maxId) > 0) {
      throw SnowidException.outOfRange(
          "id "
              + Long.toUnsignedString(id)
              + " does not fit the "
              + totalWidth
              + " bits of layout "
              + name);
    }
    Map<String, Long> values = new LinkedHashMap<>();
    for (Field f : fields) {
      values.put(f.name(), (id >>> f.shift()) & f.mask());
    }
    long ticks = role(values, Role.TIME);
    return new Parts(
        id,
        ticks,
        tickStartMs(ticks),
        role(values, Role.REGION),
        role(values, Role.HOST),
        role(values, Role.SEQUENCE),
        Collections.unmodifiableMap(values));
  }

  private long role(Map<String, Long> values, Role r) {
    Field f = byRole.get(r);
    return f == null ? 0 : values.get(f.name());
  }

  /**
   * Composes an id from every field's value by name (unsigned); a missing value is
   * INVALID_ARGUMENT, a value that does not fit its field OUT_OF_RANGE (never truncated).
   */
  public long encode(Map<String, Long> values) {
    long id = 0;
    for (Field f : fields) {
      Long v = values.get(f.name());
      if (v == null) {
        throw SnowidException.invalid("field " + f.name() + " has no value");
      }
      if (Long.compareUnsigned(v, f.mask()) > 0) {
        throw SnowidException.outOfRange(
            "field "
                + f.name()
                + ": "
                + Long.toUnsignedString(v)
                + " does not fit "
                + f.width()
                + " bits");
      }
      id |= v << f.shift();
    }
    return id;
  }

  /** Composes from the roles; a layout with {@code other} fields needs {@link #encode}. */
  public long compose(long ticks, long region, long host, long sequence) {
    if (hasOther) {
      throw SnowidException.invalid("layout " + name + " has fields without a role: use encode()");
    }
    if (!byRole.containsKey(Role.REGION) && region != 0) {
      throw SnowidException.outOfRange("layout " + name + " has no region field: region must be 0");
    }
    if (!byRole.containsKey(Role.HOST) && host != 0) {
      throw SnowidException.outOfRange("layout " + name + " has no host field: host must be 0");
    }
    Map<String, Long> values = new LinkedHashMap<>();
    for (Field f : fields) {
      long v;
      switch (f.role()) {
        case TIME:
          if (ticks < 0) {
            throw SnowidException.outOfRange("ticks must not be negative, not " + ticks);
          }
          v = ticks;
          break;
        case REGION:
          v = region;
          break;
        case HOST:
          v = host;
          break;
        default:
          v = sequence;
      }
      if (v < 0) {
        throw SnowidException.outOfRange("field " + f.name() + " must not be negative, not " + v);
      }
      values.put(f.name(), v);
    }
    return encode(values);
  }

  /** The smallest id of the tick containing {@code unixMs} (section 9). */
  public long minId(long unixMs) {
    long t = ticksAt(unixMs);
    if (t < 0 || t > maxTicks) {
      throw SnowidException.outOfRange(
          formatInstant(unixMs) + " is outside the lifetime of layout " + name);
    }
    return t << timeShift;
  }

  /** The largest id of the tick containing {@code unixMs}. */
  public long maxIdAt(long unixMs) {
    return minId(unixMs) | (timeShift == 0 ? 0 : (1L << timeShift) - 1);
  }

  /** The result of {@link #check}: usable, maybe with a warning of the end of life. */
  public record Check(String outcome, double yearsRemaining, String warning) {}

  /**
   * The checks against the current time of section 5: an epoch in the future is INVALID_ARGUMENT, a
   * reached end of life OUT_OF_RANGE; fewer than 10 years left is a warning.
   */
  public Check check(long nowMs) {
    if (epochMs > nowMs) {
      throw SnowidException.invalid(
          "the epoch of layout " + name + " (" + formatInstant(epochMs) + ") is in the future");
    }
    if (nowMs >= endOfLifeMs) {
      throw SnowidException.outOfRange(
          "layout " + name + " reached its end of life at " + formatInstant(endOfLifeMs));
    }
    double years = (endOfLifeMs - nowMs) / MS_PER_YEAR;
    if (years < 10) {
      return new Check(
          "end_of_life_warning",
          years,
          String.format(
              Locale.ROOT,
              "layout %s ends at %s, in %.2f years",
              name,
              formatInstant(endOfLifeMs),
              years));
    }
    return new Check("ok", years, null);
  }

  /** INVALID_ARGUMENT unless the worker fits this layout's region and host fields. */
  public void checkWorker(long region, long host) {
    if (region < 0 || region >= regions()) {
      throw SnowidException.invalid(
          "region must be 0.." + (regions() - 1) + " (layout " + name + "), not " + region);
    }
    if (host < 0 || host >= workersPerRegion()) {
      throw SnowidException.invalid(
          "host must be 0.." + (workersPerRegion() - 1) + " (layout " + name + "), not " + host);
    }
  }

  @Override
  public String toString() {
    return "Layout[" + name + "]";
  }
}
