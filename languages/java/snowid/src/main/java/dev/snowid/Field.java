package dev.snowid;

/**
 * One field of a layout: its name, role, width in bits and the position of its lowest bit.
 *
 * @param shift 0 in a spec; set by the layout
 */
public record Field(String name, Role role, int width, int shift) {
  /** A field to give to {@link Layout#Layout}. */
  public static Field of(String name, Role role, int width) {
    return new Field(name, role, width, 0);
  }

  /** All ones over the field's width. */
  long mask() {
    return width == 64 ? -1L : (1L << width) - 1;
  }
}
