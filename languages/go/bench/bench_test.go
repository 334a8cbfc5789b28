// Package bench compares snowid's Generator.Next with a floor (time.Now plus one
// compare-and-swap) and two popular Go peers, with 1 and 2 goroutines, and checks for
// duplicates. A separate module, so the library itself has no dependency:
//
//	go test -bench . -benchtime 2s
package bench

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/snowflake"
	snowid "github.com/snowid/snowid/languages/go"
	"github.com/sony/sonyflake"
)

func run(b *testing.B, goroutines int, next func() int64) {
	b.Helper()
	ids := make([][]int64, goroutines)
	per := b.N/goroutines + 1
	b.ResetTimer()
	cpu0 := processCPUNs()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]int64, 0, per)
			for range per {
				out = append(out, next())
			}
			ids[g] = out
		}()
	}
	wg.Wait()
	b.StopTimer()
	cpu := processCPUNs() - cpu0
	seen := make(map[int64]struct{}, per*goroutines)
	for _, out := range ids {
		for _, id := range out {
			if _, dup := seen[id]; dup {
				b.Fatalf("duplicate id %d", id)
			}
			seen[id] = struct{}{}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(per*goroutines), "ns/id")
	if cpu0 >= 0 {
		// CPU time per id, summed over cores: on a busy machine the wall time
		// also counts the time other processes held the cores.
		b.ReportMetric(float64(cpu)/float64(per*goroutines), "cpu-ns/id")
	}
}

func bench(b *testing.B, next func() int64) {
	for _, n := range []int{1, 2} {
		b.Run(map[int]string{1: "goroutines=1", 2: "goroutines=2"}[n], func(b *testing.B) { run(b, n, next) })
	}
}

// BenchmarkFloorNowCAS is the floor: per id one time.Now, then a load and a
// compare-and-swap of one word shared by every goroutine, retried with the same
// reading. The word has its cache lines to itself, as the generator's has.
func BenchmarkFloorNowCAS(b *testing.B) {
	var padded struct {
		_    [128]byte
		word atomic.Int64
		_    [120]byte
	}
	word := &padded.word
	bench(b, func() int64 {
		now := time.Now().UnixNano()
		for {
			old := word.Load()
			v := max(old+1, now)
			if word.CompareAndSwap(old, v) {
				return v
			}
		}
	})
}

func BenchmarkSnowid(b *testing.B) {
	g, err := snowid.NewGenerator(1, 17)
	if err != nil {
		b.Fatal(err)
	}
	// A loop that outruns 4,096 ids per ms can wait past Next's longest wait when another
	// goroutine takes every new tick first: that refusal is retryable, and is retried here
	// as a caller would.
	bench(b, func() int64 {
		for {
			id, err := g.Next()
			if err == nil {
				return int64(id)
			}
			if !snowid.IsRetryable(err) {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSnowidUncapped is Generator.Next on a layout with a 22-bit sequence (4M ids per
// ms), which a loop on this machine never uses up: the cost of the call itself (clock read and
// CAS), the figure to set beside the floor. With the standard 12-bit sequence every 12-bit
// generator here is capped at 4,096 ids per ms (244 ns per id), and snowid also waits the
// rest of each used-up tick (its first sequence number is random below 16).
func BenchmarkSnowidUncapped(b *testing.B) {
	wide, err := snowid.NewLayout("bench_22bit_sequence", snowid.Snowid.EpochMs(), 1, false,
		snowid.FieldSpec{Name: "time", Role: snowid.RoleTime, Width: 41},
		snowid.FieldSpec{Name: "sequence", Role: snowid.RoleSequence, Width: 22})
	if err != nil {
		b.Fatal(err)
	}
	g, err := snowid.NewGenerator(0, 0, snowid.WithLayout(wide))
	if err != nil {
		b.Fatal(err)
	}
	bench(b, func() int64 {
		id, err := g.Next()
		if err != nil {
			b.Fatal(err)
		}
		return int64(id)
	})
}

func BenchmarkBwmarrinSnowflake(b *testing.B) {
	n, err := snowflake.NewNode(17)
	if err != nil {
		b.Fatal(err)
	}
	bench(b, func() int64 { return n.Generate().Int64() })
}

func BenchmarkSonySonyflake(b *testing.B) {
	sf := sonyflake.NewSonyflake(sonyflake.Settings{MachineID: func() (uint16, error) { return 17, nil }})
	bench(b, func() int64 {
		id, err := sf.NextID()
		if err != nil {
			b.Fatal(err)
		}
		return int64(id)
	})
}
