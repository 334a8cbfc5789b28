package dev.snowid;

import java.util.ArrayList;
import java.util.List;

/** Layout histories and cut-overs (docs/id-format.md section 7): the era of an id by its value. */
public final class LayoutHistory {
  /** One era: a layout and the first instant it issues for, Unix ms. */
  public record Era(Layout layout, long cutoverMs) {}

  /** A decoded id and the index of its era. */
  public record EraParts(int era, Parts parts) {}

  private final List<Era> eras;
  private final long[] firstIds;

  /** Validates the eras (section 7); any broken rule is INVALID_ARGUMENT. */
  public LayoutHistory(List<Era> eras) {
    if (eras.isEmpty()) {
      throw SnowidException.invalid("a layout history needs at least one era");
    }
    firstIds = new long[eras.size()];
    for (int i = 0; i < eras.size(); i++) {
      Era e = eras.get(i);
      Layout l = e.layout();
      if (e.cutoverMs() < l.epochMs() || e.cutoverMs() >= l.endOfLifeMs()) {
        throw SnowidException.invalid(
            "era "
                + i
                + ": the cut-over "
                + Layout.formatInstant(e.cutoverMs())
                + " is outside the lifetime of "
                + l.name());
      }
      if (i > 0 && e.cutoverMs() <= eras.get(i - 1).cutoverMs()) {
        throw SnowidException.invalid("era " + i + ": cut-overs must strictly increase");
      }
      firstIds[i] = l.minId(e.cutoverMs());
    }
    for (int i = 1; i < eras.size(); i++) {
      Layout prev = eras.get(i - 1).layout();
      // The previous era's largest id: in the tick of the millisecond before this cut-over, or
      // its layout's largest id when that instant is past its end of life.
      long before = eras.get(i).cutoverMs() - 1;
      long last = before >= prev.endOfLifeMs() ? prev.maxId() : prev.maxIdAt(before);
      if (Long.compareUnsigned(firstIds[i], last) <= 0) {
        throw SnowidException.invalid(
            "era "
                + i
                + ": its ids would overlap those of era "
                + (i - 1)
                + " (first "
                + Ids.format(firstIds[i])
                + " <= "
                + Ids.format(last)
                + ")");
      }
    }
    this.eras = List.copyOf(new ArrayList<>(eras));
  }

  public List<Era> eras() {
    return eras;
  }

  /** The smallest id of each era: its layout's smallest id at its cut-over. */
  public long[] firstIds() {
    return firstIds.clone();
  }

  /** The index of the era an id belongs to: the last whose first id is at most the id. */
  public int eraOf(long id) {
    int era = 0;
    for (int i = 1; i < firstIds.length; i++) {
      if (Long.compareUnsigned(firstIds[i], id) <= 0) {
        era = i;
      }
    }
    return era;
  }

  public EraParts decode(long id) {
    int era = eraOf(id);
    return new EraParts(era, eras.get(era).layout().decode(id));
  }
}
