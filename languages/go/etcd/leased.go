package etcd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	snowid "github.com/snowid/snowid/languages/go"
)

// Options of a LeasedGenerator; a zero duration is the default of docs/protocol.md.
type Options struct {
	Endpoints []string // http://HOST:PORT or https://HOST:PORT of every member; required
	// TLS: a CA bundle to verify https members with (default: the system's),
	// and a client certificate and key for mutual TLS (KeyFile needs CertFile;
	// without KeyFile, CertFile holds both).
	CAFile, CertFile, KeyFile string
	// etcd authentication: a user and password (a password needs a user).
	User, Password string
	Prefix         string // default /snowid
	Cluster        string // default "default"
	Region         int
	Host           *int // a pinned host; nil: any eligible one
	TTL            time.Duration
	RenewEvery     time.Duration
	StopAfter      time.Duration
	MaxClockSkew   *time.Duration // default 100 ms; 0 is allowed
	RetryEvery     time.Duration
	ReacquireEvery time.Duration
	Quarantine     *time.Duration // default 10 s; 0 is allowed
	RequestTimeout time.Duration
	Clock          snowid.Clock
	Address        string
	// StateDir, if set, keeps each worker id's fence file, fence-r<region>-h<host>
	// (docs/protocol.md section 12); it is created if missing.
	StateDir string
	// Generator are extra generator options (max_wait, ...).
	Generator []snowid.Option
	// OnEvent, if set, hears every lease event, in English.
	OnEvent func(string)
}

var clusterName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

func invalid(format string, a ...any) error {
	return &snowid.Error{Code: snowid.CodeInvalidArgument, Message: fmt.Sprintf(format, a...)}
}

func (o *Options) fill() error {
	if len(o.Endpoints) == 0 {
		return invalid("a leased generator needs etcd endpoints")
	}
	for _, e := range o.Endpoints {
		if !strings.HasPrefix(e, "http://") && !strings.HasPrefix(e, "https://") {
			return invalid("an etcd endpoint is http://HOST:PORT, not %q", e)
		}
	}
	if o.KeyFile != "" && o.CertFile == "" {
		return invalid("an etcd client key needs a client certificate")
	}
	if o.User == "" && o.Password != "" {
		return invalid("an etcd password needs a user")
	}
	if o.Prefix == "" {
		o.Prefix = "/snowid"
	}
	if o.Cluster == "" {
		o.Cluster = "default"
	}
	if err := checkNamespace(o.Prefix, o.Cluster); err != nil {
		return err
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.TTL, 10*time.Second)
	def(&o.RenewEvery, 3*time.Second)
	def(&o.StopAfter, 8*time.Second)
	def(&o.RetryEvery, 500*time.Millisecond)
	def(&o.ReacquireEvery, time.Second)
	def(&o.RequestTimeout, 2*time.Second)
	if o.MaxClockSkew == nil {
		d := 100 * time.Millisecond
		o.MaxClockSkew = &d
	}
	if o.Quarantine == nil {
		d := 10 * time.Second
		o.Quarantine = &d
	}
	if err := checkTiming(o); err != nil {
		return err
	}
	if o.Clock == nil {
		o.Clock = snowid.SystemClock
	}
	return snowid.Snowid.CheckWorker(o.Region, 0)
}

func checkNamespace(prefix, cluster string) error {
	if !strings.HasPrefix(prefix, "/") || strings.HasSuffix(prefix, "/") || strings.Contains(prefix, "//") {
		return invalid("the key prefix %q must start with /, not end with / and not contain //", prefix)
	}
	if !clusterName.MatchString(cluster) {
		return invalid("the cluster name %q must be 1 to 128 of A-Z a-z 0-9 - _ .", cluster)
	}
	return nil
}

// checkTiming applies the bounds of docs/protocol.md section 4 to filled-in options.
func checkTiming(o *Options) error {
	switch {
	case o.TTL%time.Second != 0 || o.TTL < 2*time.Second || o.TTL > time.Hour:
		return invalid("ttl must be whole seconds, 2 s to 1 hour")
	case o.RenewEvery <= 0 || o.RenewEvery >= o.StopAfter:
		return invalid("renew_every must be more than 0 and less than stop_after")
	case o.StopAfter >= o.TTL:
		return invalid("stop_after must be less than ttl")
	case *o.MaxClockSkew < 0 || *o.MaxClockSkew > time.Minute:
		return invalid("max_clock_skew must be 0 to 1 minute")
	case o.RetryEvery <= 0 || o.RetryEvery > o.RenewEvery:
		return invalid("retry_every must be more than 0 and at most renew_every")
	case o.ReacquireEvery <= 0:
		return invalid("reacquire_every must be more than 0")
	case *o.Quarantine < 0 || *o.Quarantine > time.Hour:
		return invalid("quarantine must be 0 to 1 hour")
	case o.RequestTimeout < time.Millisecond || o.RequestTimeout > time.Minute:
		return invalid("request_timeout must be 1 ms to 1 minute")
	}
	return nil
}

// grant is one held worker id.
type grant struct {
	lease, create int64
	host          int
	previous      int64 // previous high-water mark (ms), if hasPrevious
	hasPrevious   bool
	stored        int64 // the highest mark this grant stored
	guard         *snowid.LeaseGuard
	gen           *snowid.Generator
	sent          map[string]bool
	stop          context.CancelFunc
	done          sync.WaitGroup
}

// LeasedGenerator issues ids under a worker id leased from etcd, renewing it,
// watching it and replacing it when lost (docs/protocol.md). Safe for concurrent use.
type LeasedGenerator struct {
	o        Options
	gw       *gateway
	keys     func(host int, kind string) string
	started  int64
	mu       sync.Mutex
	cur      *grant
	closed   bool
	sick     bool // the generator turned unhealthy: released, never re-acquired
	reacq    int
	lastTick int64
	ctx      context.Context
	cancel   context.CancelFunc
	incarn   string
}

// New acquires a worker id and starts renewing and watching it.
func New(ctx context.Context, o Options) (*LeasedGenerator, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	client, err := httpClient(o.CAFile, o.CertFile, o.KeyFile)
	if err != nil {
		return nil, err
	}
	if o.StateDir != "" {
		if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
			return nil, invalid("the state directory: %v", err)
		}
	}
	base := fmt.Sprintf("%s/%s/workers/%d/", o.Prefix, o.Cluster, o.Region)
	l := &LeasedGenerator{o: o, gw: newGateway(o.Endpoints, o.RequestTimeout, client, o.User, o.Password),
		keys:    func(h int, kind string) string { return base + strconv.Itoa(h) + "/" + kind },
		started: time.Now().UnixMilli(), lastTick: -1}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	g, err := l.acquire(ctx)
	if err != nil {
		l.cancel()
		return nil, err
	}
	l.cur = g
	return l, nil
}

func (l *LeasedGenerator) event(format string, a ...any) {
	if l.o.OnEvent != nil {
		l.o.OnEvent(fmt.Sprintf(format, a...))
	}
}

func (l *LeasedGenerator) storeKey() string { return l.o.Prefix + "/" + l.o.Cluster + "/store" }

func freshIncarnation() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// checkStore is section 9: the store-wide mark, if any, writing a record when there is none.
func (l *LeasedGenerator) checkStore(ctx context.Context, loss bool) (int64, bool, error) {
	key := l.storeKey()
	for range 16 {
		kv, err := l.gw.getOne(ctx, key)
		if err != nil {
			return 0, false, unavailable(err)
		}
		var old store
		var seen int64
		if kv != nil {
			if old, err = decodeStore(kv.value()); err != nil {
				return 0, false, err
			}
			seen = kv.mod()
			if !loss || old.incarnation != l.incarn {
				l.incarn = old.incarnation
				return old.highWater, old.hasHigh, nil
			}
		} else if !loss {
			if l.incarn != "" {
				loss = true
			} else {
				r, err := l.gw.get(ctx, l.o.Prefix+"/"+l.o.Cluster+"/workers/", prefixEnd(l.o.Prefix+"/"+l.o.Cluster+"/workers/"))
				if err != nil {
					return 0, false, unavailable(err)
				}
				loss = len(r.Kvs) == 0
			}
		}
		now := ceilMs(l.o.Clock.WallNs())
		rec := store{incarnation: freshIncarnation(), writtenMs: now, reason: "a namespace older than store records"}
		if loss {
			rec.hasHigh = true
			rec.highWater = max(old.highWater, now+max(l.o.StopAfter, 8*time.Second).Milliseconds())
			rec.reason = "no store record and no worker keys: a new namespace, or etcd lost its data"
		}
		r, err := l.gw.txn(ctx, []compare{cmpMod(key, seen)}, []op{opPut(key, rec.encode(), 0)}, nil)
		if err != nil {
			return 0, false, unavailable(err)
		}
		if r.Succeeded {
			l.incarn = rec.incarnation
			return rec.highWater, rec.hasHigh, nil
		}
	}
	return 0, false, &snowid.Error{Code: snowid.CodeUnavailable, Message: "the store record kept changing"}
}

// acquire is section 5; on success the grant renews and watches.
func (l *LeasedGenerator) acquire(ctx context.Context) (*grant, error) {
	o := l.o
	lease, err := l.gw.grant(ctx, o.TTL)
	if err != nil {
		var se *snowid.Error
		if errors.As(err, &se) {
			return nil, se
		}
		return nil, unavailable(err)
	}
	g, err := l.acquireOn(ctx, lease)
	if err != nil {
		bctx, cancel := context.WithTimeout(context.Background(), min(500*time.Millisecond, o.RequestTimeout))
		l.gw.revoke(bctx, lease)
		cancel()
		return nil, err
	}
	return g, nil
}

func (l *LeasedGenerator) acquireOn(ctx context.Context, lease int64) (*grant, error) {
	o := l.o
	sendMono := o.Clock.MonoNs()
	h0 := ceilMs(o.Clock.WallNs() + int64(o.StopAfter))
	storeHigh, hasStore, err := l.checkStore(ctx, l.gw.takeLoss())
	if err != nil {
		return nil, err
	}
	hosts := snowid.Snowid.WorkersPerRegion()
	prefix := fmt.Sprintf("%s/%s/workers/%d/", o.Prefix, o.Cluster, o.Region)
	retry := -1
	var found *grant
	for round := 0; round < 64 && found == nil; round++ {
		r, err := l.gw.get(ctx, prefix, prefixEnd(prefix))
		if err != nil {
			return nil, unavailable(err)
		}
		held := map[int]bool{}
		marks := map[int]kv{}
		for _, k := range r.Kvs {
			wk, ok := parseWorkerKey(o.Prefix, o.Cluster, k.key())
			if !ok || wk.region != uint32(o.Region) || wk.host >= uint32(hosts) {
				continue
			}
			h := int(wk.host)
			if wk.holder {
				held[h] = true
				if k.lease() == lease {
					found = &grant{lease: lease, create: k.create(), host: h}
				}
			} else {
				marks[h] = k
			}
		}
		if found != nil {
			if m, ok := marks[found.host]; ok {
				if mk, err := decodeMark(m.value()); err == nil && mk.hasHigh {
					found.previous, found.hasPrevious = mk.highWater, true
				}
			}
			break
		}
		nowMs := o.Clock.WallNs() / 1e6
		var eligible []int
		pick := -1
		for h := range hosts {
			if held[h] {
				continue
			}
			var mk mark
			if m, ok := marks[h]; ok {
				if mk, err = decodeMark(m.value()); err != nil {
					continue
				}
			}
			if from, ok := mk.freeFromMs(*o.Quarantine); ok && nowMs < from {
				continue
			}
			if o.Host != nil && h != *o.Host {
				continue
			}
			eligible = append(eligible, h)
			if h == retry {
				pick = h
			}
		}
		if len(eligible) == 0 {
			return nil, &snowid.Error{Code: snowid.CodeResourceExhausted, Message: fmt.Sprintf(
				"no eligible worker id in region %d (%d held)", o.Region, len(held))}
		}
		if pick < 0 {
			pick = eligible[mrand.IntN(len(eligible))]
		}
		var mk mark
		var markRev int64
		if m, ok := marks[pick]; ok {
			mk, _ = decodeMark(m.value())
			markRev = m.mod()
		}
		prev, hasPrev := mk.highWater, mk.hasHigh
		nm := mk
		nm.highWater, nm.hasHigh = max(mk.highWater, h0), true
		if !mk.hasHigh {
			nm.highWater = h0
		}
		holderKey, markKey := l.keys(pick, "holder"), l.keys(pick, "mark")
		hv := encodeHolder(hostname(), os.Getpid(), l.started, o.Address, lease)
		tr, err := l.gw.txn(ctx, []compare{cmpCreate(holderKey, 0), cmpMod(markKey, markRev)},
			[]op{opPut(holderKey, hv, lease), opPut(markKey, nm.encode(), 0)}, []op{opRange(holderKey)})
		if isUnknown(err) {
			k, err2 := l.gw.getOne(ctx, holderKey)
			if err2 != nil {
				return nil, unavailable(err2)
			}
			if k != nil && k.lease() == lease {
				found = &grant{lease: lease, create: k.create(), host: pick, previous: prev, hasPrevious: hasPrev}
				found.stored = nm.highWater
				break
			}
			retry = pick
			continue
		}
		var ge *grpcError
		if errors.As(err, &ge) && ge.Code == grpcNotFound {
			return nil, &snowid.Error{Code: snowid.CodeUnavailable, Message: "the lease expired while acquiring"}
		}
		if err != nil {
			return nil, unavailable(err)
		}
		if tr.Succeeded {
			rev, _ := strconv.ParseInt(tr.Header.Revision, 10, 64)
			found = &grant{lease: lease, create: rev, host: pick, previous: prev, hasPrevious: hasPrev, stored: nm.highWater}
			break
		}
		if k := tr.ranged(0); k != nil && k.lease() == lease {
			found = &grant{lease: lease, create: k.create(), host: pick, previous: prev, hasPrevious: hasPrev}
			break
		}
		if retry == pick {
			retry = -1
		}
	}
	if found == nil {
		return nil, &snowid.Error{Code: snowid.CodeUnavailable, Message: "too many concurrent acquirers"}
	}
	found.previous, found.hasPrevious = previousMark(found.previous, found.hasPrevious, storeHigh, hasStore)
	found.stored = max(found.stored, h0)
	found.guard = snowid.NewLeaseGuard()
	found.guard.Extend(sendMono+int64(o.StopAfter), h0*1e6)
	found.sent = map[string]bool{}
	opts := append([]snowid.Option{snowid.WithClock(o.Clock), snowid.WithLeaseGuard(found.guard)}, o.Generator...)
	opts = append(opts, snowid.WithOnUnhealthy(func(error) { go l.unhealthy(found) }))
	if o.StateDir != "" {
		opts = append(opts, snowid.WithFenceFile(filepath.Join(o.StateDir, fmt.Sprintf("fence-r%d-h%d", o.Region, found.host))))
	}
	if found.hasPrevious {
		opts = append(opts, snowid.WithWaitUntil(waitUntilMs(found.previous, *o.MaxClockSkew)*1e6))
	}
	if l.lastTick >= 0 {
		opts = append(opts, snowid.WithContinueAfter(snowid.Snowid.TickStartMs(l.lastTick)))
	}
	gen, err := snowid.NewGenerator(o.Region, found.host, opts...)
	if err != nil {
		return nil, err
	}
	found.gen = gen
	gctx, stop := context.WithCancel(l.ctx)
	found.stop = stop
	found.done.Add(2)
	go l.renewLoop(gctx, found, sendMono)
	go l.watchLoop(gctx, found)
	l.event("acquired worker %d/%d", o.Region, found.host)
	return found, nil
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// renewOnce is section 6, steps 2 to 5.
func (l *LeasedGenerator) renewOnce(ctx context.Context, g *grant) error {
	o := l.o
	t := o.Clock.MonoNs()
	h := ceilMs(o.Clock.WallNs() + int64(o.StopAfter))
	alive, err := l.gw.keepalive(ctx, g.lease)
	if err != nil {
		return unavailable(err)
	}
	if !alive {
		return &snowid.Error{Code: snowid.CodeLeaseLost, Message: "the lease expired"}
	}
	holderKey, markKey := l.keys(g.host, "holder"), l.keys(g.host, "mark")
	mk, rev, err := l.readMark(ctx, markKey)
	if err != nil {
		return err
	}
	pending := !mk.hasHigh || mk.highWater < g.stored
	for range 16 {
		nm := mk
		nm.highWater, nm.hasHigh = max(mk.highWater, h), true
		tr, err := l.gw.txn(ctx, []compare{cmpCreate(holderKey, g.create), cmpMod(markKey, rev)},
			[]op{opPut(markKey, nm.encode(), 0)}, []op{opRange(holderKey), opRange(markKey)})
		if err != nil {
			return unavailable(err)
		}
		if tr.Succeeded {
			g.stored = max(g.stored, nm.highWater)
			g.guard.Extend(t+int64(o.StopAfter), nm.highWater*1e6)
			if pending || l.gw.takeLoss() {
				l.checkStore(ctx, true)
			}
			return nil
		}
		hk := tr.ranged(0)
		if hk == nil || hk.create() != g.create {
			return &snowid.Error{Code: snowid.CodeLeaseLost, Message: "the holder key is gone"}
		}
		mk, rev = mark{}, 0
		if m := tr.ranged(1); m != nil {
			if mk, err = decodeMark(m.value()); err != nil {
				return err
			}
			rev = m.mod()
		}
	}
	return &snowid.Error{Code: snowid.CodeUnavailable, Message: "the mark kept changing"}
}

func (l *LeasedGenerator) renewLoop(ctx context.Context, g *grant, last int64) {
	defer g.done.Done()
	o := l.o
	okAt := last
	wait := o.RenewEvery
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if o.Clock.MonoNs()-okAt >= int64(o.TTL) {
			l.lost(g, "the lease's ttl passed without a renewal")
			return
		}
		left := time.Duration(int64(o.TTL) - (o.Clock.MonoNs() - okAt))
		rctx, cancel := context.WithTimeout(ctx, min(left, o.RequestTimeout*3))
		t := o.Clock.MonoNs()
		err := l.renewOnce(rctx, g)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			okAt = t
			wait = o.RenewEvery
			continue
		}
		if snowid.CodeOf(err) == snowid.CodeLeaseLost {
			l.lost(g, err.Error())
			return
		}
		l.event("renewal failed: %v", err)
		wait = o.RetryEvery
	}
}

// watchLoop is section 10's watch, ended every 5 s for a linearizable read.
func (l *LeasedGenerator) watchLoop(ctx context.Context, g *grant) {
	defer g.done.Done()
	key := l.keys(g.host, "holder")
	rev := g.create + 1
	member := 0
	for ctx.Err() == nil {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		gone, next, _ := l.gw.watchOnce(wctx, member%len(l.o.Endpoints), key, rev, g.create, g.lease)
		cancel()
		rev = next
		if ctx.Err() != nil {
			return
		}
		if !gone {
			rctx, cancel := context.WithTimeout(ctx, l.o.RequestTimeout)
			r, err := l.gw.get(rctx, key, "")
			cancel()
			if err != nil {
				member++
				time.Sleep(100 * time.Millisecond)
				continue
			}
			gone = len(r.Kvs) == 0 || r.Kvs[0].create() != g.create
			hr, _ := strconv.ParseInt(r.Header.Revision, 10, 64)
			rev = max(rev, hr+1)
		}
		if gone {
			l.lost(g, "the holder key was deleted or replaced (fenced)")
			return
		}
		member++
	}
}

// lost ends a grant for good and starts acquiring a replacement.
func (l *LeasedGenerator) lost(g *grant, why string) {
	g.guard.MarkLost()
	l.mu.Lock()
	if l.cur != g || l.closed || l.sick {
		l.mu.Unlock()
		return
	}
	l.cur = nil
	l.lastTick = max(l.lastTick, g.gen.LastTicks())
	l.mu.Unlock()
	g.gen.Close()
	g.stop()
	l.event("lease lost: %s", why)
	bctx, cancel := context.WithTimeout(context.Background(), min(500*time.Millisecond, l.o.RequestTimeout))
	l.gw.revoke(bctx, g.lease)
	cancel()
	go l.reacquire()
}

func (l *LeasedGenerator) reacquire() {
	backoff := l.o.ReacquireEvery
	for {
		if l.ctx.Err() != nil {
			return
		}
		g, err := l.acquire(l.ctx)
		if err == nil {
			l.mu.Lock()
			if l.closed {
				l.mu.Unlock()
				l.releaseGrant(context.Background(), g)
				return
			}
			l.cur = g
			l.reacq++
			l.mu.Unlock()
			return
		}
		l.event("reacquire failed: %v", err)
		select {
		case <-l.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, max(30*time.Second, l.o.ReacquireEvery))
	}
}

func (l *LeasedGenerator) current() (*snowid.Generator, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, &snowid.Error{Code: snowid.CodeFailedPrecondition, Message: "the leased generator is closed"}
	}
	if l.cur == nil {
		return nil, &snowid.Error{Code: snowid.CodeLeaseUncertain, Message: "acquiring a new worker id",
			RetryAfter: l.o.ReacquireEvery}
	}
	return l.cur.gen, nil
}

// uncertainIfReplaced turns LEASE_LOST of a grant being replaced into LEASE_UNCERTAIN.
func uncertainIfReplaced(err error) error {
	if snowid.CodeOf(err) == snowid.CodeLeaseLost {
		return &snowid.Error{Code: snowid.CodeLeaseUncertain, Message: "the worker id is being replaced",
			RetryAfter: 10 * time.Millisecond}
	}
	return err
}

// Next is the next id (waiting like Generator.Next).
func (l *LeasedGenerator) Next() (snowid.ID, error) {
	g, err := l.current()
	if err != nil {
		return 0, err
	}
	id, err := g.Next()
	return id, uncertainIfReplaced(err)
}

// Reserve is up to n consecutive ids of one tick.
func (l *LeasedGenerator) Reserve(n int) (snowid.ID, int, error) {
	g, err := l.current()
	if err != nil {
		return 0, 0, err
	}
	first, count, err := g.Reserve(n)
	return first, count, uncertainIfReplaced(err)
}

// Worker is the (region, host) held now; host -1 while none is.
func (l *LeasedGenerator) Worker() (int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil {
		return l.o.Region, -1
	}
	return l.o.Region, l.cur.host
}

// State is the lease state of docs/protocol.md section 7: "HELD" (ids may be issued),
// "UNCERTAIN" (past the stop deadline, the lease may live), "LOST" (a replacement is being
// acquired) or "RELEASED" (closed).
func (l *LeasedGenerator) State() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed || l.sick:
		return "RELEASED"
	case l.cur == nil:
		return "LOST"
	case l.cur.guard.Permits(l.o.Clock.MonoNs(), l.o.Clock.WallNs()):
		return "HELD"
	}
	return "UNCERTAIN"
}

// Ready says whether a worker id is held and its guard permits issuing now.
func (l *LeasedGenerator) Ready() bool { return l.State() == "HELD" }

// Healthy is the current generator's health.
func (l *LeasedGenerator) Healthy() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.sick && (l.cur == nil || l.cur.gen.Healthy())
}

// unhealthy releases the id of a generator that refused for good (a clock step back beyond
// max_backward); the leased generator does not acquire another.
func (l *LeasedGenerator) unhealthy(g *grant) {
	l.mu.Lock()
	if l.cur != g || l.closed || l.sick {
		l.mu.Unlock()
		return
	}
	l.sick = true
	l.mu.Unlock()
	l.event("generator unhealthy: releasing worker %d/%d", l.o.Region, g.host)
	ctx, cancel := context.WithTimeout(context.Background(), 3*l.o.RequestTimeout)
	defer cancel()
	if err := l.releaseGrant(ctx, g); err != nil {
		l.event("release after unhealthy failed: %v", err)
	}
}

// Reacquisitions counts the replacements of a lost lease.
func (l *LeasedGenerator) Reacquisitions() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reacq
}

// Close stops issuing and releases the worker id cleanly (section 11), so that a
// successor need not wait out the quarantine. ctx bounds the release.
func (l *LeasedGenerator) Close(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	g := l.cur
	l.cur = nil
	l.mu.Unlock()
	l.cancel()
	if g == nil {
		return nil
	}
	err := l.releaseGrant(ctx, g)
	if snowid.CodeOf(err) == snowid.CodeLeaseLost {
		// Fenced or expired before the release, noticed or not: the guard
		// stopped issuing by the deadline and the quarantine covers the rest.
		return nil
	}
	return err
}

func (l *LeasedGenerator) releaseGrant(ctx context.Context, g *grant) error {
	g.stop()
	g.done.Wait()
	g.gen.Close()
	last := snowid.Snowid.TickStartMs(g.gen.LastTicks())
	m := last
	if g.hasPrevious {
		m = max(m, g.previous)
	}
	holderKey, markKey := l.keys(g.host, "holder"), l.keys(g.host, "mark")
	err := func() error {
		mk, rev, err := l.readMark(ctx, markKey)
		if err != nil {
			return err
		}
		for range 16 {
			nm := mk
			nm.highWater, nm.hasHigh = m, true
			nm.releasedAt, nm.hasReleased = ceilMs(l.o.Clock.WallNs()), true
			nm.cleanRelease, nm.hasClean = m, true
			text := nm.encode()
			g.sent[text] = true
			tr, err := l.gw.txn(ctx, []compare{cmpCreate(holderKey, g.create), cmpMod(markKey, rev)},
				[]op{opPut(markKey, text, 0), opDelete(holderKey)}, []op{opRange(holderKey), opRange(markKey)})
			var hk, mkv *kv
			switch {
			case isUnknown(err):
				hk, err = l.gw.getOne(ctx, holderKey)
				if err == nil {
					mkv, err = l.gw.getOne(ctx, markKey)
				}
				if err != nil {
					return unavailable(err)
				}
			case err != nil:
				return unavailable(err)
			case tr.Succeeded:
				return nil
			default:
				hk, mkv = tr.ranged(0), tr.ranged(1)
			}
			if hk == nil || hk.create() != g.create {
				if mkv != nil && g.sent[mkv.value()] {
					return nil
				}
				return &snowid.Error{Code: snowid.CodeLeaseLost, Message: "fenced or expired before the release"}
			}
			mk, rev = mark{}, 0
			if mkv != nil {
				if mk, err = decodeMark(mkv.value()); err != nil {
					return err
				}
				rev = mkv.mod()
			}
		}
		return &snowid.Error{Code: snowid.CodeUnavailable, Message: "the mark kept changing"}
	}()
	bctx, cancel := context.WithTimeout(context.Background(), min(500*time.Millisecond, l.o.RequestTimeout))
	l.gw.revoke(bctx, g.lease)
	cancel()
	if err == nil {
		l.event("released worker %d/%d", l.o.Region, g.host)
	}
	return err
}

// readMark is the mark stored at key and its mod revision: a zero mark and 0
// when there is none, UNAVAILABLE when etcd does not answer, DATA_LOSS when
// the value is not a mark.
func (l *LeasedGenerator) readMark(ctx context.Context, key string) (mark, int64, error) {
	k, err := l.gw.getOne(ctx, key)
	if err != nil {
		return mark{}, 0, unavailable(err)
	}
	if k == nil {
		return mark{}, 0, nil
	}
	mk, err := decodeMark(k.value())
	return mk, k.mod(), err
}

// previousMark is the grant's previous mark, max(P, S) of whichever is present.
func previousMark(p int64, hasP bool, s int64, hasS bool) (int64, bool) {
	if hasS && (!hasP || s > p) {
		return s, true
	}
	return p, hasP
}

// waitUntilMs is the instant before which a new holder issues nothing (section 5).
func waitUntilMs(previous int64, skew time.Duration) int64 {
	return previous + max(skew, time.Millisecond).Milliseconds()
}
