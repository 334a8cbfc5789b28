package dev.snowid;

import java.util.Locale;

/** What a field of a layout means (docs/id-format.md section 2). */
public enum Role {
  TIME,
  REGION,
  HOST,
  SEQUENCE,
  OTHER;

  /** The role's name in the format documents: {@code time}, {@code region}, ... */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The role of that name; INVALID_ARGUMENT for anything else. */
  public static Role of(String name) {
    for (Role r : values()) {
      if (r.wireName().equals(name)) {
        return r;
      }
    }
    throw SnowidException.invalid("unknown field role \"" + name + "\"");
  }
}
