package snowid_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	snowid "github.com/snowid/snowid/languages/go"
)

// vectorsDir is the repository's vectors/ (SNOWID_VECTORS overrides it).
func vectorsDir() string {
	if d := os.Getenv("SNOWID_VECTORS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "vectors")
}

func load(t *testing.T, name string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir(), name+".json"))
	if err != nil {
		t.Fatalf("vectors/%s.json: %v", name, err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("vectors/%s.json: %v", name, err)
	}
}

func u64(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("bad vector number %q", s)
	}
	return v
}

func codeName(err error) string { return snowid.CodeOf(err).String() }

type vField struct {
	Name  string `json:"name"`
	Role  string `json:"role"`
	Width int    `json:"width"`
	Shift int    `json:"shift"`
}

type vLayout struct {
	Name             string   `json:"name"`
	Preset           bool     `json:"preset"`
	EpochMs          int64    `json:"epoch_ms"`
	UnitMs           int64    `json:"unit_ms"`
	DecodeOnly       bool     `json:"decode_only"`
	Fields           []vField `json:"fields"`
	TotalWidth       int      `json:"total_width"`
	MaxID            string   `json:"max_id"`
	MaxTicks         string   `json:"max_ticks"`
	CanGenerate      bool     `json:"can_generate"`
	Regions          int      `json:"regions"`
	WorkersPerRegion int      `json:"workers_per_region"`
	SequenceCapacity int      `json:"sequence_capacity"`
	EndOfLifeMs      int64    `json:"end_of_life_ms"`
	EndOfLife        string   `json:"end_of_life"`
}

func specs(fs []vField) []snowid.FieldSpec {
	var out []snowid.FieldSpec
	for _, f := range fs {
		out = append(out, snowid.FieldSpec{Name: f.Name, Role: snowid.Role(f.Role), Width: f.Width})
	}
	return out
}

var layoutsOnce sync.Once
var layoutsByName map[string]*snowid.Layout

// layouts are every layout of layouts.json by name, built from its spec.
func layouts(t *testing.T) map[string]*snowid.Layout {
	layoutsOnce.Do(func() {
		var doc struct{ Layouts []vLayout }
		load(t, "layouts", &doc)
		layoutsByName = map[string]*snowid.Layout{}
		for _, v := range doc.Layouts {
			l, err := snowid.NewLayout(v.Name, v.EpochMs, v.UnitMs, v.DecodeOnly, specs(v.Fields)...)
			if err != nil {
				t.Fatalf("layout %s: %v", v.Name, err)
			}
			layoutsByName[v.Name] = l
		}
	})
	return layoutsByName
}

func TestVectorsLayouts(t *testing.T) {
	var doc struct {
		Layouts        []vLayout
		InvalidLayouts []struct {
			Description string
			Error       string
			Spec        struct {
				EpochMs    int64    `json:"epoch_ms"`
				UnitMs     int64    `json:"unit_ms"`
				DecodeOnly bool     `json:"decode_only"`
				Fields     []vField `json:"fields"`
			}
		} `json:"invalid_layouts"`
		Checks []struct {
			Layout  string
			NowMs   int64 `json:"now_ms"`
			Outcome string
			Error   string
		}
	}
	load(t, "layouts", &doc)
	for _, v := range doc.Layouts {
		built, err := snowid.NewLayout(v.Name, v.EpochMs, v.UnitMs, v.DecodeOnly, specs(v.Fields)...)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		all := []*snowid.Layout{built}
		if v.Preset {
			p, err := snowid.Preset(v.Name)
			if err != nil {
				t.Fatalf("preset %s: %v", v.Name, err)
			}
			all = append(all, p)
		}
		for _, l := range all {
			got := vLayout{Name: l.Name(), Preset: v.Preset, EpochMs: l.EpochMs(), UnitMs: l.UnitMs(),
				DecodeOnly: l.DecodeOnly(), TotalWidth: l.TotalWidth(), MaxID: snowid.FormatID(l.MaxID()),
				MaxTicks: snowid.FormatID(l.MaxTicks()), CanGenerate: l.CanGenerate(), Regions: l.Regions(),
				WorkersPerRegion: l.WorkersPerRegion(), SequenceCapacity: l.SequenceCapacity(),
				EndOfLifeMs: l.EndOfLifeMs(), EndOfLife: snowid.FormatMs(l.EndOfLifeMs())}
			for _, f := range l.Fields() {
				got.Fields = append(got.Fields, vField{f.Name, string(f.Role), f.Width, f.Shift})
			}
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(v)
			if string(a) != string(b) {
				t.Errorf("layout %s:\n got %s\nwant %s", v.Name, a, b)
			}
		}
	}
	if len(doc.InvalidLayouts) == 0 || len(doc.Checks) == 0 {
		t.Fatal("layouts.json has no invalid layouts or checks")
	}
	for _, c := range doc.InvalidLayouts {
		_, err := snowid.NewLayout("x", c.Spec.EpochMs, c.Spec.UnitMs, c.Spec.DecodeOnly, specs(c.Spec.Fields)...)
		if codeName(err) != c.Error {
			t.Errorf("invalid layout %q: got %v, want %s", c.Description, err, c.Error)
		}
	}
	for _, c := range doc.Checks {
		r, err := layouts(t)[c.Layout].Check(c.NowMs)
		got := "ok"
		switch {
		case err != nil && c.Error != codeName(err):
			got = codeName(err)
		case err != nil && snowid.CodeOf(err) == snowid.CodeInvalidArgument:
			got = "epoch_in_future"
		case err != nil:
			got = "end_of_life_reached"
		case len(r.Warnings) > 0:
			got = "end_of_life_warning"
		}
		if got != c.Outcome {
			t.Errorf("check %s at %d: got %s, want %s", c.Layout, c.NowMs, got, c.Outcome)
		}
	}
}

func TestVectorsIDs(t *testing.T) {
	var doc struct {
		Cases []struct {
			Layout string
			ID     string
			Fields map[string]string
			Ticks  string
			UnixMs int64 `json:"unix_ms"`
			Time   string
		}
		DecodeErrors []struct{ Layout, ID, Error string } `json:"decode_errors"`
		EncodeErrors []struct {
			Layout string
			Fields map[string]string
			Error  string
		} `json:"encode_errors"`
		Parse       []struct{ Text, Layout, ID string }
		ParseErrors []struct{ Text, Layout, Error string } `json:"parse_errors"`
	}
	load(t, "ids", &doc)
	ls := layouts(t)
	for _, c := range doc.Cases {
		l := ls[c.Layout]
		id := u64(t, c.ID)
		d, err := l.Decode(id)
		if err != nil {
			t.Fatalf("decode %s/%s: %v", c.Layout, c.ID, err)
		}
		values := map[string]uint64{}
		for name, v := range c.Fields {
			values[name] = u64(t, v)
			if got, ok := d.Value(name); !ok || got != values[name] {
				t.Errorf("decode %s/%s: field %s = %d, want %s", c.Layout, c.ID, name, got, v)
			}
		}
		if d.Ticks != u64(t, c.Ticks) || d.UnixMs != c.UnixMs || snowid.FormatMs(d.UnixMs) != c.Time {
			t.Errorf("decode %s/%s: time %d %d, want %s %d %s", c.Layout, c.ID, d.Ticks, d.UnixMs, c.Ticks, c.UnixMs, c.Time)
		}
		if got, err := l.Encode(values); err != nil || got != id {
			t.Errorf("encode %s/%s: %d %v", c.Layout, c.ID, got, err)
		}
		hasOther := false
		for _, f := range l.Fields() {
			hasOther = hasOther || f.Role == snowid.RoleOther
		}
		if !hasOther {
			if got, err := l.Compose(d.Ticks, d.Region, d.Host, d.Sequence); err != nil || got != id {
				t.Errorf("compose %s/%s: %d %v", c.Layout, c.ID, got, err)
			}
			if got, err := snowid.ParseID(c.ID, l); err != nil || got != id {
				t.Errorf("parse %s/%s: %d %v", c.Layout, c.ID, got, err)
			}
		}
	}
	for _, c := range doc.DecodeErrors {
		if _, err := ls[c.Layout].Decode(u64(t, c.ID)); codeName(err) != c.Error {
			t.Errorf("decode %s/%s: %v, want %s", c.Layout, c.ID, err, c.Error)
		}
	}
	for _, c := range doc.EncodeErrors {
		values := map[string]uint64{}
		for name, v := range c.Fields {
			values[name] = u64(t, v)
		}
		if _, err := ls[c.Layout].Encode(values); codeName(err) != c.Error {
			t.Errorf("encode %s/%v: %v, want %s", c.Layout, c.Fields, err, c.Error)
		}
	}
	for _, c := range doc.Parse {
		if got, err := snowid.ParseID(c.Text, ls[c.Layout]); err != nil || got != u64(t, c.ID) {
			t.Errorf("parse %q: %d %v, want %s", c.Text, got, err, c.ID)
		}
	}
	for _, c := range doc.ParseErrors {
		if _, err := snowid.ParseID(c.Text, ls[c.Layout]); codeName(err) != c.Error {
			t.Errorf("parse %q: %v, want %s", c.Text, err, c.Error)
		}
	}
}

func TestVectorsBounds(t *testing.T) {
	var doc struct {
		Cases []struct {
			Layout string
			UnixMs int64  `json:"unix_ms"`
			MinID  string `json:"min_id"`
			MaxID  string `json:"max_id"`
		}
		Errors []struct {
			Layout string
			UnixMs int64 `json:"unix_ms"`
			Error  string
		}
	}
	load(t, "bounds", &doc)
	for _, c := range doc.Cases {
		lo, hi, err := layouts(t)[c.Layout].Bounds(c.UnixMs, c.UnixMs)
		if err != nil || lo != u64(t, c.MinID) || hi != u64(t, c.MaxID) {
			t.Errorf("bounds %s %d: %d %d %v", c.Layout, c.UnixMs, lo, hi, err)
		}
	}
	for _, c := range doc.Errors {
		l := layouts(t)[c.Layout]
		_, e1 := l.MinIDAt(c.UnixMs)
		_, e2 := l.MaxIDAt(c.UnixMs)
		if codeName(e1) != c.Error || codeName(e2) != c.Error {
			t.Errorf("bounds %s %d: %v %v, want %s", c.Layout, c.UnixMs, e1, e2, c.Error)
		}
	}
}

func TestVectorsShards(t *testing.T) {
	var doc struct {
		Mix   []struct{ ID, Mixed string }
		Cases []struct {
			ID     string
			Shards uint64
			Shard  uint32
		}
	}
	load(t, "shards", &doc)
	for _, c := range doc.Mix {
		if got := snowid.Mix64(u64(t, c.ID)); got != u64(t, c.Mixed) {
			t.Errorf("mix %s: %d", c.ID, got)
		}
	}
	for _, c := range doc.Cases {
		if got, err := snowid.Shard(u64(t, c.ID), c.Shards); err != nil || got != c.Shard {
			t.Errorf("shard %s of %d: %d %v", c.ID, c.Shards, got, err)
		}
	}
	for _, bad := range []uint64{0, 1 << 32} {
		if _, err := snowid.Shard(1, bad); !errors.Is(err, snowid.ErrInvalidArgument) {
			t.Errorf("shards %d: %v", bad, err)
		}
	}
}

func TestVectorsFence(t *testing.T) {
	var doc struct {
		Valid []struct {
			Text    string
			FenceMs int64 `json:"fence_ms"`
		}
		Invalid []struct{ Text, Error string }
		Write   []struct {
			FenceMs int64 `json:"fence_ms"`
			Text    string
		}
		WriteErrors []struct {
			FenceMs int64 `json:"fence_ms"`
			Error   string
		} `json:"write_errors"`
	}
	load(t, "fence", &doc)
	for _, c := range doc.Valid {
		if got, err := snowid.ParseFence([]byte(c.Text)); err != nil || got != c.FenceMs {
			t.Errorf("fence %q: %d %v", c.Text, got, err)
		}
	}
	for _, c := range doc.Invalid {
		if _, err := snowid.ParseFence([]byte(c.Text)); codeName(err) != c.Error {
			t.Errorf("fence %q: %v, want %s", c.Text, err, c.Error)
		}
	}
	dir := t.TempDir()
	f := snowid.FenceFile{Path: filepath.Join(dir, "fence")}
	for _, c := range doc.Write {
		if err := f.Store(c.FenceMs); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(f.Path)
		if string(data) != c.Text {
			t.Errorf("fence %d wrote %q", c.FenceMs, data)
		}
		if v, ok, err := f.Load(); err != nil || !ok || v != c.FenceMs {
			t.Errorf("fence %d read back %d %v %v", c.FenceMs, v, ok, err)
		}
	}
	for _, c := range doc.WriteErrors {
		before, _ := os.ReadFile(f.Path)
		if err := f.Store(c.FenceMs); codeName(err) != c.Error {
			t.Errorf("fence %d: %v, want %s", c.FenceMs, err, c.Error)
		}
		if after, _ := os.ReadFile(f.Path); string(after) != string(before) {
			t.Errorf("fence %d changed the file", c.FenceMs)
		}
	}
	if _, ok, err := (snowid.FenceFile{Path: filepath.Join(dir, "none")}).Load(); ok || err != nil {
		t.Errorf("a missing fence file: %v %v", ok, err)
	}
}

// simClock moves only when told, and when a waiting call sleeps.
type simClock struct {
	mu         sync.Mutex
	wall, mono int64
}

func (c *simClock) WallNs() int64 { c.mu.Lock(); defer c.mu.Unlock(); return c.wall }
func (c *simClock) MonoNs() int64 { c.mu.Lock(); defer c.mu.Unlock(); return c.mono }
func (c *simClock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.wall += int64(d)
		c.mono += int64(d)
	}
}

type memFence struct {
	value *int64
	fail  bool
}

func (m *memFence) Load() (int64, bool, error) {
	if m.value == nil {
		return 0, false, nil
	}
	return *m.value, true, nil
}

func (m *memFence) Store(ms int64) error {
	if m.fail {
		return errors.New("injected fence failure")
	}
	m.value = &ms
	return nil
}

const ms = int64(time.Millisecond)

func TestVectorsGenerator(t *testing.T) {
	var doc struct {
		Cases []struct {
			Name        string
			Layout      string
			StartWallMs int64 `json:"start_wall_ms"`
			Create      string
			Options     struct {
				Region, Host     int
				RandomStartBound int    `json:"random_start_bound"`
				MaxBackwardMs    int64  `json:"max_backward_ms"`
				MaxBorrowMs      int64  `json:"max_borrow_ms"`
				FenceWindowMs    int64  `json:"fence_window_ms"`
				MaxWaitMs        int64  `json:"max_wait_ms"`
				NotBeforeMs      *int64 `json:"not_before_ms"`
				WaitUntilMs      *int64 `json:"wait_until_ms"`
				ContinueAfterMs  *int64 `json:"continue_after_ms"`
				Lease            bool
				Fence            *struct {
					StoredMs *int64 `json:"stored_ms"`
				}
			}
			Steps []map[string]json.RawMessage
		}
	}
	load(t, "generator", &doc)
	for _, c := range doc.Cases {
		t.Run(c.Name, func(t *testing.T) {
			o := c.Options
			clock := &simClock{wall: c.StartWallMs * ms}
			var fence *memFence
			var guard *snowid.LeaseGuard
			opts := []snowid.Option{snowid.WithLayout(layouts(t)[c.Layout]), snowid.WithClock(clock),
				snowid.WithRandomStartBound(o.RandomStartBound),
				snowid.WithMaxBackward(time.Duration(o.MaxBackwardMs * ms)),
				snowid.WithMaxBorrow(time.Duration(o.MaxBorrowMs * ms)),
				snowid.WithMaxWait(time.Duration(o.MaxWaitMs * ms)),
				snowid.WithFenceWindow(time.Duration(o.FenceWindowMs * ms))}
			if o.Fence != nil {
				fence = &memFence{value: o.Fence.StoredMs}
				opts = append(opts, snowid.WithFence(fence))
			}
			if o.Lease {
				guard = snowid.NewLeaseGuard()
				opts = append(opts, snowid.WithLeaseGuard(guard))
			}
			if o.NotBeforeMs != nil {
				opts = append(opts, snowid.WithNotBefore(*o.NotBeforeMs))
			}
			if o.WaitUntilMs != nil {
				opts = append(opts, snowid.WithWaitUntil(*o.WaitUntilMs*ms))
			}
			if o.ContinueAfterMs != nil {
				opts = append(opts, snowid.WithContinueAfter(*o.ContinueAfterMs))
			}
			g, err := snowid.NewGenerator(o.Region, o.Host, opts...)
			if codeName(err) != c.Create {
				t.Fatalf("create: %v, want %s", err, c.Create)
			}
			for n, step := range c.Steps {
				runStep(t, n, step, &g, clock, fence, guard, func() (*snowid.Generator, error) {
					return snowid.NewGenerator(o.Region, o.Host, opts...)
				})
			}
		})
	}
}

func num(t *testing.T, raw json.RawMessage) int64 {
	var v int64
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("bad number %s", raw)
	}
	return v
}

func str(raw json.RawMessage) string {
	var s string
	json.Unmarshal(raw, &s)
	return s
}

func runStep(t *testing.T, n int, step map[string]json.RawMessage, gp **snowid.Generator, clock *simClock,
	fence *memFence, guard *snowid.LeaseGuard, recreate func() (*snowid.Generator, error)) {
	t.Helper()
	g := *gp
	type result struct {
		first uint64
		count int
		err   error
	}
	var calls []func() result
	k := 0
	if raw, ok := step["try_next"]; ok {
		k = int(num(t, raw))
		for i := 0; i < k; i++ {
			calls = append(calls, func() result { id, err := g.TryNext(); return result{uint64(id), 1, err} })
		}
	} else if raw, ok := step["next"]; ok {
		k = int(num(t, raw))
		for i := 0; i < k; i++ {
			calls = append(calls, func() result { id, err := g.Next(); return result{uint64(id), 1, err} })
		}
	} else if raw, ok := step["try_reserve"]; ok {
		calls = append(calls, func() result { f, c, err := g.TryReserve(int(num(t, raw))); return result{uint64(f), c, err} })
	} else if raw, ok := step["reserve"]; ok {
		calls = append(calls, func() result { f, c, err := g.Reserve(int(num(t, raw))); return result{uint64(f), c, err} })
	} else if raw, ok := step["advance_ms"]; ok {
		clock.Sleep(time.Duration(num(t, raw) * ms))
	} else if raw, ok := step["set_wall_ms"]; ok {
		clock.mu.Lock()
		clock.wall = num(t, raw) * ms
		clock.mu.Unlock()
	} else if raw, ok := step["advance_mono_ms"]; ok {
		clock.mu.Lock()
		clock.mono += num(t, raw) * ms
		clock.mu.Unlock()
	} else if raw, ok := step["lease_extend"]; ok {
		var e struct {
			D int64 `json:"deadline_mono_ms"`
			H int64 `json:"high_water_ms"`
		}
		json.Unmarshal(raw, &e)
		guard.Extend(e.D*ms, e.H*ms)
	} else if _, ok := step["lease_lost"]; ok {
		guard.MarkLost()
	} else if raw, ok := step["fence_fail"]; ok {
		fence.fail = string(raw) == "true"
	} else if _, ok := step["close"]; ok {
		g.Close()
	} else if _, ok := step["restart"]; ok {
		ng, err := recreate()
		if codeName(err) != str(step["create"]) {
			t.Fatalf("step %d: restart: %v, want %s", n, err, step["create"])
		}
		if ng != nil {
			*gp = ng
		}
	}
	where := func() string { b, _ := json.Marshal(step); return "step " + strconv.Itoa(n) + " " + string(b) }
	if calls != nil {
		if raw, ok := step["error"]; ok {
			r := calls[0]()
			want := str(raw)
			if codeName(r.err) != want {
				t.Fatalf("%s: got %d %v", where(), r.first, r.err)
			}
			code, _ := snowid.CodeByName(want)
			if snowid.IsRetryable(r.err) != code.Retryable() {
				t.Errorf("%s: retryable %v", where(), snowid.IsRetryable(r.err))
			}
			if ra, ok := step["retry_after_ms"]; ok {
				var wantMs float64
				json.Unmarshal(ra, &wantMs)
				if got := r.err.(*snowid.Error).RetryAfter; float64(got) != wantMs*float64(ms) {
					t.Errorf("%s: retry after %v", where(), got)
				}
			}
		} else {
			var got []result
			for _, call := range calls {
				r := call()
				if r.err != nil {
					t.Fatalf("%s: call %d: %v", where(), len(got), r.err)
				}
				got = append(got, r)
			}
			if raw, ok := step["first_id"]; ok {
				first := u64(t, str(raw))
				if rc, ok := step["count"]; ok {
					if got[0].first != first || got[0].count != int(num(t, rc)) {
						t.Errorf("%s: got %d x %d", where(), got[0].first, got[0].count)
					}
				} else {
					for i, r := range got {
						if r.first != first+uint64(i) {
							t.Fatalf("%s: call %d gave %d", where(), i, r.first)
						}
					}
				}
			}
			if raw, ok := step["id_min"]; ok {
				lo, hi := u64(t, str(raw)), u64(t, str(step["id_max"]))
				for _, r := range got {
					if r.first < lo || r.first > hi {
						t.Errorf("%s: %d outside", where(), r.first)
					}
				}
			}
		}
	}
	if raw, ok := step["fence_ms"]; ok {
		if string(raw) == "null" {
			if fence.value != nil {
				t.Errorf("%s: fence %d, want none", where(), *fence.value)
			}
		} else if fence.value == nil || *fence.value != num(t, raw) {
			t.Errorf("%s: fence %v", where(), fence.value)
		}
	}
	if raw, ok := step["healthy"]; ok {
		if (*gp).Healthy() != (string(raw) == "true") {
			t.Errorf("%s: healthy %v", where(), (*gp).Healthy())
		}
	}
	if raw, ok := step["wall_ms"]; ok {
		if clock.WallNs() != num(t, raw)*ms {
			t.Errorf("%s: wall %d", where(), clock.WallNs()/ms)
		}
	}
}

func TestVectorsHistories(t *testing.T) {
	var doc struct {
		Histories []struct {
			Description string
			Eras        []struct {
				Layout    string
				CutoverMs int64 `json:"cutover_ms"`
			}
			FirstIDs []string `json:"first_ids"`
			Decode   []struct {
				ID     string
				Era    int
				UnixMs int64 `json:"unix_ms"`
			}
			Error, Reason string
		}
	}
	load(t, "histories", &doc)
	if len(doc.Histories) == 0 {
		t.Fatal("histories.json has no histories")
	}
	for _, c := range doc.Histories {
		var eras []snowid.Era
		for _, e := range c.Eras {
			l := layouts(t)[e.Layout]
			if l == nil {
				t.Fatalf("%s: no layout %q in layouts.json", c.Description, e.Layout)
			}
			eras = append(eras, snowid.Era{CutoverMs: e.CutoverMs, Layout: l})
		}
		h, err := snowid.NewLayoutHistory(eras...)
		if c.Error != "" {
			if codeName(err) != c.Error {
				t.Errorf("%s (%s): got %v, want %s", c.Description, c.Reason, err, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Description, err)
			continue
		}
		firsts := h.FirstIDs()
		if len(firsts) != len(c.FirstIDs) {
			t.Errorf("%s: %d first ids, want %d", c.Description, len(firsts), len(c.FirstIDs))
			continue
		}
		for i, want := range c.FirstIDs {
			if firsts[i] != u64(t, want) {
				t.Errorf("%s: era %d starts at %d, want %s", c.Description, i, firsts[i], want)
			}
			if got := h.LayoutAt(eras[i].CutoverMs); got != eras[i].Layout {
				t.Errorf("%s: at era %d's cut-over the layout is %s", c.Description, i, got.Name())
			}
			if i > 0 {
				if got := h.LayoutAt(eras[i].CutoverMs - 1); got != eras[i-1].Layout {
					t.Errorf("%s: just before era %d the layout is %s", c.Description, i, got.Name())
				}
			}
		}
		for _, d := range c.Decode {
			id := u64(t, d.ID)
			if era := h.EraOf(id); era != d.Era {
				t.Errorf("%s: id %s is in era %d, want %d", c.Description, d.ID, era, d.Era)
			}
			dec, err := h.Decode(id)
			if err != nil || dec.UnixMs != d.UnixMs {
				t.Errorf("%s: id %s decodes to %d ms (%v), want %d", c.Description, d.ID, dec.UnixMs, err, d.UnixMs)
			}
		}
	}
}
