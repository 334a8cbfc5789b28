package snowid

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// The generator's state is one word, changed by compare-and-swap only:
// bit 63 set means stopped (closed or unhealthy); below it, the last tick
// issued shifted left by the sequence width, or'ed with the last sequence
// used in it. A generating layout has 63 bits in all, so tick and sequence
// always fit under bit 63, and a stopped word can never be swapped for an
// issuing one by a call that read the word before the stop.
const stoppedBit = uint64(1) << 63

const (
	nsPerMs = 1_000_000
	noFence = int64(1) << 62
	// The padding that keeps the state word off its neighbours' cache lines:
	// two 64-byte lines, as adjacent-line prefetchers fetch lines in pairs.
	cacheLine = 128
	// The retry hint of LEASE_UNCERTAIN: only a renewal changes the guard.
	leaseRetry = 10 * time.Millisecond
)

// Option sets one setting of a generator.
type Option func(*settings)

type settings struct {
	layout           *Layout
	clock            Clock
	fence            FenceStore
	maxBackward      time.Duration
	maxBorrow        time.Duration
	maxWait          time.Duration
	randomStartBound int
	fenceWindow      time.Duration
	notBeforeMs      *int64
	waitUntilNs      *int64
	continueAfterMs  *int64
	lease            *LeaseGuard
	onUnhealthy      func(error)
}

// WithLayout: the layout (default Snowid); it must generate.
func WithLayout(l *Layout) Option { return func(s *settings) { s.layout = l } }

// WithClock: the clock (default SystemClock).
func WithClock(c Clock) Option { return func(s *settings) { s.clock = c } }

// WithFence: a fence store (none by default: a restart may then repeat ids of
// the last instants if the clock went back meanwhile).
func WithFence(f FenceStore) Option { return func(s *settings) { s.fence = f } }

// WithFenceFile: a fence in the file at path (FenceFile).
func WithFenceFile(path string) Option { return WithFence(FenceFile{Path: path}) }

// WithMaxBackward: the largest backward clock step waited out (default
// 100 ms, 0 to 1 h); a larger one makes the generator unhealthy.
func WithMaxBackward(d time.Duration) Option { return func(s *settings) { s.maxBackward = d } }

// WithMaxBorrow: how far ahead of the clock a used-up tick may move (default
// 0, off; at most 1 s).
func WithMaxBorrow(d time.Duration) Option { return func(s *settings) { s.maxBorrow = d } }

// WithMaxWait: the longest wait of Next and Reserve (default max_backward +
// 50 ms).
func WithMaxWait(d time.Duration) Option { return func(s *settings) { s.maxWait = d } }

// WithRandomStartBound: a new tick's first sequence is below it (default 16;
// 0: always 0; at most a quarter of the sequence capacity).
func WithRandomStartBound(n int) Option { return func(s *settings) { s.randomStartBound = n } }

// WithFenceWindow: how far ahead of the tick each stored fence is (default 1 s,
// 10 ms to 1 h).
func WithFenceWindow(d time.Duration) Option { return func(s *settings) { s.fenceWindow = d } }

// WithNotBefore: ids before this Unix ms are OUT_OF_RANGE.
func WithNotBefore(unixMs int64) Option { return func(s *settings) { s.notBeforeMs = &unixMs } }

// WithWaitUntil: no id carries a time before this Unix ns (a previous holder's mark).
func WithWaitUntil(unixNs int64) Option { return func(s *settings) { s.waitUntilNs = &unixNs } }

// WithContinueAfter: the last id time (Unix ms) of a generator this one
// replaces; every id is in a later tick.
func WithContinueAfter(unixMs int64) Option {
	return func(s *settings) { s.continueAfterMs = &unixMs }
}

// WithLeaseGuard: issue only as the guard permits.
func WithLeaseGuard(g *LeaseGuard) Option { return func(s *settings) { s.lease = g } }

// WithOnUnhealthy: called once, with the refusal, when the generator turns unhealthy.
func WithOnUnhealthy(f func(error)) Option { return func(s *settings) { s.onUnhealthy = f } }

// Generator issues ids for one worker (region, host) of a layout. Safe for
// concurrent use; the ids of one generator strictly increase.
type Generator struct {
	// The state word has a cache line to itself: every claim writes it, and
	// a write must not evict the settings the other cores read on every
	// claim (a shared line made 2 goroutines on 2 cores twice as slow).
	_     [cacheLine]byte
	state atomic.Uint64
	_     [cacheLine - 8]byte

	systemClock                               bool // clock is SystemClock: read time.Now directly
	layout                                    *Layout
	region, host                              int
	clock                                     Clock
	lease                                     *LeaseGuard
	seqBits                                   uint
	seqMask                                   uint64
	timeShift                                 uint
	workerBits                                uint64
	epochNs, unitNs, minNs, gateNs, maxWaitNs int64
	maxTicks                                  int64
	waitTicks                                 int64
	backwardTicks, borrowTicks, windowTicks   int64
	restartBackwardTicks, restartFloor        int64
	maxBackwardMs                             int64
	randomStartBound                          uint64
	onUnhealthy                               func(error)

	fence      FenceStore
	fenceMu    sync.Mutex // serialises fence writes
	fenceTicks atomic.Int64

	health atomic.Pointer[Error] // the refusal that made it unhealthy
	closed atomic.Bool
}

// NewGenerator creates a generator for worker (region, host).
func NewGenerator(region, host int, opts ...Option) (*Generator, error) {
	s := settings{layout: Snowid, clock: SystemClock, maxBackward: 100 * time.Millisecond,
		randomStartBound: 16, fenceWindow: time.Second, maxWait: -1}
	for _, o := range opts {
		o(&s)
	}
	l := s.layout
	if l == nil || !l.CanGenerate() {
		return nil, newError(CodeInvalidArgument, "this layout cannot be used to generate ids")
	}
	nowNs := s.clock.WallNs()
	if _, err := l.Check(floorDiv(nowNs, nsPerMs)); err != nil {
		return nil, err
	}
	if err := l.CheckWorker(region, host); err != nil {
		return nil, err
	}
	switch {
	case s.maxBackward < 0 || s.maxBackward > time.Hour:
		return nil, newError(CodeInvalidArgument, "max_backward must be between 0 and 1 hour")
	case s.maxBorrow < 0 || s.maxBorrow > time.Second:
		return nil, newError(CodeInvalidArgument, "max_borrow must be between 0 and 1 second")
	case s.randomStartBound < 0 || s.randomStartBound > l.SequenceCapacity()/4:
		return nil, newError(CodeInvalidArgument, "random_start_bound %d is over a quarter of the sequence capacity (%d)",
			s.randomStartBound, l.SequenceCapacity())
	case s.fenceWindow < 10*time.Millisecond || s.fenceWindow > time.Hour:
		return nil, newError(CodeInvalidArgument, "fence_window must be between 10 ms and 1 hour")
	}
	g := &Generator{layout: l, region: region, host: host, clock: s.clock, lease: s.lease,
		fence: s.fence, onUnhealthy: s.onUnhealthy}
	_, g.systemClock = s.clock.(systemClock)
	g.seqBits = uint(l.widthOf(RoleSequence))
	g.seqMask = uint64(l.SequenceCapacity() - 1)
	g.timeShift = uint(l.shiftOf(RoleTime))
	g.workerBits = uint64(region)<<l.shiftOf(RoleRegion) | uint64(host)<<l.shiftOf(RoleHost)
	g.epochNs = l.epochMs * nsPerMs
	g.unitNs = l.unitMs * nsPerMs
	g.minNs = g.epochNs
	if s.notBeforeMs != nil && *s.notBeforeMs*nsPerMs > g.minNs {
		g.minNs = *s.notBeforeMs * nsPerMs
	}
	g.maxTicks = int64(l.MaxTicks())
	g.gateNs = g.minNs
	g.waitTicks = never
	if s.waitUntilNs != nil && *s.waitUntilNs > g.minNs {
		g.waitTicks = ceilDiv(*s.waitUntilNs-g.epochNs, g.unitNs)
		if g.waitTicks > g.maxTicks {
			g.gateNs = 1<<63 - 1
		} else {
			g.gateNs = g.epochNs + g.waitTicks*g.unitNs
		}
	}
	g.backwardTicks = int64(s.maxBackward) / g.unitNs
	g.borrowTicks = int64(s.maxBorrow) / g.unitNs
	g.windowTicks = ceilDiv(int64(s.fenceWindow), g.unitNs)
	g.restartBackwardTicks = g.windowTicks + g.backwardTicks
	if s.maxWait > 0 {
		g.maxWaitNs = int64(s.maxWait)
	} else {
		g.maxWaitNs = int64(s.maxBackward) + 50*nsPerMs
	}
	g.maxBackwardMs = int64(s.maxBackward) / nsPerMs
	g.randomStartBound = uint64(s.randomStartBound)

	g.fenceTicks.Store(noFence)
	var initial int64
	if g.fence != nil {
		stored, ok, err := g.fence.Load()
		if err != nil {
			return nil, err
		}
		g.fenceTicks.Store(-1)
		if ok {
			fenceT := min(l.TicksAtMs(stored), g.maxTicks)
			nowT := l.TicksAtNs(nowNs)
			if fenceT-nowT > g.restartBackwardTicks+g.borrowTicks {
				return nil, newError(CodeFailedPrecondition,
					"the clock (%s) is %d ms behind the time fence stored before the last stop (%s), "+
						"more than the fence window plus max_backward; ids up to the fence may exist, "+
						"so none will be issued until the clock is fixed",
					FormatMs(floorDiv(nowNs, nsPerMs)), (fenceT-nowT)*l.unitMs, FormatMs(stored))
			}
			if fenceT >= 0 {
				initial = fenceT
				g.fenceTicks.Store(fenceT)
			}
		}
	}
	g.restartFloor = initial
	if s.continueAfterMs != nil && *s.continueAfterMs > l.epochMs {
		initial = max(initial, min(l.TicksAtMs(*s.continueAfterMs), g.maxTicks))
	}
	// Start used up at the initial tick: nothing is issued in it or before it.
	g.state.Store(uint64(initial)<<g.seqBits | g.seqMask)
	return g, nil
}

// Layout is the generator's layout.
func (g *Generator) Layout() *Layout { return g.layout }

// Worker is the generator's (region, host).
func (g *Generator) Worker() (region, host int) { return g.region, g.host }

// Healthy is false once a clock step back beyond max_backward stopped it.
func (g *Generator) Healthy() bool { return g.health.Load() == nil }

// Health is the refusal that made the generator unhealthy, or nil.
func (g *Generator) Health() error {
	if e := g.health.Load(); e != nil {
		return e
	}
	return nil
}

// LastTicks is the tick of the last id issued (or the initial tick).
func (g *Generator) LastTicks() int64 { return int64((g.state.Load() &^ stoppedBit) >> g.seqBits) }

// Next is the next id; it waits out a used-up tick or a small clock step,
// within max_wait. Errors are *Error; IsRetryable says whether a later call
// may work.
func (g *Generator) Next() (ID, error) {
	first, _, err, wait := g.attempt(1)
	if err != nil {
		first, _, err = g.waitFor(1, err, wait)
	}
	return ID(first), asError(err)
}

// TryNext is Next without waiting: a retryable error says how long to wait.
func (g *Generator) TryNext() (ID, error) {
	first, _, err, _ := g.attempt(1)
	return ID(first), asError(err)
}

// Reserve is up to n consecutive ids from one tick (at least one): the first
// and how many. It waits like Next.
func (g *Generator) Reserve(n int) (ID, int, error) {
	if n < 1 {
		return 0, 0, newError(CodeInvalidArgument, "a batch is at least 1 id, not %d", n)
	}
	first, count, err, wait := g.attempt(uint64(n))
	if err != nil {
		first, count, err = g.waitFor(uint64(n), err, wait)
	}
	return ID(first), int(count), asError(err)
}

// TryReserve is Reserve without waiting.
func (g *Generator) TryReserve(n int) (ID, int, error) {
	if n < 1 {
		return 0, 0, newError(CodeInvalidArgument, "a batch is at least 1 id, not %d", n)
	}
	first, count, err, _ := g.attempt(uint64(n))
	return ID(first), int(count), asError(err)
}

// NextN is exactly n increasing ids, from as many ticks as they need.
func (g *Generator) NextN(n int) ([]ID, error) {
	if n < 1 {
		return nil, newError(CodeInvalidArgument, "a batch is at least 1 id, not %d", n)
	}
	out := make([]ID, 0, n)
	for len(out) < n {
		first, count, err := g.Reserve(n - len(out))
		if err != nil {
			return out, err
		}
		for i := 0; i < count; i++ {
			out = append(out, first+ID(i))
		}
	}
	return out, nil
}

// Close stops issuing, for good, and records the exact last tick in the
// fence. Calling it again does nothing more.
func (g *Generator) Close() error {
	for {
		s := g.state.Load()
		if s&stoppedBit != 0 || g.state.CompareAndSwap(s, s|stoppedBit) {
			break
		}
	}
	g.closed.Store(true)
	if g.fence == nil {
		return nil
	}
	g.fenceMu.Lock()
	defer g.fenceMu.Unlock()
	last := g.LastTicks()
	if last >= g.fenceTicks.Load() {
		return nil
	}
	if err := g.fence.Store(g.layout.TickStartMs(last)); err != nil {
		return err
	}
	g.fenceTicks.Store(last)
	return nil
}

func (g *Generator) startSequence() uint64 {
	if g.randomStartBound == 0 {
		return 0
	}
	return rand.Uint64N(g.randomStartBound)
}

func (g *Generator) stoppedError() *Error {
	if h := g.health.Load(); h != nil {
		return newError(CodeUnhealthy, "an earlier refusal stands: %v", h)
	}
	return newError(CodeFailedPrecondition, "the generator is closed")
}

func (g *Generator) leaseRefusal() *Error {
	if g.lease.Lost() {
		return newError(CodeLeaseLost, "the worker-id lease is lost; this generator stops")
	}
	return &Error{Code: CodeLeaseUncertain, RetryAfter: leaseRetry,
		Message: "the worker-id lease does not permit this time (renewals late or past the mark)"}
}

func (g *Generator) movedBack(now, last int64) *Error {
	err := newError(CodeClockMovedBack, "clock moved back %d ms behind the last issued time, more than "+
		"the %d ms allowed; refusing to issue ids", (last-now)*g.unitNs/nsPerMs, g.maxBackwardMs)
	if g.health.CompareAndSwap(nil, err) {
		for {
			s := g.state.Load()
			if s&stoppedBit != 0 || g.state.CompareAndSwap(s, s|stoppedBit) {
				break
			}
		}
		if g.onUnhealthy != nil {
			g.onUnhealthy(err)
		}
	}
	return err
}

func retryErr(c Code, msg string, waitNs int64) *Error {
	return &Error{Code: c, Message: msg, RetryAfter: time.Duration(waitNs)}
}

// attempt claims up to n ids of one tick: the first id and the count, or a
// refusal and, for an answer that waiting changes, the wait that helps.
//
// The clock is read before the state word, so that the word is loaded and
// swapped with nothing slow in between (another core's swap in that window
// fails ours), and a failed swap retries with the same reading. A reading
// taken before the load may be older than the last tick another call issued,
// though, which is no clock step: it is used only to issue an id at or after
// the last tick. Every other answer (waits, refusals, a step back) is decided
// on a reading taken after the load, as the clock's order then guarantees
// that the reading is not before any tick issued from a later one.
func (g *Generator) attempt(n uint64) (uint64, uint64, *Error, int64) {
	nowNs := g.wallNs()
	for {
		old := g.state.Load()
		if old&stoppedBit != 0 {
			return 0, 0, g.stoppedError(), 0
		}
		last := int64(old >> g.seqBits)
		seq := old & g.seqMask
		// The fast path: past the gate, at or after the last tick, the tick not
		// used up. nowNs >= gateNs >= epochNs, so the division is unsigned.
		if nowNs >= g.gateNs {
			now := g.ticksSinceEpoch(nowNs)
			if now > last || (now == last && seq < g.seqMask) {
				t, first := now, seq+1
				if now > last {
					first = g.startSequence()
				}
				if id, count, err, ok := g.claim(old, n, t, first); ok {
					return id, count, err, 0
				}
				continue
			}
		}
		nowNs = g.wallNs()
		if nowNs < g.gateNs && !(nowNs >= g.minNs && last >= g.waitTicks) {
			err, wait := g.beforeGate(nowNs, last)
			return 0, 0, err, wait
		}
		now := floorDiv(nowNs-g.epochNs, g.unitNs)
		var t int64
		var first uint64
		if now > last {
			t, first = now, g.startSequence()
		} else {
			// Borrowing puts the last tick up to borrowTicks ahead of the clock
			// legitimately; only what lies beyond that is the clock's doing.
			clockBehind := last-now > g.borrowTicks
			if clockBehind {
				limit := g.backwardTicks
				if last <= g.restartFloor {
					limit = g.restartBackwardTicks
				}
				if last-now > limit+g.borrowTicks {
					return 0, 0, g.movedBack(now, last), 0
				}
			}
			switch {
			case seq < g.seqMask:
				t, first = last, seq+1
			case last+1-now <= g.borrowTicks:
				t, first = last+1, g.startSequence()
			default:
				wait := (last+1-g.borrowTicks)*g.unitNs + g.epochNs - nowNs
				if clockBehind {
					return 0, 0, retryErr(CodeClockBehind, "the clock is behind the last issued time", wait), wait
				}
				return 0, 0, retryErr(CodeSequenceExhausted, "this tick's sequence is used up", wait), wait
			}
		}
		if id, count, err, ok := g.claim(old, n, t, first); ok {
			return id, count, err, 0
		}
	}
}

// claim issues up to n ids from sequence first of tick t if the state word is
// still old: the first id and the count, or a refusal; ok is false when the
// word changed (or the fence moved) and the caller must look again.
func (g *Generator) claim(old, n uint64, t int64, first uint64) (uint64, uint64, *Error, bool) {
	if t > g.maxTicks {
		return 0, 0, newError(CodeOutOfRange, "layout %s has reached its end of life", g.layout.name), true
	}
	if g.lease != nil && !g.lease.Permits(g.clock.MonoNs(), t*g.unitNs+g.epochNs) {
		return 0, 0, g.leaseRefusal(), true
	}
	if t > g.fenceTicks.Load() {
		if err := g.extendFence(t); err != nil {
			return 0, 0, err, true
		}
		return 0, 0, nil, false
	}
	count := min(n, g.seqMask-first+1)
	if g.state.CompareAndSwap(old, uint64(t)<<g.seqBits|(first+count-1)) {
		return uint64(t)<<g.timeShift | g.workerBits | first, count, nil, true
	}
	return 0, 0, nil, false
}

func (g *Generator) wallNs() int64 {
	if g.systemClock {
		return time.Now().UnixNano()
	}
	return g.clock.WallNs()
}

// ticksSinceEpoch is floorDiv(nowNs-epochNs, unitNs) for nowNs >= epochNs,
// with a constant divisor for the common 1 ms tick.
func (g *Generator) ticksSinceEpoch(nowNs int64) int64 {
	d := uint64(nowNs - g.epochNs)
	if g.unitNs == nsPerMs {
		return int64(d / nsPerMs)
	}
	return int64(d / uint64(g.unitNs))
}

func (g *Generator) extendFence(t int64) *Error {
	g.fenceMu.Lock()
	defer g.fenceMu.Unlock()
	if g.state.Load()&stoppedBit != 0 || t <= g.fenceTicks.Load() {
		return nil
	}
	fenceT := min(t+g.windowTicks, g.maxTicks)
	if err := g.fence.Store(g.layout.TickStartMs(fenceT)); err != nil {
		return &Error{Code: CodeUnavailable, Message: "the time fence could not be stored: " + err.Error(),
			RetryAfter: time.Millisecond}
	}
	g.fenceTicks.Store(fenceT)
	return nil
}

func (g *Generator) beforeGate(nowNs, last int64) (*Error, int64) {
	if nowNs < g.minNs {
		now := g.layout.TicksAtNs(nowNs)
		if last > g.restartFloor && last-now > g.backwardTicks+g.borrowTicks {
			return g.movedBack(now, last), 0
		}
		return newError(CodeOutOfRange, "the clock (%s) is before the epoch or not_before",
			FormatMs(floorDiv(nowNs, nsPerMs))), 0
	}
	if g.lease != nil && g.lease.Lost() {
		return g.leaseRefusal(), 0
	}
	if g.waitTicks > g.maxTicks {
		return newError(CodeOutOfRange, "layout %s has reached its end of life", g.layout.name), 0
	}
	wait := g.gateNs - nowNs
	return retryErr(CodeClockBehind, "waiting past the previous holder's mark", wait), wait
}

// waitFor retries while waiting helps, for at most max_wait of monotonic
// time. LEASE_UNCERTAIN is not waited for: only a renewal changes it.
func (g *Generator) waitFor(n uint64, err *Error, wait int64) (uint64, uint64, *Error) {
	start := g.clock.MonoNs()
	for {
		if err.Code != CodeSequenceExhausted && err.Code != CodeClockBehind {
			return 0, 0, err
		}
		left := g.maxWaitNs - (g.clock.MonoNs() - start)
		if left < 0 || wait > left {
			return 0, 0, err
		}
		g.clock.Sleep(time.Duration(wait))
		var first, count uint64
		first, count, err, wait = g.attempt(n)
		if err == nil {
			return first, count, nil
		}
	}
}

// asError keeps a nil *Error from becoming a non-nil error.
func asError(e *Error) error {
	if e == nil {
		return nil
	}
	return e
}
