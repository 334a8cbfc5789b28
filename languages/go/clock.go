package snowid

import (
	"sync/atomic"
	"time"
)

// Clock is every time source the library uses: a wall clock (Unix ns, may
// step either way), a monotonic clock (ns from any origin, never back) and a
// wait. Tests inject a simulated one.
type Clock interface {
	WallNs() int64
	MonoNs() int64
	Sleep(d time.Duration)
}

type systemClock struct{ origin time.Time }

func (systemClock) WallNs() int64         { return time.Now().UnixNano() }
func (c systemClock) MonoNs() int64       { return int64(time.Since(c.origin)) }
func (systemClock) Sleep(d time.Duration) { time.Sleep(d) }

// SystemClock is the host's wall and monotonic clocks.
var SystemClock Clock = systemClock{origin: time.Now()}

const never = -1 << 63

// LeaseGuard is the hot-path view of a worker-id lease: written by whoever
// renews it, read by the generator before every claim. It permits an id
// while the monotonic clock is before the deadline and the id's time is at or
// before the high-water mark already stored in the registry.
type LeaseGuard struct {
	deadline  atomic.Int64
	highWater atomic.Int64
	lost      atomic.Bool
}

// NewLeaseGuard permits nothing until Extend.
func NewLeaseGuard() *LeaseGuard {
	g := &LeaseGuard{}
	g.deadline.Store(never)
	g.highWater.Store(never)
	return g
}

// Extend permits issuing until deadlineMonoNs for id times up to highWaterNs.
// Call it only once the mark is durable. Never moves a bound back; does
// nothing once lost.
func (g *LeaseGuard) Extend(deadlineMonoNs, highWaterNs int64) {
	for {
		h := g.highWater.Load()
		if highWaterNs <= h || g.highWater.CompareAndSwap(h, highWaterNs) {
			break
		}
	}
	for {
		d := g.deadline.Load()
		if g.lost.Load() || deadlineMonoNs <= d || g.deadline.CompareAndSwap(d, deadlineMonoNs) {
			break
		}
	}
}

// MarkLost: nothing is permitted from here on, for good.
func (g *LeaseGuard) MarkLost() {
	g.lost.Store(true)
	g.deadline.Store(never)
}

// Lost says whether MarkLost was called.
func (g *LeaseGuard) Lost() bool { return g.lost.Load() }

// Permits says whether an id of that time may be issued at that monotonic reading.
func (g *LeaseGuard) Permits(monoNs, idTimeNs int64) bool {
	return monoNs < g.deadline.Load() && idTimeNs <= g.highWater.Load()
}
