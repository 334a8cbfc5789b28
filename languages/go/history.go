package snowid

import "sort"

// Era is one layout of a history, in force from its cut-over (Unix ms).
type Era struct {
	CutoverMs int64
	Layout    *Layout
}

// LayoutHistory is the eras a deployment has used, in order, each with its cut-over
// (docs/id-format.md section 7). The eras' ids never overlap: each era's smallest id is above
// every id the era before could issue up to the cut-over, so an id decodes by its value alone,
// without knowing when it was made. Immutable and safe to share.
type LayoutHistory struct {
	eras     []Era
	firstIDs []uint64
}

// NewLayoutHistory checks the eras: at least one; each cut-over within its layout's lifetime
// (from its epoch to before its end of life); cut-overs strictly increasing; and no era's ids
// overlapping the era before. INVALID_ARGUMENT names the rule broken.
func NewLayoutHistory(eras ...Era) (*LayoutHistory, error) {
	if len(eras) == 0 {
		return nil, newError(CodeInvalidArgument, "a layout history needs at least one era")
	}
	firsts := make([]uint64, len(eras))
	for i, e := range eras {
		if e.Layout == nil {
			return nil, newError(CodeInvalidArgument, "era %d has no layout", i)
		}
		if e.CutoverMs < e.Layout.EpochMs() || e.CutoverMs >= e.Layout.EndOfLifeMs() {
			return nil, newError(CodeInvalidArgument,
				"era %d: the cut-over %s is outside the lifetime of layout %s", i,
				FormatMs(e.CutoverMs), e.Layout.Name())
		}
		if i > 0 && e.CutoverMs <= eras[i-1].CutoverMs {
			return nil, newError(CodeInvalidArgument, "era %d: cut-overs must strictly increase", i)
		}
		firsts[i] = uint64(e.Layout.TicksAtMs(e.CutoverMs)) << e.Layout.shiftOf(RoleTime)
	}
	for i := 1; i < len(eras); i++ {
		if firsts[i] <= lastIDBefore(eras[i-1].Layout, eras[i].CutoverMs) {
			return nil, newError(CodeInvalidArgument,
				"era %d: its ids (from %d) overlap those of era %d", i, firsts[i], i-1)
		}
	}
	return &LayoutHistory{eras: append([]Era(nil), eras...), firstIDs: firsts}, nil
}

// lastIDBefore is the largest id l can issue at instants before cutMs, which is after l's
// epoch: the last id of the tick holding the instant just before cutMs, or l's largest id
// when that tick does not fit. The tick of (cutMs - 1 ns) is ceil(a / unit) - 1 for
// a = cutMs - epoch > 0, which is (a - 1) / unit in integers.
func lastIDBefore(l *Layout, cutMs int64) uint64 {
	ticks := uint64(cutMs-l.EpochMs()-1) / uint64(l.UnitMs())
	if ticks > l.MaxTicks() {
		return l.MaxID()
	}
	shift := l.shiftOf(RoleTime)
	return ticks<<shift | (uint64(1)<<shift - 1)
}

// Eras returns a copy of the eras.
func (h *LayoutHistory) Eras() []Era { return append([]Era(nil), h.eras...) }

// FirstIDs returns each era's smallest id (its layout's smallest id at its cut-over).
func (h *LayoutHistory) FirstIDs() []uint64 { return append([]uint64(nil), h.firstIDs...) }

// EraOf is the index of the era an id belongs to: the last whose first id is at most id, or
// era 0 for an id below them all.
func (h *LayoutHistory) EraOf(id uint64) int {
	n := sort.Search(len(h.firstIDs), func(i int) bool { return h.firstIDs[i] > id })
	if n == 0 {
		return 0
	}
	return n - 1
}

// Decode decodes an id with the layout of its era.
func (h *LayoutHistory) Decode(id uint64) (Decoded, error) {
	return h.eras[h.EraOf(id)].Layout.Decode(id)
}

// LayoutAt is the layout in force at an instant: the last era whose cut-over is at or before
// it, or the first era's before its cut-over.
func (h *LayoutHistory) LayoutAt(unixMs int64) *Layout {
	n := sort.Search(len(h.eras), func(i int) bool { return h.eras[i].CutoverMs > unixMs })
	if n == 0 {
		return h.eras[0].Layout
	}
	return h.eras[n-1].Layout
}
