// Command polyglotdriver is the cross-language harness's driver for the Go library
// (tests/polyglot/README.md): one etcd.LeasedGenerator, driven by JSON lines on stdin and
// answering on stdout. Its clock is the system's with a wall offset that `clock` sets.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	snowid "github.com/snowid/snowid/languages/go"
	"github.com/snowid/snowid/languages/go/etcd"
)

const maxCount = 100_000

// offsetClock is the system's wall clock plus an offset, and the real monotonic clock.
type offsetClock struct{ offsetNs atomic.Int64 }

func (c *offsetClock) WallNs() int64         { return snowid.SystemClock.WallNs() + c.offsetNs.Load() }
func (c *offsetClock) MonoNs() int64         { return snowid.SystemClock.MonoNs() }
func (c *offsetClock) Sleep(d time.Duration) { time.Sleep(d) }

type reply map[string]any

func refusal(err error) reply {
	code := snowid.CodeOf(err)
	msg := err.Error()
	if e, ok := err.(*snowid.Error); ok {
		msg = e.Message
	}
	return reply{"ok": false, "code": code.String(), "retryable": code.Retryable(), "message": msg}
}

func bad(format string, a ...any) reply {
	return reply{"ok": false, "code": "INVALID_ARGUMENT", "retryable": false, "message": fmt.Sprintf(format, a...)}
}

type request struct {
	Op            string           `json:"op"`
	Endpoints     []string         `json:"endpoints"`
	Prefix        *string          `json:"prefix"`
	Cluster       *string          `json:"cluster"`
	Region        int              `json:"region"`
	Host          *int             `json:"host"`
	ClockOffsetMs int64            `json:"clock_offset_ms"`
	OffsetMs      *int64           `json:"offset_ms"`
	Count         *int             `json:"count"`
	Timing        map[string]int64 `json:"timing"`
	Options       map[string]any   `json:"options"`
}

type driver struct {
	clock offsetClock
	gen   *etcd.LeasedGenerator
}

func (d *driver) start(r request) reply {
	if d.gen != nil {
		return reply{"ok": false, "code": "FAILED_PRECONDITION", "retryable": false, "message": "already started"}
	}
	if len(r.Options) > 0 {
		return bad("the Go driver takes no options")
	}
	o := etcd.Options{Endpoints: r.Endpoints, Region: r.Region, Host: r.Host, Clock: &d.clock,
		OnEvent: func(s string) { fmt.Fprintln(os.Stderr, "event:", s) }}
	if r.Prefix != nil {
		o.Prefix = *r.Prefix
	}
	if r.Cluster != nil {
		o.Cluster = *r.Cluster
	}
	var ignored []string
	for name, v := range r.Timing {
		d := time.Duration(v) * time.Millisecond
		switch name {
		case "ttl_ms":
			o.TTL = d
		case "renew_ms":
			o.RenewEvery = d
		case "stop_ms":
			o.StopAfter = d
		case "max_clock_skew_ms":
			o.MaxClockSkew = &d
		case "quarantine_ms":
			o.Quarantine = &d
		case "request_timeout_ms":
			o.RequestTimeout = d
		case "retry_ms":
			o.RetryEvery = d
		case "reacquire_ms":
			o.ReacquireEvery = d
		default:
			ignored = append(ignored, name)
		}
	}
	d.clock.offsetNs.Store(r.ClockOffsetMs * 1e6)
	g, err := etcd.New(context.Background(), o)
	if err != nil {
		return refusal(err)
	}
	d.gen = g
	region, host := g.Worker()
	out := reply{"ok": true, "worker": []int{region, host}, "pid": os.Getpid()}
	if len(ignored) > 0 {
		out["ignored"] = ignored
	}
	return out
}

func (d *driver) next(r request) reply {
	count := 1
	if r.Count != nil {
		count = *r.Count
	}
	if count < 1 || count > maxCount {
		return bad("count must be 1 to %d", maxCount)
	}
	ids := make([]string, 0, count)
	for len(ids) < count {
		first, n, err := d.gen.Reserve(count - len(ids))
		if err != nil {
			out := refusal(err)
			out["ids"] = ids
			return out
		}
		for i := 0; i < n; i++ {
			ids = append(ids, (first + snowid.ID(i)).String())
		}
	}
	return reply{"ok": true, "ids": ids}
}

func (d *driver) handle(r request) reply {
	switch r.Op {
	case "start":
		return d.start(r)
	case "clock":
		if r.OffsetMs == nil {
			return bad("offset_ms is required")
		}
		d.clock.offsetNs.Store(*r.OffsetMs * 1e6)
		return reply{"ok": true}
	case "next", "state", "close":
	default:
		return bad("unknown op %q", r.Op)
	}
	if d.gen == nil {
		return reply{"ok": false, "code": "FAILED_PRECONDITION", "retryable": false, "message": "not started"}
	}
	switch r.Op {
	case "next":
		return d.next(r)
	case "state":
		region, host := d.gen.Worker()
		return reply{"ok": true, "state": d.gen.State(), "ready": d.gen.Ready(), "healthy": d.gen.Healthy(),
			"worker": []int{region, host}, "reacquisitions": d.gen.Reacquisitions(),
			"wall_ms": d.clock.WallNs() / 1e6}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.gen.Close(ctx); err != nil {
		return refusal(err)
	}
	return reply{"ok": true}
}

func main() {
	d := &driver{}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var r request
		var rep reply
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			rep = bad("bad request: %v", err)
		} else {
			rep = d.handle(r)
		}
		b, _ := json.Marshal(rep)
		out.Write(append(b, '\n'))
		out.Flush()
		if r.Op == "close" {
			break
		}
	}
	if d.gen != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := d.gen.Close(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "event: close at the end of input failed:", err)
		}
	}
}
