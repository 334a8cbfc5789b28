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
}

func bench(b *testing.B, next func() int64) {
	for _, n := range []int{1, 2} {
		b.Run(map[int]string{1: "goroutines=1", 2: "goroutines=2"}[n], func(b *testing.B) { run(b, n, next) })
	}
}

func BenchmarkFloorNowCAS(b *testing.B) {
	var word atomic.Int64
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
