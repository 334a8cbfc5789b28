package snowid_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	snowid "github.com/snowid/snowid/languages/go"
)

// Goroutines racing on one generator (the system clock, a fence file) get
// distinct, per-goroutine increasing ids.
func TestConcurrentNoDuplicates(t *testing.T) {
	fence := filepath.Join(t.TempDir(), "fence")
	g, err := snowid.NewGenerator(1, 17, snowid.WithFenceFile(fence))
	if err != nil {
		t.Fatal(err)
	}
	ids := hammer(t, g, 8, 5000, func(int64) {})
	for _, id := range ids {
		d, _ := snowid.Snowid.Decode(uint64(id))
		if d.Region != 1 || d.Host != 17 {
			t.Fatalf("id %d has worker %d/%d", id, d.Region, d.Host)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(); !errors.Is(err, snowid.ErrFailedPrecondition) {
		t.Fatalf("after Close: %v", err)
	}
	// A restart on the same fence file starts after every id issued.
	last := slices.Max(ids)
	stored, ok, err := snowid.FenceFile{Path: fence}.Load()
	if err != nil || !ok || stored != snowid.Snowid.TickStartMs(g.LastTicks()) {
		t.Fatalf("the fence after Close: %d %v %v, last tick %d", stored, ok, err, g.LastTicks())
	}
	g2, err := snowid.NewGenerator(1, 17, snowid.WithFenceFile(fence))
	if err != nil {
		t.Fatal(err)
	}
	if id, err := g2.Next(); err != nil || id <= last {
		t.Fatalf("after restart: %d %v, last was %d", id, err, last)
	}
}

func TestIDText(t *testing.T) {
	id := snowid.ID(26320794961383466)
	b, err := json.Marshal(struct {
		ID snowid.ID `json:"id"`
	}{id})
	if err != nil || string(b) != `{"id":"26320794961383466"}` {
		t.Fatalf("%s %v", b, err)
	}
	var back struct {
		ID snowid.ID `json:"id"`
	}
	if err := json.Unmarshal(b, &back); err != nil || back.ID != id {
		t.Fatalf("%v %v", back.ID, err)
	}
	for _, bad := range []string{`26320794961383466`, `null`, `"-1"`, `" 1"`, `"1e3"`, `"9223372036854775808"`, `""`, `"\u0031"`} {
		v := struct {
			ID snowid.ID `json:"id"`
		}{ID: 7}
		if err := json.Unmarshal([]byte(`{"id":`+bad+`}`), &v); err == nil || v.ID != 7 {
			t.Errorf("%s: %v, id %d", bad, err, v.ID)
		}
	}
	if s := fmt.Sprint(id); s != "26320794961383466" {
		t.Fatal(s)
	}
	var tx snowid.ID
	if err := tx.UnmarshalText([]byte("00042")); err != nil || tx != 42 {
		t.Fatal(tx, err)
	}
}

func TestErrors(t *testing.T) {
	_, err := snowid.ParseID("x", nil)
	if !errors.Is(err, snowid.ErrInvalidArgument) || errors.Is(err, snowid.ErrOutOfRange) || snowid.IsRetryable(err) {
		t.Fatalf("%v", err)
	}
	wrapped := fmt.Errorf("context: %w", &snowid.Error{Code: snowid.CodeUnavailable, Message: "m"})
	if !errors.Is(wrapped, snowid.ErrUnavailable) || !snowid.IsRetryable(wrapped) || snowid.CodeOf(wrapped) != snowid.CodeUnavailable {
		t.Fatalf("%v", wrapped)
	}
	if snowid.IsRetryable(errors.New("other")) || snowid.CodeOf(nil) != snowid.CodeOK {
		t.Fatal("foreign error")
	}
	if _, err := snowid.Preset("nope"); !errors.Is(err, snowid.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := snowid.NewGenerator(4, 0); !errors.Is(err, snowid.ErrInvalidArgument) {
		t.Fatal(err)
	}
	if _, err := snowid.NewGenerator(0, 0, snowid.WithLayout(snowid.Twitter)); !errors.Is(err, snowid.ErrInvalidArgument) {
		t.Fatal(err)
	}
}
