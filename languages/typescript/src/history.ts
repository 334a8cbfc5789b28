/** Layout histories and cut-overs (docs/id-format.md section 7): the era of an id from its value. */
import { invalid } from "./errors.js";
import { formatInstant, Layout, type Parts } from "./layout.js";

export interface Era {
  readonly layout: Layout;
  /** First instant the era's layout issues for, Unix ms. */
  readonly cutoverMs: number;
}

export class LayoutHistory {
  readonly eras: readonly Era[];
  /** The smallest id of each era: its layout's smallest id at its cut-over. */
  readonly firstIds: readonly bigint[];

  constructor(eras: readonly Era[]) {
    if (eras.length === 0) throw invalid("a layout history needs at least one era");
    const firstIds: bigint[] = [];
    eras.forEach((era, i) => {
      const l = era.layout;
      if (era.cutoverMs < l.epochMs || era.cutoverMs >= l.endOfLifeMs) {
        throw invalid(
          `era ${i}: the cut-over ${formatInstant(era.cutoverMs)} is outside the lifetime of ${l.name}`,
        );
      }
      if (i > 0 && era.cutoverMs <= eras[i - 1]!.cutoverMs) {
        throw invalid(`era ${i}: cut-overs must strictly increase`);
      }
      firstIds.push(l.minId(era.cutoverMs));
    });
    for (let i = 1; i < eras.length; i++) {
      const prev = eras[i - 1]!.layout;
      // The largest id of the previous era: in the tick holding the instant just before this
      // cut-over, or its layout's largest id when that instant is past its end of life. The
      // cut-over is a whole millisecond, so "1 ns before" is within the millisecond before.
      const before = eras[i]!.cutoverMs - 1;
      const last = before >= prev.endOfLifeMs ? prev.maxId : prev.maxIdAt(before);
      if (firstIds[i]! <= last) {
        throw invalid(
          `era ${i}: its ids would overlap those of era ${i - 1} (first ${firstIds[i]} <= ${last})`,
        );
      }
    }
    this.eras = Object.freeze([...eras]);
    this.firstIds = Object.freeze(firstIds);
  }

  /** The index of the era an id belongs to: the last whose first id is at most the id. */
  eraOf(id: bigint): number {
    let era = 0;
    for (let i = 1; i < this.firstIds.length; i++) if (this.firstIds[i]! <= id) era = i;
    return era;
  }

  decode(id: bigint): Parts & { readonly era: number } {
    const era = this.eraOf(id);
    return { ...this.eras[era]!.layout.decode(id), era };
  }
}
