"""Layout histories: eras with cut-overs, decoded by value (docs/id-format.md §7)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from ._time import format_ms
from .errors import InvalidArgument
from .layout import Decoded, Layout


class LayoutHistory:
    """A list of ``(cutover_ms, layout)`` eras whose ids cannot overlap."""

    def __init__(self, eras: Sequence[tuple[int, Layout]]) -> None:
        if not eras:
            raise InvalidArgument("a layout history needs at least one era")
        firsts: list[int] = []
        for i, (cut, layout) in enumerate(eras):
            if cut < layout.epoch_ms or cut >= layout.end_of_life_ms:
                raise InvalidArgument(
                    f"era {i}: the cut-over {format_ms(cut)} is outside the lifetime of "
                    f"layout {layout.name}"
                )
            if i > 0 and cut <= eras[i - 1][0]:
                raise InvalidArgument(f"era {i}: cut-overs must strictly increase")
            firsts.append(layout.ticks_at_ms(cut) << layout.shift_of("time"))
        for i in range(1, len(eras)):
            prev_cut_next = eras[i][0]
            prev = eras[i - 1][1]
            if firsts[i] <= _last_id(prev, prev_cut_next):
                raise InvalidArgument(
                    f"era {i}: its ids (from {firsts[i]}) overlap those of era {i - 1}"
                )
        self.eras: tuple[tuple[int, Layout], ...] = tuple(eras)
        self.first_ids: tuple[int, ...] = tuple(firsts)

    def era_of(self, id: int) -> int:
        """The last era whose first id is at most ``id`` (era 0 below all)."""
        return max(0, bisect.bisect_right(self.first_ids, id) - 1)

    def decode(self, id: int) -> Decoded:
        return self.eras[self.era_of(id)][1].decode(id)

    def layout_at(self, unix_ms: int) -> Layout:
        """The layout in force at an instant (the first era's before its cut-over)."""
        cuts = [c for c, _ in self.eras]
        return self.eras[max(0, bisect.bisect_right(cuts, unix_ms) - 1)][1]


def _last_id(layout: Layout, next_cutover_ms: int) -> int:
    """The largest id ``layout`` can issue before ``next_cutover_ms``."""
    # The tick containing next_cutover - 1 ns is the tick of next_cutover_ms - 1
    # whenever that ms lies in the same tick; both are computed in ns to be exact.
    ticks = layout.ticks_at_ns(next_cutover_ms * 1_000_000 - 1)
    if ticks > layout.max_ticks:
        return layout.max_id
    shift = layout.shift_of("time")
    return (ticks << shift) | ((1 << shift) - 1)
