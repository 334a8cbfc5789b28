package etcd

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	snowid "github.com/snowid/snowid/languages/go"
)

// startEtcd runs a real etcd (SNOWID_ETCD_BIN) for the test; a missing binary fails.
func startEtcd(t *testing.T) string { return startEtcdWith(t, "http", &http.Client{}) }

// startEtcdWith runs etcd serving clients on scheme (http or https), with
// further flags, and waits until client reports it healthy.
func startEtcdWith(t *testing.T, scheme string, client *http.Client, flags ...string) string {
	t.Helper()
	bin := os.Getenv("SNOWID_ETCD_BIN")
	if bin == "" {
		t.Fatal("SNOWID_ETCD_BIN is not set: these tests need a real etcd")
	}
	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	client0, peer := port(), port()
	url := fmt.Sprintf("%s://127.0.0.1:%d", scheme, client0)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	args := append([]string{"--data-dir", filepath.Join(t.TempDir(), "etcd"), "--name", "go-test",
		"--listen-client-urls", url, "--advertise-client-urls", url,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "go-test=" + peerURL, "--log-level", "error"}, flags...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 200; i++ {
		if resp, err := client.Get(url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return url
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("etcd did not start")
	return ""
}

// initNamespace writes a store record as `snowid workers init` does, so that the first
// holders of a new namespace need not wait out the in-flight bound of a loss.
func initNamespace(t *testing.T, url, cluster string) {
	t.Helper()
	initNamespaceVia(t, newGateway([]string{url}, 2*time.Second, &http.Client{}, "", ""), cluster)
}

func initNamespaceVia(t *testing.T, gw *gateway, cluster string) {
	t.Helper()
	rec := store{incarnation: freshIncarnation(), reason: "init", writtenMs: time.Now().UnixMilli()}
	key := "/snowid/" + cluster + "/store"
	r, err := gw.txn(context.Background(), []compare{cmpCreate(key, 0)}, []op{opPut(key, rec.encode(), 0)}, nil)
	if err != nil || !r.Succeeded {
		t.Fatalf("init: %v %v", r.Succeeded, err)
	}
}

func short(url, cluster string) Options {
	q := time.Second
	return Options{Endpoints: []string{url}, Cluster: cluster, Region: 1, TTL: 2 * time.Second,
		RenewEvery: 500 * time.Millisecond, StopAfter: 1500 * time.Millisecond, Quarantine: &q,
		ReacquireEvery: 200 * time.Millisecond}
}

func next(t *testing.T, l *LeasedGenerator) snowid.ID {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		id, err := l.Next()
		if err == nil {
			return id
		}
		if !snowid.IsRetryable(err) || time.Now().After(deadline) {
			t.Fatalf("next: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Two holders on one namespace hold distinct worker ids and never issue the same id; a clean
// release lets the same host be taken at once, after every id it issued.
func TestLeasedTwoHoldersAndCleanRelease(t *testing.T) {
	url := startEtcd(t)
	initNamespace(t, url, "two")
	ctx := context.Background()
	a, err := New(ctx, short(url, "two"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(ctx, short(url, "two"))
	if err != nil {
		t.Fatal(err)
	}
	_, ha := a.Worker()
	_, hb := b.Worker()
	if ha == hb || ha < 0 || hb < 0 {
		t.Fatalf("workers %d and %d", ha, hb)
	}
	seen := sync.Map{}
	var wg sync.WaitGroup
	var last snowid.ID
	for _, l := range []*LeasedGenerator{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3000 {
				id := next(t, l)
				if _, dup := seen.LoadOrStore(id, true); dup {
					t.Errorf("duplicate id %d", id)
				}
			}
		}()
	}
	wg.Wait()
	seen.Range(func(k, _ any) bool {
		if d, _ := snowid.Snowid.Decode(uint64(k.(snowid.ID))); int(d.Host) == ha {
			last = max(last, k.(snowid.ID))
		}
		return true
	})
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Next(); snowid.CodeOf(err) != snowid.CodeFailedPrecondition {
		t.Fatalf("after Close: %v", err)
	}
	o := short(url, "two")
	o.Host = &ha
	start := time.Now()
	c, err := New(ctx, o)
	if err != nil {
		t.Fatalf("the released host %d: %v", ha, err)
	}
	if id := next(t, c); id <= last {
		t.Fatalf("successor id %d is not after %d", id, last)
	}
	if time.Since(start) > 900*time.Millisecond {
		t.Fatalf("a clean release made the successor wait %v", time.Since(start))
	}
	c.Close(ctx)
	b.Close(ctx)
}

// A fence (the holder key deleted) is seen within a second; the generator acquires a new
// worker id and its ids keep increasing.
func TestLeasedFenceAndReplacement(t *testing.T) {
	url := startEtcd(t)
	initNamespace(t, url, "fence")
	ctx := context.Background()
	l, err := New(ctx, short(url, "fence"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	before := next(t, l)
	_, host := l.Worker()
	if _, err := l.gw.txn(ctx, nil, []op{opDelete(l.keys(host, "holder"))}, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for l.Reacquisitions() == 0 {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the fence was not seen within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	after := next(t, l)
	if after <= before {
		t.Fatalf("after the replacement: %d, before %d", after, before)
	}
	if _, h := l.Worker(); h == host {
		t.Fatalf("re-acquired the fenced host %d within its quarantine", h)
	}
	if seen := time.Since(start); seen > time.Second {
		t.Errorf("the fence took %v to be seen", seen)
	}
}

// Close right after the lease was revoked behind the holder's back succeeds, whether or not
// the watch had reported the loss yet: there is nothing to give back, which is not an error.
func TestLeasedCloseAfterRevokedLeaseSucceeds(t *testing.T) {
	url := startEtcd(t)
	initNamespace(t, url, "revoked")
	ctx := context.Background()
	for range 3 {
		l, err := New(ctx, short(url, "revoked"))
		if err != nil {
			t.Fatal(err)
		}
		next(t, l)
		l.mu.Lock()
		lease := l.cur.lease
		l.mu.Unlock()
		if err := l.gw.revoke(ctx, lease); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(ctx); err != nil {
			t.Fatalf("close after the lease was revoked: %v", err)
		}
		if _, err := l.Next(); snowid.CodeOf(err) == snowid.CodeOK {
			t.Fatal("issued after close")
		}
	}
}

func TestLeasedRefusesBadOptions(t *testing.T) {
	for _, o := range []Options{{}, {Endpoints: []string{"127.0.0.1:1"}},
		{Endpoints: []string{"http://x"}, Prefix: "snowid"}, {Endpoints: []string{"http://x"}, Cluster: "a/b"},
		{Endpoints: []string{"http://x"}, TTL: 1500 * time.Millisecond}, {Endpoints: []string{"http://x"}, Region: 4}} {
		if _, err := New(context.Background(), o); snowid.CodeOf(err) != snowid.CodeInvalidArgument {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// A new namespace without a store record is a possible loss: the first holder waits past the
// in-flight bound (8 s from the record's writing) before its first id.
func TestLeasedNewNamespaceWaits(t *testing.T) {
	url := startEtcd(t)
	ctx := context.Background()
	l, err := New(ctx, short(url, "new"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	k, err := l.gw.getOne(ctx, l.storeKey())
	if err != nil || k == nil {
		t.Fatalf("no store record written: %v", err)
	}
	rec, err := decodeStore(k.value())
	if err != nil || !rec.hasHigh || rec.highWater < rec.writtenMs+8000 {
		t.Fatalf("store record %q: %v", k.value(), err)
	}
	if _, err := l.Next(); snowid.CodeOf(err) != snowid.CodeClockBehind && snowid.CodeOf(err) != snowid.CodeLeaseUncertain {
		t.Fatalf("the first id of a new namespace did not wait: %v", err)
	}
}
