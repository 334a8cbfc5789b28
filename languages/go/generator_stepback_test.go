package snowid_test

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	snowid "github.com/snowid/snowid/languages/go"
)

// offsetClock is the system clock shifted by an offset a test can step.
type offsetClock struct{ offsetNs atomic.Int64 }

func (c *offsetClock) WallNs() int64         { return snowid.SystemClock.WallNs() + c.offsetNs.Load() }
func (c *offsetClock) MonoNs() int64         { return snowid.SystemClock.MonoNs() }
func (c *offsetClock) Sleep(d time.Duration) { snowid.SystemClock.Sleep(d) }

// lateClock's readings arrive late: it yields between reading the system
// clock and returning, so other goroutines often issue ids of a later tick
// in between, as a preempted caller would see.
type lateClock struct{}

func (lateClock) WallNs() int64 {
	now := snowid.SystemClock.WallNs()
	runtime.Gosched()
	return now
}
func (lateClock) MonoNs() int64         { return snowid.SystemClock.MonoNs() }
func (lateClock) Sleep(d time.Duration) { snowid.SystemClock.Sleep(d) }

// hammer has workers goroutines take each ids from g with Next, calling step
// with the running total after every id, and fails on an error, an id not
// above the goroutine's previous one, or a duplicate across goroutines. It
// returns every id.
func hammer(t *testing.T, g *snowid.Generator, workers, each int, step func(total int64)) []snowid.ID {
	t.Helper()
	var total atomic.Int64
	out := make([][]snowid.ID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]snowid.ID, 0, each)
			for range each {
				id, err := g.Next()
				if err != nil {
					t.Errorf("goroutine %d after %d ids: %v", w, len(ids), err)
					return
				}
				if n := len(ids); n > 0 && id <= ids[n-1] {
					t.Errorf("goroutine %d: %d after %d", w, id, ids[n-1])
					return
				}
				ids = append(ids, id)
				step(total.Add(1))
			}
			out[w] = ids
		}()
	}
	wg.Wait()
	seen := make(map[snowid.ID]bool, workers*each)
	for _, ids := range out {
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("duplicate id %d", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != workers*each {
		t.Fatalf("%d distinct ids, want %d", len(seen), workers*each)
	}
	return slices.Concat(out...)
}

// Goroutines racing on one generator while the clock steps back twice (each
// step within max_backward) get distinct ids: no millisecond is used again
// after a step, and the generator stays healthy.
func TestConcurrentNoDuplicatesAcrossClockStepBack(t *testing.T) {
	clock := &offsetClock{}
	g, err := snowid.NewGenerator(1, 17, snowid.WithClock(clock), snowid.WithMaxBackward(40*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 4000
	var stepped atomic.Int32
	hammer(t, g, workers, each, func(total int64) {
		// Two steps back of 30 ms, a third and two thirds of the way through.
		if total == workers*each/3 || total == 2*workers*each/3 {
			clock.offsetNs.Add(-int64(30 * time.Millisecond))
			stepped.Add(1)
		}
	})
	if stepped.Load() != 2 {
		t.Fatalf("the clock stepped %d times, want 2", stepped.Load())
	}
	if !g.Healthy() {
		t.Fatalf("unhealthy after steps within max_backward: %v", g.Health())
	}
}

// With max_backward 0 any reading behind the last issued tick stops the
// generator, so goroutines racing over tick boundaries on a steady clock whose
// readings arrive late show that no call mistakes another call's later tick
// for a clock step.
func TestConcurrentNoFalseStepBack(t *testing.T) {
	g, err := snowid.NewGenerator(1, 17, snowid.WithMaxBackward(0), snowid.WithClock(lateClock{}))
	if err != nil {
		t.Fatal(err)
	}
	hammer(t, g, 8, 4000, func(int64) {})
	if !g.Healthy() {
		t.Fatalf("unhealthy on a steady clock: %v", g.Health())
	}
}
