package dev.snowid;

import java.util.List;
import java.util.Map;

/** The built-in layouts of docs/id-format.md section 6. */
public final class Presets {
  private Presets() {}

  /** The default layout: 41 bits of ms since 2026-01-01, 2 of region, 8 of host, 12 of sequence. */
  public static final Layout SNOWID =
      new Layout(
          "snowid",
          1_767_225_600_000L,
          1,
          false,
          List.of(
              Field.of("time", Role.TIME, 41),
              Field.of("region", Role.REGION, 2),
              Field.of("host", Role.HOST, 8),
              Field.of("sequence", Role.SEQUENCE, 12)));

  public static final Layout TWITTER =
      new Layout(
          "twitter",
          1_288_834_974_657L,
          1,
          true,
          List.of(
              Field.of("time", Role.TIME, 41),
              Field.of("datacenter", Role.REGION, 5),
              Field.of("worker", Role.HOST, 5),
              Field.of("sequence", Role.SEQUENCE, 12)));

  public static final Layout DISCORD =
      new Layout(
          "discord",
          1_420_070_400_000L,
          1,
          true,
          List.of(
              Field.of("timestamp", Role.TIME, 42),
              Field.of("worker", Role.OTHER, 5),
              Field.of("process", Role.OTHER, 5),
              Field.of("increment", Role.SEQUENCE, 12)));

  public static final Layout INSTAGRAM =
      new Layout(
          "instagram",
          1_314_220_021_721L,
          1,
          true,
          List.of(
              Field.of("time", Role.TIME, 41),
              Field.of("shard", Role.OTHER, 13),
              Field.of("sequence", Role.SEQUENCE, 10)));

  public static final Layout SONYFLAKE =
      new Layout(
          "sonyflake",
          1_409_529_600_000L,
          10,
          true,
          List.of(
              Field.of("time", Role.TIME, 39),
              Field.of("sequence", Role.SEQUENCE, 8),
              Field.of("machine", Role.OTHER, 16)));

  private static final Map<String, Layout> BY_NAME =
      Map.of(
          "snowid", SNOWID,
          "twitter", TWITTER,
          "discord", DISCORD,
          "instagram", INSTAGRAM,
          "sonyflake", SONYFLAKE);

  /** The names of the presets. */
  public static List<String> names() {
    return List.of("snowid", "twitter", "discord", "instagram", "sonyflake");
  }

  /** The preset of that name; NOT_FOUND otherwise. */
  public static Layout byName(String name) {
    Layout l = BY_NAME.get(name);
    if (l == null) {
      throw new SnowidException(Code.NOT_FOUND, "no preset layout named \"" + name + "\"");
    }
    return l;
  }
}
