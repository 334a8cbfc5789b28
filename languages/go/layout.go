package snowid

import (
	"fmt"
	"math/bits"
	"time"
)

// MaxUnixMs is the last Unix millisecond that signed 64-bit nanoseconds hold.
const MaxUnixMs = 9_223_372_036_854

const msPerYear = 365.2425 * 86_400_000

// Role says what a field of a layout carries.
type Role string

const (
	RoleTime     Role = "time"
	RoleRegion   Role = "region"
	RoleHost     Role = "host"
	RoleSequence Role = "sequence"
	RoleOther    Role = "other"
)

// FieldSpec is a field as given to NewLayout, most significant first.
type FieldSpec struct {
	Name  string
	Role  Role
	Width int
}

// Field is a placed field: Shift is the position of its lowest bit.
type Field struct {
	Name  string
	Role  Role
	Width int
	Shift int
}

// Mask is the largest value of the field.
func (f Field) Mask() uint64 { return 1<<f.Width - 1 }

// Layout is a validated bit layout (docs/id-format.md). Immutable.
type Layout struct {
	name       string
	epochMs    int64
	unitMs     int64
	decodeOnly bool
	fields     []Field
	totalWidth int
	byRole     map[Role]Field
}

// NewLayout validates a layout (docs/id-format.md section 5); INVALID_ARGUMENT
// names the rule broken. An empty name is "custom".
func NewLayout(name string, epochMs, unitMs int64, decodeOnly bool, specs ...FieldSpec) (*Layout, error) {
	if err := validate(specs, epochMs, unitMs, decodeOnly); err != nil {
		return nil, err
	}
	if name == "" {
		name = "custom"
	}
	l := &Layout{name: name, epochMs: epochMs, unitMs: unitMs, decodeOnly: decodeOnly,
		byRole: map[Role]Field{}}
	for _, s := range specs {
		l.totalWidth += s.Width
	}
	used := 0
	for _, s := range specs {
		used += s.Width
		f := Field{s.Name, s.Role, s.Width, l.totalWidth - used}
		l.fields = append(l.fields, f)
		if s.Role != RoleOther {
			l.byRole[s.Role] = f
		}
	}
	return l, nil
}

func validName(s string) bool {
	if len(s) < 1 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func validate(specs []FieldSpec, epochMs, unitMs int64, decodeOnly bool) error {
	inv := func(f string, a ...any) error { return newError(CodeInvalidArgument, f, a...) }
	if unitMs != 1 && unitMs != 10 {
		return inv("time unit must be 1 or 10 ms, not %d", unitMs)
	}
	if epochMs < 0 || epochMs >= MaxUnixMs {
		return inv("epoch must be between 1970-01-01 and 2262-04-11, not %d", epochMs)
	}
	if len(specs) < 1 || len(specs) > 8 {
		return inv("a layout has 1 to 8 fields, not %d", len(specs))
	}
	names := map[string]bool{}
	roles := map[Role]bool{}
	total := 0
	for _, s := range specs {
		if !validName(s.Name) {
			return inv("field name %q must be 1-32 of [a-z0-9_]", s.Name)
		}
		if names[s.Name] {
			return inv("field name %q repeats", s.Name)
		}
		names[s.Name] = true
		if s.Width < 1 || s.Width > 64 {
			return inv("field %q must be 1 to 64 bits wide, not %d", s.Name, s.Width)
		}
		switch s.Role {
		case RoleTime, RoleRegion, RoleHost, RoleSequence:
			if roles[s.Role] {
				return inv("more than one %s field", s.Role)
			}
			roles[s.Role] = true
		case RoleOther:
		default:
			return inv("field %q has an unknown role %q", s.Name, s.Role)
		}
		total += s.Width
	}
	if total > 64 {
		return inv("fields add up to %d bits, over 64", total)
	}
	if specs[0].Role != RoleTime {
		return inv("the first (most significant) field must have the role time")
	}
	tw := specs[0].Width
	if tw > 61 {
		return inv("the time field may be at most 61 bits wide")
	}
	// epoch + 2^tw * unit <= MaxUnixMs, without overflow (tw <= 61, unit <= 10).
	hi, lo := bits.Mul64(uint64(1)<<tw, uint64(unitMs))
	if hi != 0 || lo > uint64(MaxUnixMs-epochMs) {
		return inv("a %d-bit time field of %d ms from this epoch ends after 2262-04-11", tw, unitMs)
	}
	if !decodeOnly {
		order := []Role{RoleTime, RoleRegion, RoleHost, RoleSequence}
		var allowed []Role
		for _, r := range order {
			if roles[r] {
				allowed = append(allowed, r)
			}
		}
		ok := roles[RoleSequence] && total == 63 && len(allowed) == len(specs)
		for i := 0; ok && i < len(specs); i++ {
			ok = specs[i].Role == allowed[i]
		}
		if !ok {
			return inv("a layout that generates ids has the fields time, [region], [host], " +
				"sequence in that order and 63 bits in all; mark others decode-only")
		}
	}
	return nil
}

func (l *Layout) Name() string     { return l.name }
func (l *Layout) EpochMs() int64   { return l.epochMs }
func (l *Layout) UnitMs() int64    { return l.unitMs }
func (l *Layout) DecodeOnly() bool { return l.decodeOnly }
func (l *Layout) CanGenerate() bool {
	return !l.decodeOnly
}
func (l *Layout) TotalWidth() int { return l.totalWidth }

// Fields are the placed fields, most significant first (a copy).
func (l *Layout) Fields() []Field { return append([]Field(nil), l.fields...) }

// Field is the field of a role (not RoleOther); false if the layout has none.
func (l *Layout) Field(r Role) (Field, bool) {
	f, ok := l.byRole[r]
	return f, ok
}

func (l *Layout) widthOf(r Role) int { return l.byRole[r].Width }
func (l *Layout) shiftOf(r Role) int { return l.byRole[r].Shift }

// MaxID is 2^TotalWidth - 1.
func (l *Layout) MaxID() uint64 {
	if l.totalWidth == 64 {
		return ^uint64(0)
	}
	return 1<<l.totalWidth - 1
}

// MaxTicks is the largest value of the time field.
func (l *Layout) MaxTicks() uint64 { return 1<<l.widthOf(RoleTime) - 1 }

// EndOfLifeMs is the first Unix ms whose tick does not fit.
func (l *Layout) EndOfLifeMs() int64 {
	return l.epochMs + int64(1)<<l.widthOf(RoleTime)*l.unitMs
}

func (l *Layout) Regions() int          { return 1 << l.widthOf(RoleRegion) }
func (l *Layout) WorkersPerRegion() int { return 1 << l.widthOf(RoleHost) }
func (l *Layout) SequenceCapacity() int { return 1 << l.widthOf(RoleSequence) }

func (l *Layout) String() string {
	return fmt.Sprintf("Layout(%s, epoch %s, %d ms)", l.name, FormatMs(l.epochMs), l.unitMs)
}

// TicksAtMs is floor((unixMs - epoch) / unit); may be negative or past MaxTicks.
func (l *Layout) TicksAtMs(unixMs int64) int64 { return floorDiv(unixMs-l.epochMs, l.unitMs) }

// TicksAtNs is the tick of a Unix time in nanoseconds, floored.
func (l *Layout) TicksAtNs(unixNs int64) int64 {
	return floorDiv(unixNs-l.epochMs*1_000_000, l.unitMs*1_000_000)
}

// TickStartMs is the Unix ms at which a tick starts.
func (l *Layout) TickStartMs(ticks int64) int64 { return l.epochMs + ticks*l.unitMs }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

func (l *Layout) ticksInRange(unixMs int64) (uint64, error) {
	t := l.TicksAtMs(unixMs)
	if t < 0 {
		return 0, newError(CodeOutOfRange, "%s is before the epoch of layout %s", FormatMs(unixMs), l.name)
	}
	if uint64(t) > l.MaxTicks() {
		return 0, newError(CodeOutOfRange, "%s is at or past the end of life of layout %s (%s)",
			FormatMs(unixMs), l.name, FormatMs(l.EndOfLifeMs()))
	}
	return uint64(t), nil
}

// Decoded is an id taken apart.
type Decoded struct {
	ID     uint64
	Ticks  uint64
	UnixMs int64
	// Values of every field, in the layout's order.
	Values   []uint64
	Region   uint64
	Host     uint64
	Sequence uint64
	Layout   *Layout
}

// Time is the start of the id's tick, in UTC.
func (d Decoded) Time() time.Time { return time.UnixMilli(d.UnixMs).UTC() }

// Worker is Region * WorkersPerRegion + Host.
func (d Decoded) Worker() uint64 {
	return d.Region*uint64(d.Layout.WorkersPerRegion()) + d.Host
}

// Value is the value of the field of that name; false if there is none.
func (d Decoded) Value(name string) (uint64, bool) {
	for i, f := range d.Layout.fields {
		if f.Name == name {
			return d.Values[i], true
		}
	}
	return 0, false
}

// Decode takes an id apart; OUT_OF_RANGE above MaxID.
func (l *Layout) Decode(id uint64) (Decoded, error) {
	if id > l.MaxID() {
		return Decoded{}, newError(CodeOutOfRange, "%d is not an id of layout %s (max %d)", id, l.name, l.MaxID())
	}
	d := Decoded{ID: id, Layout: l, Values: make([]uint64, len(l.fields))}
	for i, f := range l.fields {
		v := (id >> f.Shift) & f.Mask()
		d.Values[i] = v
		switch f.Role {
		case RoleTime:
			d.Ticks = v
		case RoleRegion:
			d.Region = v
		case RoleHost:
			d.Host = v
		case RoleSequence:
			d.Sequence = v
		}
	}
	d.UnixMs = l.TickStartMs(int64(d.Ticks))
	return d, nil
}

// Encode is the id of the given field values by name (a missing field is 0);
// a value that does not fit is OUT_OF_RANGE, never truncated.
func (l *Layout) Encode(values map[string]uint64) (uint64, error) {
	known := 0
	var id uint64
	for _, f := range l.fields {
		v, ok := values[f.Name]
		if ok {
			known++
		}
		if v > f.Mask() {
			return 0, newError(CodeOutOfRange, "%s %d does not fit %d bits", f.Name, v, f.Width)
		}
		id |= v << f.Shift
	}
	if known != len(values) {
		return 0, newError(CodeInvalidArgument, "layout %s has a field not named in the values", l.name)
	}
	return id, nil
}

// Compose is the id of a tick count, a worker and a sequence.
func (l *Layout) Compose(ticks, region, host, sequence uint64) (uint64, error) {
	var id uint64
	for _, p := range []struct {
		r Role
		v uint64
	}{{RoleTime, ticks}, {RoleRegion, region}, {RoleHost, host}, {RoleSequence, sequence}} {
		f, ok := l.byRole[p.r]
		if !ok {
			if p.v != 0 {
				return 0, newError(CodeOutOfRange, "layout %s has no %s field for %d", l.name, p.r, p.v)
			}
			continue
		}
		if p.v > f.Mask() {
			return 0, newError(CodeOutOfRange, "%s %d does not fit %d bits", f.Name, p.v, f.Width)
		}
		id |= p.v << f.Shift
	}
	return id, nil
}

// ComposeAt is Compose with the tick of a Unix time in ms.
func (l *Layout) ComposeAt(unixMs int64, region, host, sequence uint64) (uint64, error) {
	t, err := l.ticksInRange(unixMs)
	if err != nil {
		return 0, err
	}
	return l.Compose(t, region, host, sequence)
}

// MinIDAt is the smallest id of the tick containing unixMs.
func (l *Layout) MinIDAt(unixMs int64) (uint64, error) {
	t, err := l.ticksInRange(unixMs)
	return t << l.shiftOf(RoleTime), err
}

// MaxIDAt is the largest id of the tick containing unixMs.
func (l *Layout) MaxIDAt(unixMs int64) (uint64, error) {
	t, err := l.ticksInRange(unixMs)
	if err != nil {
		return 0, err
	}
	s := l.shiftOf(RoleTime)
	return t<<s | (1<<s - 1), nil
}

// Bounds is (MinIDAt(firstMs), MaxIDAt(lastMs)): every id issued in between.
func (l *Layout) Bounds(firstMs, lastMs int64) (uint64, uint64, error) {
	lo, err := l.MinIDAt(firstMs)
	if err != nil {
		return 0, 0, err
	}
	hi, err := l.MaxIDAt(lastMs)
	return lo, hi, err
}

// LayoutReport is the time-dependent check of a layout at one instant.
type LayoutReport struct {
	YearsRemaining float64
	Warnings       []string
}

// Check applies the time-dependent rules at nowMs: an epoch in the future is
// INVALID_ARGUMENT, the end of life reached OUT_OF_RANGE; fewer than ten years
// left is a warning.
func (l *Layout) Check(nowMs int64) (LayoutReport, error) {
	if l.epochMs > nowMs {
		return LayoutReport{}, newError(CodeInvalidArgument, "the epoch of layout %s (%s) is in the future",
			l.name, FormatMs(l.epochMs))
	}
	eol := l.EndOfLifeMs()
	if eol <= nowMs {
		return LayoutReport{}, newError(CodeOutOfRange, "layout %s reached its end of life at %s",
			l.name, FormatMs(eol))
	}
	r := LayoutReport{YearsRemaining: float64(eol-nowMs) / msPerYear}
	if r.YearsRemaining < 10 {
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"layout %s has fewer than 10 years left: its time field runs out on %s", l.name, FormatMs(eol)))
	}
	return r, nil
}

// CheckWorker is INVALID_ARGUMENT unless the worker fits the layout.
func (l *Layout) CheckWorker(region, host int) error {
	if region < 0 || region >= l.Regions() {
		return newError(CodeInvalidArgument, "region must be 0..%d (layout %s), not %d", l.Regions()-1, l.name, region)
	}
	if host < 0 || host >= l.WorkersPerRegion() {
		return newError(CodeInvalidArgument, "host must be 0..%d (layout %s), not %d",
			l.WorkersPerRegion()-1, l.name, host)
	}
	return nil
}

// FormatMs is the RFC 3339 text of a Unix time in ms: UTC, three fraction digits.
func FormatMs(unixMs int64) string {
	return time.UnixMilli(unixMs).UTC().Format("2006-01-02T15:04:05.000Z")
}
