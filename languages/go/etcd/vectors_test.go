package etcd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

type leaseVectors struct {
	Namespaces []struct {
		Prefix, Cluster, Error string
	}
	Keys []struct {
		Prefix, Cluster     string
		Region, Host        int
		Holder, Mark, Store string
		RegionPrefix        string `json:"region_prefix"`
	}
	KeyParses []struct {
		Prefix, Cluster, Key string
		Parsed               *struct {
			Region, Host uint32
			Kind         string
		}
	} `json:"key_parses"`
	HolderReads []struct {
		Text  string
		Value struct {
			Host      string
			Pid       int64
			StartedMs int64 `json:"started_ms"`
			Address   string
			Lease     string
		}
	} `json:"holder_reads"`
	HolderErrors []struct{ Text, Error string } `json:"holder_errors"`
	Holders      []struct {
		Value struct {
			Host      string
			Pid       int
			StartedMs int64 `json:"started_ms"`
			Address   string
			Lease     string
		}
		Text string
	}
	Marks []struct {
		Value   map[string]string
		Text    string
		Decoded map[string]int64
	}
	MarkReads []struct {
		Text  string
		Value map[string]int64
		Clean bool
	} `json:"mark_reads"`
	MarkErrors []struct{ Text, Error string } `json:"mark_errors"`
	Stores     []struct {
		Value map[string]string
		Text  string
	}
	StoreErrors []struct{ Text, Error string } `json:"store_errors"`
	Eligibility []struct {
		Held         bool
		Mark         map[string]int64
		NowMs        int64 `json:"now_ms"`
		QuarantineMs int64 `json:"quarantine_ms"`
		Eligible     bool
		FreeFromMs   *int64 `json:"free_from_ms"`
	}
	Timings []struct {
		TTLMs          int64 `json:"ttl_ms"`
		RenewEveryMs   int64 `json:"renew_every_ms"`
		StopAfterMs    int64 `json:"stop_after_ms"`
		MaxClockSkewMs int64 `json:"max_clock_skew_ms"`
		Error          string
	}
	WaitUntil []struct {
		Previous *int64 `json:"previous_high_water_ms"`
		Store    *int64 `json:"store_high_water_ms"`
		SkewMs   int64  `json:"max_clock_skew_ms"`
		Want     *int64 `json:"wait_until_ms"`
	} `json:"wait_until"`
	EtcdOptions []struct {
		QuarantineMs     int64 `json:"quarantine_ms"`
		RequestTimeoutMs int64 `json:"request_timeout_ms"`
		Error            string
	} `json:"etcd_options"`
}

func loadLeases(t *testing.T) leaseVectors {
	dir := os.Getenv("SNOWID_VECTORS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "vectors")
	}
	data, err := os.ReadFile(filepath.Join(dir, "leases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v leaseVectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func errName(err error) string {
	s := err.Error()
	for i, c := range s {
		if c == ':' {
			return s[:i]
		}
	}
	return s
}

func nsToMs(t *testing.T, s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return ceilMs(v)
}

func markOf(m map[string]int64) mark {
	var k mark
	k.highWater, k.hasHigh = m["high_water_ms"]
	k.releasedAt, k.hasReleased = m["released_at_ms"]
	k.cleanRelease, k.hasClean = m["clean_release_ms"]
	return k
}

func TestVectorsLeases(t *testing.T) {
	v := loadLeases(t)
	for _, c := range v.Namespaces {
		if err := checkNamespace(c.Prefix, c.Cluster); (err != nil) != (c.Error != "") || (err != nil && errName(err) != c.Error) {
			t.Errorf("namespace %q %q: %v, want %q", c.Prefix, c.Cluster, err, c.Error)
		}
	}
	for _, c := range v.Keys {
		l := &LeasedGenerator{o: Options{Prefix: c.Prefix, Cluster: c.Cluster, Region: c.Region}}
		base := c.Prefix + "/" + c.Cluster + "/workers/" + strconv.Itoa(c.Region) + "/"
		if base != c.RegionPrefix || base+strconv.Itoa(c.Host)+"/holder" != c.Holder ||
			base+strconv.Itoa(c.Host)+"/mark" != c.Mark || l.storeKey() != c.Store {
			t.Errorf("keys of %+v", c)
		}
	}
	if len(v.KeyParses) == 0 || len(v.HolderReads) == 0 || len(v.HolderErrors) == 0 {
		t.Fatal("leases.json has no key parses, holder reads or holder errors")
	}
	for _, c := range v.KeyParses {
		got, ok := parseWorkerKey(c.Prefix, c.Cluster, c.Key)
		if ok != (c.Parsed != nil) {
			t.Errorf("key %q: parsed %v, want %v", c.Key, ok, c.Parsed != nil)
			continue
		}
		if ok && (got.region != c.Parsed.Region || got.host != c.Parsed.Host ||
			got.holder != (c.Parsed.Kind == "holder")) {
			t.Errorf("key %q: %+v, want %+v", c.Key, got, *c.Parsed)
		}
	}
	for _, c := range v.HolderReads {
		got, err := decodeHolder(c.Text)
		want := c.Value
		if err != nil || got.host != want.Host || got.pid != want.Pid ||
			got.startedMs != want.StartedMs || got.address != want.Address ||
			strconv.FormatInt(got.lease, 10) != want.Lease {
			t.Errorf("holder read %s: %+v %v, want %+v", c.Text, got, err, want)
		}
	}
	for _, c := range v.HolderErrors {
		if _, err := decodeHolder(c.Text); err == nil || errName(err) != c.Error {
			t.Errorf("holder %q: %v, want %s", c.Text, err, c.Error)
		}
	}
	for _, c := range v.Holders {
		lease, _ := strconv.ParseInt(c.Value.Lease, 10, 64)
		if got := encodeHolder(c.Value.Host, c.Value.Pid, c.Value.StartedMs, c.Value.Address, lease); got != c.Text {
			t.Errorf("holder:\n got %s\nwant %s", got, c.Text)
		}
	}
	for _, c := range v.Marks {
		var k mark
		if s, ok := c.Value["high_water_ns"]; ok {
			k.highWater, k.hasHigh = nsToMs(t, s), true
		}
		if s, ok := c.Value["released_at_ns"]; ok {
			k.releasedAt, k.hasReleased = nsToMs(t, s), true
		}
		if s, ok := c.Value["clean_release_ns"]; ok {
			k.cleanRelease, k.hasClean = nsToMs(t, s), true
		}
		if got := k.encode(); got != c.Text {
			t.Errorf("mark %v: %s, want %s", c.Value, got, c.Text)
		}
		if got, err := decodeMark(c.Text); err != nil || got != markOf(c.Decoded) {
			t.Errorf("mark %s: %+v %v", c.Text, got, err)
		}
	}
	for _, c := range v.MarkReads {
		got, err := decodeMark(c.Text)
		if err != nil || got != markOf(c.Value) {
			t.Errorf("mark read %s: %+v %v", c.Text, got, err)
		}
		clean := got.hasClean && got.hasHigh && got.hasReleased && got.cleanRelease == got.highWater
		if clean != c.Clean {
			t.Errorf("mark read %s: clean %v", c.Text, clean)
		}
	}
	for _, c := range v.MarkErrors {
		if _, err := decodeMark(c.Text); err == nil || errName(err) != c.Error {
			t.Errorf("mark %q: %v, want %s", c.Text, err, c.Error)
		}
	}
	for _, c := range v.Stores {
		r := store{incarnation: c.Value["incarnation"], reason: c.Value["reason"], writtenMs: nsToMs(t, c.Value["written_ns"])}
		if s, ok := c.Value["high_water_ns"]; ok {
			r.highWater, r.hasHigh = nsToMs(t, s), true
		}
		if got := r.encode(); got != c.Text {
			t.Errorf("store:\n got %s\nwant %s", got, c.Text)
		}
		if got, err := decodeStore(c.Text); err != nil || got != r {
			t.Errorf("store %s: %+v %v", c.Text, got, err)
		}
	}
	for _, c := range v.StoreErrors {
		if _, err := decodeStore(c.Text); err == nil || errName(err) != c.Error {
			t.Errorf("store %q: %v, want %s", c.Text, err, c.Error)
		}
	}
	for _, c := range v.Eligibility {
		from, ok := markOf(c.Mark).freeFromMs(time.Duration(c.QuarantineMs) * time.Millisecond)
		eligible := !c.Held && (!ok || c.NowMs >= from)
		if eligible != c.Eligible {
			t.Errorf("eligibility %+v: %v", c, eligible)
		}
		if !c.Held && (ok != (c.FreeFromMs != nil) || (ok && from != *c.FreeFromMs)) {
			t.Errorf("free_from %+v: %d %v", c, from, ok)
		}
	}
	for _, c := range v.WaitUntil {
		var p, st int64
		if c.Previous != nil {
			p = *c.Previous
		}
		if c.Store != nil {
			st = *c.Store
		}
		prev, ok := previousMark(p, c.Previous != nil, st, c.Store != nil)
		if ok != (c.Want != nil) || (ok && waitUntilMs(prev, time.Duration(c.SkewMs)*time.Millisecond) != *c.Want) {
			t.Errorf("wait_until %+v: %d %v", c, prev, ok)
		}
	}
	if len(v.WaitUntil) == 0 {
		t.Error("no wait_until vectors")
	}
	for _, c := range v.Timings {
		skew := time.Duration(c.MaxClockSkewMs) * time.Millisecond
		q := 10 * time.Second
		o := Options{TTL: time.Duration(c.TTLMs) * time.Millisecond,
			RenewEvery: time.Duration(c.RenewEveryMs) * time.Millisecond,
			StopAfter:  time.Duration(c.StopAfterMs) * time.Millisecond, MaxClockSkew: &skew,
			RetryEvery: time.Millisecond, ReacquireEvery: time.Second, Quarantine: &q, RequestTimeout: time.Second}
		if err := checkTiming(&o); (err != nil) != (c.Error != "") {
			t.Errorf("timing %+v: %v", c, err)
		}
	}
	for _, c := range v.EtcdOptions {
		q := time.Duration(c.QuarantineMs) * time.Millisecond
		skew := 100 * time.Millisecond
		o := Options{TTL: 10 * time.Second, RenewEvery: 3 * time.Second, StopAfter: 8 * time.Second,
			MaxClockSkew: &skew, RetryEvery: 500 * time.Millisecond, ReacquireEvery: time.Second,
			Quarantine: &q, RequestTimeout: time.Duration(c.RequestTimeoutMs) * time.Millisecond}
		if err := checkTiming(&o); (err != nil) != (c.Error != "") {
			t.Errorf("etcd options %+v: %v", c, err)
		}
	}
}
